package darshan

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The logs in fixtures/darshan are made by the generators below with the
// Writer; `go test ./darshan -run Fixtures -update` rewrites them. Without
// -update the test checks that each fixture still holds what its generator
// describes (not the bytes: zlib output may change with the Go release).

var update = flag.Bool("update", false, "rewrite fixtures/darshan from their generators")

// fixture is a small log of the project's own making.
type fixture struct {
	name string
	make func(t testing.TB) []byte
	// records are the records the fixture must decode to, when the
	// generator can state them (current module versions).
	records func() []Record
}

var fixtures = []fixture{
	{name: "all_modules.darshan", make: func(t testing.TB) []byte {
		return allModulesSample(7).write(t, func(w *Writer) { w.RecordsPerStream = 2 })
	}, records: func() []Record { return byModule(allModulesSample(7).records) }},
	// the same records as all_modules, written big-endian
	{name: "big_endian.darshan", make: func(t testing.TB) []byte {
		return allModulesSample(7).write(t, func(w *Writer) { w.BigEndian = true })
	}, records: func() []Record { return byModule(allModulesSample(7).records) }},
	{name: "old_versions.darshan", make: oldVersionsLog},
	{name: "oldest_versions.darshan", make: oldestVersionsLog},
	{name: "heatmap_off_by_one.darshan", make: heatmapOffByOneLog},
	{name: "daos_prerelease.darshan", make: daosPreReleaseLog},
	{name: "partial_and_unknown.darshan", make: partialLog},
	{name: "empty.darshan", make: func(t testing.TB) []byte {
		return (&sampleLog{job: Job{NProcs: 2, StartTime: 1700000000, EndTime: 1700000001, Metadata: "lib_ver=3.5.0\n"},
			exe: "/bin/true", mounts: []Mount{{Path: "/", Type: "ext4"}}}).write(t, nil)
	}},
}

func fixturesDir(t testing.TB) string { return corpus.Fixtures(t, "darshan") }

func TestFixtures(t *testing.T) {
	dir := fixturesDir(t)
	for _, f := range fixtures {
		path := filepath.Join(dir, f.name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, f.make(t), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./darshan -run Fixtures -update)", err)
			}
			if len(data) > 16<<10 {
				t.Errorf("fixture of %d bytes; keep fixtures small", len(data))
			}
			fresh := readBack(t, f.make(t))
			l := readBack(t, data)
			if !reflect.DeepEqual(l.Header, fresh.Header) && !sameHeaderButLengths(l.Header, fresh.Header) {
				t.Errorf("header = %+v, the generator makes %+v", l.Header, fresh.Header)
			}
			for _, m := range fresh.Modules() {
				got, err := l.ReadModule(m.ID)
				want, werr := fresh.ReadModule(m.ID)
				if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: fixture has %d records (%v), the generator makes %d (%v)", m.ID, len(got), err, len(want), werr)
				}
			}
			if f.records == nil {
				return
			}
			var all []Record
			for _, m := range l.Modules() {
				recs, err := l.ReadModule(m.ID)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, recs...)
			}
			if !reflect.DeepEqual(all, f.records()) {
				t.Errorf("records differ from the generator's")
			}
		})
	}
}

// sameHeaderButLengths compares headers ignoring compressed region sizes
// and offsets, which depend on the zlib implementation.
func sameHeaderButLengths(a, b Header) bool {
	if a.Version != b.Version || a.BigEndian != b.BigEndian || a.Partial != b.Partial || a.ModuleVersions != b.ModuleVersions {
		return false
	}
	for i := range a.ModuleRegions {
		if (a.ModuleRegions[i].Length == 0) != (b.ModuleRegions[i].Length == 0) {
			return false
		}
	}
	return true
}

// oldRecord encodes counters given in the current layout into the record of
// an older module version described by v (the inverse of the reader's
// translation); oldOnly gives the old record's counters that the current
// layout dropped (old index -> value).
func oldRecord(o byteOrder, k Key, r *CounterRecord, v *versionLayout, skip int, oldOnly map[int]int64) []byte {
	b := make([]byte, v.size)
	o.PutUint64(b, k.ID)
	o.PutUint64(b[8:], uint64(k.Rank))
	ints := b[16+skip:]
	for cur, old := range v.ints {
		if old >= 0 {
			o.PutUint64(ints[8*old:], uint64(r.Ints[cur]))
		}
	}
	for old, val := range oldOnly {
		o.PutUint64(ints[8*old:], uint64(val))
	}
	floats := ints[8*v.nInts:]
	for cur, old := range v.floats {
		if old >= 0 {
			o.PutUint64(floats[8*old:], math.Float64bits(r.Floats[cur]))
		}
	}
	return b
}

// oldVersionsLog holds the module versions of darshan 3.1.x logs: POSIX
// v3, MPI-IO v2, STDIO v1, H5F v2, H5D v1, PNETCDF_FILE v2, BG/Q v1,
// LUSTRE v1, DXT_POSIX v1 and DXT_MPIIO v2.
func oldVersionsLog(t testing.TB) []byte {
	s := newSampler(21)
	var o byteOrder = binary.LittleEndian
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job = Job{UID: 7, StartTime: 1500000000, EndTime: 1500000060, NProcs: 2, JobID: 9, Metadata: "lib_ver=3.1.4\n"}
	w.Exe = "./old-app"
	w.Mounts = []Mount{{Path: "/gpfs", Type: "gpfs"}, {Path: "/", Type: "rootfs"}}
	file := w.AddName("/gpfs/data/old.dat")
	raw := func(m ModuleID, ver uint32, set *counterSet, old func() map[uint32]*versionLayout, skip int, ranks ...int64) {
		for _, rank := range ranks {
			k := Key{Module: m, Rank: rank, ID: file}
			c := s.counters(m, k)
			if err := w.WriteRaw(m, ver, oldRecord(o, k, &c, old()[ver], skip, nil)); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw(POSIX, 3, posixSet, posixOld, 0, -1, 0)
	raw(MPIIO, 2, mpiioSet, mpiioOld, 0, -1)
	raw(STDIO, 1, stdioSet, stdioOld, 0, 0, 1)
	raw(H5F, 2, h5fSet, h5fOld, 0, -1)
	raw(H5D, 1, h5dSet, h5dOld, 0, -1)
	raw(PnetCDFFile, 2, pnetcdfFileSet, pnetcdfFileOld, 0, -1)
	raw(BGQ, 1, bgqSet, bgqOld, 8, -1)
	// LUSTRE v1: base, OSTS, MDTS, STRIPE_OFFSET, STRIPE_SIZE, STRIPE_WIDTH, OST ids
	lustre := make([]byte, 0, 80)
	for _, v := range []int64{int64(file), -1, 248, 4, 12, 1 << 20, 3, 12, 13, 14} {
		lustre = o.AppendUint64(lustre, uint64(v))
	}
	if err := w.WriteRaw(Lustre, 1, lustre); err != nil {
		t.Fatal(err)
	}
	// DXT v1 (POSIX) and v2 (MPI-IO): segments without thread ids
	for _, m := range []ModuleID{DXTPOSIX, DXTMPIIO} {
		ver := uint32(1)
		if m == DXTMPIIO {
			ver = 2
		}
		rec := o.AppendUint64(nil, file)
		rec = o.AppendUint64(rec, 1)
		rec = o.AppendUint64(rec, 0)
		rec = append(rec, []byte("ppc-node-1\x00")...)
		rec = append(rec, make([]byte, 64-11)...)
		rec = o.AppendUint64(rec, 2)
		rec = o.AppendUint64(rec, 1)
		for i, seg := range s.segments(3) {
			seg.Offset = int64(i) << 20
			rec = o.AppendUint64(rec, uint64(seg.Offset))
			rec = o.AppendUint64(rec, uint64(seg.Length))
			rec = o.AppendUint64(rec, math.Float64bits(seg.Start))
			rec = o.AppendUint64(rec, math.Float64bits(seg.End))
		}
		if err := w.WriteRaw(m, ver, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// oldestVersionsLog holds the module versions of darshan 3.0 logs, written
// big-endian: POSIX v1 (one record carrying stdio counters, which readers
// omit), MPI-IO v1, H5F v1, PNETCDF_FILE v1, DXT_MPIIO v1 (no offsets).
func oldestVersionsLog(t testing.TB) []byte {
	s := newSampler(23)
	var o byteOrder = binary.BigEndian
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.BigEndian = true
	w.Job = Job{UID: 7, StartTime: 1450000000, EndTime: 1450000002, NProcs: 4, JobID: 3, Metadata: "lib_ver=3.0.0\n"}
	w.Exe = "/bgsys/app"
	file := w.AddName("/projects/oldest.dat")
	stdioFile := w.AddName("/projects/stdio.txt")
	for _, f := range []struct {
		id    uint64
		fopen int64
	}{{file, 0}, {stdioFile, 3}, {file, 0}} {
		k := Key{Module: POSIX, Rank: -1, ID: f.id}
		c := s.counters(POSIX, k)
		rec := oldRecord(o, k, &c, posixOld()[1], 0, map[int]int64{6: f.fopen, 7: 0, 8: 0, 9: 0})
		if err := w.WriteRaw(POSIX, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []struct {
		id  ModuleID
		old func() map[uint32]*versionLayout
	}{{MPIIO, mpiioOld}, {H5F, h5fOld}, {PnetCDFFile, pnetcdfFileOld}} {
		k := Key{Module: m.id, Rank: -1, ID: file}
		c := s.counters(m.id, k)
		if m.id == PnetCDFFile {
			c.Ints[0], c.Ints[1] = 5, 7 // v1 stores INDEP_OPENS, COLL_OPENS: the reader sums them
		}
		if err := w.WriteRaw(m.id, 1, oldRecord(o, k, &c, m.old()[1], 0, map[int]int64{0: c.Ints[0]})); err != nil {
			t.Fatal(err)
		}
	}
	rec := o.AppendUint64(nil, file)
	rec = o.AppendUint64(rec, 2)
	rec = o.AppendUint64(rec, 0)
	rec = append(rec, make([]byte, 64)...)
	rec = o.AppendUint64(rec, 1)
	rec = o.AppendUint64(rec, 1)
	for _, seg := range s.segments(2) {
		for _, v := range []uint64{uint64(seg.Offset), uint64(seg.Length), math.Float64bits(seg.Start), math.Float64bits(seg.End)} {
			rec = o.AppendUint64(rec, v)
		}
	}
	if err := w.WriteRaw(DXTMPIIO, 1, rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// heatmapOffByOneLog has HEATMAP records one bin longer and one bin shorter
// than the first, as darshan 3.4.0-3.4.3 could write them.
func heatmapOffByOneLog(t testing.TB) []byte {
	log := &sampleLog{job: Job{NProcs: 3, StartTime: 1600000000, EndTime: 1600000001}, exe: "./heat",
		names: []string{"heatmap:POSIX"}}
	id := RecordID("heatmap:POSIX")
	for rank, n := range []int{5, 6, 4, 5} {
		h := &HeatmapRecord{Key: Key{Module: Heatmap, Rank: int64(rank), ID: id}, BinWidth: 0.2}
		for b := range n {
			h.ReadBins = append(h.ReadBins, int64(100*(rank+1)+b))
			h.WriteBins = append(h.WriteBins, int64(1000*(rank+1)+b))
		}
		log.records = append(log.records, h)
	}
	return log.write(t, nil)
}

// daosPreReleaseLog has DAOS records of the 688-byte layout of development
// builds before darshan 3.4.7 (no DAOS_NB_OPS), under module version 1.
func daosPreReleaseLog(t testing.TB) []byte {
	s := newSampler(31)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job = Job{NProcs: 1, StartTime: 1690000000, EndTime: 1690000005, Metadata: "lib_ver=3.4.6\n"}
	w.Exe = "./daos-dev"
	o := binary.LittleEndian
	for i := range 3 {
		k := Key{Module: DAOS, Rank: -1, ID: uint64(1000 + i)}
		c := s.counters(DAOS, k)
		rec := oldRecord(o, k, &c, daosPreRelease, 0, nil)
		rec = append(rec[:16+8*63+8*15], make([]byte, 48)...)
		o.PutUint64(rec[len(rec)-16:], uint64(i))
		o.PutUint64(rec[len(rec)-8:], 42)
		if err := w.WriteRaw(DAOS, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// partialLog marks POSIX (with records) and STDIO (without) as partial, and
// has a region of a module id no reader knows (40).
func partialLog(t testing.TB) []byte {
	s := allModulesSample(13)
	var recs []Record
	for _, r := range s.records {
		if m := r.RecordKey().Module; m == POSIX || m == Heatmap {
			recs = append(recs, r)
		}
	}
	s.records = recs
	s.partial = 1<<POSIX | 1<<STDIO
	return s.write(t, func(w *Writer) {
		if err := w.WriteRaw(40, 3, []byte("a module from the future")); err != nil {
			t.Fatal(err)
		}
	})
}
