package collector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// smallWritesLog is a one-rank log of n 4 KiB POSIX writes, sequential and
// aligned: P06 (small writes) fires past 1000 of them. Its command line and
// file name hold a path, which must never reach a label.
func smallWritesLog(t *testing.T, jobID int64, end time.Time, n int64) []byte {
	t.Helper()
	data, err := darshantest.SmallWrites(jobID, end, n, "/opt/app/bin/logger --out /scratch/secret/x", "/scratch/secret/out.dat")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func insightScrape(t *testing.T, logs map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	r, sc := darshanTestRegistry(t, dir, end.Add(time.Hour), false)
	syncSidecar(t, sc)
	return darshanScrape(t, r)
}

// The insight families: a job of 5000 small writes has P06 at HIGH with
// its value and threshold, the code's recommendation is exported once, and
// the scrape passes promtool.
func TestDarshanInsightFamilies(t *testing.T) {
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	text := insightScrape(t, map[string][]byte{
		"a_id61-1_1.darshan": smallWritesLog(t, 61, end, 5000),
		"b_id62-1_1.darshan": smallWritesLog(t, 62, end, 10),
	})
	job := `{jobid="61",uid="1000",exe="logger",code="P06"`
	for series, want := range map[string]float64{
		`darshan_job_insight` + job + `,level="HIGH"}`: 1,
		`darshan_job_insight_value` + job + `}`:        1,
		`darshan_job_insight_threshold` + job + `}`:    0.1,
		`darshan_insights_failed_total`:                0,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %g, want %g", series, got, want)
		}
	}
	if strings.Contains(text, `jobid="62",uid="1000",exe="logger",code="P06"`) {
		t.Error("10 small writes fired P06")
	}
	// M01 (no MPI-IO) fired for both, and has no value: no value series.
	if value(t, text, `darshan_job_insight{jobid="62",uid="1000",exe="logger",code="M01",level="WARN"}`) != 1 ||
		strings.Contains(text, `darshan_job_insight_value{jobid="62",uid="1000",exe="logger",code="M01"}`) {
		t.Error("M01: want the insight, without a value")
	}
	if n := strings.Count(text, `darshan_insight_info{code="P06",recommendation="`); n != 1 {
		t.Errorf("%d P06 recommendations", n)
	}
	if n := strings.Count(text, `darshan_insight_info{code="M01",`); n != 1 {
		t.Errorf("%d M01 recommendations (one per code, not per job)", n)
	}
	if strings.Contains(text, `darshan_insight_info{code="P04"`) {
		t.Error("an INFO code (no recommendation) in darshan_insight_info")
	}
	for _, leak := range []string{"/scratch", "secret"} {
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, leak) && !strings.HasPrefix(l, "#") {
				t.Errorf("%q leaks into %s", leak, l)
			}
		}
	}
	promtoolCheckText(t, text)
}

// --no-darshan.insights: no insight series at all.
func TestDarshanInsightsOff(t *testing.T) {
	setFlag(t, &darshanInsights, false)
	text := insightScrape(t, map[string][]byte{"a_id61-1_1.darshan": smallWritesLog(t, 61, time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), 5000)})
	if strings.Contains(text, "insight") {
		t.Errorf("insights off, yet:\n%s", text)
	}
	if !strings.Contains(text, `darshan_job_info{jobid="61"`) {
		t.Error("no job")
	}
}

// --darshan.insights-config: the thresholds apply; a file that does not
// load stops the exporter at start, drop directory or not.
func TestDarshanInsightsConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "thresholds.json")
	if err := os.WriteFile(cfg, []byte(`{"small": {"requests_absolute": 100}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	setFlag(t, &darshanInsightsConfig, cfg)
	text := insightScrape(t, map[string][]byte{"a_id63-1_1.darshan": smallWritesLog(t, 63, time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), 500)})
	if value(t, text, `darshan_job_insight{jobid="63",uid="1000",exe="logger",code="P06",level="HIGH"}`) != 1 {
		t.Errorf("500 small writes past small.requests_absolute=100 did not fire P06:\n%s", text)
	}

	for name, content := range map[string]string{
		"ratio":   `{"small": {"requests": 2}}`,
		"unknown": `{"smal": {"requests": 0.2}}`,
		"syntax":  `{"small": `,
		"missing": "",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.json")
			if content != "" {
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			setFlag(t, &darshanInsightsConfig, path)
			for _, dirs := range [][]string{nil, {t.TempDir()}} {
				onlyCollectors(t, "darshan")
				setFlag(t, &darshanDirs, dirs)
				setFlag(t, &darshanNoInotify, true)
				r, err := NewRegistry(Env{Logger: testLogger(t)})
				if err == nil {
					if c, ok := r.Collector("darshan").(interface{ Close() error }); ok {
						c.Close()
					}
					t.Fatalf("dirs %v: a bad thresholds file was accepted", dirs)
				}
				if !strings.Contains(err.Error(), "--darshan.insights-config") || !strings.Contains(err.Error(), path) {
					t.Errorf("error does not name the flag and file: %v", err)
				}
			}
		})
	}
}
