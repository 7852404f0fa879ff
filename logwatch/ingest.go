package logwatch

import (
	"errors"
	"io/fs"
	"os"
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
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

// ingest reads one log and records the outcome. Nothing a log holds can
// stop the sidecar: a bad log is counted, logged and left out.
func (s *Sidecar) ingest(path string) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			s.forget(path) // renamed or removed since it was found
			return
		}
		s.fail(path, nil, err)
		return
	}
	if fi.Size() == 0 {
		s.fail(path, fi, darshan.ErrIncomplete) // just created
		return
	}
	l, err := darshan.Open(path)
	if l == nil {
		s.fail(path, fi, err)
		return
	}
	sum := signals.Summarize(l, s.cfg.MaxRecords)
	cmdline := l.Exe
	l.Close()
	if err := errors.Join(err, sum.Err); err != nil {
		s.fail(path, fi, err)
		return
	}
	id := Identity{JobID: jobID(sum.JobID, path), UID: strconv.FormatInt(sum.UID, 10)}
	if s.cfg.ExeLabel {
		id.Exe = exeName(cmdline)
	}
	s.stats.processed(sum)
	s.setStatus(path, fi, statusDone)
	switch s.store.add(path, id, sum, cmdline, fi.ModTime(), s.now()) {
	case duplicate:
		s.log.Debug("Darshan log is a copy of one already read", "path", path)
	case alreadyExpired:
		s.log.Debug("Darshan log ended before the retention window", "path", path)
	}
	// A file forgotten while it was being read must not stay exported.
	s.mu.Lock()
	_, known := s.files[path]
	s.mu.Unlock()
	if !known {
		s.store.remove(path)
	}
}

// fail records a log that could not be read. One that looks unfinished
// (empty, zero header, truncated) and changed within the settle time is
// being written: it waits and is read again at the next scan or write.
func (s *Sidecar) fail(path string, fi os.FileInfo, err error) {
	reason := reasonOf(err)
	if fi != nil && (reason == ReasonIncomplete || reason == ReasonTruncated) &&
		s.now().Sub(fi.ModTime()) < s.cfg.Settle {
		s.setStatus(path, fi, statusWaiting)
		return
	}
	if fi != nil {
		s.setStatus(path, fi, statusFailed)
	} else {
		s.mu.Lock()
		if st := s.files[path]; st != nil {
			st.status = statusFailed
		}
		s.mu.Unlock()
	}
	s.stats.failed(reason)
	s.log.Warn("cannot read Darshan log", "path", path, "reason", reason, "err", err)
}
