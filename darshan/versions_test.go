package darshan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// openFixture opens a log of fixtures/darshan.
func openFixture(t *testing.T, name string) *Log {
	t.Helper()
	l, err := Open(filepath.Join(fixturesDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func counterRecords(t *testing.T, l *Log, m ModuleID) []*CounterRecord {
	t.Helper()
	recs, err := l.ReadModule(m)
	if err != nil {
		t.Fatalf("%s: %v", m, err)
	}
	var out []*CounterRecord
	for _, r := range recs {
		switch v := r.(type) {
		case *CounterRecord:
			out = append(out, v)
		case *DatasetRecord:
			out = append(out, &v.CounterRecord)
		case *DAOSRecord:
			out = append(out, &v.CounterRecord)
		default:
			t.Fatalf("%s: unexpected %T", m, r)
		}
	}
	return out
}

// checkAbsent checks that the named counters are absent from the layout and hold
// darshan-util's fill value.
func checkAbsent(t *testing.T, r *CounterRecord, ints map[string]int64, floats ...string) {
	t.Helper()
	for n, want := range ints {
		i := r.Layout.IntIndex(n)
		if i < 0 || r.Layout.HasInt(i) || r.Ints[i] != want {
			t.Errorf("%s v%d %s: index %d, present %v, value %d; want absent %d", r.Module, r.Layout.Version, n, i, r.Layout.HasInt(i), r.Ints[i], want)
		}
		if _, ok := r.Int(n); ok {
			t.Errorf("%s: Int(%s) reports a counter the version lacks", r.Module, n)
		}
	}
	for _, n := range floats {
		i := r.Layout.FloatIndex(n)
		if i < 0 || r.Layout.HasFloat(i) || r.Floats[i] != -1 {
			t.Errorf("%s v%d %s: present %v value %v; want absent -1", r.Module, r.Layout.Version, n, r.Layout.HasFloat(i), r.Floats[i])
		}
	}
}

func TestOldModuleVersions(t *testing.T) {
	l := openFixture(t, "old_versions.darshan")
	posix := counterRecords(t, l, POSIX)
	if len(posix) != 2 || posix[0].Layout.Version != 3 {
		t.Fatalf("%d POSIX records of version %d", len(posix), posix[0].Layout.Version)
	}
	checkAbsent(t, posix[0], map[string]int64{"POSIX_FILENOS": -1, "POSIX_DUPS": -1, "POSIX_RENAME_SOURCES": -1,
		"POSIX_RENAME_TARGETS": -1, "POSIX_RENAMED_FROM": 0})
	if _, ok := posix[0].Float("POSIX_F_VARIANCE_RANK_TIME"); !ok {
		t.Error("POSIX v3 has POSIX_F_VARIANCE_RANK_TIME")
	}
	checkAbsent(t, counterRecords(t, l, MPIIO)[0], nil, "MPIIO_F_CLOSE_START_TIMESTAMP", "MPIIO_F_OPEN_END_TIMESTAMP")
	checkAbsent(t, counterRecords(t, l, STDIO)[1], map[string]int64{"STDIO_FDOPENS": -1})
	checkAbsent(t, counterRecords(t, l, H5F)[0], map[string]int64{"H5F_FLUSHES": -1, "H5F_USE_MPIIO": -1}, "H5F_F_META_TIME")
	checkAbsent(t, counterRecords(t, l, PnetCDFFile)[0], map[string]int64{"PNETCDF_FILE_CREATES": -1, "PNETCDF_FILE_SYNCS": -1},
		"PNETCDF_FILE_F_WAIT_TIME", "PNETCDF_FILE_F_WAIT_START_TIMESTAMP")
	h5d, _ := l.ReadModule(H5D)
	if d := h5d[0].(*DatasetRecord); d.FileRecID != 0 || d.Layout.Version != 1 {
		t.Errorf("H5D v1: file record id %d, version %d", d.FileRecID, d.Layout.Version)
	}
	if bgq := counterRecords(t, l, BGQ); len(bgq) != 1 || bgq[0].Layout.Version != 1 {
		t.Errorf("BG/Q v1: %d records", len(bgq))
	}

	lustre, _ := l.ReadModule(Lustre)
	want := &LustreRecord{Key: Key{Lustre, -1, RecordID("/gpfs/data/old.dat")}, OSTCount: 248, MDTCount: 4, StripeOffset: 12,
		Components: []LustreComponent{{StripeSize: 1 << 20, StripeCount: 3, StripePattern: -1, Flags: -1, ExtentEnd: -1, MirrorID: -1}},
		OSTs:       []int64{12, 13, 14}}
	if !reflect.DeepEqual(lustre, []Record{want}) {
		t.Errorf("LUSTRE v1 read as %+v, want %+v", lustre[0], want)
	}

	dxt, _ := l.ReadModule(DXTPOSIX)
	if d := dxt[0].(*DXTRecord); d.HasThreads || len(d.Writes) != 2 || len(d.Reads) != 1 || d.Writes[1].Offset != 1<<20 || d.Hostname != "ppc-node-1" {
		t.Errorf("DXT_POSIX v1 read as %+v", d)
	}
	dxt, _ = l.ReadModule(DXTMPIIO)
	if d := dxt[0].(*DXTRecord); d.HasThreads || d.Writes[1].Offset != 1<<20 {
		t.Errorf("DXT_MPIIO v2 keeps offsets: %+v", d)
	}
}

func TestOldestModuleVersions(t *testing.T) {
	l := openFixture(t, "oldest_versions.darshan")
	if !l.Header.BigEndian {
		t.Fatal("fixture is big-endian")
	}
	posix := counterRecords(t, l, POSIX)
	if len(posix) != 2 {
		t.Fatalf("POSIX v1: %d records, want 2 (the one with stdio data is omitted)", len(posix))
	}
	for _, r := range posix {
		if l.Names[r.ID] != "/projects/oldest.dat" {
			t.Errorf("POSIX v1 kept record %q", l.Names[r.ID])
		}
		checkAbsent(t, r, map[string]int64{"POSIX_FILENOS": -1, "POSIX_RENAMED_FROM": 0}, "POSIX_F_CLOSE_START_TIMESTAMP", "POSIX_F_OPEN_END_TIMESTAMP")
	}
	pnc := counterRecords(t, l, PnetCDFFile)[0]
	if v, ok := pnc.Int("PNETCDF_FILE_OPENS"); !ok || v != 12 {
		t.Errorf("PNETCDF_FILE v1 opens = %d, %v; want 5 independent + 7 collective", v, ok)
	}
	checkAbsent(t, counterRecords(t, l, H5F)[0], nil, "H5F_F_CLOSE_START_TIMESTAMP", "H5F_F_OPEN_END_TIMESTAMP", "H5F_F_META_TIME")
	dxt, _ := l.ReadModule(DXTMPIIO)
	for _, s := range dxt[0].(*DXTRecord).Writes {
		if s.Offset != -1 {
			t.Errorf("DXT_MPIIO v1 offset %d, want -1 (not recorded)", s.Offset)
		}
	}
}

// TestHeatmapOffByOne checks darshan-util's correction of records one bin
// longer or shorter than the first (darshan issue #941) — without its
// shift of the read bins.
func TestHeatmapOffByOne(t *testing.T) {
	l := openFixture(t, "heatmap_off_by_one.darshan")
	recs, err := l.ReadModule(Heatmap)
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	want := [][2][]int64{
		{{100, 101, 102, 103, 104}, {1000, 1001, 1002, 1003, 1004}},
		{{200, 201, 202, 203, 204}, {2000, 2001, 2002, 2003, 2004}}, // 6 bins: the last dropped
		{{300, 301, 302, 303, 0}, {3000, 3001, 3002, 3003, 0}},      // 4 bins: an empty one added
		{{400, 401, 402, 403, 404}, {4000, 4001, 4002, 4003, 4004}},
	}
	for i, r := range recs {
		h := r.(*HeatmapRecord)
		if !reflect.DeepEqual(h.ReadBins, want[i][0]) || !reflect.DeepEqual(h.WriteBins, want[i][1]) {
			t.Errorf("record %d: read %v write %v, want %v %v", i, h.ReadBins, h.WriteBins, want[i][0], want[i][1])
		}
	}
}

func TestDAOSPreRelease(t *testing.T) {
	l := openFixture(t, "daos_prerelease.darshan")
	recs, err := l.ReadModule(DAOS)
	if err != nil || len(recs) != 3 {
		t.Fatalf("%d records, %v (688-byte records read as 696-byte ones?)", len(recs), err)
	}
	for i, r := range recs {
		d := r.(*DAOSRecord)
		checkAbsent(t, &d.CounterRecord, map[string]int64{"DAOS_NB_OPS": -1})
		if d.Layout.Version != 1 {
			t.Errorf("layout version %d, want the log's 1", d.Layout.Version)
		}
		if d.ID != uint64(1000+i) || d.OIDHi != uint64(i) || d.OIDLo != 42 {
			t.Errorf("record %d: id %d oid %d.%d", i, d.ID, d.OIDHi, d.OIDLo)
		}
	}
}

func TestPartialAndUnknownModules(t *testing.T) {
	l := openFixture(t, "partial_and_unknown.darshan")
	var got []string
	for _, m := range l.Modules() {
		got = append(got, m.ID.String())
		if m.Partial != (m.ID == POSIX || m.ID == STDIO) {
			t.Errorf("%s partial = %v", m.ID, m.Partial)
		}
	}
	if want := []string{"POSIX", "STDIO", "HEATMAP", "<UNKNOWN>(40)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("modules %v, want %v", got, want)
	}
	if recs, err := l.ReadModule(STDIO); len(recs) != 0 || err != nil {
		t.Errorf("STDIO (partial, no region): %d records, %v", len(recs), err)
	}
	_, err := l.ReadModule(40)
	var fe *FormatError
	if !errors.Is(err, ErrUnknownModule) || !errors.As(err, &fe) || fe.Region != "<UNKNOWN>(40)" {
		t.Errorf("module 40: %v", err)
	}
}

// TestCountersByName checks name access and availability on a current log.
func TestCountersByName(t *testing.T) {
	l := openFixture(t, "all_modules.darshan")
	r := counterRecords(t, l, POSIX)[0]
	for i, n := range posixInts {
		v, ok := r.Int(n)
		if !ok || v != r.Ints[i] {
			t.Errorf("Int(%s) = %d, %v; Ints[%d] = %d", n, v, ok, i, r.Ints[i])
		}
	}
	if _, ok := r.Int("POSIX_NO_SUCH_COUNTER"); ok {
		t.Error("unknown counter reported present")
	}
	if len(posixInts) != 69 || len(posixFloats) != 17 || len(mpiioInts) != 51 || len(h5dSet.load().ints) != 94 ||
		len(pnetcdfVarSet.load().ints) != 120 || len(dfsSet.load().ints) != 52 || len(daosSet.load().ints) != 64 ||
		len(apmpiSet.load().ints) != 396 || len(apmpiSet.floats) != 240 || len(apxcSet.load().ints) != 392 {
		t.Error("counter lists do not have the sizes of the format headers")
	}
	// APMPISyncTimes is computed from constants: it must still bound the
	// sync times among the names.
	f := apmpiSet.floats
	if lo, hi := APMPISyncTimes[0], APMPISyncTimes[1]; f[lo] != "MPI_BARRIER_TOTAL_SYNC_TIME" ||
		f[hi-1] != "MPI_ALLTOALLW_TOTAL_SYNC_TIME" || f[lo-1] != "MPI_WIN_SYNC_MAX_TIME" || f[hi] != "MPI_TOTAL_COMM_TIME" {
		t.Errorf("APMPISyncTimes %v does not bound the sync times", APMPISyncTimes)
	}
}

// TestOpenErrors checks the typed errors of logs that cannot be opened.
func TestOpenErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(fixturesDir(t), "empty.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	patch := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"empty file":    {nil, ErrTruncated},
		"short":         {good[:5], ErrTruncated},
		"zero header":   {patch(func(b []byte) []byte { clear(b[:headerSize341]); return b }), ErrIncomplete},
		"bad magic":     {patch(func(b []byte) []byte { b[9] ^= 0x5a; return b }), ErrNotDarshan},
		"version 3.99":  {patch(func(b []byte) []byte { copy(b, "3.99"); return b }), ErrUnsupportedVersion},
		"version text":  {patch(func(b []byte) []byte { copy(b, "abc"); return b }), ErrUnsupportedVersion},
		"short header":  {good[:1000], ErrTruncated},
		"no job region": {patch(func(b []byte) []byte { return b[:headerSize341] }), ErrTruncated},
	} {
		l, err := NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), name)
		var fe *FormatError
		if !errors.Is(err, tc.want) || !errors.As(err, &fe) || fe.Log != name {
			t.Errorf("%s: err %v, want %v", name, err, tc.want)
		}
		if tc.want != ErrTruncated || name != "no job region" {
			if l != nil {
				t.Errorf("%s: got a Log", name)
			}
		}
	}
}

func TestVersionBefore(t *testing.T) {
	for v, want := range map[string]bool{"3.4.6": true, "3.4.7": false, "3.5.0": false, "3.4.5-pre1": true,
		"3.4.7-pre1": false, "3.10.0": false, "2": true, "": false, "x": false, "3.4": true} {
		if got := versionBefore(v, 3, 4, 7); got != want {
			t.Errorf("versionBefore(%q, 3.4.7) = %v", v, got)
		}
	}
}
