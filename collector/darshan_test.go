package collector

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/sidecar/logwatch"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/promtool"
)

// darshanLog makes a log (see package darshantest).
func darshanLog(t testing.TB, j darshantest.Job) []byte {
	t.Helper()
	data, err := j.Log()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// darshanTestRegistry enables the darshan collector alone on dir, with a
// fixed clock, and returns the registry and its sidecar.
func darshanTestRegistry(t *testing.T, dir string, now time.Time, records bool) (*Registry, *logwatch.Sidecar) {
	t.Helper()
	onlyCollectors(t, "darshan")
	setFlag(t, &darshanDirs, []string{dir})
	setFlag(t, &darshanRescan, time.Hour)
	setFlag(t, &darshanRecords, records)
	setFlag(t, &darshanMaxRecords, 2)
	setFlag(t, &darshanNoInotify, true)
	var sc *logwatch.Sidecar
	setFlag(t, &darshanSidecarStarted, func(s *logwatch.Sidecar) { sc = s })
	r, err := NewRegistry(Env{Logger: testLogger(t), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Collector("darshan").(io.Closer).Close() })
	return r, sc
}

func syncSidecar(t *testing.T, s *logwatch.Sidecar) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

var darshanVolatile = regexp.MustCompile(`(?m)^darshan_last_scan_duration_seconds .*\n`)

func darshanScrape(t *testing.T, r *Registry) string {
	t.Helper()
	text := stable(scrapeText(t, r, expfmt.NewFormat(expfmt.TypeTextPlain)))
	return darshanVolatile.ReplaceAllString(text, "")
}

// The sidecar end to end, in process: logs land one by one — one of them
// first as *.darshan_partial, one still being written, one corrupt — and
// each scrape is compared with a golden file.
func TestDarshanCollectorSteps(t *testing.T) {
	dir := t.TempDir()
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	r, sc := darshanTestRegistry(t, dir, end.Add(time.Hour), true)
	day := filepath.Join(dir, "2026", "1", "15")
	put := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(day, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(day, name), data, 0o400); err != nil {
			t.Fatal(err)
		}
	}
	step1 := darshantest.Job{JobID: 4242, UID: 1000, Exe: "/opt/app/bin/solver --input /scratch/secret/in.dat", End: end.Add(-30 * time.Minute), Ranks: 2, Bytes: 1 << 20}
	step2 := step1
	step2.End = end
	other := darshantest.Job{JobID: 4243, UID: 1001, Exe: "/usr/bin/python3 /home/bob/train.py", End: end, Ranks: 1, Bytes: 4096}
	local := darshantest.Job{JobID: 977, UID: 1000, Exe: "/usr/bin/cp a b", End: end, Ranks: 1, Bytes: 10}

	// 1: the first step of job 4242.
	put("alice_solver_id4242-311_1-15-41000-1_1.darshan", darshanLog(t, step1))
	syncSidecar(t, sc)
	first := darshanScrape(t, r)
	checkGolden(t, "darshan/step1.prom", first)

	// 2: its second step, still under the runtime's temporary name; a log
	// whose header is not written yet; a corrupt log.
	put("alice_solver_id4242-977_1-15-43000-2_1.darshan_partial", darshanLog(t, step2))
	data := darshanLog(t, other)
	put("bob_python3_id4243-5_1-15-43000-3_1.darshan", append(make([]byte, 1328), data[1328:]...))
	bad, err := darshantest.CorruptPOSIX(darshanLog(t, local))
	if err != nil {
		t.Fatal(err)
	}
	put("alice_cp_id977-977_1-15-43000-4_1.darshan", bad)
	syncSidecar(t, sc)
	second := darshanScrape(t, r)
	checkGolden(t, "darshan/step2.prom", second)
	// The corrupt log is counted failed, and nothing else changed: the
	// per-job lines are those of step 1.
	if got := value(t, second, `darshan_logs_failed_total{reason="corrupt"}`); got != 1 {
		t.Errorf("corrupt logs counted %g", got)
	}
	if jobLines(second) != jobLines(first) {
		t.Errorf("a corrupt or unfinished log changed the job series")
	}

	// 3: the runtime renames the second step; the other log is finished.
	if err := os.Rename(filepath.Join(day, "alice_solver_id4242-977_1-15-43000-2_1.darshan_partial"),
		filepath.Join(day, "alice_solver_id4242-977_1-15-43000-2_1.darshan")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(day, "bob_python3_id4243-5_1-15-43000-3_1.darshan"))
	put("bob_python3_id4243-5_1-15-43000-3_1.darshan", data)
	syncSidecar(t, sc)
	third := darshanScrape(t, r)
	checkGolden(t, "darshan/step3.prom", third)
	if got := value(t, third, `darshan_job_logs{jobid="4242",uid="1000",exe="solver"}`); got != 2 {
		t.Errorf("job 4242 sums %g logs", got)
	}
	promtoolCheckText(t, third)

	// No path, directory or command line in any label value.
	for _, leak := range []string{"/scratch", "secret", "/home", "train.py", "--input", "/opt", dir} {
		for _, line := range strings.Split(third, "\n") {
			if strings.Contains(line, leak) && !strings.HasPrefix(line, "#") {
				t.Errorf("%q leaks into %s", leak, line)
			}
		}
	}
}

// jobLines returns the per-job samples of a scrape.
func jobLines(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "darshan_job_") || strings.HasPrefix(l, "darshan_record_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// promtoolCheckText runs promtool check metrics when it is installed
// (required under CI).
func promtoolCheckText(t *testing.T, text string) {
	t.Helper()
	promtool.CheckMetrics(t, text)
}

// Without --darshan.dir the collector stays out.
func TestDarshanCollectorNotConfigured(t *testing.T) {
	onlyCollectors(t, "darshan")
	setFlag(t, &darshanDirs, nil)
	r, err := NewRegistry(Env{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Enabled()) != 0 {
		t.Errorf("enabled: %v", r.Enabled())
	}
}

// The corpus logs copied in one by one: every readable log is exported,
// every damaged one counted with its reason, and the scrape is valid.
func TestDarshanCollectorCorpus(t *testing.T) {
	src := corpus.Dir(t, "darshan")
	dir := t.TempDir()
	setFlag(t, &darshanRetention, 100000*time.Hour) // the corpus logs go back to 2015
	// Ten minutes from now: past the settle time of every log copied.
	r, sc := darshanTestRegistry(t, dir, time.Now().Add(10*time.Minute), true)
	logs, _ := filepath.Glob(filepath.Join(src, "*", "*.darshan"))
	wantFailed := map[string]float64{}
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(path)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		switch filepath.Base(path) {
		case "corrupt_bad_magic.darshan":
			wantFailed["not_darshan"]++
		case "corrupt_version_3.99.darshan", "corrupt_posix_ver99.darshan":
			wantFailed["unsupported_version"]++
		case "corrupt_flip_posix_region.darshan":
			wantFailed["corrupt"]++
		case "corrupt_truncated_half.darshan", "corrupt_truncated_tail16.darshan":
			wantFailed["truncated"]++
		case "corrupt_empty.darshan", "corrupt_header_zeroed_inprogress.darshan":
			wantFailed["incomplete"]++
		}
		syncSidecar(t, sc)
	}
	text := darshanScrape(t, r)
	for reason, n := range wantFailed {
		if got := value(t, text, `darshan_logs_failed_total{reason="`+reason+`"}`); got != n {
			t.Errorf("failed{%s} = %g, want %g", reason, got, n)
		}
	}
	if got := value(t, text, `darshan_logs_waiting{reason="incomplete"}`); got != 0 {
		t.Errorf("waiting incomplete = %g", got)
	}
	processed := value(t, text, "darshan_logs_processed_total")
	if processed != float64(len(logs)-8) {
		t.Errorf("processed %g of %d logs", processed, len(logs))
	}
	promtoolCheckText(t, text)
	t.Logf("%g logs processed, %g jobs, %d bytes of metrics", processed, value(t, text, "darshan_retained_jobs"), len(text))
}
