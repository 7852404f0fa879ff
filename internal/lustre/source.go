// Package lustre is the Lustre source of a scrape: it gathers what every
// Lustre collector needs into one `lctl get_param` run, reads its output as
// it streams in with the parsers of package lctl, feeds the job_stats to
// the job tracker (package jobstats) without holding them, and publishes
// the rest as a typed, immutable Snapshot.
//
// Running the command (deadline, process group, one run for concurrent
// scrapes, accounting) is package toolrun's; what the values mean as
// metrics is package collector's.
package lustre

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/jobstats"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// Kind says how the parameters of a request are read.
type Kind int

const (
	Stats     Kind = iota + 1 // lprocfs stats tables → Snapshot.Stats
	Values                    // single numbers → Snapshot.Values
	BrwStats                  // brw_stats histograms → Snapshot.Brw
	Recovery                  // recovery_status → Snapshot.Recovery
	Changelog                 // changelog_users → Snapshot.Changelogs
	Quota                     // quota accounting and limits → Snapshot.Quotas
	Health                    // health_check → Snapshot.Health
	Versions                  // version → Snapshot.Versions
)

// A Request asks the source for parameters.
type Request struct {
	// Owner is who asked (a collector's name): bad input is counted and
	// logged under it.
	Owner    string
	Kind     Kind
	Patterns []string
	// Match picks the request's parameters among those lctl prints (one
	// run prints the parameters of every request); nil matches Patterns
	// as lctl globs them.
	Match func(param string) bool
}

func (r *Request) matches(param string) bool {
	if r.Match != nil {
		return r.Match(param)
	}
	for _, p := range r.Patterns {
		if lctl.MatchPattern(p, param) {
			return true
		}
	}
	return false
}

// Config configures a Source.
type Config struct {
	// Lctl prints get_param output: the lctl command, or a simulator.
	Lctl   lctl.Source
	Bounds toolrun.Bounds
	// MaxOutputBytes bounds what one run reads of lctl's output: past it,
	// reading stops, the tool is killed and the run is OverBudget, nothing
	// of it published. 0: no bound.
	MaxOutputBytes int64
	Logger         *slog.Logger
	// Now, when set, replaces the clock of the runs (tests).
	Now func() time.Time
}

// Source runs lctl once per scrape for every request, and once for
// concurrent scrapes. Requests are added before the first Snapshot.
type Source struct {
	lctl     lctl.Source
	logger   *slog.Logger
	now      func() time.Time
	requests []Request
	jobs     *jobstats.Tracker
	jobOwner string
	runner   *toolrun.Runner[*Snapshot]
	counts   toolrun.Counts
	maxBytes int64

	// mu guards latest and the references of every snapshot: a snapshot
	// whose last reference goes hands its job view back to the tracker
	// (Release), so taking a reference must not race with giving one up.
	mu     sync.Mutex
	latest *Snapshot

	// State of the runs, which never overlap.
	lastErr  string // the latest run's failure, to log a repeated one once
	warned   map[string]bool
	badInput map[string]uint64
	// collectedAt is the number of raw job series when a run last
	// collected its garbage (collectGrowth), with collect (runtime.GC).
	collectedAt int
	collect     func()
}

// New returns a Source with no requests.
func New(cfg Config) *Source {
	s := &Source{lctl: cfg.Lctl, logger: cfg.Logger, now: cfg.Now, warned: map[string]bool{}, badInput: map[string]uint64{},
		collect: runtime.GC, maxBytes: cfg.MaxOutputBytes}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With("source", "lctl")
	if s.now == nil {
		s.now = time.Now
	}
	s.runner = toolrun.NewRunner("lctl", cfg.Bounds, s.run)
	return s
}

// Add adds a request to every run.
func (s *Source) Add(r Request) { s.requests = append(s.requests, r) }

// TrackJobs feeds the job_stats of every run to t, for owner.
func (s *Source) TrackJobs(owner string, t *jobstats.Tracker) { s.jobs, s.jobOwner = t, owner }

// Patterns are the get_param patterns of one run, each once.
func (s *Source) Patterns() []string {
	var out []string
	add := func(ps []string) {
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	if s.jobs != nil {
		add(s.jobs.Patterns())
	}
	for _, r := range s.requests {
		add(r.Patterns)
	}
	return out
}

// Snapshot returns the snapshot of a run made for this scrape (or joined
// while under way), waiting as long as ctx allows. With an error, the
// snapshot is still the best there is: that of a run that failed (holding
// what it read before), or, when ctx expired first, the latest published
// one, which may be nil. The caller holds a reference to the snapshot,
// which it gives back with Release once it no longer reads it.
func (s *Source) Snapshot(ctx context.Context) (*Snapshot, error) {
	snap, err := s.runner.Do(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap == nil || snap.refs == 0 {
		// None, or one so old that every reference to it went: the
		// latest, which is newer, will do.
		snap = s.latest
	}
	if snap != nil {
		snap.refs++
	}
	return snap, err
}

// Release gives back a reference taken by Snapshot. After the last, the
// snapshot's job view is handed back for reuse: nothing may read it then.
func (s *Source) Release(snap *Snapshot) {
	if snap == nil {
		return
	}
	s.mu.Lock()
	snap.refs--
	last := snap.refs == 0
	s.mu.Unlock()
	if last && s.jobs != nil {
		s.jobs.Recycle(snap.Jobs)
	}
}

// Runs returns the runs so far by result (indexed by toolrun.Result) and
// the duration of the latest.
func (s *Source) Runs() ([len(toolrun.Results)]uint64, time.Duration) { return s.counts.Get() }

// collectGrowth collects the garbage after a run that doubled the raw job
// series tracked to 50,000 or more (the first run, as a rule): growing the tracker's tables
// to a hundred thousand jobs leaves tens of megabytes of old tables
// behind, which the next collection, due only at twice the heap, would
// leave in the process for good (a peak RSS a third higher).
func (s *Source) collectGrowth(v *jobstats.View) {
	n := 0
	for _, tv := range v.Targets {
		n += tv.RawSeries
	}
	if n >= minCollectedGrowth && n >= 2*s.collectedAt {
		s.collect()
		s.collectedAt = n
	}
}

// minCollectedGrowth: below it the old tables are a few megabytes, less
// than a forced collection costs a run (a third more time for a run that
// meets 10,000 jobs for the first time).
const minCollectedGrowth = 50000

// run executes one lctl get_param for every request and reads its output
// as it streams in.
func (s *Source) run(ctx context.Context) (*Snapshot, error) {
	begin := s.now()
	b := &builder{src: s, snap: &Snapshot{Time: begin}, seen: map[string]bool{}}
	if s.jobs != nil {
		s.jobs.BeginRun(begin)
	}
	result, err := toolrun.OK, error(nil)
	var exit *toolrun.ExitError
	if patterns := s.Patterns(); len(patterns) > 0 {
		result, exit, err = b.read(ctx, patterns)
	}
	snap := b.snap
	if result == toolrun.OverBudget {
		// Nothing of a run over its budget is published: what it read
		// before the bound was met may be any part of the output.
		snap = &Snapshot{Time: begin}
	}
	if s.jobs != nil {
		s.retireUnread()
		var exitErr error
		if exit != nil {
			exitErr = exit
		}
		v := s.jobs.EndRun(err, exitErr)
		if result == toolrun.OverBudget {
			s.jobs.Recycle(v)
			v = nil
		}
		snap.Jobs = v
		if v != nil {
			s.collectGrowth(v)
		}
	}
	snap.Duration = s.now().Sub(begin)
	s.counts.Add(result, snap.Duration)
	snap.Result, snap.Err, snap.Exit = result, err, exit
	snap.Runs, _ = s.counts.Get()
	snap.BadInput = make(map[string]uint64, len(s.badInput))
	for owner, n := range s.badInput {
		snap.BadInput[owner] = n
	}
	s.report(err)
	// The source holds the latest snapshot, for scrapes that cannot wait
	// for a run of their own.
	s.mu.Lock()
	old := s.latest
	s.latest, snap.refs = snap, 1
	s.mu.Unlock()
	s.Release(old)
	return snap, err
}

// read runs lctl and routes its output.
func (b *builder) read(ctx context.Context, patterns []string) (toolrun.Result, *toolrun.ExitError, error) {
	out, err := b.src.lctl.GetParam(ctx, patterns)
	if err != nil {
		return toolrun.Failed, nil, fmt.Errorf("lctl get_param: %w", err)
	}
	scanErr := lctl.Scan(&budgetReader{r: out, max: b.src.maxBytes, jobs: b.src.jobs}, "", b.route)
	if jobs := b.src.jobs; scanErr == nil && jobs != nil && jobs.OverBudget() {
		// The entries past the budget were delivered after the last read
		// (the parsers deliver them on a goroutine of their own).
		scanErr = entriesOverBudget(jobs)
	}
	result, err := toolrun.Classify(scanErr, out.Close())
	var exit *toolrun.ExitError
	switch {
	case result == toolrun.Partial && b.routed == 0:
		// A non-zero exit and not one parameter asked for: nothing
		// worked (sudo asking for a password, lctl on a node with no
		// Lustre target). Every Lustre collector fails, as it must for
		// an alert to fire; the tool's own message says why.
		result = toolrun.Failed
		err = fmt.Errorf("lctl get_param printed no parameter asked for: %w", err)
	case result == toolrun.Partial:
		// Some pattern matched nothing; what matched was printed. Each
		// collector tells whether it got what it needs.
		errors.As(err, &exit)
		b.src.logger.Debug("lctl get_param exited non-zero", "err", err)
		err = nil
	case result == toolrun.Failed && scanErr != nil:
		err = fmt.Errorf("reading lctl get_param output: %w", err)
	case err != nil:
		err = fmt.Errorf("lctl get_param: %w", err)
	}
	return result, exit, err
}

// budgetReader reads lctl's output within the run's budget: MaxOutputBytes
// bytes, and the entries the job tracker may take (jobstats.Config.
// MaxEntries). Past either it reads no more and returns an error wrapping
// toolrun.ErrOverBudget; Scan ends with it, and the source closes the
// output, which kills the tool.
type budgetReader struct {
	r    io.Reader
	read int64
	max  int64
	jobs *jobstats.Tracker
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.jobs != nil && b.jobs.OverBudget() {
		return 0, entriesOverBudget(b.jobs)
	}
	if b.max > 0 {
		if b.read >= b.max {
			return 0, fmt.Errorf("%w: lctl printed more than %d bytes in one run (--lustre.max-output-size)", toolrun.ErrOverBudget, b.max)
		}
		if rest := b.max - b.read; int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

// entriesOverBudget is the error of a run whose job_stats had more entries
// than the tracker takes.
func entriesOverBudget(jobs *jobstats.Tracker) error {
	return fmt.Errorf("%w: job_stats printed more than %d entries in one run (--lustre.jobstats.max-entries)", toolrun.ErrOverBudget, jobs.MaxEntries())
}

// retireUnread gives up the latest snapshot before the next View is
// written, when no scrape reads it, so that the next View is written into
// the arena it frees: a steady server then keeps one copy of its per-job
// totals, not two. A scrape that gives up waiting meanwhile finds no
// snapshot instead of the one just retired; it fails as it would anyway.
func (s *Source) retireUnread() {
	s.mu.Lock()
	old := s.latest
	if old == nil || old.refs != 1 {
		s.mu.Unlock()
		return
	}
	s.latest, old.refs = nil, 0
	s.mu.Unlock()
	s.jobs.Recycle(old.Jobs)
}

// report logs a run's failure once for all the Lustre collectors it fails,
// at error level when it is new, at debug level when it repeats, and its
// recovery at info level.
func (s *Source) report(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	switch {
	case msg == s.lastErr && err != nil:
		s.logger.Debug("lctl run failed again", "err", err)
	case err != nil:
		s.logger.Error("lctl run failed; every Lustre collector reports failure", "err", err)
	case s.lastErr != "":
		s.logger.Info("lctl runs again")
	}
	s.lastErr = msg
}

// bad reports input a parser could not read; only the run goroutine calls
// it. The first report for a kind of parameter (its leaf name) and reason
// is a warning; later ones are debug lines, so that a server that always
// prints "not supported" for a value does not fill the log. count is the
// number of values or lines dropped.
func (s *Source) bad(owner, param, reason string, count int, detail ...any) {
	s.badInput[owner] += uint64(count)
	key := owner + "\x00" + lctl.ParamLeaf(param) + "\x00" + reason
	first := !s.warned[key]
	s.warned[key] = true
	args := append([]any{"collector", owner, "param", param, "reason", reason, "dropped", count}, detail...)
	if first {
		s.logger.Warn("bad input from lctl dropped (later ones of this kind are logged at debug level)", args...)
	} else {
		s.logger.Debug("bad input from lctl dropped", args...)
	}
}
