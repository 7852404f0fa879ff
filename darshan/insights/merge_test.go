package insights

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"
)

func TestMerge(t *testing.T) {
	a := logOf(posix(0, "/a", m{"READS": 10, "SEQ_READS": 10, "BYTES_READ": 100, "MAX_BYTE_READ": 99}),
		posix(-1, "/shared", m{"WRITES": 4, "BYTES_WRITTEN": 100, "SLOWEST_RANK_BYTES": 90, "FASTEST_RANK_BYTES": 10})).totals(t)
	b := logOf(stdio("/s", m{"BYTES_WRITTEN": 1000}), posix(0, "/b", m{"WRITES": 6, "F_META_TIME": 40}),
		mpiio(-1, "/m", m{"INDEP_WRITES": 3})).totals(t)
	before := []Totals{*a, *b}
	before[0].MetaTime, before[1].MetaTime = a.MetaTime.clone(), b.MetaTime.clone()
	before[0].StragglerBytes, before[1].StragglerBytes = a.StragglerBytes.clone(), b.StragglerBytes.clone()

	got := Merge(a, nil, b)
	if got.Logs != 2 || got.Reads != 10 || got.Writes != 10 || got.STDIOBytesWritten != 1000 || got.IndepWrites != 3 ||
		got.MaxByteRead != 99 || got.SharedRecords != 1 || got.MetaTime.Max() != 40 || got.StragglerBytes.Max() != 0.8 {
		t.Errorf("merged %+v", got)
	}
	if !got.Has(0+1) || got.Modules != a.Modules|b.Modules {
		t.Errorf("modules %b", got.Modules)
	}
	if !reflect.DeepEqual(before[0].MetaTime, a.MetaTime) || !reflect.DeepEqual(before[1].StragglerBytes, b.StragglerBytes) ||
		before[0].Reads != a.Reads || before[1].Writes != b.Writes {
		t.Error("Merge modified its inputs")
	}
	// A merge of one log decides what the log decides.
	for _, tt := range []*Totals{a, b} {
		if x, y := Evaluate(tt, DefaultConfig()), Evaluate(Merge(tt), DefaultConfig()); fmt.Sprint(x) != fmt.Sprint(y) {
			t.Errorf("Merge of one log evaluates differently:\n%v\n%v", x, y)
		}
	}
	if e := Merge(); e.Logs != 0 || len(Evaluate(e, DefaultConfig())) != 1 { // M01 alone: no module
		t.Errorf("empty merge %+v: %v", e, Evaluate(e, DefaultConfig()))
	}
}

// A Ranking keeps MaxFiles entries and counts the rest: counts above a
// threshold are exact while they fit, lower bounds beyond.
func TestRankingBounded(t *testing.T) {
	var r Ranking
	for i := range 25 {
		r.offer(fmt.Sprintf("/f%02d", i), float64(i), 0) // 0 is not offered
	}
	if len(r.Top) != MaxFiles || r.N != 24 || r.Max() != 24 || r.Top[0].Value != 24 || r.Top[MaxFiles-1].Value != 15 {
		t.Fatalf("%+v", r)
	}
	if n, exact := r.above(20); n != 4 || !exact {
		t.Errorf("above 20: %d %v", n, exact)
	}
	if n, exact := r.above(3); n != MaxFiles || exact {
		t.Errorf("above 3: %d %v, want a lower bound of %d", n, exact, MaxFiles)
	}
	var s Ranking
	s.offer("/g", 100, 0)
	s.merge(&r)
	if s.N != 25 || s.Max() != 100 || len(s.Top) != MaxFiles || s.Top[0].Name != "/g" {
		t.Errorf("merged %+v", s)
	}
}

// Many files: Totals stays bounded.
func TestTotalsBounded(t *testing.T) {
	var recs []rec
	for i := range 500 {
		recs = append(recs, posix(int64(i%4), fmt.Sprintf("/many/%d", i), m{"WRITES": 2000, "SIZE_WRITE_0_100": 2000, "F_META_TIME": 31, "BYTES_WRITTEN": float64(i)}))
	}
	tot := logOf(recs...).totals(t)
	for _, r := range []*Ranking{&tot.MetaTime, &tot.SmallWriteFiles} {
		if len(r.Top) > MaxFiles {
			t.Errorf("%d entries kept", len(r.Top))
		}
	}
	in, _ := find(Evaluate(tot, DefaultConfig()), "P17")
	if !in.Fired || in.Count != MaxFiles || len(in.Files) != MaxFiles {
		t.Errorf("P17 %+v", in)
	}
}

// The Builders share pooled scratch for their Rankings: the Totals they
// return own their entries, which later Builders leave alone.
func TestTotalsOwnTheirRankings(t *testing.T) {
	a := logOf(posix(0, "/a", m{"READS": 10, "F_META_TIME": 50}), posix(1, "/a", m{"READS": 20, "F_META_TIME": 45}),
		posix(-1, "/shared", m{"WRITES": 4, "BYTES_WRITTEN": 100, "SLOWEST_RANK_BYTES": 90, "FASTEST_RANK_BYTES": 10})).totals(t)
	before := *a
	for i, r := range a.rankings() {
		before.rankings()[i].Top = r.clone().Top
	}
	if len(a.MetaTime.Top) != 2 || len(a.StragglerBytes.Top) != 1 {
		t.Fatalf("rankings %+v, %+v", a.MetaTime, a.StragglerBytes)
	}
	for k := range 20 {
		logOf(posix(0, fmt.Sprintf("/b%d", k), m{"READS": 1, "F_META_TIME": 99}),
			posix(-1, "/other", m{"WRITES": 4, "BYTES_WRITTEN": 100, "SLOWEST_RANK_BYTES": 100})).totals(t)
	}
	if numRankings != len(a.rankings()) || !reflect.DeepEqual(before, *a) {
		t.Errorf("a later Builder changed a Totals:\n%+v\nwant\n%+v", *a, before)
	}
}

// TestTotalsSize holds a Totals to the 1,024-byte size class of Go's
// allocator (the next is 1,152): a sidecar keeps one per log.
func TestTotalsSize(t *testing.T) {
	if n := unsafe.Sizeof(Totals{}); n > 1024 {
		t.Errorf("a Totals takes %d bytes, more than 1,024", n)
	}
}
