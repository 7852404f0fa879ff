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
}

func newStats() stats {
	return stats{nFailed: map[string]uint64{}, readBytes: map[string]float64{}, writeBytes: map[string]float64{}}
}

func (st *stats) processed(s *signals.Summary) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.nProcessed++
	for i := range s.Modules {
		m := &s.Modules[i]
		st.readBytes[m.Module.String()] += m.BytesRead()
		st.writeBytes[m.Module.String()] += m.BytesWritten()
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
	Expired        uint64             // logs past the retention window (also those already past it when read or found unopened)
	Dropped        uint64             // jobs dropped by MaxJobs, oldest first
	Duplicates     uint64             // logs that are copies of a log already read

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
	out := Snapshot{Jobs: s.store.views()}
	s.stats.mu.Lock()
	out.Processed = s.stats.nProcessed
	out.Failed = maps.Clone(s.stats.nFailed)
	out.InsightsFailed = s.stats.nInsights
	out.ReadBytes = maps.Clone(s.stats.readBytes)
	out.WriteBytes = maps.Clone(s.stats.writeBytes)
	s.stats.mu.Unlock()

	s.store.mu.Lock()
	out.Expired, out.Dropped, out.Duplicates = s.store.expired, s.store.droppedJobs, s.store.duplicates
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
