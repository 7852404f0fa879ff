package insights

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// hostHash is hash/fnv's 64-bit FNV-1a: the hosts of Totals made before
// and after it are the same numbers (Merge joins them by value).
func TestHostHashIsFNV1a(t *testing.T) {
	for _, s := range []string{"", "a", "nid00012", "login1.cluster.example.org", "\xff\x00é"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := hostHash(s), h.Sum64(); got != want {
			t.Errorf("%q: %#x, want %#x", s, got, want)
		}
	}
}

// The id table finds every file of a log, from a few (a scan) to many (the
// hash table, through its growth), ids in any order and with any bits,
// whatever the previous log left in a pooled scratch.
func TestScratchFindsEveryFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := new(scratch)
	for _, n := range []int{1, linearFiles, linearFiles + 1, 100, 5000, 3, 20000, 40} {
		ids := make([]uint64, n)
		for i := range ids {
			switch i % 3 {
			case 0:
				ids[i] = rng.Uint64()
			case 1:
				ids[i] = uint64(i) << 40 // high bits only
			default:
				ids[i] = uint64(i) // low bits only
			}
		}
		// every record twice, the second pass in another order
		for round := range 2 {
			for k := range ids {
				i := k
				if round == 1 {
					i = (k * 7919) % n
				}
				f := s.file(ids[i])
				if f.id != ids[i] {
					t.Fatalf("%d files: id %#x gave the entry of %#x", n, ids[i], f.id)
				}
				f.rankRecs++
			}
		}
		if len(s.aggs) != n {
			t.Fatalf("%d files: %d entries", n, len(s.aggs))
		}
		for i := range s.aggs {
			if s.aggs[i].rankRecs != 2 {
				t.Fatalf("%d files: %#x has %d records, want 2", n, s.aggs[i].id, s.aggs[i].rankRecs)
			}
		}
		s.release()
		s = scratchPool.Get().(*scratch)
		if len(s.aggs) != 0 {
			t.Fatalf("a pooled scratch holds %d entries", len(s.aggs))
		}
	}
}

// A Builder's Totals do not depend on what the Builders before it read
// (their pooled scratch): the Totals of a log are the same read alone, after
// a log of many files, and after a damaged read.
func TestTotalsIndependentOfPreviousLogs(t *testing.T) {
	small := logOf(posix(0, "/a", m{"READS": 10, "SIZE_READ_0_100": 10, "F_META_TIME": 50}),
		posix(1, "/a", m{"READS": 20, "SIZE_READ_0_100": 20, "F_META_TIME": 45, "BYTES_READ": 7}),
		posix(-1, "/shared", m{"WRITES": 4, "SIZE_WRITE_100_1K": 4, "BYTES_WRITTEN": 100, "SLOWEST_RANK_BYTES": 90, "FASTEST_RANK_BYTES": 10}))
	var many []rec
	for i := range 3000 {
		many = append(many, posix(int64(i%5), fmt.Sprintf("/many/%d", i%1200), m{"WRITES": 2, "SIZE_WRITE_0_100": 2, "F_META_TIME": float64(i % 40), "BYTES_WRITTEN": float64(i)}))
	}
	alone := small.totals(t)
	logOf(many...).totals(t)
	after := small.totals(t)
	if !reflect.DeepEqual(alone, after) {
		t.Errorf("after a log of many files:\n%+v\nwant\n%+v", after, alone)
	}
	data := logOf(many...).bytes(t)
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "many.darshan")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, err := NewBuilder(l)
	if err != nil {
		t.Fatal(err)
	}
	rd := l.Records(darshan.POSIX)
	for rd.Next() {
		b.Add(rd.Record())
	}
	if _, err := b.Totals(errors.New("damaged")); err == nil {
		t.Fatal("a damaged read made Totals")
	}
	if again := small.totals(t); !reflect.DeepEqual(alone, again) {
		t.Errorf("after a damaged read:\n%+v\nwant\n%+v", again, alone)
	}
}
