package toolrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
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

// Start runs a Lustre tool (lctl, lnetctl) in a process group of its own,
// and kills the group when ctx expires, so that a wrapper (sudo, a shell)
// and its children go with it. Read returns io.EOF only for a complete
// output; a killed run reads as ErrKilled. Close reports a non-zero exit
// as an *ExitError.
func Start(ctx context.Context, path string, args ...string) (io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// After the kill, do not wait for a stray child holding the pipes.
	cmd.WaitDelay = 2 * time.Second
	stderr := &boundedBuffer{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	growPipe(stdout)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return &commandOutput{ctx: ctx, cmd: cmd, stdout: stdout, stderr: stderr}, nil
}

type commandOutput struct {
	ctx    context.Context
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr *boundedBuffer

	once    sync.Once
	waitErr error
}

// Read passes stdout through; at its end it waits for the process, so that
// a killed lctl reads as an error and not as a complete output.
func (o *commandOutput) Read(p []byte) (int, error) {
	n, err := o.stdout.Read(p)
	if err == io.EOF {
		if werr := o.wait(); werr != nil {
			var exit *ExitError
			if !errors.As(werr, &exit) {
				return n, werr
			}
		}
	}
	return n, err
}

func (o *commandOutput) wait() error {
	o.once.Do(func() {
		err := o.cmd.Wait()
		switch {
		case o.ctx.Err() != nil:
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
	})
	return o.waitErr
}

// Close kills lctl if it is still running and reports how it ended: nil,
// an *ExitError, or a failure.
func (o *commandOutput) Close() error {
	o.stdout.Close()
	if o.cmd.ProcessState == nil {
		// Closed before the end of the output: do not leave it running.
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
	}
	return o.wait()
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
