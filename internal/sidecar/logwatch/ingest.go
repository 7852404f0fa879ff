package logwatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// Reasons a log counts as failed (darshan_logs_failed_total{reason}).
const (
	ReasonCorrupt            = "corrupt"             // data that does not decompress or cannot be right
	ReasonTruncated          = "truncated"           // ends before the data its header promises
	ReasonIncomplete         = "incomplete"          // empty or zero header, still so after the settle time
	ReasonUnsupportedVersion = "unsupported_version" // log format or module version this reader does not know
	ReasonNotDarshan         = "not_darshan"         // no Darshan magic number, or not a regular file
	ReasonTooLarge           = "too_large"           // inflates past the reader's bounds or the memory budget
	ReasonPermission         = "permission"          // cannot be opened by the exporter's user
	ReasonSymlinkOwner       = "symlink_owner"       // a link not followed: its owner is neither root nor the target's
	ReasonCrashed            = "crashed"             // being read when the exporter died (killed?): skipped while unchanged
	ReasonIO                 = "io_error"            // any other read error
)

// Reasons lists every failure reason, for exporting them at 0.
var Reasons = []string{ReasonCorrupt, ReasonTruncated, ReasonIncomplete, ReasonUnsupportedVersion,
	ReasonNotDarshan, ReasonTooLarge, ReasonPermission, ReasonSymlinkOwner, ReasonCrashed, ReasonIO}

// reasonOf classifies the error of reading a log. The magic number comes
// first: a file without it is not a log, whatever else is wrong with it.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, darshan.ErrNotDarshan), errors.Is(err, dropdir.ErrNotRegular), errors.Is(err, darshan.ErrNotRegular):
		return ReasonNotDarshan
	case errors.Is(err, dropdir.ErrSymlinkOwner):
		return ReasonSymlinkOwner
	case errors.Is(err, fs.ErrPermission):
		return ReasonPermission
	case errors.Is(err, darshan.ErrIncomplete):
		return ReasonIncomplete
	case errors.Is(err, darshan.ErrTruncated):
		return ReasonTruncated
	case errors.Is(err, darshan.ErrUnsupportedVersion), errors.Is(err, darshan.ErrModuleVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, darshan.ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, darshan.ErrCorrupt), errors.Is(err, darshan.ErrUnknownModule):
		return ReasonCorrupt
	}
	var fe *darshan.FormatError
	if errors.As(err, &fe) {
		return ReasonCorrupt
	}
	return ReasonIO
}

// Read implements dropdir.Handler: ReadOpen on the file opened by
// dropdir.OpenFile. The watcher calls ReadOpen itself.
func (s *Sidecar) Read(path string) (os.FileInfo, dropdir.Status) {
	f, fi, err := dropdir.OpenFile(path)
	if f != nil {
		defer f.Close()
	}
	return s.ReadOpen(path, f, fi, err)
}

// ReadOpen implements dropdir.OpenReader: it reads one log, opened by the
// watcher (regular files only, links by their owner: dropdir.OpenFile),
// within the memory budget, and records the outcome. Nothing a log holds
// can stop the sidecar: a bad log is counted, logged (its path and what is
// wrong, never a byte of it) and left out; one over the budget is not read
// again until it changes.
func (s *Sidecar) ReadOpen(path string, f *os.File, fi os.FileInfo, err error) (os.FileInfo, dropdir.Status) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Renamed or removed since it was found.
			s.store.remove(path)
			return nil, dropdir.Done
		}
		return nil, s.fail(path, nil, err)
	}
	if fi.Size() == 0 {
		return fi, s.fail(path, fi, darshan.ErrIncomplete) // just created
	}
	l, err := darshan.NewReaderWith(f, fi.Size(), path, darshan.Options{MemoryBudget: s.cfg.MemoryBudget})
	if l == nil || errors.Is(err, darshan.ErrTooLarge) {
		// Over the budget, the rest of the log would fail too: it costs
		// nothing more left unread.
		return fi, s.fail(path, fi, err)
	}
	sum := signals.Summarize(l, s.cfg.MaxRecords)
	cmdline := l.Exe
	err = errors.Join(err, sum.Err)
	var totals *insights.Totals
	if err == nil && s.cfg.Insights != nil {
		totals = s.insightsOf(path, l)
	}
	if err != nil {
		return fi, s.fail(path, fi, err)
	}
	id := Identity{JobID: jobID(sum.JobID, path), UID: strconv.FormatInt(sum.UID, 10)}
	if s.cfg.ExeLabel {
		id.Exe = exeName(cmdline)
	}
	s.stats.processed(sum)
	now := s.now()
	switch s.store.add(path, id, sum, totals, cmdline, fi.ModTime(), now) {
	case duplicate:
		s.log.Debug("Darshan log is a copy of one already read", "path", path)
		s.note(path, func(t *dirTally) { t.duplicates++ })
	case alreadyExpired:
		s.log.Debug("Darshan log ended before the retention window", "path", path)
		end := retentionClock(sum, fi.ModTime(), now)
		s.note(path, func(t *dirTally) { t.ended(1, end, end) })
	default:
		s.note(path, func(t *dirTally) { t.parsed++ })
	}
	return fi, dropdir.Done
}

// fromLog and evaluate are insights.FromLog and insights.Evaluate; tests
// replace them with failing ones.
var (
	fromLog  = insights.FromLog
	evaluate = insights.Evaluate
)

// insightsOf reads what the insights of the log need (package
// darshan/insights). It runs after the signals, on a log they read whole:
// a failure here (an error, or a panic on input nobody foresaw) costs the
// log its insights only, never its signals. It is counted
// (darshan_insights_failed_total) and logged; the job's insights are then
// those of its other logs.
func (s *Sidecar) insightsOf(path string, l *darshan.Log) (t *insights.Totals) {
	defer func() {
		if p := recover(); p != nil {
			t = nil
			s.insightsFailed(path, fmt.Errorf("panic: %v", p))
		}
	}()
	t, err := fromLog(l)
	if err != nil {
		s.insightsFailed(path, err)
		return nil
	}
	// The sidecar exports no file: it keeps no path.
	t.ForgetNames()
	return t
}

func (s *Sidecar) insightsFailed(path string, err error) {
	s.stats.insightsFailed()
	s.log.Warn("cannot compute the insights of a Darshan log; its signals are exported", "path", path, "err", err)
}

// note tallies what became of a log, for its directory's next report.
func (s *Sidecar) note(path string, f func(*dirTally)) {
	s.tally.note(dropdir.Root(s.cfg.Dirs, path), f)
}

// crashed records a log version skipped because it was being read when
// the exporter died (dropdir's OnCrashed): it counts as failed, once per
// version found, as any other.
func (s *Sidecar) crashed(path string, fi os.FileInfo) {
	s.stats.failed(ReasonCrashed)
	s.note(path, func(t *dirTally) { t.failed[ReasonCrashed]++ })
	s.log.Warn("cannot read Darshan log", "path", path, "reason", ReasonCrashed,
		"err", "it was being read when the exporter stopped (killed: out of memory?); this version is not read again", "size", fi.Size())
}

// fail records a log that could not be read. One that looks unfinished
// (empty, zero header, truncated) and changed within the settle time is
// being written: it waits and is read again at the next scan or write.
func (s *Sidecar) fail(path string, fi os.FileInfo, err error) dropdir.Status {
	reason := reasonOf(err)
	if fi != nil && (reason == ReasonIncomplete || reason == ReasonTruncated) &&
		s.now().Sub(fi.ModTime()) < s.cfg.Settle {
		return dropdir.Waiting
	}
	s.stats.failed(reason)
	s.note(path, func(t *dirTally) { t.failed[reason]++ })
	s.log.Warn("cannot read Darshan log", "path", path, "reason", reason, "err", err)
	return dropdir.Failed
}
