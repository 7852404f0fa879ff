package signals

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

func fixtureLog(t testing.TB, name string) *darshan.Log {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "darshan-signals"), name+".darshan"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSummarizeMatchesReport(t *testing.T) {
	l := fixtureLog(t, "na_reasons")
	s := Summarize(l, 3)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if s.JobID != 4242 || s.UID != 1000 || s.NProcs != 16 || s.Start != 1700000000.25 || s.End != 1700000100.5 || s.Version != "3.41" {
		t.Errorf("job data %+v", s)
	}
	a := Analyze(l)
	if len(a.Modules) != len(s.Modules) {
		t.Fatalf("%d modules, the analysis has %d", len(s.Modules), len(a.Modules))
	}
	for i := range a.Modules {
		for _, sig := range ModuleSignals {
			if got, want := s.Modules[i].ModuleSignal(sig), a.Modules[i].ModuleSignal(sig); got != want {
				t.Errorf("%s %s = %v, analysis %v", s.Modules[i].Module, sig, got, want)
			}
		}
	}
	for sig, want := range map[Signal]string{
		TotalBytesRead: "4496", TotalWrites: "3",
	} {
		if got := s.JobSignal(sig).String(); got != want {
			t.Errorf("job %s = %s, want %s", sig, got, want)
		}
	}
	// The job-level POSIX ratios are the record formulas on the sums:
	// SEQ_READS 3 of READS 4; rank imbalance over the shared records:
	// slowest 100 + 200 over fastest 0 + 100.
	for sig, want := range map[Signal]string{
		SeqReadRatio: "0.75", SeqWriteRatio: "0.3333333333333333", MetaOps: "5",
		MetaIntensity: "0.7142857142857143", UnalignedWriteRatio: "1", SmallWriteRatio: "0.3333333333333333",
		RankImbalanceRatio: "3",
		MetaFraction:       "0.2222222222222222", // 0.25 / 1.125
	} {
		if got := s.POSIXJobSignal(sig).String(); got != want {
			t.Errorf("job-level POSIX %s = %s, want %s", sig, got, want)
		}
	}
	// The largest records by bytes read + written, most first.
	var got []string
	for _, r := range s.Records {
		got = append(got, strconv.FormatUint(r.Key.ID, 10)+"@"+r.Key.Module.String())
	}
	want := []string{
		strconv.FormatUint(darshan.RecordID("/na/mpiio-a"), 10) + "@MPI-IO",  // 10240 + 512
		strconv.FormatUint(darshan.RecordID("/na/plain"), 10) + "@POSIX",     // 6144
		strconv.FormatUint(darshan.RecordID("/na/var"), 10) + "@PNETCDF_VAR", // 3 MiB
	}
	want[0], want[1], want[2] = want[2], want[0], want[1]
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("records %v, want %v", got, want)
	}
	if r := s.Records[0]; r.Signal(ReadBW).String() != "1.5" {
		t.Errorf("record signal %v", r.Signal(ReadBW))
	}
}

func TestSummaryWithoutSharedFiles(t *testing.T) {
	s := Summarize(fixtureLog(t, "all_unmonitored"), 0)
	if got := s.POSIXJobSignal(RankImbalanceRatio).String(); got != "NA(not_shared_file)" {
		t.Errorf("rank imbalance %s", got)
	}
	if got := s.POSIXJobSignal(SeqReadRatio).String(); got != "NA(not_monitored)" {
		t.Errorf("seq_read_ratio %s", got)
	}
	if len(s.Records) != 0 {
		t.Errorf("%d records kept with maxRecords 0", len(s.Records))
	}
	s = Summarize(fixtureLog(t, "heatmap_edges"), 0)
	if got := s.POSIXJobSignal(RankImbalanceRatio).String(); got != "NA(not_shared_file)" {
		t.Errorf("rank imbalance without POSIX records %s", got)
	}
	if got := s.POSIXJobSignal(SeqReadRatio).String(); got != "NA(no_reads)" {
		t.Errorf("seq_read_ratio without POSIX records %s", got)
	}
}

func TestSummaryLayers(t *testing.T) {
	s := Summarize(fixtureLog(t, "heatmap_edges"), 0)
	if len(s.Layers) != 2 || s.Layers[0].Name != "POSIX" || s.Layers[1].Name != "STDIO" {
		t.Fatalf("layers %+v", s.Layers)
	}
	p := s.Layers[0]
	// Summed: ranks 0-3 and 9 (widths 0.5, 0.25, 2, 0.5, 1), all from the
	// job start; ranks 4-8 have no signals and are left out, the first
	// reason kept (not_monitored comes before no_bin_width).
	if p.Records != 5 || p.NA != NotMonitored {
		t.Errorf("POSIX layer: %d records, NA %v", p.Records, p.NA)
	}
	if p.Width != 2 {
		t.Errorf("width %g, want the widest, 2", p.Width)
	}
	v := p.Signals()
	if got := v.Get(TotalReadEvents).String(); got != "25" { // 8 + 10 + 7 + 0
		t.Errorf("read events %s", got)
	}
	if got := v.Get(TotalWriteEvents).String(); got != "11" {
		t.Errorf("write events %s", got)
	}
	// 0.5-s bins 1, 2 and 4 ([0.5, 2.5)) and 0.25-s bins 1 and 3 fall into
	// the 2-s bins 0 and 1: 4 + 4 + 5 + 5 + 10 (rank 2) in bin 0, 8 in bin 1.
	if got := v.Get(PeakActivityBin).String() + " " + v.Get(PeakActivityValue).String(); got != "0 28" {
		t.Errorf("peak %s", got)
	}
	if got := v.Get(ActivitySpan).String(); got != "4" {
		t.Errorf("span %s", got)
	}
}

func TestLayerAlignsOnTime(t *testing.T) {
	var l Layer
	l.Add(100, &Heatmap{Width: 1, Read: []int64{1, 2, 3}, Write: []int64{0, 0, 0}})
	// Starts 1.5 s earlier with half-second bins: bin k at 98.5 + k/2.
	l.Add(98.5, &Heatmap{Width: 0.5, Read: []int64{10, 20, 30, 40}, Write: []int64{1, 0, 0, 0}})
	if l.Start != 98.5 || l.Width != 1 {
		t.Fatalf("start %g width %g", l.Start, l.Width)
	}
	// 1-s bins from 98.5: bin 0 gets the new 10 and 20, bin 1 the new 30
	// and 40 and the old bin 0 (at 100: offset 1.5), bins 2 and 3 the old
	// bins 1 and 2.
	want := []int64{30, 71, 2, 3}
	if len(l.Read) != 4 {
		t.Fatalf("read %v", l.Read)
	}
	for i := range want {
		if l.Read[i] != want[i] {
			t.Fatalf("read %v, want %v", l.Read, want)
		}
	}
	if l.Write[0] != 1 {
		t.Errorf("write %v", l.Write)
	}
	// Two logs a day apart: the width doubles until the bins fit.
	var far Layer
	far.Add(0, &Heatmap{Width: 0.1, Read: []int64{5}, Write: []int64{0}})
	far.Add(86400, &Heatmap{Width: 0.1, Read: []int64{7}, Write: []int64{1}})
	if n := len(far.Read); n > maxLayerBins {
		t.Fatalf("%d bins", n)
	}
	v := far.Signals()
	if v.Get(TotalReadEvents).V != 12 || v.Get(TotalWriteEvents).V != 1 || v.Get(ActiveBins).V != 2 {
		t.Errorf("far: %v", v)
	}
}

func TestMerge(t *testing.T) {
	a := Summarize(fixtureLog(t, "na_reasons"), 2)
	b := Summarize(fixtureLog(t, "na_reasons"), 2)
	b.Start, b.End, b.NProcs, b.Version = a.Start-50, a.End+10, 4, "3.21"
	m := Merge(2, a, b)
	if m.Logs != 2 || m.Start != a.Start-50 || m.End != a.End+10 || m.NProcs != 16 || m.Version != "3.21" {
		t.Errorf("merged job data: logs %d start %f end %f nprocs %d version %s", m.Logs, m.Start, m.End, m.NProcs, m.Version)
	}
	if got := m.JobSignal(TotalBytesRead).String(); got != "8992" {
		t.Errorf("total bytes read %s", got)
	}
	// Ratios of sums of identical logs are the same ratios.
	for _, sig := range POSIXJobSignals {
		if sig == MetaOps {
			continue // a count, not a ratio
		}
		if got, want := m.POSIXJobSignal(sig), a.POSIXJobSignal(sig); got != want {
			t.Errorf("%s = %v, one log gives %v", sig, got, want)
		}
	}
	if len(m.Records) != 2 || m.Records[0].Bytes() != 2*a.Records[0].Bytes() {
		t.Errorf("records not summed by key: %d, %g vs %g", len(m.Records), m.Records[0].Bytes(), a.Records[0].Bytes())
	}
	if a.JobSignal(TotalBytesRead).String() != "4496" {
		t.Error("Merge changed its input")
	}
}

func TestValueFormat(t *testing.T) {
	for v, want := range map[Value]string{
		num(0): "0", num(math.Copysign(0, -1)): "0", num(1048576): "1048576", num(0.1): "0.1", num(1e-7): "0.0000001",
		num(1e21): "1000000000000000000000", num(2.5): "2.5", na(NoBinWidth): "NA(no_bin_width)",
	} {
		if got := v.String(); got != want {
			t.Errorf("%v formats as %q, want %q", v, got, want)
		}
	}
	for r := NotAvailable; r < numReasons; r++ {
		if back, ok := ParseReason(r.String()); !ok || back != r {
			t.Errorf("reason %v does not read back", r)
		}
	}
	if TotalBytesRead.ReportName() != "SIGNAL_TOTAL_BYTES_READ" || Top1Share.ReportName() != "SIGNAL_TOP1_SHARE" {
		t.Error("report names")
	}
}

func TestLayerName(t *testing.T) {
	names := map[uint64]string{1: "heatmap:NEWLAYER", 2: "/home/alice/secret.dat", 3: "heatmap:../x"}
	for id, want := range map[uint64]string{
		darshan.RecordID("heatmap:MPIIO"): "MPIIO", 1: "NEWLAYER", 2: "unknown", 3: "unknown", 4: "unknown",
	} {
		if got := LayerName(id, names); got != want {
			t.Errorf("layer of %d = %q, want %q", id, got, want)
		}
	}
}
