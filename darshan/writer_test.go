package darshan

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// readBack opens a log held in memory.
func readBack(t testing.TB, data []byte) *Log {
	t.Helper()
	l, err := NewReader(bytes.NewReader(data), int64(len(data)), "memory")
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return l
}

// TestWriterRoundTrip writes records of every module and reads them back,
// in both byte orders and with one or several zlib streams per region.
func TestWriterRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		big       bool
		perStream int
	}{{"little-endian", false, 0}, {"big-endian", true, 0}, {"stream per record", false, 1}, {"big-endian, streams of 2", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			s := allModulesSample(7)
			data := s.write(t, func(w *Writer) { w.BigEndian, w.RecordsPerStream = tc.big, tc.perStream })
			l := readBack(t, data)
			if l.Header.Version != "3.41" || l.Header.BigEndian != tc.big || l.Header.Compression != CompressZlib {
				t.Errorf("header = %+v", l.Header)
			}
			if !reflect.DeepEqual(l.Job, s.job) {
				t.Errorf("job = %+v, want %+v", l.Job, s.job)
			}
			if l.Exe != s.exe || !reflect.DeepEqual(l.Mounts, s.mounts) {
				t.Errorf("exe %q mounts %v, want %q %v", l.Exe, l.Mounts, s.exe, s.mounts)
			}
			for _, n := range s.names {
				if got := l.Names[RecordID(n)]; got != n {
					t.Errorf("name of %d = %q, want %q", RecordID(n), got, n)
				}
			}
			var got []Record
			for _, m := range l.Modules() {
				recs, err := l.ReadModule(m.ID)
				if err != nil {
					t.Fatalf("%s: %v", m.ID, err)
				}
				if m.Version != m.ID.CurrentVersion() {
					t.Errorf("%s written with version %d, want %d", m.ID, m.Version, m.ID.CurrentVersion())
				}
				got = append(got, recs...)
			}
			want := byModule(s.records)
			if len(got) != len(want) {
				t.Fatalf("read %d records, wrote %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("record %d (%s) differs:\n%s", i, want[i].RecordKey().Module, brief(got[i], want[i]))
				}
			}
			modules := map[ModuleID]bool{}
			for _, r := range got {
				modules[r.RecordKey().Module] = true
			}
			for m := POSIX; m.Known(); m++ {
				if !modules[m] {
					t.Errorf("no %s record round-tripped", m)
				}
			}
		})
	}
}

// byModule orders records as a log holds them: by module id, then written order.
func byModule(recs []Record) []Record {
	out := slices.Clone(recs)
	slices.SortStableFunc(out, func(a, b Record) int { return int(a.RecordKey().Module) - int(b.RecordKey().Module) })
	return out
}

func TestWriterRejects(t *testing.T) {
	posix := LayoutOf(POSIX, 4)
	for name, rec := range map[string]Record{
		"short counters":       &CounterRecord{Key: Key{Module: POSIX}, Layout: posix, Ints: make([]int64, 3), Floats: make([]float64, 17)},
		"H5D as counters":      &CounterRecord{Key: Key{Module: H5D}},
		"perf before header":   &APMPIRecord{CounterRecord: CounterRecord{Key: Key{Module: APMPI}}},
		"OSTs off":             &LustreRecord{Key: Key{Module: Lustre}, Components: []LustreComponent{{StripeCount: 2}}, OSTs: []int64{1}},
		"uneven heatmap":       &HeatmapRecord{Key: Key{Module: Heatmap}, ReadBins: []int64{1}},
		"long hostname":        &DXTRecord{Key: Key{Module: DXTPOSIX}, Hostname: string(make([]byte, 65))},
		"null module":          &CounterRecord{Key: Key{Module: NullModule}},
		"mdhim histogram size": &MDHIMRecord{CounterRecord: CounterRecord{Key: Key{Module: MDHIM}, Ints: make([]int64, 5), Floats: make([]float64, 4)}, ServerHistogram: []int64{1}},
	} {
		w := NewWriter(&bytes.Buffer{})
		if err := w.Write(rec); err == nil {
			t.Errorf("%s: Write accepted it", name)
		}
	}
}

// TestExeTruncated checks the runtime's handling of a command line that
// does not fit the job record: cut, marked, and no mount table.
func TestExeTruncated(t *testing.T) {
	s := &sampleLog{exe: string(bytes.Repeat([]byte("x"), 5000)), mounts: []Mount{{Path: "/", Type: "ext4"}}}
	l := readBack(t, s.write(t, nil))
	if len(l.Exe) != exeLen || !bytes.HasSuffix([]byte(l.Exe), []byte("<TRUNCATED>")) || len(l.Mounts) != 0 {
		t.Errorf("exe of %d bytes ending %q, %d mounts", len(l.Exe), l.Exe[len(l.Exe)-12:], len(l.Mounts))
	}
}

func ExampleWriter() {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job = Job{NProcs: 1, StartTime: 1700000000, EndTime: 1700000010}
	w.Exe = "/bin/app"
	id := w.AddName("/scratch/out.dat")
	rec := &HeatmapRecord{Key: Key{Module: Heatmap, Rank: 0, ID: id}, BinWidth: 0.1,
		ReadBins: []int64{0, 512}, WriteBins: []int64{1024, 0}}
	if err := w.Write(rec); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	l, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "example")
	if err != nil {
		panic(err)
	}
	rd := l.Records(Heatmap)
	for rd.Next() {
		h := rd.Record().(*HeatmapRecord)
		fmt.Println(l.Names[h.ID], h.BinWidth, h.ReadBins, h.WriteBins)
	}
	// Output: /scratch/out.dat 0.1 [0 512] [1024 0]
}

// brief shows two records for a failure message, cut to a readable size.
func brief(got, want Record) string {
	g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want)
	for i := 0; i < min(len(g), len(w)); i++ {
		if g[i] != w[i] {
			from := max(0, i-80)
			return fmt.Sprintf(" got …%.200s\nwant …%.200s", g[from:], w[from:])
		}
	}
	return fmt.Sprintf(" got %.300s\nwant %.300s", g, w)
}
