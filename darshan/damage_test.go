package darshan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// Damaged input: every log of fixtures/darshan (and the smaller corpus logs,
// when the corpus is there) is truncated, zeroed and bit-flipped in memory.
// Reading must never panic, every error must be a *FormatError naming the
// log and the region, and what decoded before the damage must be intact.

// everything reads every record of every module, cloned, per module.
func everything(l *Log) (map[ModuleID][]Record, map[ModuleID]error) {
	recs, errs := map[ModuleID][]Record{}, map[ModuleID]error{}
	for _, m := range l.Modules() {
		recs[m.ID], errs[m.ID] = l.ReadModule(m.ID)
	}
	return recs, errs
}

// damageLogs returns the logs to mutilate: the fixtures, and the corpus logs
// under 40 KB when the corpus is there.
func damageLogs(t *testing.T) map[string][]byte {
	logs := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join(fixturesDir(t), "*.darshan"))
	if dir := corpus.Root(); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "corpus", "darshan", "*", "*.darshan"))
		paths = append(paths, more...)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && len(data) < 40<<10 {
			logs[filepath.Base(p)] = data
		}
	}
	if len(logs) == 0 {
		t.Fatal("no logs to damage")
	}
	return logs
}

// checkErr checks that err, if any, is a *FormatError of the log named name.
func checkErr(t *testing.T, what, name string, err error, regions ...string) {
	t.Helper()
	if err == nil {
		return
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("%s: error %v (%T) is not a *FormatError", what, err, err)
	}
	if fe.Log != name {
		t.Fatalf("%s: error names log %q, want %q", what, fe.Log, name)
	}
	if len(regions) > 0 && !containsString(regions, fe.Region) {
		t.Fatalf("%s: error names region %q, want one of %v", what, fe.Region, regions)
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// readDamaged opens and reads a damaged log, checking its errors; it
// returns the records per module (nil when the header is unreadable).
func readDamaged(t *testing.T, what string, data []byte) map[ModuleID][]Record {
	t.Helper()
	l, err := NewReader(bytes.NewReader(data), int64(len(data)), what)
	if l == nil {
		checkErr(t, what, what, err, "header")
		return nil
	}
	checkErr(t, what, what, err, "job", "name records")
	recs, errs := everything(l)
	for m, err := range errs {
		checkErr(t, what, what, err, m.String())
	}
	return recs
}

func TestTruncatedLogs(t *testing.T) {
	for name, data := range damageLogs(t) {
		var intact map[ModuleID][]Record
		if l, _ := NewReader(bytes.NewReader(data), int64(len(data)), name); l != nil { // corrupt/ logs may not open
			intact, _ = everything(l)
		}
		step := max(1, len(data)/61)
		for cut := 0; cut < len(data); cut += step {
			got := readDamaged(t, name+" cut", data[:cut])
			for m, recs := range got {
				if len(recs) > len(intact[m]) || (len(recs) > 0 && !reflect.DeepEqual(recs, intact[m][:len(recs)])) {
					t.Fatalf("%s cut at %d: %s records are not a prefix of the intact log's", name, cut, m)
				}
			}
		}
	}
}

// TestCorruptedLogs corrupts each log 40 times, the logs in name order so
// that a run is the same from one time to the next (in map order, the
// corruptions fell on other logs each run: the one of a bzip2 log that
// hit the name scanner's window growing by the byte made CI time out once
// in several runs, and could not be made to again).
func TestCorruptedLogs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	logs := damageLogs(t)
	for _, name := range slices.Sorted(maps.Keys(logs)) {
		data := logs[name]
		for range 40 {
			bad := bytes.Clone(data)
			switch r.IntN(3) {
			case 0: // flip a bit
				bad[r.IntN(len(bad))] ^= 1 << r.IntN(8)
			case 1: // zero a span
				at := r.IntN(len(bad))
				clear(bad[at:min(len(bad), at+1+r.IntN(64))])
			case 2: // overwrite a header map field with a wild value
				at := 24 + 8*r.IntN((headerSize300-24)/8)
				binary.LittleEndian.PutUint64(bad[at:], r.Uint64()>>r.IntN(64))
			}
			readDamaged(t, name+" corrupted", bad)
		}
	}
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRegionLongerThanFile: a header claiming a region far past the end of
// the file costs no more memory than the file.
func TestRegionLongerThanFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixturesDir(t), "all_modules.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(data)
	binary.LittleEndian.PutUint64(bad[56+16*int(POSIX):], 1<<60) // POSIX region length
	var recs []Record
	var rerr error
	n := allocated(func() {
		l := readBack(t, bad)
		recs, rerr = l.ReadModule(POSIX)
	})
	if !errors.Is(rerr, ErrTruncated) || len(recs) == 0 {
		t.Errorf("got %d records and %v; want the records present and ErrTruncated", len(recs), rerr)
	}
	if n > 4<<20 {
		t.Errorf("reading allocated %d bytes for a %d-byte file", n, len(bad))
	}
}

// TestDecompressionBomb: a region that inflates far past its size stops at
// the bound with ErrTooLarge, keeping the records before it, in bounded memory.
func TestDecompressionBomb(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job = Job{NProcs: 1}
	zeros := make([]byte, 64<<20) // 95,000 all-zero POSIX records
	if err := w.WriteRaw(POSIX, 4, zeros); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	var records int
	var rerr error
	n := allocated(func() {
		rd := readBack(t, data).Records(POSIX)
		for rd.Next() {
			records++
		}
		rerr = rd.Err()
	})
	limit := MaxInflateRatio*int64(len(data)) + MinInflateBound
	if !errors.Is(rerr, ErrTooLarge) || int64(records*posixRecordSize) > limit || records == 0 {
		t.Errorf("%d-byte log: %d records, %v; want ErrTooLarge after at most %d bytes", len(data), records, rerr, limit)
	}
	if n > 16<<20 {
		t.Errorf("reading the bomb allocated %d bytes", n)
	}
}

// TestHostileCounts: records claiming more data than the region holds, or
// more than the format allows, fail without allocating for the claim.
func TestHostileCounts(t *testing.T) {
	o := binary.LittleEndian
	dxt := o.AppendUint64(nil, 1)
	dxt = o.AppendUint64(dxt, 0)
	dxt = o.AppendUint64(dxt, 0)
	dxt = append(dxt, make([]byte, 64)...)
	dxt = o.AppendUint64(dxt, 1<<31-1) // writes
	dxt = o.AppendUint64(dxt, 1<<31-1) // reads
	heat := append(o.AppendUint64(o.AppendUint64(o.AppendUint64(o.AppendUint64(nil, 1), 0), 0), 1<<40), make([]byte, 16)...)
	lustre := o.AppendUint64(o.AppendUint64(o.AppendUint64(o.AppendUint64(nil, 1), 0), 1<<40), 3)
	for _, tc := range []struct {
		m    ModuleID
		ver  uint32
		data []byte
		want error
	}{
		{DXTPOSIX, 2, dxt, ErrTruncated},
		{Heatmap, 1, heat, ErrCorrupt},
		{Lustre, 2, lustre, ErrCorrupt},
	} {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if err := w.WriteRaw(tc.m, tc.ver, tc.data); err != nil {
			t.Fatal(err)
		}
		w.Close()
		var err error
		n := allocated(func() { _, err = readBack(t, buf.Bytes()).ReadModule(tc.m) })
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.m, err, tc.want)
		}
		if n > 4<<20 {
			t.Errorf("%s: allocated %d bytes", tc.m, n)
		}
	}
}

// fuzzBudget is the memory budget of the logs the fuzz targets read: small,
// so that inputs reach it, and fuzzing cannot allocate past it.
const fuzzBudget = 2 << 20

// checkBudget checks that a log within its budget was charged no more, and
// that one over it said so.
func checkBudget(t *testing.T, l *Log, errs ...error) {
	t.Helper()
	var be *BudgetError
	if over := errors.As(errors.Join(errs...), &be); !over && l.MemoryCharged() > fuzzBudget {
		t.Fatalf("charged %d bytes, over the budget of %d, without a *BudgetError", l.MemoryCharged(), fuzzBudget)
	}
}

// FuzzReader feeds the reader arbitrary bytes, seeded with the fixtures and
// their mutilations. It must not panic, errors must be *FormatErrors, and a
// log stays within its (small) memory budget or is refused.
func FuzzReader(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "fixtures", "darshan", "*.darshan"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := NewReaderWith(bytes.NewReader(data), int64(len(data)), "fuzz", Options{MemoryBudget: fuzzBudget})
		if l == nil {
			checkErr(t, "fuzz", "fuzz", err, "header")
			return
		}
		errs := []error{err}
		for _, m := range l.Modules() {
			rd := l.Records(m.ID)
			for rd.Next() {
				_ = rd.Record().Clone()
			}
			checkErr(t, "fuzz", "fuzz", rd.Err(), m.ID.String())
			errs = append(errs, rd.Err())
		}
		checkBudget(t, l, errs...)
	})
}

// FuzzRecords feeds the module decoders arbitrary decompressed region data
// of any module and version: FuzzReader mostly exercises the inflater, as
// random bytes rarely inflate.
func FuzzRecords(f *testing.F) {
	s := allModulesSample(3)
	for _, r := range s.records {
		e := &encoder{order: binary.LittleEndian}
		if err := r.encode(e, r.RecordKey().Module != APMPI && r.RecordKey().Module != APXC); err == nil {
			m := r.RecordKey().Module
			f.Add(uint8(m), uint8(m.CurrentVersion()), false, e.b)
		}
	}
	f.Add(uint8(POSIX), uint8(1), true, make([]byte, posixV1Size*2))
	f.Fuzz(func(t *testing.T, mod, ver uint8, big bool, data []byte) {
		// the decoders straight on the data, as an uncompressed region
		l := &Log{Name: "fuzz", Header: Header{Version: "3.41", Major: 3, Minor: 41, BigEndian: big}}
		l.mem.limit = fuzzBudget
		m := ModuleID(mod % MaxModules)
		dec, err := l.newDecoder(m, uint32(ver))
		if err != nil {
			return
		}
		rr := &regionReader{log: l, name: m.String(), dec: &rawBytes{src: data},
			limit: MaxInflateRatio*int64(len(data)) + MinInflateBound}
		for {
			rec, err := dec.next(rr)
			if err != nil {
				if err != io.EOF {
					checkErr(t, "fuzz", "fuzz", rr.fail(err), m.String())
				}
				checkBudget(t, l, err)
				return
			}
			_ = rec.Clone()
		}
	})
}

// A name of hundreds of kilobytes or more than a megabyte (one path in a
// 2 KB log: the name table compresses a run of one letter a thousand to
// one; past the upfront window, up to the inflate limit) is read
// by a window that doubles, not one that grows by the byte the name
// scanner asks for next, which copied the window once per byte: three
// minutes for a megabyte. What opening the log allocates stays a few
// times the name (the windows, the name kept), where growing by the byte
// allocated a window per byte, gigabytes for the first case.
func TestLongNameReadInLinearTime(t *testing.T) {
	for _, size := range []int{256 << 10, 1280 << 10} {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Job = Job{UID: 1000, JobID: 99, StartTime: 1, EndTime: 2, NProcs: 1}
		w.Exe = "/bin/longname"
		w.AddNameID(1, strings.Repeat("n", size))
		w.AddNameID(2, "/after")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		var l *Log
		var err error
		got := allocated(func() { l, err = NewReader(bytes.NewReader(data), int64(len(data)), "longname") })
		if err != nil {
			t.Fatalf("name of %d bytes: %v", size, err)
		}
		if len(l.Names[1]) != size || l.Names[2] != "/after" {
			t.Fatalf("name of %d bytes: read %d bytes, then %q", size, len(l.Names[1]), l.Names[2])
		}
		if limit := uint64(8*size + 4<<20); got > limit {
			t.Fatalf("a %d-byte log with a name of %d bytes: opening it allocated %d bytes, more than %d", len(data), size, got, limit)
		}
		t.Logf("a %d-byte log with a name of %d bytes: %d bytes allocated to open it", len(data), size, got)
	}
}
