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

// epilogScript is deploy/slurm/hpcio-report-epilog.sh, or the script named
// by HPCIO_TEST_EPILOG: the tests can be run against another version of
// it (an older one from git, to see them fail).
func epilogScript() string {
	if s := os.Getenv("HPCIO_TEST_EPILOG"); s != "" {
		return s
	}
	return filepath.Join(corpus.RepoRoot(), "deploy", "slurm", "hpcio-report-epilog.sh")
}

// epilog runs the epilog as slurmd would, with the job's variables and
// the settings in env (a later value of a variable wins); it returns the
// script's standard error (its log lines) and fails the test unless it
// exits 0 without writing on standard output.
func epilog(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", epilogScript())
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

// openToAll makes d and its parents up to the temporary directory
// searchable by every user (mode 0755), as a user's job finds the paths
// it is given.
func openToAll(t *testing.T, d string) string {
	t.Helper()
	for p := d; p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// userExporter is the exporter's binary where any user may run it.
func userExporter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(openToAll(t, t.TempDir()), "hpcio_exporter")
	data, err := os.ReadFile(buildExporter(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// userDarshanDir is darshanDir readable by any user.
func userDarshanDir(t *testing.T) string {
	t.Helper()
	dir := darshanDir(t)
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return openToAll(t, dir)
}

// jobAccount is the user the functional tests run their jobs as: run as
// root (as slurmd runs the epilog), an account made for the test, since
// the epilog makes no report for root; otherwise the test's own user,
// with MIN_UID lowered to its uid.
func jobAccount(t *testing.T) (name, uid string, env []string) {
	t.Helper()
	if os.Geteuid() == 0 {
		requireAccounts(t)
		a := testAccount(t, "/nonexistent", false)
		return a.name, strconv.Itoa(a.uid), nil
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return me.Username, me.Uid, []string{"MIN_UID=" + me.Uid}
}

// The Slurm epilog example finds the finished job's logs in a Darshan log
// directory (darshan-runtime's layout, with a log still being written and
// logs of other jobs beside them), writes the report into the user's
// directory (created by the user, mode 0700, under a sticky directory
// every user may write in) as job-<id>.json, mode 0600, owned by the user;
// a job without logs, a damaged log and an unreachable Prometheus never
// fail it (exit 0), each said in one log line. Run as root, everything is
// done as the job's user: the directory and the report are that user's.
func TestReportEpilog(t *testing.T) {
	t.Parallel()
	name, uid, accountEnv := jobAccount(t)
	bin := userExporter(t)
	dir := userDarshanDir(t)
	reports := openToAll(t, t.TempDir())
	if err := os.Chmod(reports, 0o1777); err != nil {
		t.Fatal(err)
	}
	base := append([]string{"HPCIO_EXPORTER=" + bin, "DARSHAN_LOG_DIRS=" + dir, "REPORT_FORMAT=json",
		"REPORT_DIR=" + filepath.Join(reports, "%u", "io"), "SLURM_JOB_USER=" + name,
		"SLURM_JOB_START_TIME=" + strconv.FormatInt(reportEnd.Unix()-3600, 10)}, accountEnv...)
	job := func(id string, extra ...string) []string {
		return append(append([]string{"SLURM_JOB_ID=" + id}, base...), extra...)
	}

	stderr := epilog(t, job("7001")...)
	path := filepath.Join(reports, name, "io", "job-7001.json")
	if !strings.Contains(stderr, "job 7001: report written to "+path) {
		t.Errorf("log %q", stderr)
	}
	for _, p := range []string{filepath.Dir(filepath.Dir(path)), filepath.Dir(path), path} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%v; log %q", err, stderr)
		}
		want := os.FileMode(0o700)
		if p == path {
			want = 0o600
		}
		if owner := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)); fi.Mode().Perm() != want || owner != uid {
			t.Errorf("%s: mode %v, owner %s; want %v, %s", p, fi.Mode().Perm(), owner, want, uid)
		}
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
	if _, err := os.Stat(filepath.Join(reports, name, "io", "job-9999.json")); err == nil {
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

	// As root without setpriv, runuser changes to the user: the same
	// report, the user's.
	if os.Geteuid() == 0 {
		os.Remove(path)
		stderr = epilog(t, job("7001", "PATH="+pathOf(t, "sh", "logger", "id", "getent", "timeout", "runuser", "mkdir", "stat", "tail", "tr"))...)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("runuser: %v; log %q", err, stderr)
		}
		if owner := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)); owner != uid {
			t.Errorf("runuser: the report is uid %s's, want %s", owner, uid)
		}
	}

	// Not a job id, not a user name, not a uid bound: nothing run, exit 0.
	stderr = epilog(t, append(base[:len(base):len(base)], "SLURM_JOB_ID=../../etc")...)
	if !strings.Contains(stderr, "is not a job id") {
		t.Errorf("log %q", stderr)
	}
	for _, u := range []string{"../root", "..", "-r", "a b", "a*"} {
		stderr = epilog(t, "SLURM_JOB_ID=7001", "SLURM_JOB_USER="+u, "HPCIO_EXPORTER="+bin)
		if !strings.Contains(stderr, "not a user name") {
			t.Errorf("SLURM_JOB_USER=%q: log %q", u, stderr)
		}
	}
	for _, m := range []string{"1e3", "-1", "99999999999999999999", "4294967296"} {
		stderr = epilog(t, job("7001", "MIN_UID="+m)...)
		if !strings.Contains(stderr, "MIN_UID="+m+" is not a uid") {
			t.Errorf("MIN_UID=%s: log %q", m, stderr)
		}
	}
}

// pathOf returns a directory for PATH that holds the named commands and
// no other.
func pathOf(t *testing.T, commands ...string) string {
	t.Helper()
	dir := openToAll(t, t.TempDir())
	for _, c := range commands {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Skipf("%s not found: %v", c, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The epilog is shellcheck clean (default checks, every severity). Under
// CI=true shellcheck must be there (.ci/run installs it).
func TestReportEpilogShellcheck(t *testing.T) {
	t.Parallel()
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("shellcheck is required under CI (apt-get install shellcheck)")
		}
		t.Skip("shellcheck not found: apt-get install shellcheck")
	}
	out, err := exec.Command(sc, "--severity=style", epilogScript()).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("shellcheck %s: %v\n%s", epilogScript(), err, out)
	}
}
