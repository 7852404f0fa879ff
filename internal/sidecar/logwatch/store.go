package logwatch

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// store holds the summaries of the logs inside the retention window,
// grouped into jobs by Identity, and the views the collector exports.
//
// What it holds is bounded three ways, each time at the cost of the user
// (the uid of the logs' header) holding the most, never of another: a user
// over maxJobsPerUser loses its jobs that ended first; past maxJobs, the
// user holding the most jobs loses its job that ended first (the user of
// the log that came in when it holds as many as any other); past
// maxSeries, when a scrape asks for the views, the user whose jobs cost the
// most series loses its job that ended first. A flood of logs from one
// user thus pushes out that user's jobs only, and a user holding fewer
// jobs (series) than another never loses one to it.
type store struct {
	retention      time.Duration
	maxJobs        int
	maxJobsPerUser int
	maxSeries      int
	seriesOf       func(*JobView) int // nil: no series counted
	maxRecords     int
	insights       *insights.Decider // nil: no insights
	log            *slog.Logger
	now            func() time.Time

	mu   sync.Mutex
	logs map[string]*logEntry // retained and shadowed logs, by path
	// byPrint lists, per fingerprint, the paths that hold the same log: the
	// first is exported, the others are copies kept in the shadow so that a
	// log moved within the drop directory stays exported.
	byPrint map[fingerprint][]*logEntry
	jobs    map[Identity]*jobEntry
	users   map[string]*userEntry // the users holding jobs, by uid
	series  int                   // the series of the jobs' views, as last made
	sorted  []*JobView            // all views sorted by identity; nil when stale

	expired, duplicates uint64
	dropped             map[string]uint64 // jobs dropped, by DropReasons
	said                dropLimiter
	// evalFailed counts the evaluations of a job's insights that panicked:
	// the view goes without insights (darshan_insights_failed_total).
	evalFailed uint64
	// scratch holds the insights of the job evaluateJob is on, and
	// scratchTotals its Totals: reused from one job to the next (under mu).
	scratch       []insights.Insight
	scratchTotals insights.Totals
}

// Reasons a job is dropped (darshan_jobs_dropped_total{reason}).
const (
	// DropUserShare: its user held more than Config.MaxJobsPerUser jobs.
	DropUserShare = "user_share"
	// DropMaxJobs: the sidecar held more than Config.MaxJobs jobs, and
	// its user the most.
	DropMaxJobs = "max_jobs"
	// DropMaxSeries: the jobs' series were more than Config.MaxSeries,
	// and its user's the most.
	DropMaxSeries = "max_series"
)

// DropReasons lists every reason a job is dropped, for exporting them at 0.
var DropReasons = []string{DropUserShare, DropMaxJobs, DropMaxSeries}

// userEntry is the jobs of one uid, while it holds any.
type userEntry struct {
	uid    string
	jobs   map[*jobEntry]struct{}
	series int // the series of its jobs' views, as last made
	// dropped counts its jobs dropped since it began to hold jobs
	// (darshan_user_jobs_dropped_total); said tells that the first was
	// logged.
	dropped uint64
	said    bool
}

// oldest returns the user's job that ended first (identity order between
// equal ends).
func (u *userEntry) oldest() *jobEntry {
	var o *jobEntry
	for j := range u.jobs {
		if o == nil || j.end.Before(o.end) || j.end.Equal(o.end) && j.id.less(o.id) {
			o = j
		}
	}
	return o
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
	// series is the number of series its view costs (Config.SeriesOf),
	// as last made; counted in its user's and the store's.
	series int
}

// newStore makes the store of a sidecar configured with cfg (Retention,
// the bounds, MaxRecords, Insights, SeriesOf, Now, Logger).
func newStore(cfg Config) *store {
	var d *insights.Decider
	if cfg.Insights != nil {
		d = insights.NewDecider(*cfg.Insights)
	}
	s := &store{retention: cfg.Retention, maxJobs: cfg.MaxJobs, maxJobsPerUser: cfg.MaxJobsPerUser, maxSeries: cfg.MaxSeries,
		seriesOf: cfg.SeriesOf, maxRecords: cfg.MaxRecords, insights: d, log: cfg.Logger, now: cfg.Now,
		logs: map[string]*logEntry{}, byPrint: map[fingerprint][]*logEntry{}, jobs: map[Identity]*jobEntry{},
		users: map[string]*userEntry{}, dropped: map[string]uint64{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
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
	droppedAtOnce // its job was dropped at once (DropReasons)
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
	if s.enforceJobs(e.id.UID); s.logs[path] == nil {
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
		u := s.users[e.id.UID]
		if u == nil {
			u = &userEntry{uid: e.id.UID, jobs: map[*jobEntry]struct{}{}}
			s.users[e.id.UID] = u
		}
		u.jobs[j] = struct{}{}
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
		s.deleteJob(j)
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

// deleteJob forgets job j, and its user when it held no other.
func (s *store) deleteJob(j *jobEntry) {
	delete(s.jobs, j.id)
	s.sorted = nil
	s.series -= j.series
	u := s.users[j.id.UID]
	if u == nil {
		return
	}
	delete(u.jobs, j)
	u.series -= j.series
	if len(u.jobs) == 0 {
		delete(s.users, u.uid)
	}
}

// enforceJobs holds the jobs within their bounds after a log of uid came
// in: that user's share first, then the sidecar's.
func (s *store) enforceJobs(uid string) {
	if u := s.users[uid]; u != nil {
		for s.maxJobsPerUser > 0 && len(u.jobs) > s.maxJobsPerUser {
			s.dropJob(u, DropUserShare)
		}
	}
	for s.maxJobs > 0 && len(s.jobs) > s.maxJobs {
		s.dropJob(s.heaviest(uid, func(u *userEntry) int { return len(u.jobs) }), DropMaxJobs)
	}
}

// enforceSeries holds the series of the jobs' views, all made, within
// maxSeries.
func (s *store) enforceSeries() {
	for s.maxSeries > 0 && s.series > s.maxSeries && len(s.jobs) > 0 {
		s.dropJob(s.heaviest("", func(u *userEntry) int { return u.series }), DropMaxSeries)
	}
}

// heaviest returns the user holding the most by weight: uid's among
// those holding as much (the user whose log came in loses first to its
// equals), then the least uid.
func (s *store) heaviest(uid string, weight func(*userEntry) int) *userEntry {
	var h *userEntry
	hw := 0
	for _, u := range s.users {
		w := weight(u)
		if h == nil || w > hw || w == hw && h.uid != uid && (u.uid == uid || u.uid < h.uid) {
			h, hw = u, w
		}
	}
	return h
}

// dropJob drops the job of u that ended first, for reason: its logs and
// their copies go, and the files stay known to the watcher, which does
// not read them again until they change.
func (s *store) dropJob(u *userEntry, reason string) {
	j := u.oldest()
	for _, e := range j.logs {
		for _, c := range s.byPrint[e.print] {
			delete(s.logs, c.path)
		}
		delete(s.byPrint, e.print)
	}
	s.dropped[reason]++
	u.dropped++
	s.sayDropped(u, j, reason)
	s.deleteJob(j)
}

// views returns the views of all jobs sorted by identity, making those of
// the jobs that changed, and the series they cost (Config.SeriesOf) once
// held within maxSeries. The slice and the views are not changed
// afterwards: a scrape can write them without a lock.
func (s *store) views() ([]*JobView, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sorted == nil {
		for _, j := range s.jobs {
			if j.view == nil {
				s.makeView(j)
			}
		}
		s.enforceSeries()
		out := make([]*JobView, 0, len(s.jobs))
		for _, j := range s.jobs {
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
	return s.sorted, s.series
}

// makeView makes the view of job j and counts its series.
func (s *store) makeView(j *jobEntry) {
	j.view = s.newView(j)
	if s.seriesOf == nil {
		return
	}
	d := s.seriesOf(j.view) - j.series
	j.series += d
	s.series += d
	if u := s.users[j.id.UID]; u != nil {
		u.series += d
	}
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

// dropLinesPerMinute bounds the lines that say a user's jobs are dropped:
// each user is said once while it holds jobs, but uids forged in logs'
// headers would each be a user.
const dropLinesPerMinute = 10

// dropLimiter counts the lines said about dropped jobs in the current
// minute, and the users not said past the bound (said in the next line).
type dropLimiter struct {
	minute time.Time
	lines  int
	unsaid int
}

// sayDropped logs that job j of user u is dropped for reason: a WARN the
// first time for the user (while it holds jobs), within
// dropLinesPerMinute; DEBUG otherwise. Called with s.mu held.
func (s *store) sayDropped(u *userEntry, j *jobEntry, reason string) {
	attrs := []any{"uid", u.uid, "reason", reason, "jobid", j.id.JobID}
	if u.said {
		s.log.Debug("Darshan job dropped", attrs...)
		return
	}
	u.said = true
	if m := s.now().Truncate(time.Minute); !m.Equal(s.said.minute) {
		s.said.minute, s.said.lines = m, 0
	}
	if s.said.lines >= dropLinesPerMinute {
		s.said.unsaid++
		s.log.Debug("Darshan job dropped", attrs...)
		return
	}
	s.said.lines++
	var msg string
	switch reason {
	case DropUserShare:
		msg = "a user holds more Darshan jobs than --darshan.max-jobs-per-user: its jobs that ended first are dropped, no other user's"
		attrs = append(attrs, "max_jobs_per_user", s.maxJobsPerUser)
	case DropMaxJobs:
		msg = "the Darshan sidecar holds --darshan.max-jobs jobs: the user holding the most loses its jobs that ended first"
		attrs = append(attrs, "jobs", len(u.jobs), "max_jobs", s.maxJobs)
	default:
		msg = "the series of the Darshan jobs are over --darshan.max-series: the user whose jobs cost the most loses its jobs that ended first"
		attrs = append(attrs, "series", u.series, "max_series", s.maxSeries)
	}
	attrs = append(attrs, "said", "once while the user holds jobs; darshan_user_jobs_dropped_total counts them")
	if s.said.unsaid > 0 {
		attrs = append(attrs, "users_not_said", s.said.unsaid)
		s.said.unsaid = 0
	}
	s.log.Warn(msg, attrs...)
}

// dropCounts returns the jobs dropped by reason, and by uid for the users
// holding jobs (as darshan_user_jobs_dropped_total).
func (s *store) dropCounts() (byReason map[string]uint64, byUser map[string]uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byReason = maps.Clone(s.dropped)
	byUser = map[string]uint64{}
	for uid, u := range s.users {
		if u.dropped > 0 {
			byUser[uid] = u.dropped
		}
	}
	return byReason, byUser
}
