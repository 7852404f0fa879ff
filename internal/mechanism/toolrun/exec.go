package toolrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ExitError reports a tool that ran but exited non-zero. Its output may
// still be valid: `lctl get_param a b` exits non-zero when a matches nothing
// (an OSS has no mdt.*), and prints b all the same.
type ExitError struct {
	Code   int
	Stderr string // the first lines of its standard error
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("exited with status %d", e.Code)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// ErrKilled is returned by Read when the deadline expired and the whole
// process group was killed: the output is cut short.
var ErrKilled = errors.New("killed at the scrape deadline")

// ErrStopping is returned by Start once KillAll was called: the exporter is
// shutting down and starts no tool any more.
var ErrStopping = errors.New("not started: the exporter is stopping")

// grace is how long the output of a tool is still waited for once its
// leader (the process Start ran) has exited, when something else keeps the
// pipe open: a child left in the background, or one that escaped the
// process group. Everything the leader wrote is in the pipe when it exits
// (a write to a pipe returns once copied into it), and Read keeps reading
// as long as the pipe holds bytes, so the grace only bounds the wait for
// bytes that are not there yet: what a descendant still finishing at that
// moment may add. 250 ms is far beyond a scheduling delay on a loaded
// machine, and short against a scrape's seconds; a run whose pipe closes
// with its leader (every normal one) never waits for it.
const grace = 250 * time.Millisecond

// stuckWait bounds how long Close waits for a killed leader to exit. A
// process blocked in the kernel (an lctl stuck in a Lustre call) ignores
// SIGKILL until the call returns; the run must end all the same.
const stuckWait = 2 * time.Second

// Start runs a Lustre tool (lctl, lnetctl) in a process group of its own,
// and kills the group when ctx expires, so that a wrapper (sudo, a shell)
// and its children go with it. Read returns io.EOF only for a complete
// output; a killed run reads as ErrKilled. Close reports a non-zero exit
// as an *ExitError.
//
// The output is complete when the leader exits: what it printed is kept
// even if a process it left behind holds the pipe open (read for at most
// grace more, then that process is killed), and the processes a run leaves
// behind, in its group or escaped from it, are killed and reaped once the
// run is over (see KillAll and the package's reaper).
func Start(ctx context.Context, path string, args ...string) (io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// Our own pipes, not StdoutPipe: exec.Cmd.Wait closes that one, and
	// the leader must be waited for while its output is still being read.
	// An *os.File as Stdout and Stderr is handed to the process as it is,
	// with no copying goroutine that a straggler could keep waiting.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		stdout.Close()
		stdoutW.Close()
		return nil, err
	}
	pipeCap := growPipe(stdout)
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	o := &commandOutput{
		ctx: ctx, cmd: cmd, stdout: stdout, stderrR: stderr, pipeCap: pipeCap,
		stderr:     &boundedBuffer{max: 4096},
		stderrDone: make(chan struct{}),
		leaderGone: make(chan struct{}),
		exited:     make(chan struct{}),
	}
	err = startTracked(cmd, o)
	// The child has its copies; the parent's write ends must go, or the
	// pipes would never read as ended.
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		stdout.Close()
		stderr.Close()
		if errors.Is(err, ErrStopping) {
			return nil, err
		}
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	// A leader stuck in the kernel does not exit when killed and keeps the
	// pipe open: the reads must end all the same.
	o.stopAfter = context.AfterFunc(ctx, func() {
		o.stdout.SetReadDeadline(time.Now().Add(grace))
	})
	go o.drainStderr()
	go o.waitLeader()
	return o, nil
}

type commandOutput struct {
	ctx     context.Context
	cmd     *exec.Cmd
	stdout  *os.File
	stderrR *os.File
	stderr  *boundedBuffer
	pipeCap int

	stderrDone chan struct{} // the stderr reader ended
	leaderGone chan struct{} // the leader exited and was reaped
	exited     chan struct{} // ... and waitErr is set
	waitErr    error
	stopped    atomic.Bool // killed by KillAll
	stopAfter  func() bool

	// Of the reading goroutine only.
	afterExit int  // bytes read since the leader was seen gone
	held      bool // the pipe was still open past the grace
	stuck     bool // killed, the leader did not exit: Close need not wait
	ended     bool // reading is over; endErr is its outcome
	endErr    error
	closeOnce sync.Once
	closeErr  error
}

// Read passes stdout through until the output ends: at EOF, or, once the
// leader has exited, when the pipe is empty and stays so for the grace, or
// when more than the pipe's capacity was read since (a straggler that
// never stops writing). Then a killed leader reads as an error, not as a
// complete output.
func (o *commandOutput) Read(p []byte) (int, error) {
	if o.ended {
		return 0, o.endErr
	}
	for {
		gone := isClosed(o.leaderGone)
		if gone && o.afterExit > o.pipeCap {
			// More than a pipe's worth since the exit: the leader's
			// bytes are all read, a straggler writes the rest.
			o.held = true
			return 0, o.end()
		}
		n, err := o.stdout.Read(p)
		if gone {
			o.afterExit += n
		}
		switch {
		case n > 0 || err == nil:
			// An error with bytes recurs at the next Read.
			return n, nil
		case errors.Is(err, io.EOF):
			return n, o.end()
		case errors.Is(err, os.ErrDeadlineExceeded):
			if !isClosed(o.leaderGone) {
				// The deadline of the run passed, the leader was
				// killed, and it has not exited for the grace since:
				// it is stuck in the kernel. The output is cut.
				o.stuck = true
				o.ended, o.endErr = true, fmt.Errorf("%w (%v; it did not exit)", ErrKilled, o.ctx.Err())
				return 0, o.endErr
			}
			// What the leader wrote before it exited is all in the
			// pipe, at most its capacity: while bytes are there and
			// fewer than that were read since, they may be its.
			if o.afterExit < o.pipeCap && pipeBuffered(o.stdout) > 0 {
				o.stdout.SetReadDeadline(time.Now().Add(grace))
				continue
			}
			o.held = true
			return 0, o.end()
		default:
			return n, err
		}
	}
}

// end closes the output once it is over and returns what Read returns at
// its end: io.EOF when it is complete (the leader exited by itself,
// whatever its status), else why it is not.
func (o *commandOutput) end() error {
	if !o.awaitExit() {
		o.stuck = true
		o.ended, o.endErr = true, fmt.Errorf("%w (%v; it did not exit)", ErrKilled, o.ctx.Err())
		return o.endErr
	}
	if o.held {
		// A process the leader left holds the pipe: the output is
		// complete, that process is not wanted.
		killLeftBehind(o.cmd.Process.Pid)
	} else {
		runOver(o.cmd.Process.Pid)
	}
	o.ended, o.endErr = true, io.EOF
	var exit *ExitError
	if o.waitErr != nil && !errors.As(o.waitErr, &exit) {
		o.endErr = o.waitErr
	}
	return o.endErr
}

// awaitExit waits for the leader's exit; once the run's deadline has
// passed (the leader was killed), for stuckWait at most.
func (o *commandOutput) awaitExit() bool {
	select {
	case <-o.exited:
		return true
	case <-o.ctx.Done():
	}
	select {
	case <-o.exited:
		return true
	case <-time.After(stuckWait):
		return false
	}
}

// drainStderr keeps the first lines of stderr and reads the rest, so that a
// tool that writes much there never blocks on it.
func (o *commandOutput) drainStderr() {
	defer close(o.stderrDone)
	defer o.stderrR.Close()
	io.Copy(o.stderr, o.stderrR)
}

// waitLeader waits for the leader's exit, reaps it, and then lets the
// reads of its output end after the grace.
func (o *commandOutput) waitLeader() {
	err := o.cmd.Wait()
	killed := o.ctx.Err() != nil
	leaderReaped(o.cmd.Process.Pid)
	close(o.leaderGone)
	until := time.Now().Add(grace)
	o.stdout.SetReadDeadline(until)
	o.stderrR.SetReadDeadline(until)
	<-o.stderrDone
	switch {
	case o.stopped.Load():
		o.waitErr = fmt.Errorf("%w (the exporter is stopping)", ErrKilled)
	case killed:
		o.waitErr = fmt.Errorf("%w (%v)", ErrKilled, o.ctx.Err())
	case err == nil:
	default:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Exited() {
			o.waitErr = &ExitError{Code: ee.ExitCode(), Stderr: o.stderr.firstLines(6)}
		} else if errors.As(err, &ee) {
			o.waitErr = fmt.Errorf("terminated: %v: %s", ee.ProcessState, o.stderr.firstLines(6))
		} else {
			o.waitErr = err
		}
	}
	o.stopAfter()
	close(o.exited)
}

// Close kills the tool if it is still running (closed before the end of
// its output) and reports how it ended: nil, an *ExitError, or a failure.
func (o *commandOutput) Close() error {
	o.closeOnce.Do(func() {
		o.stdout.Close()
		if !isClosed(o.leaderGone) {
			_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		}
		select {
		case <-o.exited:
			o.closeErr = o.waitErr
		case <-o.stuckAfter():
			// Left to waitLeader, which reaps it whenever it exits.
			o.closeErr = fmt.Errorf("%w (it did not exit)", ErrKilled)
		}
		// What the run left behind, reparented to the exporter, goes.
		runOver(o.cmd.Process.Pid)
	})
	return o.closeErr
}

// stuckAfter is when Close stops waiting for a killed leader: at once
// when Read has waited for it already.
func (o *commandOutput) stuckAfter() <-chan time.Time {
	if o.stuck {
		if isClosed(o.exited) {
			return nil // exited meanwhile: Close takes exited
		}
		return time.After(0)
	}
	return time.After(stuckWait)
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *boundedBuffer) firstLines(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.SplitN(strings.TrimSpace(b.buf.String()), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "; ")
}

// StartFunc starts a tool with arguments: Path's Start, or a simulator.
type StartFunc func(ctx context.Context, args ...string) (io.ReadCloser, error)

// Path returns the StartFunc of the binary at path (looked up in $PATH
// when it has no slash).
func Path(path string) StartFunc {
	return func(ctx context.Context, args ...string) (io.ReadCloser, error) {
		return Start(ctx, path, args...)
	}
}
