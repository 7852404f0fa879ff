package logwatch

import (
	"errors"
	"io/fs"
	"os"
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/dropdir"
)

// Reasons a log counts as failed (darshan_logs_failed_total{reason}).
const (
	ReasonCorrupt            = "corrupt"             // data that does not decompress or cannot be right
	ReasonTruncated          = "truncated"           // ends before the data its header promises
	ReasonIncomplete         = "incomplete"          // empty or zero header, still so after the settle time
	ReasonUnsupportedVersion = "unsupported_version" // log format or module version this reader does not know
	ReasonNotDarshan         = "not_darshan"         // no Darshan magic number
	ReasonTooLarge           = "too_large"           // inflates past the reader's bounds
	ReasonPermission         = "permission"          // cannot be opened by the exporter's user
	ReasonIO                 = "io_error"            // any other read error
)

// Reasons lists every failure reason, for exporting them at 0.
var Reasons = []string{ReasonCorrupt, ReasonTruncated, ReasonIncomplete, ReasonUnsupportedVersion,
	ReasonNotDarshan, ReasonTooLarge, ReasonPermission, ReasonIO}

// reasonOf classifies the error of reading a log.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return ReasonPermission
	case errors.Is(err, darshan.ErrIncomplete):
		return ReasonIncomplete
	case errors.Is(err, darshan.ErrTruncated):
		return ReasonTruncated
	case errors.Is(err, darshan.ErrUnsupportedVersion), errors.Is(err, darshan.ErrModuleVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, darshan.ErrNotDarshan):
		return ReasonNotDarshan
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

// Read implements dropdir.Handler: it reads one log and records the
// outcome. Nothing a log holds can stop the sidecar: a bad log is counted,
// logged and left out.
func (s *Sidecar) Read(path string) (os.FileInfo, dropdir.Status) {
	fi, err := os.Stat(path)
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
	l, err := darshan.Open(path)
	if l == nil {
		return fi, s.fail(path, fi, err)
	}
	sum := signals.Summarize(l, s.cfg.MaxRecords)
	cmdline := l.Exe
	l.Close()
	if err := errors.Join(err, sum.Err); err != nil {
		return fi, s.fail(path, fi, err)
	}
	id := Identity{JobID: jobID(sum.JobID, path), UID: strconv.FormatInt(sum.UID, 10)}
	if s.cfg.ExeLabel {
		id.Exe = exeName(cmdline)
	}
	s.stats.processed(sum)
	now := s.now()
	switch s.store.add(path, id, sum, cmdline, fi.ModTime(), now) {
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

// note tallies what became of a log, for its directory's next report.
func (s *Sidecar) note(path string, f func(*dirTally)) {
	s.tally.note(dropdir.Root(s.cfg.Dirs, path), f)
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
