package signals

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// Hand-made logs, written with darshan.Writer, that pin every NA reason a
// log can produce and every HEATMAP edge case. `go test ./darshan/signals
// -run Fixtures -update` rewrites them and their reports in
// fixtures/darshan-signals; without -update the test regenerates each log,
// checks that the stored one reads the same, compares its report with the
// stored one and checks the pinned lines below, written by hand from
// SIGNALS.md.

var update = flag.Bool("update", false, "rewrite fixtures/darshan-signals")

// sigFixture is a hand-made log and the report lines it pins: record name
// (or "JOB", "MODULE"), rank, signal → value as the report prints it.
type sigFixture struct {
	name  string
	write func(w *darshan.Writer) error
	pins  []pin
}

type pin struct {
	module darshan.ModuleID // 0 (NullModule) for JOB lines
	record string           // file name; "" for JOB and MODULE lines
	rank   int64
	signal Signal
	want   string
}

// matches compares a report value with the pin: exactly, but for the
// entropies, irrational numbers whose last digit depends on rounding.
func (p pin) matches(got string) bool {
	if got == p.want {
		return true
	}
	if p.signal != ReadActivityEntropyNorm && p.signal != WriteActivityEntropyNorm {
		return false
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(p.want, 64)
	return err1 == nil && err2 == nil && math.Abs(g-w) <= 1e-15
}

// key is the pinned line's report key.
func (p pin) key() string {
	switch {
	case p.module == darshan.NullModule:
		return "JOB\t-1\t0\t" + p.signal.ReportName()
	case p.record == "":
		return p.module.String() + "\t-1\tMODULE\t" + p.signal.ReportName()
	}
	return p.module.String() + "\t" + strconv.FormatInt(p.rank, 10) + "\t" +
		strconv.FormatUint(darshan.RecordID(p.record), 10) + "\t" + p.signal.ReportName()
}

var testJob = darshan.Job{UID: 1000, StartTime: 1700000000, StartNsec: 250000000, EndTime: 1700000100,
	EndNsec: 500000000, NProcs: 16, JobID: 4242, Metadata: "lib_ver=3.5.0\n"}

// counterRec builds a record of data module m with the given counters (by
// name, floats too); the others are 0.
func counterRec(m darshan.ModuleID, rank int64, name string, set map[string]float64) darshan.Record {
	l := darshan.LayoutOf(m, m.CurrentVersion())
	c := darshan.CounterRecord{Key: darshan.Key{Module: m, Rank: rank, ID: darshan.RecordID(name)}, Layout: l,
		Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
	for n, v := range set {
		if i := l.IntIndex(n); i >= 0 {
			c.Ints[i] = int64(v)
		} else if i := l.FloatIndex(n); i >= 0 {
			c.Floats[i] = v
		} else {
			panic("no counter " + n + " in " + m.String())
		}
	}
	switch m {
	case darshan.H5D, darshan.PnetCDFVar:
		return &darshan.DatasetRecord{CounterRecord: c}
	case darshan.DFS:
		return &darshan.DFSRecord{CounterRecord: c}
	case darshan.DAOS:
		return &darshan.DAOSRecord{CounterRecord: c}
	}
	return &c
}

func writeAll(w *darshan.Writer, recs ...darshan.Record) error {
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// name registers a record name with the writer and returns it.
func named(w *darshan.Writer, names ...string) {
	for _, n := range names {
		w.AddName(n)
	}
}

var sigFixtures = []sigFixture{
	{name: "na_reasons", write: naReasonsLog, pins: naReasonsPins},
	{name: "all_unmonitored", write: allUnmonitoredLog, pins: allUnmonitoredPins},
	{name: "heatmap_edges", write: heatmapEdgesLog, pins: heatmapPins},
}

func naReasonsLog(w *darshan.Writer) error {
	named(w, "/na/plain", "/na/idle", "/na/unmonitored", "/na/shared-empty", "/na/shared-nofastest",
		"/na/shared-ok", "/na/garbage-size", "/na/stdio", "/na/mpiio-a", "/na/mpiio-b", "/na/var",
		"/na/dfs", "/na/daos", "/na/h5d")
	P := func(n string) string { return "POSIX_" + n }
	return writeAll(w,
		counterRec(darshan.POSIX, 0, "/na/plain", map[string]float64{
			P("READS"): 4, P("WRITES"): 2, P("BYTES_READ"): 4096, P("BYTES_WRITTEN"): 2048,
			P("F_READ_TIME"): 0.5, P("F_WRITE_TIME"): 0.25, P("F_META_TIME"): 0.25,
			P("SEQ_READS"): 3, P("SEQ_WRITES"): 1, P("CONSEC_READS"): 2, P("CONSEC_WRITES"): 1,
			P("OPENS"): 1, P("STATS"): 1, P("SEEKS"): 2, P("FSYNCS"): 1, P("FILE_NOT_ALIGNED"): 3,
			P("SIZE_READ_1K_10K"): 4, P("SIZE_WRITE_1K_10K"): 1, P("SIZE_WRITE_1M_4M"): 1,
			P("MAX_BYTE_READ"): 4095, P("MAX_BYTE_WRITTEN"): 2047}),
		counterRec(darshan.POSIX, 1, "/na/idle", nil),
		counterRec(darshan.POSIX, 2, "/na/unmonitored", map[string]float64{
			P("BYTES_READ"): -1, P("F_READ_TIME"): -1, P("WRITES"): 1, P("BYTES_WRITTEN"): 10,
			P("F_WRITE_TIME"): 0.125, P("SLOWEST_RANK_BYTES"): -1, P("MAX_BYTE_READ"): -1}),
		counterRec(darshan.POSIX, -1, "/na/shared-empty", nil),
		counterRec(darshan.POSIX, -1, "/na/shared-nofastest", map[string]float64{
			P("BYTES_READ"): 100, P("SLOWEST_RANK_BYTES"): 100, P("F_VARIANCE_RANK_BYTES"): 12.5}),
		counterRec(darshan.POSIX, -1, "/na/shared-ok", map[string]float64{
			P("BYTES_WRITTEN"): 300, P("FASTEST_RANK_BYTES"): 100, P("SLOWEST_RANK_BYTES"): 200,
			P("F_VARIANCE_RANK_BYTES"): 2500}),
		counterRec(darshan.POSIX, 3, "/na/garbage-size", map[string]float64{
			P("MAX_BYTE_READ"): -5, P("MAX_BYTE_WRITTEN"): -3}),
		counterRec(darshan.STDIO, 0, "/na/stdio", map[string]float64{
			"STDIO_READS": 3, "STDIO_BYTES_READ": 300}),
		counterRec(darshan.MPIIO, -1, "/na/mpiio-a", map[string]float64{
			"MPIIO_INDEP_READS": 1, "MPIIO_COLL_READS": 2, "MPIIO_SPLIT_READS": 3, "MPIIO_NB_READS": 4,
			"MPIIO_BYTES_READ": 10240, "MPIIO_F_READ_TIME": 1, "MPIIO_INDEP_WRITES": 1,
			"MPIIO_BYTES_WRITTEN": 512, "MPIIO_F_WRITE_TIME": 0.5}),
		counterRec(darshan.MPIIO, 0, "/na/mpiio-b", map[string]float64{
			"MPIIO_COLL_WRITES": 3, "MPIIO_NB_WRITES": -1, "MPIIO_BYTES_WRITTEN": 1536,
			"MPIIO_F_WRITE_TIME": 0.5, "MPIIO_F_META_TIME": 1}),
		counterRec(darshan.PnetCDFVar, -1, "/na/var", map[string]float64{
			"PNETCDF_VAR_INDEP_READS": 1, "PNETCDF_VAR_COLL_READS": 1, "PNETCDF_VAR_NB_READS": 1,
			"PNETCDF_VAR_BYTES_READ": 3 << 20, "PNETCDF_VAR_F_READ_TIME": 2}),
		counterRec(darshan.DFS, 0, "/na/dfs", map[string]float64{
			"DFS_READS": 1, "DFS_READXS": 1, "DFS_BYTES_READ": 2048, "DFS_F_READ_TIME": 0.5,
			"DFS_F_META_TIME": -1}),
		counterRec(darshan.DAOS, 0, "/na/daos", map[string]float64{
			"DAOS_ARRAY_WRITES": 1, "DAOS_OBJ_UPDATES": 2, "DAOS_KV_PUTS": 3, "DAOS_BYTES_WRITTEN": 600,
			"DAOS_F_WRITE_TIME": 3}),
		counterRec(darshan.H5D, 0, "/na/h5d", map[string]float64{
			"H5D_READS": 2, "H5D_BYTES_READ": 10, "H5D_F_READ_TIME": -0.5}),
	)
}

// Pins of na_reasons, from SIGNALS.md by hand.
var naReasonsPins = []pin{
	// Level 1: POSIX + STDIO, the -1 of /na/unmonitored skipped.
	{0, "", 0, TotalBytesRead, "4496"}, // 4096 + 100 (shared-nofastest) + 300 (stdio)
	{0, "", 0, TotalBytesWritten, "2358"},
	{0, "", 0, TotalReads, "7"},
	{0, "", 0, TotalWrites, "3"},

	// Level 2.
	{darshan.POSIX, "", 0, ReadBW, "0.0035569932725694445"}, // 4196 B / 1.125 s (read .5 + write .375 + meta .25)
	{darshan.POSIX, "", 0, AvgReadSize, "1049"},             // 4196 / 4
	{darshan.STDIO, "", 0, ReadBW, "NA(no_time)"},           // no time at all
	{darshan.STDIO, "", 0, AvgReadSize, "100"},              //
	{darshan.STDIO, "", 0, AvgWriteSize, "NA(no_writes)"},   //
	{darshan.MPIIO, "", 0, ReadIOPS, "3.3333333333333335"},  // 10 reads / 3 s
	{darshan.MPIIO, "", 0, WriteIOPS, "1.3333333333333333"}, // 1 + 3 (the -1 skipped) / 3 s
	{darshan.DFS, "", 0, ReadBW, "NA(not_monitored)"},       // its only meta time is -1
	{darshan.DFS, "", 0, AvgReadSize, "1024"},               // 2048 / (READS + READXS)
	{darshan.DAOS, "", 0, AvgWriteSize, "100"},              // 600 / 6
	{darshan.PnetCDFVar, "", 0, ReadBW, "1.5"},              // 3 MiB / 2 s
	{darshan.H5D, "", 0, ReadBW, "NA(no_time)"},             // a negative time is no time
	{darshan.POSIX, "", 0, WriteIOPS, "2.6666666666666665"}, // 3 / 1.125

	// Level 3: every formula on /na/plain.
	{darshan.POSIX, "/na/plain", 0, ReadBW, "0.0078125"},
	{darshan.POSIX, "/na/plain", 0, WriteBW, "0.0078125"},
	{darshan.POSIX, "/na/plain", 0, ReadIOPS, "8"},
	{darshan.POSIX, "/na/plain", 0, WriteIOPS, "8"},
	{darshan.POSIX, "/na/plain", 0, AvgReadSize, "1024"},
	{darshan.POSIX, "/na/plain", 0, AvgWriteSize, "1024"},
	{darshan.POSIX, "/na/plain", 0, SeqReadRatio, "0.75"},
	{darshan.POSIX, "/na/plain", 0, SeqWriteRatio, "0.5"},
	{darshan.POSIX, "/na/plain", 0, ConsecReadRatio, "0.5"},
	{darshan.POSIX, "/na/plain", 0, ConsecWriteRatio, "0.5"},
	{darshan.POSIX, "/na/plain", 0, SeqRatio, "0.6666666666666666"},
	{darshan.POSIX, "/na/plain", 0, ConsecRatio, "0.5"},
	{darshan.POSIX, "/na/plain", 0, MetaOps, "5"},
	{darshan.POSIX, "/na/plain", 0, MetaIntensity, "0.8333333333333334"},
	{darshan.POSIX, "/na/plain", 0, MetaFraction, "0.25"},
	{darshan.POSIX, "/na/plain", 0, UnalignedReadRatio, "0.75"},
	{darshan.POSIX, "/na/plain", 0, UnalignedWriteRatio, "1.5"}, // above 1, not clamped
	{darshan.POSIX, "/na/plain", 0, SmallReadRatio, "1"},
	{darshan.POSIX, "/na/plain", 0, SmallWriteRatio, "0.5"}, // the 1M_4M write is not small
	{darshan.POSIX, "/na/plain", 0, ReuseProxy, "1"},
	{darshan.POSIX, "/na/plain", 0, RankImbalanceRatio, "NA(not_shared_file)"},
	{darshan.POSIX, "/na/plain", 0, BWVarianceProxy, "NA(not_shared_file)"},
	{darshan.POSIX, "/na/plain", 0, IsShared, "0"},

	// The own reasons, on a record that did nothing.
	{darshan.POSIX, "/na/idle", 1, ReadBW, "NA(no_read_time)"},
	{darshan.POSIX, "/na/idle", 1, WriteBW, "NA(no_write_time)"},
	{darshan.POSIX, "/na/idle", 1, ReadIOPS, "NA(no_read_time)"},
	{darshan.POSIX, "/na/idle", 1, WriteIOPS, "NA(no_write_time)"},
	{darshan.POSIX, "/na/idle", 1, AvgReadSize, "NA(no_reads)"},
	{darshan.POSIX, "/na/idle", 1, AvgWriteSize, "NA(no_writes)"},
	{darshan.POSIX, "/na/idle", 1, SeqReadRatio, "NA(no_reads)"},
	{darshan.POSIX, "/na/idle", 1, SeqWriteRatio, "NA(no_writes)"},
	{darshan.POSIX, "/na/idle", 1, SeqRatio, "NA(no_io)"},
	{darshan.POSIX, "/na/idle", 1, ConsecRatio, "NA(no_io)"},
	{darshan.POSIX, "/na/idle", 1, MetaOps, "0"},
	{darshan.POSIX, "/na/idle", 1, MetaIntensity, "NA(no_io)"},
	{darshan.POSIX, "/na/idle", 1, MetaFraction, "NA(no_time)"},
	{darshan.POSIX, "/na/idle", 1, SmallWriteRatio, "NA(no_writes)"},
	{darshan.POSIX, "/na/idle", 1, ReuseProxy, "0"},
	{darshan.POSIX, "/na/idle", 1, RankImbalanceRatio, "NA(not_shared_file)"}, // before no_bytes

	// not_monitored comes before the signal's own reasons.
	{darshan.POSIX, "/na/unmonitored", 2, ReadBW, "NA(not_monitored)"},      // not no_read_time
	{darshan.POSIX, "/na/unmonitored", 2, AvgReadSize, "NA(not_monitored)"}, // not no_reads
	{darshan.POSIX, "/na/unmonitored", 2, ReadIOPS, "NA(not_monitored)"},
	{darshan.POSIX, "/na/unmonitored", 2, WriteBW, "0.0000762939453125"},
	{darshan.POSIX, "/na/unmonitored", 2, RankImbalanceRatio, "NA(not_monitored)"}, // before not_shared_file
	{darshan.POSIX, "/na/unmonitored", 2, BWVarianceProxy, "NA(not_monitored)"},    // BYTES_READ is -1
	{darshan.POSIX, "/na/unmonitored", 2, ReuseProxy, "NA(not_monitored)"},
	{darshan.POSIX, "/na/unmonitored", 2, MetaFraction, "NA(not_monitored)"},

	// Shared files.
	{darshan.POSIX, "/na/shared-empty", -1, RankImbalanceRatio, "NA(no_bytes)"},
	{darshan.POSIX, "/na/shared-empty", -1, BWVarianceProxy, "NA(no_bytes)"},
	{darshan.POSIX, "/na/shared-empty", -1, IsShared, "1"},
	{darshan.POSIX, "/na/shared-nofastest", -1, RankImbalanceRatio, "NA(no_fastest_bytes)"},
	{darshan.POSIX, "/na/shared-nofastest", -1, BWVarianceProxy, "12.5"},
	{darshan.POSIX, "/na/shared-ok", -1, RankImbalanceRatio, "2"},
	{darshan.POSIX, "/na/shared-ok", -1, BWVarianceProxy, "2500"},

	// Garbage below -1: no file size; a negative time is no time.
	{darshan.POSIX, "/na/garbage-size", 3, ReuseProxy, "NA(no_file_size)"},
	{darshan.H5D, "/na/h5d", 0, ReadBW, "NA(no_read_time)"},
	{darshan.H5D, "/na/h5d", 0, AvgReadSize, "5"},

	// The sums that make reads and writes.
	{darshan.MPIIO, "/na/mpiio-a", -1, ReadIOPS, "10"},
	{darshan.MPIIO, "/na/mpiio-a", -1, AvgReadSize, "1024"},
	{darshan.MPIIO, "/na/mpiio-b", 0, WriteIOPS, "NA(not_monitored)"}, // NB_WRITES is -1
	{darshan.PnetCDFVar, "/na/var", -1, AvgReadSize, "1048576"},
	{darshan.DFS, "/na/dfs", 0, ReadIOPS, "4"},
	{darshan.DFS, "/na/dfs", 0, ReadBW, "0.00390625"}, // the -1 meta time is no input of record rates
	{darshan.DAOS, "/na/daos", 0, WriteIOPS, "2"},
	{darshan.STDIO, "/na/stdio", 0, ReadBW, "NA(no_read_time)"},
}

func allUnmonitoredLog(w *darshan.Writer) error {
	named(w, "/um/all")
	l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	set := map[string]float64{}
	for _, n := range l.Ints {
		set[n] = -1
	}
	for _, n := range l.Floats {
		set[n] = -1
	}
	return writeAll(w, counterRec(darshan.POSIX, 0, "/um/all", set))
}

var allUnmonitoredPins = func() []pin {
	var out []pin
	for _, s := range JobSignals {
		out = append(out, pin{0, "", 0, s, "NA(not_monitored)"})
	}
	for _, s := range ModuleSignals {
		out = append(out, pin{darshan.POSIX, "", 0, s, "NA(not_monitored)"})
	}
	for _, s := range posixRecordSignals {
		want := "NA(not_monitored)"
		if s == IsShared {
			want = "0"
		}
		out = append(out, pin{darshan.POSIX, "/um/all", 0, s, want})
	}
	return out
}()

func heatmapRec(rank int64, layer string, width float64, read, write []int64) darshan.Record {
	return &darshan.HeatmapRecord{Key: darshan.Key{Module: darshan.Heatmap, Rank: rank, ID: darshan.RecordID("heatmap:" + layer)},
		BinWidth: width, ReadBins: read, WriteBins: write}
}

func heatmapEdgesLog(w *darshan.Writer) error {
	named(w, "heatmap:POSIX", "heatmap:STDIO")
	// Bin counts avoid the first record's ± 1 (which the reader pads or
	// cuts, as darshan-util does).
	return writeAll(w,
		heatmapRec(0, "POSIX", 0.5, []int64{0, 4, 4, 0, 0, 0, 0, 0}, []int64{0, 0, 0, 0, 8, 0, 0, 0}),
		heatmapRec(1, "POSIX", 0.25, []int64{0, 5, 0, 5}, []int64{0, 0, 0, 0}),              // tie
		heatmapRec(2, "POSIX", 2, []int64{7}, []int64{3}),                                   // N = 1
		heatmapRec(3, "POSIX", 0.5, []int64{0, 0, 0}, []int64{0, 0, 0}),                     // all zero
		heatmapRec(4, "POSIX", math.NaN(), []int64{1, 2}, []int64{3, 4}),                    // missing width
		heatmapRec(5, "POSIX", 0, []int64{1, 2}, []int64{3, 4}),                             // zero width
		heatmapRec(6, "POSIX", -2, []int64{1, 2}, []int64{3, 4}),                            // negative width
		heatmapRec(7, "POSIX", -1, []int64{1, 2}, []int64{3, 4}),                            // width -1
		heatmapRec(8, "POSIX", 0, []int64{1, -1}, []int64{3, 4}),                            // a bin -1 (and no width)
		heatmapRec(9, "POSIX", 1, nil, nil),                                                 // N = 0
		heatmapRec(0, "STDIO", 0.125, []int64{0, 2, 0, 0, 0}, []int64{2, 0, 0, 0, 2}),       // tie across R and W
		heatmapRec(1, "STDIO", 0.125, []int64{1, 1, 1, 1, 1, 1}, []int64{1, 1, 1, 1, 1, 1}), // uniform: entropy 1
	)
}

var heatmapPins = func() []pin {
	h := func(rank int64, layer string, s Signal, want string) pin {
		return pin{darshan.Heatmap, "heatmap:" + layer, rank, s, want}
	}
	out := []pin{
		h(0, "POSIX", TotalReadEvents, "8"),
		h(0, "POSIX", TotalWriteEvents, "8"),
		h(0, "POSIX", ActiveBins, "3"),
		h(0, "POSIX", ActiveTime, "1.5"),
		h(0, "POSIX", ActivitySpan, "2"),
		h(0, "POSIX", PeakActivityBin, "4"),
		h(0, "POSIX", PeakActivityValue, "8"),
		h(0, "POSIX", ReadActivityEntropyNorm, strconv.FormatFloat(math.Log(2)/math.Log(8), 'f', -1, 64)),
		h(0, "POSIX", WriteActivityEntropyNorm, "0"),
		h(0, "POSIX", Top1Share, "0.5"),

		h(1, "POSIX", PeakActivityBin, "1"), // bins 1 and 3 tie: the lowest index
		h(1, "POSIX", PeakActivityValue, "5"),
		h(1, "POSIX", ActivitySpan, "0.75"),
		h(1, "POSIX", ActiveTime, "0.5"),
		h(1, "POSIX", ReadActivityEntropyNorm, "0.5"),
		h(1, "POSIX", Top1Share, "0.5"),

		h(2, "POSIX", ActiveBins, "1"), // N = 1
		h(2, "POSIX", ActivitySpan, "2"),
		h(2, "POSIX", PeakActivityBin, "0"),
		h(2, "POSIX", PeakActivityValue, "10"),
		h(2, "POSIX", ReadActivityEntropyNorm, "0"), // N ≤ 1
		h(2, "POSIX", WriteActivityEntropyNorm, "0"),
		h(2, "POSIX", Top1Share, "1"),

		h(3, "POSIX", TotalReadEvents, "0"), // all zero
		h(3, "POSIX", ActiveBins, "0"),
		h(3, "POSIX", ActiveTime, "0"),
		h(3, "POSIX", ActivitySpan, "0"),
		h(3, "POSIX", PeakActivityBin, "0"),
		h(3, "POSIX", PeakActivityValue, "0"),
		h(3, "POSIX", ReadActivityEntropyNorm, "0"),
		h(3, "POSIX", Top1Share, "0"),

		h(9, "POSIX", ActiveBins, "0"), // N = 0
		h(9, "POSIX", PeakActivityBin, "0"),
		h(9, "POSIX", Top1Share, "0"),

		h(0, "STDIO", PeakActivityBin, "0"), // A = [2 2 0 0 2]: the lowest index
		h(0, "STDIO", PeakActivityValue, "2"),
		h(0, "STDIO", Top1Share, strconv.FormatFloat(2.0/6, 'f', -1, 64)),
		h(0, "STDIO", ActivitySpan, "0.625"),
		h(1, "STDIO", ReadActivityEntropyNorm, "1"),
		h(1, "STDIO", WriteActivityEntropyNorm, "1"),
	}
	for _, s := range HeatmapSignals {
		out = append(out,
			h(4, "POSIX", s, "NA(no_bin_width)"), h(5, "POSIX", s, "NA(no_bin_width)"),
			h(6, "POSIX", s, "NA(no_bin_width)"), h(7, "POSIX", s, "NA(not_monitored)"),
			h(8, "POSIX", s, "NA(not_monitored)"))
	}
	return out
}()

func makeFixture(t testing.TB, f sigFixture) []byte {
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = testJob
	w.Exe = "/opt/app/bin/solver --input /scratch/in.dat"
	w.Mounts = []darshan.Mount{{Path: "/scratch", Type: "lustre"}, {Path: "/", Type: "ext4"}}
	if err := f.write(w); err != nil {
		t.Fatalf("%s: %v", f.name, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: %v", f.name, err)
	}
	return buf.Bytes()
}

func reportOf(t testing.TB, data []byte, name string) []byte {
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out bytes.Buffer
	if err := WriteReport(&out, l); err != nil {
		t.Fatalf("%s: report: %v", name, err)
	}
	return out.Bytes()
}

func TestFixtures(t *testing.T) {
	dir := corpus.Fixtures(t, "darshan-signals")
	reasons := map[string]bool{}
	for _, f := range sigFixtures {
		logPath := filepath.Join(dir, f.name+".darshan")
		reportPath := filepath.Join(dir, f.name+".signals.txt")
		fresh := makeFixture(t, f)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(logPath, fresh, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(reportPath, reportOf(t, fresh, f.name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(f.name, func(t *testing.T) {
			data, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatalf("%v (go test ./darshan/signals -run Fixtures -update writes it)", err)
			}
			report := reportOf(t, data, f.name)
			// The stored log holds what its generator writes (compared by
			// report: zlib bytes may change with the Go release).
			if !bytes.Equal(report, reportOf(t, fresh, f.name)) {
				t.Errorf("%s no longer matches its generator; run -update", logPath)
			}
			want, err := os.ReadFile(reportPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(report, want) {
				t.Errorf("report differs from %s:\n%s", reportPath, firstDiff(string(want), string(report)))
			}
			_, _, vals, err := reportLines(report)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range f.pins {
				got, ok := vals[p.key()]
				if !ok {
					t.Errorf("no line %q", p.key())
					continue
				}
				if !p.matches(got) {
					t.Errorf("%s = %s, want %s", p.key(), got, p.want)
				}
			}
			for _, v := range vals {
				if r, ok := strings.CutPrefix(v, "NA("); ok {
					reasons[strings.TrimSuffix(r, ")")] = true
				}
			}
		})
	}
	// Every reason a log can give appears; not_available cannot come from
	// a log (TestNoModuleVersionLacksAnInput) and is pinned on Inputs.
	for r := NotMonitored; r < numReasons; r++ {
		if !reasons[r.String()] {
			t.Errorf("no fixture pins NA(%s)", r)
		}
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\nwant " + w + "\ngot  " + g
		}
	}
	return ""
}

// not_available: every module version the reader knows has every counter
// the signals read, so no log can produce it — this test fails, and asks
// for a fixture, the day one does not.
func TestNoModuleVersionLacksAnInput(t *testing.T) {
	for _, m := range DataModules {
		d := dataModuleTable[m]
		for v := uint32(1); v <= m.CurrentVersion(); v++ {
			l := darshan.LayoutOf(m, v)
			if l == nil {
				continue
			}
			for s := range numSlots {
				n := d.names[s]
				if n == "" {
					continue
				}
				ok := l.HasInt(l.IntIndex(n))
				if d.floats&(1<<s) != 0 {
					ok = l.HasFloat(l.FloatIndex(n))
				}
				if !ok {
					t.Errorf("%s version %d lacks %s: add a fixture pinning NA(not_available) with it", m, v, n)
				}
			}
		}
	}
}

// NA(not_available) and its precedence, on Inputs built by hand: a record
// whose module version lacks an input.
func TestNotAvailable(t *testing.T) {
	rec := counterRec(darshan.POSIX, 0, "/x", map[string]float64{"POSIX_READS": 0, "POSIX_BYTES_READ": -1})
	in, ok := RecordInputs(rec)
	if !ok {
		t.Fatal("not a data module record")
	}
	in.avail &^= 1 << sReadTime // as if the version had no POSIX_F_READ_TIME
	for s, want := range map[Signal]string{
		ReadBW:       "NA(not_available)", // before not_monitored (BYTES_READ is -1)
		ReadIOPS:     "NA(not_available)",
		MetaFraction: "NA(not_available)",
		AvgReadSize:  "NA(not_monitored)", // does not read the time
		SeqReadRatio: "NA(no_reads)",
	} {
		if got := in.RecordSignal(s, 0).String(); got != want {
			t.Errorf("%s = %s, want %s", s, got, want)
		}
	}
	// A sum keeps it only when no record has the counter.
	sum := Inputs{Module: darshan.POSIX}
	sum.Add(&in)
	if got := sum.ModuleSignal(ReadBW).String(); got != "NA(not_available)" {
		t.Errorf("module read_bw = %s", got)
	}
	full, _ := RecordInputs(counterRec(darshan.POSIX, 1, "/y", map[string]float64{"POSIX_READS": 1, "POSIX_BYTES_READ": 8, "POSIX_F_READ_TIME": 1}))
	sum.Add(&full)
	if got := sum.ModuleSignal(ReadBW).String(); got != "0.00000762939453125" {
		t.Errorf("module read_bw with one record having the time = %s", got)
	}
}
