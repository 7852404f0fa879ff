package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The epilog runs as root on paths and names its job's user controls.
// These tests attack it as that user would: real accounts (useradd) with
// hostile home fields, and a process running as the user that flips the
// report directory between a link to a root-owned directory, nothing and
// a directory while the epilog runs, again and again. They need root;
// the accounts they make are named hpcio-ep-<pid>-<n> and removed when
// the test ends (those of a test process that died are removed by the
// next run).

// requireAccounts skips the test unless it can make accounts and change
// to them: root, useradd, userdel and setpriv.
func requireAccounts(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: the epilog's attacks need real accounts and root to run it as slurmd does")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (Debian's passwd and util-linux): cannot make an account to attack the epilog with", tool)
		}
	}
}

type account struct {
	name     string
	uid, gid int
}

var (
	accountsMu    sync.Mutex // useradd and userdel of this process, one at a time
	accountsSeq   int
	accountsSwept bool
)

// accountTool runs useradd or userdel, again while another process holds
// the lock on /etc/passwd (other tests may make accounts at the same time).
func accountTool(name string, args ...string) error {
	var out []byte
	var err error
	for range 100 {
		out, err = exec.Command(name, args...).CombinedOutput()
		if err == nil || !bytes.Contains(out, []byte("lock")) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("%s %q: %v: %s", name, args, err, out)
	}
	return nil
}

// testAccount makes an account with its own group, home as its home field
// (not created: "-M"), no login shell, a system account (uid below 1000)
// when system is set; it is removed, with its group, when the test ends.
func testAccount(t *testing.T, home string, system bool) account {
	t.Helper()
	accountsMu.Lock()
	defer accountsMu.Unlock()
	if !accountsSwept {
		accountsSwept = true
		sweepAccounts(t)
	}
	accountsSeq++
	name := fmt.Sprintf("hpcio-ep-%d-%d", os.Getpid(), accountsSeq)
	args := []string{"-M", "-U", "-s", "/usr/sbin/nologin", "-d", home}
	if system {
		args = append(args, "-r")
	}
	if err := accountTool("useradd", append(args, name)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		accountsMu.Lock()
		defer accountsMu.Unlock()
		if err := accountTool("userdel", name); err != nil {
			t.Errorf("the test's account stays: %v", err)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if u.HomeDir != home {
		t.Fatalf("account %s has home %q, want %q", name, u.HomeDir, home)
	}
	return account{name: name, uid: uid, gid: gid}
}

// sweepAccounts removes the accounts of test processes that are gone.
func sweepAccounts(t *testing.T) {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return
	}
	for line := range strings.Lines(string(passwd)) {
		name, _, _ := strings.Cut(line, ":")
		rest, ok := strings.CutPrefix(name, "hpcio-ep-")
		if !ok {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		if _, err := strconv.Atoi(pid); err != nil {
			continue
		}
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue
		}
		if err := accountTool("userdel", name); err != nil {
			t.Logf("a stale test account stays: %v", err)
		}
	}
}

// chownTo gives paths to the account, as its own.
func chownTo(t *testing.T, a account, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, a.uid, a.gid); err != nil {
			t.Fatal(err)
		}
	}
}

// fileState is what an attack on a path would change.
type fileState struct {
	uid, gid uint32
	mode     fs.FileMode
	size     int64
	mtime    time.Time
	link     string
}

func (s fileState) String() string {
	return fmt.Sprintf("uid %d gid %d mode %v size %d link %q", s.uid, s.gid, s.mode, s.size, s.link)
}

// snapshot records every path under root (links not followed). Paths that
// go while it walks (the racer's) are left out.
func snapshot(root string) map[string]fileState {
	m := map[string]fileState{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		s := fileState{uid: st.Uid, gid: st.Gid, mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
		if fi.Mode()&fs.ModeSymlink != 0 {
			s.link, _ = os.Readlink(p)
		}
		if fi.IsDir() {
			s.size = 0 // ext4 directories grow and never shrink
		}
		m[p] = s
		return nil
	})
	return m
}

// outsideChanges compares two snapshots of a tree: outside the account's
// own directories (own, and all under them) nothing may change, appear or
// go; inside them, whatever appears must be the account's.
func outsideChanges(before, after map[string]fileState, a account, own ...string) []string {
	isOwn := func(p string) bool {
		for _, o := range own {
			if p == o || strings.HasPrefix(p, o+"/") {
				return true
			}
		}
		return false
	}
	var bad []string
	for p, b := range before {
		if isOwn(p) {
			continue
		}
		switch s, ok := after[p]; {
		case !ok:
			bad = append(bad, p+": removed")
		case s != b:
			bad = append(bad, fmt.Sprintf("%s: %v (mtime %v), was %v (mtime %v)", p, s, s.mtime, b, b.mtime))
		}
	}
	for p, s := range after {
		if _, ok := before[p]; ok {
			continue
		}
		if !isOwn(p) {
			bad = append(bad, fmt.Sprintf("%s: created outside the user's own (%v)", p, s))
		} else if s.uid != uint32(a.uid) {
			bad = append(bad, fmt.Sprintf("%s: created in the user's own, but %v", p, s))
		}
	}
	slices.Sort(bad)
	return bad
}

// The epilog refuses, or writes where it should and only there, for
// accounts and settings made to turn it against root: home fields that
// are sed commands (the old script substituted %h with sed: "|e" ran a
// file as root, "|w FILE" wrote one, "&" changed the path), a home that
// is missing (root created it) or root's, root and system accounts, a
// user name that is root's uid, a SLURM_JOB_UID that is not the user's,
// and a wildcard in DARSHAN_LOG_DIRS (root's shell expanded it). In each
// case nothing outside the user's own directories changes, and what
// appears in them is the user's.
func TestReportEpilogHostileAccounts(t *testing.T) {
	t.Parallel()
	requireAccounts(t)
	bin := userExporter(t)
	logs := userDarshanDir(t)

	type setup struct {
		sandbox string  // root's, mode 0755, with victim in it
		home    string  // the account's home field
		a       account // the account
	}
	cases := []struct {
		name   string
		home   string // the home field, under the sandbox ("" for the name alone)
		system bool   // a system account (useradd -r)
		// requires is a user the case needs, skipped without it.
		requires string
		// prepare makes what the user would have made; it returns the
		// user's own directories.
		prepare func(t *testing.T, s setup) []string
		env     func(s setup) []string
		// want is in the log; report is the report's path, or "".
		want   func(s setup) string
		report func(s setup) string
		check  func(t *testing.T, s setup)
	}{{
		name: "sed e flag in the home field",
		home: "e|e;#",
		prepare: func(t *testing.T, s setup) []string {
			// The old script's sed ran <sandbox>/e/hpcio-reports as root:
			// the user's program, which says who ran it.
			planted := filepath.Join(s.sandbox, "e")
			mustMkdir(t, s.home, planted)
			prog := filepath.Join(planted, "hpcio-reports")
			if err := os.WriteFile(prog, []byte("#!/bin/sh\nid -u >"+filepath.Join(planted, "ran")+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			chownTo(t, s.a, s.home, planted, prog)
			return []string{s.home, planted}
		},
		report: func(s setup) string { return filepath.Join(s.home, "hpcio-reports", "job-7001.json") },
		check: func(t *testing.T, s setup) {
			if ran, err := os.ReadFile(filepath.Join(s.sandbox, "e", "ran")); err == nil {
				t.Errorf("the user's program ran, as uid %s", strings.TrimSpace(string(ran)))
			}
		},
	}, {
		name: "sed w flag in the home field",
		home: "w|w {sandbox}/victim/written;#",
		want: func(s setup) string { return "home directory " + s.home + " is not a directory (it is never created)" },
	}, {
		name: "sed ampersand in the home field",
		home: "a&",
		prepare: func(t *testing.T, s setup) []string {
			mustMkdir(t, s.home)
			chownTo(t, s.a, s.home)
			return []string{s.home}
		},
		report: func(s setup) string { return filepath.Join(s.home, "hpcio-reports", "job-7001.json") },
	}, {
		name: "missing home",
		home: "gone/home",
		want: func(s setup) string { return "is not a directory (it is never created)" },
	}, {
		name: "home is a root directory",
		home: "victim",
		want: func(s setup) string { return "cannot create " + filepath.Join(s.home, "hpcio-reports") },
	}, {
		name:   "system account",
		home:   "sys",
		system: true,
		prepare: func(t *testing.T, s setup) []string {
			mustMkdir(t, s.home)
			chownTo(t, s.a, s.home)
			return []string{s.home}
		},
		want: func(s setup) string { return "is root or a system account (MIN_UID=1000)" },
	}, {
		name: "SLURM_JOB_USER=root",
		env:  func(s setup) []string { return []string{"SLURM_JOB_USER=root", "REPORT_DIR=" + s.sandbox + "%h/r"} },
		want: func(s setup) string { return "root (uid 0) is root or a system account" },
	}, {
		name: "SLURM_JOB_USER=0 (getent: root's entry)",
		env:  func(s setup) []string { return []string{"SLURM_JOB_USER=0", "REPORT_DIR=" + s.sandbox + "%h/r"} },
		want: func(s setup) string { return "the user database has no user named 0 (it answers root)" },
	}, {
		name:     "SLURM_JOB_USER=nobody",
		requires: "nobody",
		env:      func(s setup) []string { return []string{"SLURM_JOB_USER=nobody", "REPORT_DIR=" + s.sandbox + "/%u"} },
		want:     func(s setup) string { return "is the overflow user, nobody" },
	}, {
		name: "SLURM_JOB_UID=0 for a user",
		home: "h",
		prepare: func(t *testing.T, s setup) []string {
			mustMkdir(t, s.home)
			chownTo(t, s.a, s.home)
			return []string{s.home}
		},
		env:  func(s setup) []string { return []string{"SLURM_JOB_UID=0"} },
		want: func(s setup) string { return "SLURM_JOB_UID=0 is not " + s.a.name + "'s uid" },
	}, {
		name: "wildcard in DARSHAN_LOG_DIRS",
		home: "h",
		prepare: func(t *testing.T, s setup) []string {
			mustMkdir(t, s.home)
			chownTo(t, s.a, s.home)
			return []string{s.home}
		},
		env:  func(s setup) []string { return []string{"DARSHAN_LOG_DIRS=" + filepath.Dir(logs) + "/*"} },
		want: func(s setup) string { return "stat " + filepath.Dir(logs) + "/*: no such file or directory" },
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.requires != "" {
				if _, err := user.Lookup(c.requires); err != nil {
					t.Skipf("no user %s: %v", c.requires, err)
				}
			}
			sandbox := openToAll(t, t.TempDir())
			mustMkdir(t, filepath.Join(sandbox, "victim"))
			if err := os.WriteFile(filepath.Join(sandbox, "victim", "secret"), []byte("root's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := setup{sandbox: sandbox}
			name := ""
			if c.home != "" {
				s.home = filepath.Join(sandbox, strings.ReplaceAll(c.home, "{sandbox}", sandbox))
				s.a = testAccount(t, s.home, c.system)
				name = s.a.name
			}
			var own []string
			if c.prepare != nil {
				own = c.prepare(t, s)
			}
			env := []string{"SLURM_JOB_ID=7001", "SLURM_JOB_USER=" + name, "HPCIO_EXPORTER=" + bin,
				"DARSHAN_LOG_DIRS=" + logs, "REPORT_FORMAT=json",
				"SLURM_JOB_START_TIME=" + strconv.FormatInt(reportEnd.Unix()-3600, 10)}
			if c.env != nil {
				env = append(env, c.env(s)...)
			}
			before := snapshot(sandbox)
			stderr := epilog(t, env...)
			for _, bad := range outsideChanges(before, snapshot(sandbox), s.a, own...) {
				t.Error(bad)
			}
			if c.want != nil && !strings.Contains(stderr, c.want(s)) {
				t.Errorf("log %q, want %q in it", stderr, c.want(s))
			}
			if c.report != nil {
				path := c.report(s)
				if !strings.Contains(stderr, "report written to "+path) {
					t.Errorf("log %q, want the report written to %s", stderr, path)
				}
				if fi, err := os.Lstat(path); err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(s.a.uid) {
					t.Errorf("the report %s: %v, want it the user's", path, err)
				}
			} else if strings.Contains(stderr, "report written") {
				t.Errorf("a report written: log %q", stderr)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

func mustMkdir(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// epilogRaceRuns is how many times the race test runs the epilog.
const epilogRaceRuns = 250

// The epilog's user flips ~/hpcio-reports, while the epilog runs,
// between a link to a root-owned directory, nothing, a link to a
// root-owned file and a directory of their own holding a link named as
// the report to that file. Over epilogRaceRuns runs as root, nothing
// outside the user's home changes (the root-owned directory keeps its
// owner and mode 0755, the file its owner, mode and content) and nothing
// in the home is anyone's but the user's. The old script (root tested
// the path, then ran install -d on it, which follows the link) handed
// the directory to the user within a few runs.
func TestReportEpilogRace(t *testing.T) {
	t.Parallel()
	requireAccounts(t)
	bin := userExporter(t)
	logs := userDarshanDir(t)
	sandbox := openToAll(t, t.TempDir())
	victim := filepath.Join(sandbox, "victim")
	secret := filepath.Join(victim, "secret")
	home := filepath.Join(sandbox, "home")
	mustMkdir(t, victim, home)
	if err := os.WriteFile(secret, []byte("root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := testAccount(t, home, false)
	chownTo(t, a, home)
	startRacer(t, a, filepath.Join(home, "hpcio-reports"), victim, secret)

	env := []string{"SLURM_JOB_ID=7001", "SLURM_JOB_USER=" + a.name, "HPCIO_EXPORTER=" + bin,
		"DARSHAN_LOG_DIRS=" + logs, "REPORT_FORMAT=json",
		"SLURM_JOB_START_TIME=" + strconv.FormatInt(reportEnd.Unix()-3600, 10)}
	before := snapshot(sandbox)
	outcomes := map[string]int{}
	for run := 1; run <= epilogRaceRuns; run++ {
		stderr := epilog(t, env...)
		if bad := outsideChanges(before, snapshot(sandbox), a, home); len(bad) > 0 {
			t.Fatalf("after run %d of %d: %s\nlog %q", run, epilogRaceRuns, strings.Join(bad, "\n"), stderr)
		}
		outcomes[raceOutcome(stderr)]++
	}
	t.Logf("%d runs against the racer: %v", epilogRaceRuns, outcomes)
	if outcomes["not a directory"]+outcomes["cannot create"] == 0 {
		t.Errorf("the racer never stood in the way (%v): the test tested nothing", outcomes)
	}
}

// raceOutcome names what one run did, from its log.
func raceOutcome(stderr string) string {
	for _, o := range []string{"report written", "not a directory", "cannot create", "not owned by", "no report"} {
		if strings.Contains(stderr, o) {
			return o
		}
	}
	return "other: " + stderr
}

// startRacer runs the racer (this test binary, see raceEpilogIfAsked) as
// the account until the test ends.
func startRacer(t *testing.T, a account, path, victimDir, victimFile string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	racer := filepath.Join(openToAll(t, t.TempDir()), "racer")
	if err := os.WriteFile(racer, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid="+strconv.Itoa(a.uid), "--regid="+strconv.Itoa(a.gid), "--clear-groups", "--", racer)
	cmd.Env = []string{"HPCIO_TEST_EPILOG_RACER=" + path, "HPCIO_TEST_EPILOG_RACER_DIR=" + victimDir,
		"HPCIO_TEST_EPILOG_RACER_FILE=" + victimFile}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if stderr.Len() > 0 {
			t.Errorf("the racer: %s", stderr.Bytes())
		}
	})
	// It has started when the path first appears.
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		if _, err := os.Lstat(path); err == nil {
			return
		}
	}
	t.Fatalf("the racer never made %s: %s", path, stderr.Bytes())
}

// raceEpilogIfAsked makes this process the racer, when
// HPCIO_TEST_EPILOG_RACER names the path to flip: it never returns. Run
// as the user (startRacer), it cycles the path through the states the
// epilog must not be fooled by, each held for a random while (up to
// 0.2 ms; its own directory up to 2 ms, so that some reports are written
// into it), until it is killed.
func raceEpilogIfAsked() {
	path := os.Getenv("HPCIO_TEST_EPILOG_RACER")
	if path == "" {
		return
	}
	victimDir := os.Getenv("HPCIO_TEST_EPILOG_RACER_DIR")
	victimFile := os.Getenv("HPCIO_TEST_EPILOG_RACER_FILE")
	hold := func(max time.Duration) { time.Sleep(rand.N(max)) }
	for {
		os.Symlink(victimDir, path)
		hold(200 * time.Microsecond)
		os.Remove(path)
		hold(200 * time.Microsecond)
		os.Symlink(victimFile, path)
		hold(200 * time.Microsecond)
		os.Remove(path)
		hold(200 * time.Microsecond)
		if os.Mkdir(path, 0o755) == nil {
			os.Symlink(victimFile, filepath.Join(path, "job-7001.json"))
			hold(2 * time.Millisecond)
			os.RemoveAll(path)
		}
	}
}
