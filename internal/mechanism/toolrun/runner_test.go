package toolrun

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBoundsDeadline(t *testing.T) {
	b := Bounds{Timeout: 20 * time.Second, Offset: 500 * time.Millisecond}
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		scrape, want time.Duration // 0: no scrape deadline
	}{
		{10 * time.Second, 9500 * time.Millisecond},
		{60 * time.Second, 20 * time.Second},
		{0, 20 * time.Second},
		{300 * time.Millisecond, -200 * time.Millisecond}, // already too late: the run fails at once
	} {
		ctx := context.Background()
		if tc.scrape > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(tc.scrape))
			defer cancel()
		}
		if got := b.Deadline(ctx, now).Sub(now); got != tc.want {
			t.Errorf("scrape deadline in %v: run deadline in %v, want %v", tc.scrape, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	exit := &ExitError{Code: 2, Stderr: "no match"}
	for _, tc := range []struct {
		name              string
		readErr, closeErr error
		want              Result
		wantErr           error
	}{
		{"ok", nil, nil, OK, nil},
		{"exit after output", nil, exit, Partial, exit},
		{"killed", ErrKilled, ErrKilled, Killed, ErrKilled},
		{"read failure", errors.New("pipe"), nil, Failed, nil},
		{"wait failure", nil, errors.New("terminated: signal 9"), Failed, nil},
	} {
		got, err := Classify(tc.readErr, tc.closeErr)
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if tc.wantErr != nil && !errors.Is(err, tc.wantErr) || (got == OK) != (err == nil) {
			t.Errorf("%s: error %v", tc.name, err)
		}
	}
}

// Scrapes that want a run while one is under way share it; the next one
// after it gets a run of its own.
func TestRunnerSharesRuns(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	r := NewRunner("tool", Bounds{Timeout: time.Minute}, func(ctx context.Context) (int32, error) {
		n := runs.Add(1)
		<-release
		return n, nil
	})
	var wg, calling sync.WaitGroup
	results := make([]int32, 8)
	for i := range results {
		wg.Add(1)
		calling.Add(1)
		go func() {
			defer wg.Done()
			calling.Done()
			results[i], _ = r.Do(context.Background())
		}()
	}
	calling.Wait()
	for runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the others reach Do and join
	close(release)
	wg.Wait()
	for i, v := range results {
		if v != 1 {
			t.Errorf("scrape %d got run %d, want the shared run 1", i, v)
		}
	}
	if v, _ := r.Do(context.Background()); v != 2 {
		t.Errorf("a later scrape got run %d, want a new run 2", v)
	}
}

// A scrape that gives up waiting leaves the run going, bounded by the
// deadline of the scrape that started it, for the others.
func TestRunnerOutlivesScrape(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	var runDeadline time.Time
	r := NewRunner("tool", Bounds{Timeout: time.Minute, Offset: 100 * time.Millisecond}, func(ctx context.Context) (string, error) {
		once.Do(func() {
			runDeadline, _ = ctx.Deadline()
			close(started)
		})
		<-ctx.Done()
		return "cut short", ctx.Err()
	})
	// The scrape gives up long before its deadline, which bounds the run.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	scrapeDeadline, _ := ctx.Deadline()
	go func() { <-started; cancel() }()
	if _, err := r.Do(ctx); err == nil || !strings.Contains(err.Error(), "waiting for tool") {
		t.Fatalf("abandoned scrape: %v", err)
	}
	if want := scrapeDeadline.Add(-100 * time.Millisecond); !runDeadline.Equal(want) {
		t.Errorf("run deadline %v, want the scrape's less the offset, %v", runDeadline, want)
	}
	// A scrape arriving now joins the run still under way.
	v, err := r.Do(context.Background())
	if v != "cut short" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("joined run: %q, %v", v, err)
	}
}

// A bug that panics in a run costs that run, not the process.
func TestRunnerRecoversPanic(t *testing.T) {
	calls := 0
	r := NewRunner("tool", Bounds{Timeout: time.Minute}, func(context.Context) (int, error) {
		calls++
		if calls == 1 {
			panic("a bug in the run")
		}
		return calls, nil
	})
	if _, err := r.Do(context.Background()); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("panicking run: %v", err)
	}
	if v, err := r.Do(context.Background()); v != 2 || err != nil {
		t.Errorf("next run: %d, %v", v, err)
	}
}

func TestCounts(t *testing.T) {
	var c Counts
	c.Add(OK, time.Second)
	c.Add(Killed, 3*time.Second)
	c.Add(OK, 2*time.Second)
	runs, last := c.Get()
	if runs != [numResults]uint64{OK: 2, Killed: 1} || last != 2*time.Second {
		t.Errorf("runs %v, last %v", runs, last)
	}
	for _, r := range Results {
		if strings.HasPrefix(r.String(), "Result(") {
			t.Errorf("result %d has no name", r)
		}
	}
}
