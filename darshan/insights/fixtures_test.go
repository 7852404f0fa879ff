package insights

import (
	"bytes"
	"math"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Writer-made logs, generated in the test: for every trigger one that fires
// it and one that stays quiet exactly at its threshold (Drishti's
// conditions are strict: a value equal to the threshold does not fire).
// Triggers with two conditions (a share and a count) have a quiet log at
// each edge. The numbers are chosen so that every share is exact in
// binary floating point at the edge (10/100, 3/20, …), so the edge is the
// edge.

// rec is one record of a fixture: counters by name, the others 0.
type rec struct {
	m    darshan.ModuleID
	rank int64
	name string
	c    map[string]float64
}

// dxt is one DXT_POSIX record of a fixture, on a host.
type dxt struct {
	rank int64
	name string
	host string
}

type fixtureLog struct {
	meta string // job metadata lines beside lib_ver
	recs []rec
	dxts []dxt
}

func (f fixtureLog) bytes(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: 1000, StartTime: 1700000000, EndTime: 1700000100, NProcs: 4, JobID: 77,
		Metadata: "lib_ver=3.5.0\n" + f.meta}
	w.Exe = "/bin/fixture"
	for _, r := range f.recs {
		w.AddName(r.name)
		l := darshan.LayoutOf(r.m, r.m.CurrentVersion())
		c := &darshan.CounterRecord{Key: darshan.Key{Module: r.m, Rank: r.rank, ID: darshan.RecordID(r.name)}, Layout: l,
			Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
		for n, v := range r.c {
			if i := l.IntIndex(n); i >= 0 {
				c.Ints[i] = int64(v)
			} else if i := l.FloatIndex(n); i >= 0 {
				c.Floats[i] = v
			} else {
				tb.Fatalf("no counter %s in %s", n, r.m)
			}
		}
		if err := w.Write(c); err != nil {
			tb.Fatal(err)
		}
	}
	for _, d := range f.dxts {
		w.AddName(d.name)
		r := &darshan.DXTRecord{Key: darshan.Key{Module: darshan.DXTPOSIX, Rank: d.rank, ID: darshan.RecordID(d.name)},
			Hostname: d.host, Writes: []darshan.Segment{{Offset: 0, Length: 10, Start: 0.1, End: 0.2}}, HasThreads: true}
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func (f fixtureLog) totals(tb testing.TB) *Totals {
	tb.Helper()
	b := f.bytes(tb)
	l, err := darshan.NewReader(bytes.NewReader(b), int64(len(b)), "fixture.darshan")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	t, err := FromLog(l)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func find(ins []Insight, code string) (Insight, bool) {
	for _, in := range ins {
		if in.Code == code {
			return in, true
		}
	}
	return Insight{}, false
}

// Short constructors for the fixtures.
func posix(rank int64, name string, c map[string]float64) rec {
	return rec{darshan.POSIX, rank, name, prefixed("POSIX_", c)}
}
func mpiio(rank int64, name string, c map[string]float64) rec {
	return rec{darshan.MPIIO, rank, name, prefixed("MPIIO_", c)}
}
func stdio(name string, c map[string]float64) rec {
	return rec{darshan.STDIO, 0, name, prefixed("STDIO_", c)}
}
func prefixed(p string, c map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range c {
		out[p+k] = v
	}
	return out
}
func logOf(recs ...rec) fixtureLog { return fixtureLog{recs: recs} }

type m = map[string]float64

// edge is one trigger's fixtures: fire fires code; each of quiet is
// decided and does not.
type edge struct {
	code  string
	value float64 // the Value of the firing log (NaN: not checked)
	fire  fixtureLog
	quiet []fixtureLog
}

var mpiFile = mpiio(-1, "/m/any", m{"COLL_READS": 1, "COLL_WRITES": 1, "NB_READS": 1, "NB_WRITES": 1})

var edges = []edge{
	{"S01", 0.11, logOf(stdio("/s", m{"BYTES_WRITTEN": 11}), posix(0, "/p", m{"BYTES_WRITTEN": 89})),
		[]fixtureLog{logOf(stdio("/s", m{"BYTES_WRITTEN": 10}), posix(0, "/p", m{"BYTES_WRITTEN": 90}))}},
	{"M01", math.NaN(), logOf(posix(0, "/p", m{"WRITES": 1})),
		[]fixtureLog{logOf(posix(0, "/p", m{"WRITES": 1}), mpiFile)}},
	{"P01", 0.2, logOf(posix(0, "/p", m{"WRITES": 12, "READS": 8})),
		[]fixtureLog{logOf(posix(0, "/p", m{"WRITES": 11, "READS": 9}))}},
	{"P02", 0.2, logOf(posix(0, "/p", m{"WRITES": 8, "READS": 12})),
		[]fixtureLog{logOf(posix(0, "/p", m{"WRITES": 9, "READS": 11}))}},
	{"P03", 0.12, logOf(posix(0, "/p", m{"BYTES_WRITTEN": 56, "BYTES_READ": 44})),
		[]fixtureLog{logOf(posix(0, "/p", m{"BYTES_WRITTEN": 55, "BYTES_READ": 45}))}},
	{"P04", 0.12, logOf(posix(0, "/p", m{"BYTES_WRITTEN": 44, "BYTES_READ": 56})),
		[]fixtureLog{logOf(posix(0, "/p", m{"BYTES_WRITTEN": 45, "BYTES_READ": 55}))}},
	{"P05", 0.1001, logOf(posix(0, "/p", m{"READS": 10000, "SIZE_READ_0_100": 1001, "SIZE_READ_1M_4M": 8999})),
		[]fixtureLog{
			logOf(posix(0, "/p", m{"READS": 20000, "SIZE_READ_100K_1M": 2000, "SIZE_READ_1M_4M": 18000})), // share at the edge
			logOf(posix(0, "/p", m{"READS": 1000, "SIZE_READ_1K_10K": 1000})),                             // count at the edge
		}},
	{"P06", 0.1001, logOf(posix(0, "/p", m{"WRITES": 10000, "SIZE_WRITE_10K_100K": 1001, "SIZE_WRITE_4M_10M": 8999})),
		[]fixtureLog{
			logOf(posix(0, "/p", m{"WRITES": 20000, "SIZE_WRITE_100_1K": 2000, "SIZE_WRITE_1G_PLUS": 18000})),
			logOf(posix(0, "/p", m{"WRITES": 1000, "SIZE_WRITE_0_100": 1000})),
		}},
	{"P07", 0.2, logOf(posix(0, "/p", m{"READS": 5, "WRITES": 5, "MEM_NOT_ALIGNED": 2})),
		[]fixtureLog{logOf(posix(0, "/p", m{"READS": 5, "WRITES": 5, "MEM_NOT_ALIGNED": 1}))}},
	{"P08", 0.2, logOf(posix(0, "/p", m{"READS": 5, "WRITES": 5, "FILE_NOT_ALIGNED": 2})),
		[]fixtureLog{logOf(posix(0, "/p", m{"READS": 5, "WRITES": 5, "FILE_NOT_ALIGNED": 1}))}},
	{"P09", 101, logOf(posix(0, "/p", m{"BYTES_READ": 100, "MAX_BYTE_READ": 101})),
		[]fixtureLog{logOf(posix(0, "/p", m{"BYTES_READ": 100, "MAX_BYTE_READ": 100}))}},
	{"P10", 101, logOf(posix(0, "/p", m{"BYTES_WRITTEN": 100, "MAX_BYTE_WRITTEN": 101})),
		[]fixtureLog{logOf(posix(0, "/p", m{"BYTES_WRITTEN": 100, "MAX_BYTE_WRITTEN": 100}))}},
	{"P11", 0.2004, logOf(posix(0, "/p", m{"READS": 5000, "SEQ_READS": 3998, "CONSEC_READS": 100})),
		[]fixtureLog{
			logOf(posix(0, "/p", m{"READS": 10000, "SEQ_READS": 8000})), // share at the edge
			logOf(posix(0, "/p", m{"READS": 1000, "SEQ_READS": 0})),     // count at the edge
		}},
	{"P13", 0.2004, logOf(posix(0, "/p", m{"WRITES": 5000, "SEQ_WRITES": 3998})),
		[]fixtureLog{
			logOf(posix(0, "/p", m{"WRITES": 10000, "SEQ_WRITES": 8000})),
			logOf(posix(0, "/p", m{"WRITES": 1000})),
		}},
	// P12 and P14 are the good news of P11 and P13: they fire exactly when
	// those stay quiet.
	{"P12", 0.2, logOf(posix(0, "/p", m{"READS": 10000, "SEQ_READS": 8000})),
		[]fixtureLog{logOf(posix(0, "/p", m{"READS": 5000, "SEQ_READS": 3998}))}},
	{"P14", 0.2, logOf(posix(0, "/p", m{"WRITES": 10000, "SEQ_WRITES": 8000})),
		[]fixtureLog{logOf(posix(0, "/p", m{"WRITES": 5000, "SEQ_WRITES": 3998}))}},
	{"P15", 0.1001, logOf(posix(-1, "/shared", m{"READS": 10000, "SIZE_READ_0_100": 1001}), posix(0, "/own", m{"READS": 100000})),
		[]fixtureLog{
			logOf(posix(-1, "/shared", m{"READS": 20000, "SIZE_READ_0_100": 2000})),
			logOf(posix(-1, "/shared", m{"READS": 1000, "SIZE_READ_0_100": 1000})),
		}},
	{"P16", 0.1001, logOf(posix(-1, "/shared", m{"WRITES": 10000, "SIZE_WRITE_0_100": 1001})),
		[]fixtureLog{
			logOf(posix(-1, "/shared", m{"WRITES": 20000, "SIZE_WRITE_0_100": 2000})),
			logOf(posix(-1, "/shared", m{"WRITES": 1000, "SIZE_WRITE_0_100": 1000})),
		}},
	{"P17", 30.5, logOf(posix(3, "/p", m{"F_META_TIME": 30.5}), posix(2, "/q", m{"F_META_TIME": 1})),
		[]fixtureLog{logOf(posix(3, "/p", m{"F_META_TIME": 30}))}},
	{"P18", 0.16, logOf(posix(-1, "/shared", m{"BYTES_WRITTEN": 100, "SLOWEST_RANK_BYTES": 66, "FASTEST_RANK_BYTES": 50})),
		[]fixtureLog{logOf(posix(-1, "/shared", m{"BYTES_WRITTEN": 100, "SLOWEST_RANK_BYTES": 65, "FASTEST_RANK_BYTES": 50}))}},
	{"P19", 0.175, logOf(posix(-1, "/shared", m{"F_WRITE_TIME": 16, "F_READ_TIME": 2, "F_META_TIME": 2, "F_SLOWEST_RANK_TIME": 5.5, "F_FASTEST_RANK_TIME": 2})),
		[]fixtureLog{logOf(posix(-1, "/shared", m{"F_WRITE_TIME": 16, "F_READ_TIME": 2, "F_META_TIME": 2, "F_SLOWEST_RANK_TIME": 5, "F_FASTEST_RANK_TIME": 2}))}},
	{"P21", 0.31, logOf(posix(0, "/f", m{"BYTES_WRITTEN": 100}), posix(1, "/f", m{"BYTES_WRITTEN": 69})),
		[]fixtureLog{logOf(posix(0, "/f", m{"BYTES_WRITTEN": 100}), posix(1, "/f", m{"BYTES_WRITTEN": 70}))}},
	{"P22", 0.31, logOf(posix(0, "/f", m{"BYTES_READ": 100}), posix(1, "/f", m{"BYTES_READ": 69})),
		[]fixtureLog{logOf(posix(0, "/f", m{"BYTES_READ": 100}), posix(1, "/f", m{"BYTES_READ": 70}))}},
	{"M02", 1001, logOf(mpiio(-1, "/m", m{"INDEP_READS": 1001})),
		[]fixtureLog{logOf(mpiio(-1, "/m", m{"INDEP_READS": 1000})), logOf(mpiio(-1, "/m", m{"INDEP_READS": 5000, "COLL_READS": 1}))}},
	{"M03", 1001, logOf(mpiio(-1, "/m", m{"INDEP_WRITES": 1001})),
		[]fixtureLog{logOf(mpiio(-1, "/m", m{"INDEP_WRITES": 1000})), logOf(mpiio(-1, "/m", m{"INDEP_WRITES": 5000, "COLL_WRITES": 1}))}},
	{"M04", 0.5, logOf(mpiio(-1, "/m", m{"INDEP_READS": 1, "COLL_READS": 1})),
		[]fixtureLog{logOf(mpiio(-1, "/m", m{"INDEP_READS": 1}))}},
	{"M05", 0.5, logOf(mpiio(-1, "/m", m{"INDEP_WRITES": 1, "COLL_WRITES": 1})),
		[]fixtureLog{logOf(mpiio(-1, "/m", m{"INDEP_WRITES": 1}))}},
	{"M06", 0, logOf(mpiio(-1, "/m", m{"INDEP_READS": 1})),
		[]fixtureLog{logOf(mpiio(-1, "/m", m{"INDEP_READS": 1, "NB_READS": 1})), logOf(mpiio(-1, "/m", m{"INDEP_WRITES": 1}))}},
	{"M07", 0, logOf(mpiio(-1, "/m", m{"COLL_WRITES": 1})),
		[]fixtureLog{logOf(mpiio(-1, "/m", m{"COLL_WRITES": 1, "NB_WRITES": 1})), logOf(mpiio(-1, "/m", m{"COLL_READS": 1}))}},
	{"M08", 1, aggregatorLog(1), []fixtureLog{aggregatorLog(2), aggregatorLog(3)}},
	{"M09", 3, aggregatorLog(3), []fixtureLog{aggregatorLog(2), aggregatorLog(1)}},
	{"M10", 2, aggregatorLog(2), []fixtureLog{aggregatorLog(1), aggregatorLog(3)}},
}

// aggregatorLog has cb_nodes aggregators on two nodes (DXT hosts n1, n2).
func aggregatorLog(cbNodes int) fixtureLog {
	return fixtureLog{
		meta: "h=romio_no_indep_rw=true;cb_nodes=" + string(rune('0'+cbNodes)) + "\n",
		recs: []rec{mpiio(-1, "/m", m{"COLL_WRITES": 4})},
		dxts: []dxt{{0, "/m", "n1"}, {1, "/m", "n1"}, {2, "/m", "n2"}},
	}
}

func TestTriggerEdges(t *testing.T) {
	cfg := DefaultConfig()
	covered := map[string]bool{}
	for _, e := range edges {
		covered[e.code] = true
		fired, ok := find(Evaluate(e.fire.totals(t), cfg), e.code)
		switch {
		case !ok:
			t.Errorf("%s: the firing log does not decide it", e.code)
		case !fired.Fired:
			t.Errorf("%s: does not fire: %s (value %v)", e.code, fired.Message, fired.Value)
		case !math.IsNaN(e.value) && math.Abs(fired.Value-e.value) > 1e-12:
			t.Errorf("%s: value %v, want %v", e.code, fired.Value, e.value)
		case fired.Code != "P12" && fired.Code != "P14" && fired.Code[0] != 'M' && fired.Level == OK:
			t.Errorf("%s: fired at level OK", e.code)
		}
		for i, q := range e.quiet {
			in, ok := find(Evaluate(q.totals(t), cfg), e.code)
			switch {
			case !ok:
				t.Errorf("%s: quiet log %d does not decide it", e.code, i)
			case in.Fired || in.Level != OK:
				t.Errorf("%s: quiet log %d fires at %s: %s (value %v, threshold %v)", e.code, i, in.Level, in.Message, in.Value, in.Threshold)
			}
		}
	}
	for _, c := range Codes {
		if !covered[c] {
			t.Errorf("%s has no edge fixtures", c)
		}
	}
}

// The levels Drishti gives each code when it fires.
var drishtiLevel = map[string]Level{
	"S01": High, "P01": Info, "P02": Info, "P03": Info, "P04": Info, "P05": High, "P06": High,
	"P07": High, "P08": High, "P09": Warn, "P10": Warn, "P11": High, "P12": OK, "P13": High, "P14": OK,
	"P15": High, "P16": High, "P17": High, "P18": High, "P19": High, "P21": High, "P22": High,
	"M01": Warn, "M02": High, "M03": High, "M04": OK, "M05": OK, "M06": Warn, "M07": Warn,
	"M08": OK, "M09": High, "M10": OK,
}

func TestLevels(t *testing.T) {
	cfg := DefaultConfig()
	for _, e := range edges {
		in, _ := find(Evaluate(e.fire.totals(t), cfg), e.code)
		if want, ok := drishtiLevel[e.code]; !ok || in.Level != want {
			t.Errorf("%s fires at %s, Drishti at %s", e.code, in.Level, want)
		}
		if in.Fired && in.Level >= Warn && len(in.Recommendations) == 0 {
			t.Errorf("%s fires at %s without a recommendation", e.code, in.Level)
		}
	}
}

// Without DXT (or without cb_nodes) M08–M10 are not decided.
func TestAggregatorsNeedDXT(t *testing.T) {
	noDXT := aggregatorLog(2)
	noDXT.dxts = nil
	noHint := aggregatorLog(2)
	noHint.meta = ""
	for _, f := range []fixtureLog{noDXT, noHint} {
		for _, c := range []string{"M08", "M09", "M10"} {
			if in, ok := find(Evaluate(f.totals(t), DefaultConfig()), c); ok {
				t.Errorf("%s decided without DXT or cb_nodes: %+v", c, in)
			}
		}
	}
}

func TestEvaluateOrder(t *testing.T) {
	f := logOf(stdio("/s", m{"BYTES_WRITTEN": 500}), posix(0, "/p", m{"WRITES": 12, "READS": 8, "BYTES_WRITTEN": 10}))
	ins := Evaluate(f.totals(t), DefaultConfig())
	for i := 1; i < len(ins); i++ {
		a, b := ins[i-1], ins[i]
		if a.Level < b.Level || a.Level == b.Level && a.Code > b.Code {
			t.Errorf("%s (%s) before %s (%s)", a.Code, a.Level, b.Code, b.Level)
		}
	}
	if len(ins) == 0 || ins[0].Code != "S01" || ins[0].Level != High {
		t.Errorf("first insight %+v, want S01 HIGH", ins[0])
	}
	if Evaluate(nil, DefaultConfig()) != nil {
		t.Error("Evaluate(nil) is not nil")
	}
}
