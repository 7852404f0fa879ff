package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The peak resident memory of a command, measured so that the test process
// does not count. Go starts a child with vfork (CLONE_VM): at its exec,
// Linux folds the peak of the memory it was sharing, the test process', into
// the child's ru_maxrss. A test process that made a 1 GiB Darshan log in
// memory would thus read as a child of 1 GiB. The command is started by a
// fresh copy of the test binary instead (a few MiB), which reports the
// rusage of the command it waited for on a pipe.

// peakRSSWrapperEnv makes the test binary that wrapper (see init).
const peakRSSWrapperEnv = "HPCIO_TEST_PEAK_RSS_WRAPPER"

func init() {
	if os.Getenv(peakRSSWrapperEnv) == "" {
		return
	}
	os.Exit(peakRSSWrap(os.Args[1:]))
}

// peakRSSWrap runs args with this process' standard streams, writes the
// peak resident memory of the command (KiB) to file descriptor 3, and
// returns its exit status (128 + the signal that killed it).
func peakRSSWrap(args []string) int {
	// Inherited without close-on-exec: the command must not hold it.
	syscall.CloseOnExec(3)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = slicesWithout(os.Environ(), peakRSSWrapperEnv+"=")
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "peak RSS wrapper:", err)
		return 125
	}
	report := os.NewFile(3, "peak-rss")
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Fprintln(report, ru.Maxrss)
	}
	report.Close()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

func slicesWithout(env []string, prefix string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// measuredRun is how a command measured by runMeasured ended.
type measuredRun struct {
	status    int   // exit status; 128 + signal when killed by one
	maxRSSKiB int64 // peak resident memory of the command alone
	timedOut  bool  // killed at the timeout
}

// runMeasured runs bin with args through the wrapper, stdout and stderr
// to the writers given, and kills it (its whole process group) after
// timeout.
func runMeasured(timeout time.Duration, stdout, stderr io.Writer, bin string, args ...string) (measuredRun, error) {
	self, err := os.Executable()
	if err != nil {
		return measuredRun{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		return measuredRun{}, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), peakRSSWrapperEnv+"=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	w.Close()
	if err != nil {
		return measuredRun{}, err
	}
	report, _ := io.ReadAll(r)
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return measuredRun{}, err
	}
	m := measuredRun{status: cmd.ProcessState.ExitCode(), timedOut: ctx.Err() != nil}
	if s := strings.TrimSpace(string(report)); s != "" {
		m.maxRSSKiB, _ = strconv.ParseInt(s, 10, 64)
	}
	return m, nil
}

// The measure is the command's own: a test process of 256 MiB more does
// not show in it (as it would in the rusage of a command it started
// itself).
func TestPeakRSSIsTheCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: touches 256 MiB")
	}
	bin := buildExporter(t)
	big := make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	m, err := runMeasured(time.Minute, io.Discard, io.Discard, bin, "--version")
	if err != nil || m.status != 0 {
		t.Fatalf("--version: %v, status %d", err, m.status)
	}
	direct := exec.Command(bin, "--version")
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	ru := direct.ProcessState.SysUsage().(*syscall.Rusage)
	t.Logf("--version: %d KiB measured, %d KiB in the rusage of a direct child", m.maxRSSKiB, ru.Maxrss)
	if m.maxRSSKiB <= 0 || m.maxRSSKiB > 64<<10 {
		t.Errorf("--version measured at %d KiB, want a few MiB", m.maxRSSKiB)
	}
	runtime.KeepAlive(big)
}
