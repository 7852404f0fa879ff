package logwatch

import (
	"maps"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/signals"
)

// stats are the counters across all logs.
type stats struct {
	mu         sync.Mutex
	nProcessed uint64
	nFailed    map[string]uint64
	nInsights  uint64             // logs read whose insights could not be computed
	readBytes  map[string]float64 // by module
	writeBytes map[string]float64
	// readRetracted and writeRetracted, by module, are the bytes that new
	// versions of logs no longer report (see processed).
	readRetracted, writeRetracted map[string]float64
	// shares are what the byte totals hold of the version of each log
	// counted last, by path, while it was modified within the retention
	// window (prune).
	shares map[string]logShare
}

// logShare is what the byte totals hold of one version of a log.
type logShare struct {
	mtime   time.Time
	modules []moduleBytes
}

type moduleBytes struct {
	module        string
	read, written float64
}

func newStats() stats {
	return stats{nFailed: map[string]uint64{}, readBytes: map[string]float64{}, writeBytes: map[string]float64{},
		readRetracted: map[string]float64{}, writeRetracted: map[string]float64{}, shares: map[string]logShare{}}
}

// processed counts a version of the log at path, read successfully, and
// makes its bytes the log's share of the byte totals: a new version of a
// log replaces the share of the version before, so that a log rewritten
// a hundred times counts its bytes once. The totals are counters: what a
// version adds over the share before is added to them; what it reports
// less (a module's bytes shrank, or the version is a copy of a log read
// elsewhere, counted there: counted false) is added to the retracted
// bytes, never taken from the totals. A total less its retracted bytes is
// the bytes of the versions read last. A log removed keeps its share: its
// bytes were read and written.
func (st *stats) processed(path string, s *signals.Summary, mtime time.Time, counted bool) {
	var now []moduleBytes
	if counted {
		now = make([]moduleBytes, len(s.Modules))
		for i := range s.Modules {
			m := &s.Modules[i]
			now[i] = moduleBytes{module: m.Module.String(), read: m.BytesRead(), written: m.BytesWritten()}
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.nProcessed++
	before := st.shares[path].modules
	for _, m := range now {
		was := findModule(before, m.module)
		apply(st.readBytes, st.readRetracted, m.module, m.read-was.read)
		apply(st.writeBytes, st.writeRetracted, m.module, m.written-was.written)
	}
	for _, m := range before {
		if findModule(now, m.module).module == "" {
			apply(st.readBytes, st.readRetracted, m.module, -m.read)
			apply(st.writeBytes, st.writeRetracted, m.module, -m.written)
		}
	}
	st.shares[path] = logShare{mtime: mtime, modules: now}
}

// apply adds a growth d to total[module], a shrink to retracted[module].
// A module's total exists from its first log on, at 0 if need be (its
// retracted bytes are exported beside it).
func apply(total, retracted map[string]float64, module string, d float64) {
	total[module] += max(d, 0)
	if d < 0 {
		retracted[module] -= d
	}
}

func findModule(ms []moduleBytes, module string) moduleBytes {
	for _, m := range ms {
		if m.module == module {
			return m
		}
	}
	return moduleBytes{}
}

// forget drops the share of the log at path (its file is gone): a file
// at the path later is another log.
func (st *stats) forget(path string) {
	st.mu.Lock()
	delete(st.shares, path)
	st.mu.Unlock()
}

// prune drops the shares of the versions modified before the retention
// window (the watcher forgets them too): memory for the files of the
// window only. Such a log, rewritten later, counts whole again.
func (st *stats) prune(before time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for path, sh := range st.shares {
		if sh.mtime.Before(before) {
			delete(st.shares, path)
		}
	}
}

func (st *stats) failed(reason string) {
	st.mu.Lock()
	st.nFailed[reason]++
	st.mu.Unlock()
}

func (st *stats) insightsFailed() {
	st.mu.Lock()
	st.nInsights++
	st.mu.Unlock()
}

// Snapshot is the state of the sidecar at one moment, for a scrape.
type Snapshot struct {
	// Jobs are the retained jobs sorted by identity; shared and never
	// modified, so they may be read without a lock.
	Jobs []*JobView

	Processed uint64            // logs read successfully
	Failed    map[string]uint64 // logs that could not be read, by reason
	// InsightsFailed counts the logs read whose insights could not be
	// computed (their signals are exported); the evaluations that failed
	// when a job's view was rebuilt are in the same count.
	InsightsFailed uint64
	ReadBytes      map[string]float64
	WriteBytes     map[string]float64 // bytes of the logs read, by module
	// ReadRetracted and WriteRetracted are the bytes, by module, that new
	// versions of logs no longer report: ReadBytes less ReadRetracted is
	// the bytes of the latest version of each log read.
	ReadRetracted, WriteRetracted map[string]float64
	Expired                       uint64 // logs past the retention window (also those already past it when read or found unopened)
	// Dropped counts the jobs dropped to stay within the bounds, by
	// DropReasons; UserDropped, by uid, those of each user holding jobs
	// (since it began to).
	Dropped, UserDropped map[string]uint64
	// JobSeries is the series of Jobs as Config.SeriesOf counts them.
	JobSeries  int
	Duplicates uint64 // logs that are copies of a log already read

	RetainedJobs, RetainedLogs int
	// Waiting counts the logs found but not read (yet), by reason: queued
	// or being read, partial (a *.darshan_partial name) and incomplete
	// (empty, zero header or truncated, within the settle time).
	Waiting map[string]int

	LastScan     time.Time // zero before the first scan ends
	ScanDuration time.Duration
	Scans        uint64
	// InotifyWatches is the number of directories watched by inotify.
	InotifyWatches int
	// UnlistedDirs counts, by reason (dropdir.UnlistedReasons), the
	// directories the last scan could not list and the links to
	// directories it did not follow.
	UnlistedDirs map[string]int
}

// Waiting reasons.
const (
	WaitingQueued     = "queued"
	WaitingPartial    = "partial"
	WaitingIncomplete = "incomplete"
)

// Snapshot returns the sidecar's state.
func (s *Sidecar) Snapshot() Snapshot {
	var out Snapshot
	out.Jobs, out.JobSeries = s.store.views()
	s.stats.mu.Lock()
	out.Processed = s.stats.nProcessed
	out.Failed = maps.Clone(s.stats.nFailed)
	out.InsightsFailed = s.stats.nInsights
	out.ReadBytes = maps.Clone(s.stats.readBytes)
	out.WriteBytes = maps.Clone(s.stats.writeBytes)
	out.ReadRetracted = maps.Clone(s.stats.readRetracted)
	out.WriteRetracted = maps.Clone(s.stats.writeRetracted)
	s.stats.mu.Unlock()

	out.Dropped, out.UserDropped = s.store.dropCounts()
	s.store.mu.Lock()
	out.Expired, out.Duplicates = s.store.expired, s.store.duplicates
	out.InsightsFailed += s.store.evalFailed
	s.store.mu.Unlock()
	out.RetainedJobs, out.RetainedLogs = s.store.counts()

	w := s.watcher.Stats()
	out.Expired += w.Old
	out.Waiting = map[string]int{WaitingQueued: w.Queued, WaitingPartial: w.Partial, WaitingIncomplete: w.Incomplete}
	out.LastScan, out.ScanDuration, out.Scans, out.InotifyWatches = w.LastScan, w.ScanDuration, w.Scans, w.Watches
	out.UnlistedDirs = w.Unlisted
	return out
}
