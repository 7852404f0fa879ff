package logwatch

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// store holds the summaries of the logs inside the retention window,
// grouped into jobs by Identity, and the views the collector exports.
type store struct {
	retention  time.Duration
	maxJobs    int
	maxRecords int
	insights   *insights.Decider // nil: no insights
	log        *slog.Logger

	mu   sync.Mutex
	logs map[string]*logEntry // retained and shadowed logs, by path
	// byPrint lists, per fingerprint, the paths that hold the same log: the
	// first is exported, the others are copies kept in the shadow so that a
	// log moved within the drop directory stays exported.
	byPrint map[fingerprint][]*logEntry
	jobs    map[Identity]*jobEntry
	sorted  []*JobView // all views sorted by identity; nil when stale

	expired, droppedJobs, duplicates uint64
	// evalFailed counts the evaluations of a job's insights that panicked:
	// the view goes without insights (darshan_insights_failed_total).
	evalFailed uint64
	// scratch holds the insights of the job evaluateJob is on, and
	// scratchTotals its Totals: reused from one job to the next (under mu).
	scratch       []insights.Insight
	scratchTotals insights.Totals
}

// logEntry is one log read successfully.
type logEntry struct {
	path string
	id   Identity
	sum  *signals.Summary
	// totals are the log's insight Totals, packed: a small log's take a
	// few hundred bytes the garbage collector does not scan, where the
	// Totals took 1.3 KB it scanned at each collection. Nil: insights off,
	// or they failed for this log.
	totals insights.Packed
	end    time.Time // the retention clock: the log's end (its mtime when the end is absurd)
	print  fingerprint
	active bool // exported (not a copy)
}

// fingerprint tells copies of a log apart from other logs of the same job.
type fingerprint struct {
	jobID, uid, nprocs int64
	start, end         float64
	cmd                uint64 // hash of the command line
	bytes              float64
}

func makeFingerprint(s *signals.Summary, cmdline string) fingerprint {
	h := fnv.New64a()
	h.Write([]byte(cmdline))
	var b float64
	for i := range s.Modules {
		b += s.Modules[i].Bytes()
	}
	return fingerprint{jobID: s.JobID, uid: s.UID, nprocs: s.NProcs, start: s.Start, end: s.End, cmd: h.Sum64(), bytes: b}
}

// jobEntry is the logs of one identity and their merged summary.
type jobEntry struct {
	id     Identity
	logs   []*logEntry
	merged *signals.Summary
	totals insights.Packed // its logs' Totals merged, packed; nil when none has any
	end    time.Time       // the latest end of its logs
	// view is what the collector exports of the job, made by views when
	// asked for; nil when the job changed since. A job whose logs come in
	// between two scrapes is evaluated once, not once per log, and the
	// workers adding logs do not wait for it.
	view *JobView
}

func newStore(retention time.Duration, maxJobs, maxRecords int, cfg *insights.Config) *store {
	var d *insights.Decider
	if cfg != nil {
		d = insights.NewDecider(*cfg)
	}
	return &store{retention: retention, maxJobs: maxJobs, maxRecords: maxRecords, insights: d, log: slog.New(slog.DiscardHandler),
		logs: map[string]*logEntry{}, byPrint: map[fingerprint][]*logEntry{}, jobs: map[Identity]*jobEntry{}}
}

// retentionClock returns when a log ended, for retention: its end time, or
// the file's modification time when the end is missing or in the future.
func retentionClock(s *signals.Summary, mtime, now time.Time) time.Time {
	end := time.Unix(0, int64(s.End*1e9))
	if s.End <= 0 || end.After(now.Add(time.Hour)) {
		return mtime
	}
	return end
}

// addResult says what became of a log given to add.
type addResult int

const (
	added addResult = iota
	duplicate
	alreadyExpired
	droppedAtOnce // its job was the oldest past --darshan.max-jobs
)

// add adds the log at path; a log already held at path is replaced.
func (s *store) add(path string, id Identity, sum *signals.Summary, totals insights.Packed, cmdline string, mtime, now time.Time) addResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(path)
	e := &logEntry{path: path, id: id, sum: sum, totals: totals, end: retentionClock(sum, mtime, now), print: makeFingerprint(sum, cmdline)}
	if e.end.Add(s.retention).Before(now) {
		s.expired++
		return alreadyExpired
	}
	s.logs[path] = e
	copies := s.byPrint[e.print]
	s.byPrint[e.print] = append(copies, e)
	if len(copies) > 0 {
		s.duplicates++
		return duplicate
	}
	s.activate(e)
	if s.enforceMaxJobs(); s.logs[path] == nil {
		return droppedAtOnce
	}
	return added
}

// activate exports e with its job.
func (s *store) activate(e *logEntry) {
	e.active = true
	j := s.jobs[e.id]
	if j == nil {
		j = &jobEntry{id: e.id}
		s.jobs[e.id] = j
	}
	j.logs = append(j.logs, e)
	if j.merged == nil {
		j.merged = e.sum
	} else {
		j.merged = signals.Merge(s.maxRecords, j.merged, e.sum)
	}
	switch {
	case e.totals == nil:
	case j.totals == nil:
		j.totals = e.totals // never modified: shared
	default:
		s.mergeTotals(j, j.totals, e.totals)
	}
	if e.end.After(j.end) {
		j.end = e.end
	}
	j.view = nil
	s.sorted = nil
}

// newView makes the view of job j, with its insights when they are on.
func (s *store) newView(j *jobEntry) *JobView {
	ins, ok := s.evaluateJob(j)
	if !ok {
		return newJobView(j.id, j.merged, nil)
	}
	return newJobView(j.id, j.merged, &ins)
}

// evaluateJob returns the insights of job j as its view keeps them (false:
// none, insights off or failed). A panic in a trigger (input nobody
// foresaw) costs the job its insights, not its signals, nor the sidecar.
func (s *store) evaluateJob(j *jobEntry) (out jobInsights, ok bool) {
	if s.insights == nil || j.totals == nil {
		return jobInsights{}, false
	}
	defer func() {
		if p := recover(); p != nil {
			out, ok = jobInsights{}, false
			s.evalFailed++
			s.log.Warn("cannot evaluate the insights of a Darshan job; its signals are exported",
				"jobid", j.id.JobID, "uid", j.id.UID, "exe", j.id.Exe, "err", fmt.Errorf("panic: %v", p))
		}
	}()
	t := &s.scratchTotals
	if err := j.totals.Unpack(t); err != nil {
		panic(err) // this build packed it: cannot be (TestPackedLogs)
	}
	fired, decided := evaluate(s.insights, s.scratch, t)
	s.scratch = fired
	return newJobInsights(fired, decided, t.Logs), true
}

// mergeTotals sets the totals of job j to those of its logs, ps, merged.
// A Packed that does not unpack (this build packed them all: it cannot
// be) costs the job its insights, counted and logged as a failed
// evaluation.
func (s *store) mergeTotals(j *jobEntry, ps ...insights.Packed) {
	ts := make([]*insights.Totals, len(ps))
	for i, p := range ps {
		ts[i] = new(insights.Totals)
		if err := p.Unpack(ts[i]); err != nil {
			j.totals = nil
			s.evalFailed++
			s.log.Warn("cannot evaluate the insights of a Darshan job; its signals are exported",
				"jobid", j.id.JobID, "uid", j.id.UID, "exe", j.id.Exe, "err", err)
			return
		}
	}
	j.totals = insights.Merge(ts...).AppendPacked(nil)
}

// removeLocked forgets the log at path (its file vanished or changed). A
// copy of it, when there is one, is exported instead.
func (s *store) removeLocked(path string) {
	e := s.logs[path]
	if e == nil {
		return
	}
	delete(s.logs, path)
	copies := slices.DeleteFunc(s.byPrint[e.print], func(c *logEntry) bool { return c == e })
	if len(copies) == 0 {
		delete(s.byPrint, e.print)
	} else {
		s.byPrint[e.print] = copies
	}
	if !e.active {
		return
	}
	s.deactivate(e)
	if len(copies) > 0 {
		s.activate(copies[0])
	}
}

// deactivate takes e out of its job, whose summary is merged again.
func (s *store) deactivate(e *logEntry) {
	e.active = false
	j := s.jobs[e.id]
	if j == nil {
		return
	}
	j.logs = slices.DeleteFunc(j.logs, func(c *logEntry) bool { return c == e })
	s.sorted = nil
	if len(j.logs) == 0 {
		delete(s.jobs, e.id)
		return
	}
	sums := make([]*signals.Summary, len(j.logs))
	var totals []insights.Packed
	j.end = time.Time{}
	for i, l := range j.logs {
		sums[i] = l.sum
		if l.totals != nil {
			totals = append(totals, l.totals)
		}
		if l.end.After(j.end) {
			j.end = l.end
		}
	}
	j.merged = sums[0]
	if len(sums) > 1 {
		j.merged = signals.Merge(s.maxRecords, sums...)
	}
	switch len(totals) {
	case 0:
		j.totals = nil
	case 1:
		j.totals = totals[0]
	default:
		s.mergeTotals(j, totals...)
	}
	j.view = nil
}

func (s *store) remove(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(path)
}

// expire forgets the logs whose retention ran out, and returns the paths
// of those that were exported (copies aside), as counted.
func (s *store) expire(now time.Time) (expired []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old []*logEntry
	for _, e := range s.logs {
		if e.end.Add(s.retention).Before(now) {
			old = append(old, e)
		}
	}
	// Copies first, so that an expired log is not replaced by its copy.
	slices.SortFunc(old, func(a, b *logEntry) int {
		switch {
		case a.active == b.active:
			return 0
		case b.active:
			return -1
		}
		return 1
	})
	for _, e := range old {
		if e.active {
			s.expired++
			expired = append(expired, e.path)
		}
		s.removeLocked(e.path)
	}
	return expired
}

// enforceMaxJobs drops the jobs that ended first while there are more than
// maxJobs.
func (s *store) enforceMaxJobs() {
	for s.maxJobs > 0 && len(s.jobs) > s.maxJobs {
		var oldest *jobEntry
		for _, j := range s.jobs {
			if oldest == nil || j.end.Before(oldest.end) || j.end.Equal(oldest.end) && j.id.less(oldest.id) {
				oldest = j
			}
		}
		for _, e := range slices.Clone(oldest.logs) {
			// The log and its copies go: the files stay known to the
			// watcher, which does not read them again.
			for _, c := range s.byPrint[e.print] {
				delete(s.logs, c.path)
			}
			delete(s.byPrint, e.print)
		}
		delete(s.jobs, oldest.id)
		s.sorted = nil
		s.droppedJobs++
	}
}

// views returns the views of all jobs sorted by identity, making those of
// the jobs that changed. The slice and the views are not changed
// afterwards: a scrape can write them without a lock.
func (s *store) views() []*JobView {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sorted == nil {
		out := make([]*JobView, 0, len(s.jobs))
		for _, j := range s.jobs {
			if j.view == nil {
				j.view = s.newView(j)
			}
			out = append(out, j.view)
		}
		slices.SortFunc(out, func(a, b *JobView) int {
			switch {
			case a.Identity.less(b.Identity):
				return -1
			case b.Identity.less(a.Identity):
				return 1
			}
			return 0
		})
		s.sorted = out
	}
	return s.sorted
}

// holdsUnder reports whether a log under the drop directory dir is
// retained, copies included.
func (s *store) holdsUnder(dir string) bool {
	dirs := []string{dir}
	s.mu.Lock()
	defer s.mu.Unlock()
	for path := range s.logs {
		if dropdir.Root(dirs, path) != "" {
			return true
		}
	}
	return false
}

// counts returns the retained jobs and logs (copies excluded).
func (s *store) counts() (jobs, logs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		logs += len(j.logs)
	}
	return len(s.jobs), logs
}
