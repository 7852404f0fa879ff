//go:build linux

package toolrun

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// script writes a shell script running body and returns its path.
func script(t testing.TB, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// exists reports whether pid is a process (a zombie counts: not reaped).
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// readPid reads the pid a script wrote.
func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file %q", data)
	}
	t.Cleanup(func() {
		if exists(pid) {
			// Our own failure: do not leave it behind.
			exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
		}
	})
	return pid
}

// waitGone waits, a generous while, for pid to be gone: killed and reaped.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); exists(pid) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if exists(pid) {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		t.Errorf("%s %d is still there: %s", what, pid, stat)
	}
}

// run reads a tool's whole output and closes it.
func run(t *testing.T, ctx context.Context, path string) (out string, readErr, closeErr error) {
	t.Helper()
	rc, err := Start(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	data, readErr := io.ReadAll(rc)
	return string(data), readErr, rc.Close()
}

const bigLine = "obdfilter.fs-OST0000.stats=\n"

// A tool that printed its output and exited 0 while a child of its
// process group keeps the pipe open: the output is whole and ok, the child
// is killed and reaped. The output is larger than the pipe, so that its
// end is read after the leader's exit only if nothing is lost.
func TestStartStragglerInGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	const lines = 200000 // 5.6 MB
	path := script(t, `yes '`+strings.TrimSuffix(bigLine, "\n")+`' | head -n `+strconv.Itoa(lines)+`
sleep 30 &
echo $! > `+pidFile+`
echo end`)
	before := StraysKilled()
	begin := time.Now()
	out, readErr, closeErr := run(t, context.Background(), path)
	took := time.Since(begin)
	if readErr != nil || closeErr != nil {
		t.Fatalf("read %v, close %v", readErr, closeErr)
	}
	if want := strings.Repeat(bigLine, lines) + "end\n"; out != want {
		t.Errorf("output: %d bytes, want %d, ends %q", len(out), len(want), out[max(0, len(out)-40):])
	}
	if r, err := Classify(readErr, closeErr); r != OK {
		t.Errorf("result %v (%v)", r, err)
	}
	pid := readPid(t, pidFile)
	waitGone(t, pid, "the straggler")
	if got := StraysKilled() - before; got != 1 {
		t.Errorf("strays killed: %d, want 1", got)
	}
	// Not a timed assertion of speed: a bound far from both the grace
	// and the straggler's 30 s, that only a run waiting for it breaks.
	if took > 10*time.Second {
		t.Errorf("the run took %v: it waited for the straggler", took)
	}
}

// A straggler that never stops writing: the reads end once a pipe's worth
// was read after the leader's exit (all the leader wrote is in by then),
// and the straggler is killed.
func TestStartStragglerWritingForever(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `echo memused=12
yes &
echo $! > `+pidFile)
	out, readErr, closeErr := run(t, context.Background(), path)
	if readErr != nil || closeErr != nil || !strings.HasPrefix(out, "memused=12\n") {
		t.Fatalf("%.40q, read %v, close %v", out, readErr, closeErr)
	}
	// The run ended: without the pipe's bound it never would (yes never
	// leaves the pipe empty for the grace). What was read is a pipe's
	// worth after the exit was seen, plus what yes wrote before it was:
	// seeing it takes a scheduling round, in which yes can write several
	// MB (9.3 MB once in CI on 2 busy cores). A generous bound, far below
	// what yes writes in a second (GB).
	if len(out) > 64<<20 {
		t.Errorf("read %d bytes", len(out))
	}
	waitGone(t, readPid(t, pidFile), "the straggler")
}

// A child that escaped the process group (setsid) and holds the pipe: the
// output is whole, the child is found among the exporter's children (a
// subreaper's) and killed.
func TestStartEscapedChild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `echo memused=12
setsid sleep 300 &
echo $! > `+pidFile+`
echo memused_max=13`)
	out, readErr, closeErr := run(t, context.Background(), path)
	if readErr != nil || closeErr != nil {
		t.Fatalf("read %v, close %v", readErr, closeErr)
	}
	if out != "memused=12\nmemused_max=13\n" {
		t.Errorf("output %q", out)
	}
	waitGone(t, readPid(t, pidFile), "the escaped child")
}

// One that escaped and let go of the pipe is found all the same, once the
// run is over.
func TestStartEscapedChildDetached(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > `+pidFile+`
echo memused=12`)
	out, readErr, closeErr := run(t, context.Background(), path)
	if readErr != nil || closeErr != nil || out != "memused=12\n" {
		t.Fatalf("%q, read %v, close %v", out, readErr, closeErr)
	}
	waitGone(t, readPid(t, pidFile), "the detached escaped child")
}

// Where the kernel has no children files, the listing of every process
// finds the child all the same.
func TestStartEscapedChildFullScan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	saved := noChildrenFiles.Load()
	noChildrenFiles.Store(true)
	defer noChildrenFiles.Store(saved)
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > `+pidFile+`
echo memused=12`)
	if out, readErr, closeErr := run(t, context.Background(), path); readErr != nil || closeErr != nil || out != "memused=12\n" {
		t.Fatalf("%q, read %v, close %v", out, readErr, closeErr)
	}
	waitGone(t, readPid(t, pidFile), "the detached escaped child")
}

// Children of the program itself in its own process group (a test's
// promtool, started with os/exec) are none of the reaper's business.
func TestSweepSparesOwnGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	mine := exec.Command("sleep", "30")
	if err := mine.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { mine.Process.Kill(); mine.Wait() }()
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > `+pidFile)
	if _, readErr, closeErr := run(t, context.Background(), path); readErr != nil || closeErr != nil {
		t.Fatalf("read %v, close %v", readErr, closeErr)
	}
	waitGone(t, readPid(t, pidFile), "the escaped child")
	sweep()
	if mine.ProcessState != nil || !exists(mine.Process.Pid) {
		t.Fatal("the program's own child was reaped")
	}
	stat, _ := os.ReadFile("/proc/" + strconv.Itoa(mine.Process.Pid) + "/stat")
	if f := strings.Fields(string(stat)); len(f) < 3 || f[2] == "Z" {
		t.Errorf("the program's own child was killed: %s", stat)
	}
}

// A tool that prints nothing and exits 1 (sudo wanting a password): an
// empty, complete output, and the exit with its message.
func TestStartExitNoOutput(t *testing.T) {
	path := script(t, `echo "sudo: a password is required" >&2; exit 1`)
	out, readErr, closeErr := run(t, context.Background(), path)
	var exit *ExitError
	if out != "" || readErr != nil || !errors.As(closeErr, &exit) || exit.Code != 1 || exit.Stderr != "sudo: a password is required" {
		t.Fatalf("%q, read %v, close %v", out, readErr, closeErr)
	}
}

// A tool killed at the deadline while a child that escaped its group holds
// the pipe: the run ends as killed soon after the deadline, not when the
// child lets go, and the child is killed.
func TestStartKilledWithEscapedChild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `echo memused=12
setsid sleep 300 &
echo $! > `+pidFile+`
sleep 60`)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	out, readErr, closeErr := run(t, ctx, path)
	if !errors.Is(readErr, ErrKilled) || !errors.Is(closeErr, ErrKilled) || out != "memused=12\n" {
		t.Fatalf("%q, read %v, close %v", out, readErr, closeErr)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
	waitGone(t, readPid(t, pidFile), "the escaped child")
}

// KillAll kills the runs in flight and what escaped them; later Starts
// fail with ErrStopping.
func TestKillAll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a second or so")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	t.Cleanup(func() {
		procs.mu.Lock()
		procs.stopping = false
		procs.mu.Unlock()
	})
	pidFile := filepath.Join(t.TempDir(), "pid")
	path := script(t, `echo memused=12
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! > `+pidFile+`
sleep 60`)
	rc, err := Start(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := rc.Read(buf); err != nil || string(buf[:n]) != "memused=12\n" {
		t.Fatalf("%q, %v", buf[:n], err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, _ := os.ReadFile(pidFile); len(data) > 0 && data[len(data)-1] == '\n' {
			break
		}
	}
	pid := readPid(t, pidFile)
	KillAll()
	_, readErr := io.ReadAll(rc)
	closeErr := rc.Close()
	if !errors.Is(readErr, ErrKilled) || !errors.Is(closeErr, ErrKilled) || !strings.Contains(closeErr.Error(), "stopping") {
		t.Errorf("read %v, close %v", readErr, closeErr)
	}
	if r, _ := Classify(readErr, closeErr); r != Killed {
		t.Errorf("result %v", r)
	}
	waitGone(t, pid, "the escaped child")
	if _, err := Start(context.Background(), path); !errors.Is(err, ErrStopping) {
		t.Errorf("Start after KillAll: %v", err)
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want child
		ok   bool
	}{
		{strconv.Itoa(42) + " (sleep) S " + strconv.Itoa(self) + " 42 42 0 -1 4194560 97 0 0 0 0 0 0 0 20 0 1 0 123 8192 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0",
			child{pid: 42, pgid: 42, comm: "sleep"}, true},
		// A comm with spaces and parentheses; a zombie.
		{"43 (a) b) (c) Z " + strconv.Itoa(self) + " 7 7", child{pid: 43, pgid: 7, zombie: true, comm: "a) b) (c"}, true},
		// SIGKILL pending (field 31, bit 9): dying.
		{"44 (x) S " + strconv.Itoa(self) + " 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 0 0 0 256 0 0 0", child{pid: 44, pgid: 9, zombie: true, comm: "x"}, true},
		{"45 (other) S 1 45 45", child{}, false},
		{"garbage", child{}, false},
		{"46 (x) S", child{}, false},
	} {
		got, ok := parseStat([]byte(tc.line))
		if ok != tc.ok || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}
