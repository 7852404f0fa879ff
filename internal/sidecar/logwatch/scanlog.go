package logwatch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// Each scan of a drop directory ends with one line in the log: what became
// of the logs found since the scan before (by the scan or by inotify), and
// what waits. It is INFO when something was found or the waiting logs
// changed, DEBUG otherwise, so that a quiet directory does not fill the
// log and a sidecar pointed at the wrong directory, or at an archive older
// than the retention window, says so at once.

// scanMsg is the message of the line; archiveMsg that of the warning that
// every log found ended before the retention window.
const (
	scanMsg    = "Darshan drop directory scanned"
	archiveMsg = "every Darshan log found ended before the retention window: the directory looks like an archive, and nothing in it will be exported unless --darshan.retention covers its jobs"
)

// dirTally is what became of the logs of one drop directory since the
// last report.
type dirTally struct {
	parsed     int // read and exported (summed into their jobs)
	duplicates int // copies of a log already read
	failed     map[string]int
	expired    int // exported, their end has left the retention window
	// tooOld counts the logs found that ended before the retention window:
	// read and left out, or not even opened (modified before it). oldest
	// and newest are their end times (for those not opened, the file's
	// modification time, which the runtime sets when the job ends).
	tooOld         int
	oldest, newest time.Time
}

// ended counts n logs found that ended before the window, the first at
// first and the last at last.
func (t *dirTally) ended(n int, first, last time.Time) {
	if n == 0 {
		return
	}
	if t.tooOld == 0 || first.Before(t.oldest) {
		t.oldest = first
	}
	if t.tooOld == 0 || last.After(t.newest) {
		t.newest = last
	}
	t.tooOld += n
}

func (t *dirTally) failures() int {
	n := 0
	for _, v := range t.failed {
		n += v
	}
	return n
}

// news counts the events of the tally: anything but the waiting logs.
func (t *dirTally) news() int {
	return t.parsed + t.duplicates + t.failures() + t.expired + t.tooOld
}

// tallies are the dirTally of each drop directory, noted by the workers
// and taken by each report.
type tallies struct {
	mu   sync.Mutex
	dirs map[string]*dirTally
}

func (ts *tallies) note(dir string, f func(*dirTally)) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.dirs == nil {
		ts.dirs = map[string]*dirTally{}
	}
	t := ts.dirs[dir]
	if t == nil {
		t = &dirTally{failed: map[string]int{}}
		ts.dirs[dir] = t
	}
	f(t)
}

func (ts *tallies) take() map[string]*dirTally {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := ts.dirs
	ts.dirs = nil
	return out
}

// waiting is the state a report shows, compared with the report before.
type waiting struct{ queued, partial, incomplete int }

// expire drops the logs whose retention ran out, and the byte shares of
// the versions modified before the window (dropdir's OnScan).
func (s *Sidecar) expire(now time.Time) {
	s.stats.prune(now.Add(-s.cfg.Retention))
	for _, path := range s.store.expire(now) {
		s.tally.note(dropdir.Root(s.cfg.Dirs, path), func(t *dirTally) { t.expired++ })
	}
}

// report logs each drop directory's line (dropdir's OnReport). Reports
// come one at a time, from the scans.
func (s *Sidecar) report(_ *dropdir.Watcher, r dropdir.Report) {
	taken := s.tally.take()
	for _, d := range r.Dirs {
		if d.Missing {
			continue // the watcher warned, once
		}
		t := taken[d.Dir]
		if t == nil {
			t = &dirTally{}
		}
		t.ended(d.Old, d.OldestOld, d.NewestOld)
		s.logScan(r, d, t)
	}
}

// logScan logs the line of one drop directory, and warns when everything
// it found had ended before the retention window and nothing in it is
// exported.
func (s *Sidecar) logScan(r dropdir.Report, d dropdir.DirReport, t *dirTally) {
	state := waiting{queued: d.Queued, partial: d.Partial, incomplete: d.Incomplete}
	before, shown := s.shown[d.Dir]
	s.shown[d.Dir] = state
	level := slog.LevelDebug
	if !shown || state != before || t.news() > 0 {
		level = slog.LevelInfo
	}
	ctx := context.Background()
	s.log.LogAttrs(ctx, level, scanMsg, t.attrs(r, d.Dir, state)...)
	if s.looksLikeArchive(d.Dir, t, state) {
		warn := []slog.Attr{slog.String("dir", d.Dir), slog.Int("too_old", t.tooOld)}
		warn = append(warn, t.endRange()...)
		s.log.LogAttrs(ctx, slog.LevelWarn, archiveMsg, append(warn, slog.Duration("retention", s.cfg.Retention))...)
	}
}

// attrs are the fields of dir's line: the tally, what waits, the scan.
func (t *dirTally) attrs(r dropdir.Report, dir string, state waiting) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("dir", dir), slog.Uint64("scan", r.Scan),
		slog.Int("parsed", t.parsed), slog.Int("duplicates", t.duplicates), slog.Int("failed", t.failures()),
	}
	if t.failures() > 0 {
		var reasons []any
		for _, reason := range Reasons {
			if n := t.failed[reason]; n > 0 {
				reasons = append(reasons, slog.Int(reason, n))
			}
		}
		attrs = append(attrs, slog.Group("failed_reason", reasons...))
	}
	attrs = append(attrs, slog.Group("waiting", slog.Int(WaitingQueued, state.queued),
		slog.Int(WaitingPartial, state.partial), slog.Int(WaitingIncomplete, state.incomplete)))
	attrs = append(attrs, slog.Int("too_old", t.tooOld))
	attrs = append(attrs, t.endRange()...)
	return append(attrs, slog.Int("expired", t.expired), slog.Duration("listing", r.Listing))
}

// looksLikeArchive tells a directory where every log found had ended
// before the retention window, none waits, and none is exported.
func (s *Sidecar) looksLikeArchive(dir string, t *dirTally, state waiting) bool {
	return t.tooOld > 0 && t.parsed+t.duplicates+t.failures() == 0 && state == (waiting{}) && !s.store.holdsUnder(dir)
}

// endRange returns the oldest and newest end of the logs too old, in
// RFC 3339 (UTC), whatever the handler does with times.
func (t *dirTally) endRange() []slog.Attr {
	if t.tooOld == 0 {
		return nil
	}
	return []slog.Attr{
		slog.String("oldest_end", t.oldest.UTC().Format(time.RFC3339)),
		slog.String("newest_end", t.newest.UTC().Format(time.RFC3339)),
	}
}
