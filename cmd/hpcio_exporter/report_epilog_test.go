package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// epilog runs deploy/slurm/hpcio-report-epilog.sh as slurmd would, with
// the job's variables and the settings in env; it returns the script's
// standard error (its log lines) and fails the test unless it exits 0.
func epilog(t *testing.T, env ...string) string {
	t.Helper()
	script := filepath.Join(corpus.RepoRoot(), "deploy", "slurm", "hpcio-report-epilog.sh")
	cmd := exec.Command("/bin/sh", script)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HPCIO_REPORT_DEFAULTS=/nonexistent"}, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the epilog failed: %v; stderr %q", err, stderr.String())
	}
	if len(out) != 0 {
		t.Errorf("the epilog wrote on stdout: %q", out)
	}
	return stderr.String()
}

// The Slurm epilog example finds the finished job's logs in a Darshan log
// directory (darshan-runtime's layout, with a log still being written and
// logs of other jobs beside them), writes the report into the user's
// directory (created, mode 0700) as job-<id>.json, mode 0600, owned by the
// user; a job without logs, a damaged log and an unreachable Prometheus
// never fail it (exit 0), each said in one log line.
func TestReportEpilog(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := darshanDir(t)
	reports := t.TempDir()
	base := []string{"HPCIO_EXPORTER=" + bin, "DARSHAN_LOG_DIRS=" + dir, "REPORT_FORMAT=json",
		"REPORT_DIR=" + filepath.Join(reports, "%u", "io"), "SLURM_JOB_USER=" + me.Username,
		"SLURM_JOB_START_TIME=" + strconv.FormatInt(reportEnd.Unix()-3600, 10)}
	job := func(id string, extra ...string) []string {
		return append(append([]string{"SLURM_JOB_ID=" + id}, base...), extra...)
	}

	stderr := epilog(t, job("7001")...)
	path := filepath.Join(reports, me.Username, "io", "job-7001.json")
	if !strings.Contains(stderr, "job 7001: report written to "+path) {
		t.Errorf("log %q", stderr)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no report: %v; log %q", err, stderr)
	}
	uid := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))
	if fi.Mode().Perm() != 0o600 || uid != me.Uid {
		t.Errorf("report mode %v, owner %s; want 0600, %s", fi.Mode().Perm(), uid, me.Uid)
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	var r reportOut
	if err := json.Unmarshal(b, &r); err != nil || r.Job.JobID != "7001" || r.App == nil || len(r.App.Logs) != 2 {
		t.Fatalf("the report is not job 7001's of two logs: %v\n%.300s", err, b)
	}

	// No logs: most jobs. Exit 0, no file, an info line.
	stderr = epilog(t, job("9999")...)
	if !strings.Contains(stderr, "job 9999: no Darshan log, no report") {
		t.Errorf("log %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(reports, me.Username, "io", "job-9999.json")); err == nil {
		t.Error("a report for a job without logs")
	}

	// A damaged log: exit 0, no file, the reason logged.
	data, err := darshantest.Job{JobID: 7003, UID: 1000, Exe: "/bin/a", End: reportEnd, Ranks: 2, Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	corrupt, _ := darshantest.CorruptPOSIX(data)
	day := filepath.Join(dir, reportEnd.Format("2006/1/2"))
	if err := os.WriteFile(filepath.Join(day, "alice_a_id7003-5_11-27-1-1_1.darshan"), corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	stderr = epilog(t, job("7003")...)
	if !strings.Contains(stderr, "job 7003: no report: ") || !strings.Contains(stderr, "POSIX region") {
		t.Errorf("log %q", stderr)
	}

	// Prometheus unreachable: the report of the logs alone, said so.
	os.Remove(path)
	stderr = epilog(t, job("7001", "PROMETHEUS_URL=http://"+freeAddress(t))...)
	if !strings.Contains(stderr, "the report with the servers' view failed (prometheus") || !strings.Contains(stderr, "report written") {
		t.Errorf("log %q", stderr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no report from the logs alone: %v", err)
	}

	// Not a job id, not a user name: nothing run, exit 0.
	stderr = epilog(t, append(base[:len(base):len(base)], "SLURM_JOB_ID=../../etc")...)
	if !strings.Contains(stderr, "is not a job id") {
		t.Errorf("log %q", stderr)
	}
	stderr = epilog(t, "SLURM_JOB_ID=7001", "SLURM_JOB_USER=../root", "HPCIO_EXPORTER="+bin)
	if !strings.Contains(stderr, "not a user name") {
		t.Errorf("log %q", stderr)
	}
}

// Run as root (as slurmd runs it), the epilog runs the exporter as the
// job's user: the directory it creates and the report are that user's.
func TestReportEpilogAsUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("not root: the epilog cannot change user")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	// Everything the user must reach: the binary, the logs, the reports'
	// parent, in directories others may enter.
	open := func(d string) string {
		for p := d; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	bin := filepath.Join(open(t.TempDir()), "hpcio_exporter")
	data, err := os.ReadFile(buildExporter(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := darshanDir(t)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	open(dir)
	reports := open(t.TempDir())
	stderr := epilog(t, "SLURM_JOB_ID=7001", "SLURM_JOB_USER=nobody", "HPCIO_EXPORTER="+bin, "DARSHAN_LOG_DIRS="+dir,
		"REPORT_FORMAT=json", "REPORT_DIR="+filepath.Join(reports, "%u"))
	path := filepath.Join(reports, "nobody", "job-7001.json")
	for _, p := range []string{filepath.Dir(path), path} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%v; log %q", err, stderr)
		}
		if uid := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)); uid != nobody.Uid {
			t.Errorf("%s owned by %s, want nobody (%s)", p, uid, nobody.Uid)
		}
	}
}
