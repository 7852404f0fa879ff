package collector

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/logwatch"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// jobLabels matches the identity labels every per-job sample starts with.
var jobLabels = regexp.MustCompile(`^darshan_(?:job|record)_[a-z_]+\{(jobid="[^"]*",uid="[^"]*",exe="[^"]*")`)

// perJobSeries counts the per-job samples of a scrape by identity labels.
func perJobSeries(text string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		if m := jobLabels.FindStringSubmatch(line); m != nil {
			out[m[1]]++
		}
	}
	return out
}

func identityLabels(v *logwatch.JobView) string {
	return fmt.Sprintf(`jobid=%q,uid=%q,exe=%q`, v.JobID, v.UID, v.Exe)
}

// darshanJobSeries counts, job by job, the samples the per-job families
// write — with records and insights, on the fixtures, logs whose insights
// fire and, when present, the corpus — and darshan_retained_series is
// their sum: the series budget counts what a scrape holds.
func TestDarshanJobSeries(t *testing.T) {
	dir := t.TempDir()
	copyLogs := func(glob string) {
		paths, _ := filepath.Glob(glob)
		for i, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(p))), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyLogs(filepath.Join(corpus.Fixtures(t, "darshan"), "*.darshan"))
	if root := corpus.Root(); root != "" {
		copyLogs(filepath.Join(root, "corpus", "darshan", "*", "*.darshan"))
	} else {
		t.Log("corpus absent: the fixtures and generated logs only")
	}
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	for i, n := range []int64{10, 5000} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("small%d.darshan", i)), smallWritesLog(t, int64(70+i), end, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "job.darshan"), darshanLog(t, darshantest.Job{JobID: 80, UID: 1000, Exe: "/bin/a", End: end, Ranks: 4, Bytes: 1 << 20}), 0o644); err != nil {
		t.Fatal(err)
	}
	setFlag(t, &darshanRetention, 100000*time.Hour)
	r, sc := darshanTestRegistry(t, dir, time.Now().Add(time.Hour), true)
	syncSidecar(t, sc)
	text := darshanScrape(t, r)
	got := perJobSeries(text)
	snap := sc.Snapshot()
	if len(snap.Jobs) < 5 {
		t.Fatalf("%d jobs", len(snap.Jobs))
	}
	sum, insights, records, without := 0, 0, 0, 0
	for _, v := range snap.Jobs {
		n := darshanJobSeries(v)
		sum += n
		bare := *v
		bare.Records = nil
		without += darshanJobSeries(&bare)
		insights += len(v.Insights)
		records += len(v.Records)
		if id := identityLabels(v); got[id] != n {
			t.Errorf("job %s: %d series written, darshanJobSeries counts %d", id, got[id], n)
		}
	}
	if insights == 0 || records == 0 {
		t.Errorf("the jobs have %d insights and %d records: the test covers neither", insights, records)
	}
	if got := value(t, text, "darshan_retained_series"); got != float64(sum) || snap.JobSeries != sum {
		t.Errorf("darshan_retained_series %g, snapshot %d, the jobs' sum %d", got, snap.JobSeries, sum)
	}
	t.Logf("%d jobs, %d per-job series (%.1f per job; %.1f without their %d records), %d insights", len(snap.Jobs), sum,
		float64(sum)/float64(len(snap.Jobs)), float64(without)/float64(len(snap.Jobs)), records, insights)
}

// manyLayers returns a valid log whose HEATMAP records name n layers
// (heatmap:L0001…, names a reader must accept as layers): 11 series each.
func manyLayers(t *testing.T, jobID, uid int64, end time.Time, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: uid, JobID: jobID, StartTime: end.Unix() - 60, EndTime: end.Unix(), NProcs: 1}
	w.Exe = "/bin/layers"
	for i := range n {
		h := &darshan.HeatmapRecord{Key: darshan.Key{Module: darshan.Heatmap, Rank: 0, ID: w.AddName(fmt.Sprintf("heatmap:L%04d", i))},
			BinWidth: 1, ReadBins: []int64{100, 0}, WriteBins: []int64{0, 100}}
		if err := w.Write(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// One log can cost thousands of series (a layer per HEATMAP record name);
// --darshan.max-series holds the per-job families to it, at the cost of
// the user whose jobs cost the most, and the other users' jobs stay.
func TestDarshanSeriesBudget(t *testing.T) {
	dir := t.TempDir()
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	for i := range 10 {
		job := darshantest.Job{JobID: int64(100 + i), UID: int64(2000 + i), Exe: "/bin/app", End: end.Add(-time.Hour), Ranks: 2, Bytes: 1 << 20}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("job%d.darshan", i)), darshanLog(t, job), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "layers.darshan"), manyLayers(t, 666, 6666, end, 500), 0o644); err != nil {
		t.Fatal(err)
	}
	setFlag(t, &darshanMaxSeries, 2000)
	r, sc := darshanTestRegistry(t, dir, end.Add(time.Hour), false)
	syncSidecar(t, sc)
	text := darshanScrape(t, r)
	series := 0
	for _, n := range perJobSeries(text) {
		series += n
	}
	if series > 2000 || value(t, text, "darshan_retained_series") != float64(series) {
		t.Errorf("%d per-job series written (darshan_retained_series %g), over the budget of 2000", series, value(t, text, "darshan_retained_series"))
	}
	if got := value(t, text, `darshan_jobs_dropped_total{reason="max_series"}`); got != 1 {
		t.Errorf("dropped for the series budget: %g, want the one job", got)
	}
	if strings.Contains(text, `uid="6666"`) || value(t, text, "darshan_retained_jobs") != 10 {
		t.Errorf("the job of 500 layers is still exported, or other jobs are not: %g jobs", value(t, text, "darshan_retained_jobs"))
	}
	promtoolCheckText(t, text)
}
