// Package toolrun runs the Lustre command-line tools (lctl, lnetctl) for
// scrapes: in a process group of their own that is killed at the scrape's
// deadline (Start), at most once at a time however many scrapes want a run
// (Runner), with a deadline taken from the scrape's (Bounds), and counted
// by how each run ended (Counts). It knows nothing of what the tools print.
package toolrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Result is how one run of a tool ended.
type Result int

const (
	// OK: the tool printed its whole output and exited 0.
	OK Result = iota
	// Partial: the whole output, then a non-zero exit (`lctl get_param a
	// b` when a matches nothing); what was printed is valid.
	Partial
	// Failed: the tool could not start, its output could not be read, or
	// it exited non-zero with nothing usable printed (its user decides
	// what is usable: a Partial run it got nothing from is Failed).
	Failed
	// Killed: the deadline expired and the process group was killed; the
	// output is cut short.
	Killed
	// OverBudget: the output went past what its reader may take of one run
	// (ErrOverBudget); the reader stopped and the process group was
	// killed.
	OverBudget

	numResults
)

// Results lists every result, in the order of their metrics.
var Results = [numResults]Result{OK, Partial, Failed, Killed, OverBudget}

// ErrOverBudget is what a reader of a tool's output returns, wrapped with
// the bound it met, when the output holds more than one run may cost (more
// bytes, more entries): it stops reading, and the run is OverBudget.
var ErrOverBudget = errors.New("output over its budget")

func (r Result) String() string {
	switch r {
	case OK:
		return "ok"
	case Partial:
		return "partial"
	case Failed:
		return "failed"
	case Killed:
		return "killed"
	case OverBudget:
		return "over_budget"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Classify tells how a run ended from the error of reading its output (nil
// when it was read to the end) and the error of closing it (Close of what
// Start returned). The error is nil for OK, the *ExitError for Partial.
func Classify(readErr, closeErr error) (Result, error) {
	var exit *ExitError
	switch {
	case readErr != nil && errors.Is(readErr, ErrOverBudget):
		return OverBudget, readErr
	case readErr != nil && errors.Is(readErr, ErrKilled):
		return Killed, readErr
	case readErr != nil:
		return Failed, readErr
	case errors.As(closeErr, &exit):
		return Partial, exit
	case closeErr != nil:
		return Failed, closeErr
	}
	return OK, nil
}

// Bounds limit a run: it ends at the scrape's deadline less Offset (kept to
// write the response), and never lasts more than Timeout.
type Bounds struct {
	Timeout time.Duration
	Offset  time.Duration
}

// Deadline is the deadline of a run that starts at now for a scrape bounded
// by ctx.
func (b Bounds) Deadline(ctx context.Context, now time.Time) time.Time {
	d := now.Add(b.Timeout)
	if scrape, ok := ctx.Deadline(); ok && scrape.Add(-b.Offset).Before(d) {
		d = scrape.Add(-b.Offset)
	}
	return d
}

// Counts counts runs by result and keeps the duration of the latest. It is
// safe for concurrent use.
type Counts struct {
	mu   sync.Mutex
	n    [numResults]uint64
	last time.Duration
}

// Add counts one run.
func (c *Counts) Add(r Result, took time.Duration) {
	c.mu.Lock()
	c.n[r]++
	c.last = took
	c.mu.Unlock()
}

// Get returns the runs by result (indexed by Result) and the duration of
// the latest.
func (c *Counts) Get() (runs [numResults]uint64, last time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.last
}

// Runner runs a tool for scrapes. A scrape that wants a run while one is
// under way joins it instead of starting another, so that a burst of
// scrapes (an HA pair of Prometheus servers) costs one run. A run is
// bounded by the deadline of the scrape that started it, and outlives that
// scrape if it goes away, since others may be waiting for it.
type Runner[T any] struct {
	bounds Bounds
	name   string
	run    func(ctx context.Context) (T, error)
	flight singleflight.Group
}

// NewRunner returns a Runner of run; name says what is waited for in the
// errors of scrapes that give up waiting ("lctl").
func NewRunner[T any](name string, bounds Bounds, run func(ctx context.Context) (T, error)) *Runner[T] {
	return &Runner[T]{bounds: bounds, name: name, run: run}
}

// Do joins the run under way or starts one, and waits for its result as
// long as ctx allows. A run's result is returned with its error: a run
// that failed may still have produced something worth showing.
func (r *Runner[T]) Do(ctx context.Context) (T, error) {
	deadline := r.bounds.Deadline(ctx, time.Now())
	ch := r.flight.DoChan("", func() (v any, err error) {
		runCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		// A bug in a parser must cost one run, not the process: the run
		// goroutine belongs to no scrape that could recover it.
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%s run panicked: %v", r.name, p)
			}
		}()
		return r.run(runCtx)
	})
	select {
	case res := <-ch:
		v, _ := res.Val.(T)
		return v, res.Err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("waiting for %s: %w", r.name, ctx.Err())
	}
}
