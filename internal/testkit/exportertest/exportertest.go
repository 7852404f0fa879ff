// Package exportertest builds the exporter and starts it, or any other
// server a test needs (Prometheus, Alertmanager, VictoriaMetrics), as a
// real process: the binary built once per test process, free loopback
// ports, the process' log kept, and the process stopped when the test ends
// as systemd stops a unit (SIGTERM, then SIGKILL to its process group).
// The tests of cmd/hpcio_exporter and of deploy/ share it.
package exportertest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

var (
	dir       string // made by Main, removed at its end
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Main runs a package's tests (call it from TestMain: os.Exit(Main(m)))
// with a temporary directory for what they share, the built binary among
// it, removed at the end.
func Main(m *testing.M) int {
	d, err := os.MkdirTemp("", "hpcio-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir = d
	code := m.Run()
	os.RemoveAll(d)
	return code
}

// Dir returns the temporary directory Main made: what a package's tests
// share lives there until they end.
func Dir(t testing.TB) string {
	t.Helper()
	if dir == "" {
		t.Fatal("exportertest.Main was not called from TestMain")
	}
	return dir
}

// Binary builds cmd/hpcio_exporter of this repository once per test
// process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	out := filepath.Join(Dir(t), "hpcio_exporter")
	buildOnce.Do(func() {
		root := corpus.RepoRoot()
		if root == "" {
			buildErr = fmt.Errorf("cannot find the repository root (go.mod) from the working directory")
			return
		}
		cmd := exec.Command("go", "build", "-o", out, "./cmd/hpcio_exporter")
		cmd.Dir = root
		if text, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, text)
			return
		}
		binary = out
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// FreeAddress returns a loopback address nothing listens on now.
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// FreeAddresses returns a loopback address whose port and the n-1 ports
// after it are free now: a simulated site listens on consecutive ports.
// They are taken below Linux's ephemeral range (32768-60999), where the
// kernel picks the source ports of the test's own connections, which could
// take one of the block between this check and the server's listen.
func FreeAddresses(t testing.TB, n int) string {
	t.Helper()
	for range 100 {
		base := 20000 + rand.IntN(12000-n)
		var ls []net.Listener
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == n {
			return "127.0.0.1:" + strconv.Itoa(base)
		}
	}
	t.Fatalf("no %d consecutive free ports on the loopback", n)
	return ""
}

// Logs keeps what a process writes; safe to read while it writes.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Bytes returns a copy of everything written so far.
func (l *Logs) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// Process is a server a test started.
type Process struct {
	Name string
	Addr string // where it listens, when the test chose it ("" otherwise)
	Cmd  *exec.Cmd
	Logs *Logs // its standard output and error

	waitOnce sync.Once
	waitErr  error
	done     chan struct{}
}

// Command returns the process of bin with args, not started: set Addr or
// Cmd's environment before Start.
func Command(name, bin string, args ...string) *Process {
	p := &Process{Name: name, Cmd: exec.Command(bin, args...), Logs: &Logs{}, done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = p.Logs, p.Logs
	// Its own process group, so that what it starts goes with it.
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return p
}

// Start starts bin with args as a process named name (Command, then Start).
func Start(t testing.TB, name, bin string, args ...string) *Process {
	t.Helper()
	return Command(name, bin, args...).Start(t)
}

// Start starts p and stops it when the test ends: SIGTERM, as systemd
// stops a unit (a demo removes its drop directory then), SIGKILL to its
// process group if it has not ended 5 s later; its log's last lines are
// shown if the test failed.
func (p *Process) Start(t testing.TB) *Process {
	t.Helper()
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", p.Name, err)
	}
	go p.Wait()
	t.Cleanup(func() {
		p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("%s, last lines of its log:\n%s", p.Name, p.Tail(40))
		}
	})
	return p
}

// Wait waits for the process to end and returns how (exec.Cmd.Wait's
// error); it may be called any number of times, from any goroutine.
func (p *Process) Wait() error {
	p.waitOnce.Do(func() {
		p.waitErr = p.Cmd.Wait()
		close(p.done)
	})
	<-p.done
	return p.waitErr
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop kills the process and waits for it: its log is then complete.
func (p *Process) Stop() {
	p.Cmd.Process.Kill()
	p.Wait()
}

// WaitListening waits until p.Addr accepts connections, for at most
// within; it fails the test if p ends or the time passes first.
func (p *Process) WaitListening(t testing.TB, within time.Duration) *Process {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", p.Addr); err == nil {
			c.Close()
			return p
		}
		if p.Exited() {
			t.Fatalf("%s ended before it listened on %s: %v\n%s", p.Name, p.Addr, p.waitErr, p.Tail(40))
		}
	}
	t.Fatalf("%s did not listen on %s within %v\n%s", p.Name, p.Addr, within, p.Tail(40))
	return nil
}

// Tail returns the last n lines of the process' log.
func (p *Process) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(p.Logs.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
