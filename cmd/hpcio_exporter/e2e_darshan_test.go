package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// darshanLines keeps the darshan_* lines of a scrape (the other collectors
// of the binary belong to other tests), without those that change from run
// to run.
var darshanVolatile = regexp.MustCompile(`^(# (HELP|TYPE) )?darshan_(last_scan_timestamp_seconds|last_scan_duration_seconds|inotify_watches)\b`)

func darshanLines(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		name := strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE ")
		if strings.HasPrefix(name, "darshan_") && !darshanVolatile.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// waitFor scrapes until cond holds for the darshan lines.
func waitFor(t *testing.T, e *exporter, what string, cond func(string) bool) string {
	t.Helper()
	var text string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		full, _ := scrapeMetrics(t, e, nil)
		if text = darshanLines(full); cond(text) {
			promtoolCheck(t, full)
			return text
		}
	}
	t.Fatalf("waiting for %s; last scrape:\n%s", what, text)
	return ""
}

func has(lines ...string) func(string) bool {
	return func(text string) bool {
		for _, l := range lines {
			if !strings.Contains(text, l+"\n") {
				return false
			}
		}
		return true
	}
}

// The sidecar in the built binary: logs are copied into the drop directory
// one by one — one renamed from *.darshan_partial, one corrupt — and the
// scrapes pass promtool and end equal to a golden file. Logs end in 2026
// and the retention is ten years, so that the golden file holds.
func TestEndToEndDarshan(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	e := startExporter(t, bin, "--darshan.dir="+dir, "--darshan.rescan-interval=200ms", "--darshan.retention=87600h",
		"--darshan.records", "--darshan.max-records-per-job=2", "--lustre.lctl-path=/nonexistent/lctl")
	day := filepath.Join(dir, "2026", "1", "15")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	mk := func(j darshantest.Job) []byte {
		data, err := j.Log()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	put := func(name string, data []byte) {
		t.Helper()
		// As the runtime does: write under a temporary name, then rename.
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(day, name)); err != nil {
			t.Fatal(err)
		}
	}
	step := darshantest.Job{JobID: 4242, UID: 1000, Exe: "/opt/app/bin/solver --input /scratch/secret/in.dat", End: end.Add(-time.Hour), Ranks: 4, Bytes: 1 << 20}
	put("alice_solver_id4242-311_1-15-39600-1_1.darshan", mk(step))
	waitFor(t, e, "the first log", has(`darshan_logs_processed_total 1`, `darshan_retained_jobs 1`))

	step.End = end
	put("alice_solver_id4242-312_1-15-43200-2_1.darshan_partial", mk(step))
	waitFor(t, e, "the partial log", has(`darshan_logs_waiting{reason="partial"} 1`))
	if err := os.Rename(filepath.Join(day, "alice_solver_id4242-312_1-15-43200-2_1.darshan_partial"),
		filepath.Join(day, "alice_solver_id4242-312_1-15-43200-2_1.darshan")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e, "the renamed log", has(`darshan_logs_processed_total 2`, `darshan_logs_waiting{reason="partial"} 0`,
		`darshan_job_logs{jobid="4242",uid="1000",exe="solver"} 2`))

	bad, err := darshantest.CorruptPOSIX(mk(darshantest.Job{JobID: 99, UID: 1, Exe: "/bin/x", End: end, Bytes: 1}))
	if err != nil {
		t.Fatal(err)
	}
	put("corrupt_id99-1_1-15-43200-3_1.darshan", bad)
	before := waitFor(t, e, "the corrupt log", has(`darshan_logs_failed_total{reason="corrupt"} 1`))

	put("bob_python3_id17-17_1-15-43200-4_1.darshan", mk(darshantest.Job{JobID: 17, UID: 1001, Exe: "/usr/bin/python3 train.py", End: end, Bytes: 4096}))
	last := waitFor(t, e, "the last log", has(`darshan_logs_processed_total 3`, `darshan_retained_jobs 2`))
	if !strings.Contains(last, `jobid="_nojob",uid="1001",exe="python3"`) {
		t.Errorf("a log whose job id is its pid is not _nojob")
	}
	// The corrupt log changed nothing of job 4242.
	for _, l := range strings.Split(before, "\n") {
		if strings.Contains(l, `jobid="4242"`) && !strings.Contains(last, l+"\n") {
			t.Errorf("job 4242 changed after the corrupt log: %s", l)
		}
	}
	checkGolden(t, "e2e-darshan.prom", last)
	if e.Exited() {
		t.Fatal("exporter exited")
	}
}

// `hpcio_exporter darshan signals` prints the report and fails on a bad log.
func TestDarshanSignalsCommand(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	data, err := darshantest.Job{JobID: 1, UID: 1, Exe: "/bin/a", End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Ranks: 2, Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "a.darshan")
	os.WriteFile(good, data, 0o644)
	out, err := exec.Command(bin, "darshan", "signals", good).Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{"# ORIGINAL DARSHAN LOG HEADER\n", "# darshan log version: 3.41\n",
		"JOB\t-1\t0\tSIGNAL_TOTAL_BYTES_WRITTEN\t1300\n", "POSIX\t-1\tMODULE\tSIGNAL_AVG_READ_SIZE\t100\n",
		"SIGNAL_RANK_IMBALANCE_RATIO\t3\n", "\tSIGNAL_RANK_IMBALANCE_RATIO\tNA(not_shared_file)\n", "HEATMAP\t1\t"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.darshan")
	os.WriteFile(bad, []byte("not a log"), 0o644)
	cmd := exec.Command(bin, "darshan", "signals", bad)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "bad.darshan") {
		t.Errorf("bad log: err %v, output %q", err, msg)
	}
}
