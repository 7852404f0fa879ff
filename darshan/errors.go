package darshan

import (
	"errors"
	"fmt"
)

// Sentinel causes carried by a *FormatError. Test for them with errors.Is.
var (
	// ErrNotDarshan: the magic number is wrong in both byte orders (or the
	// file is too short to hold it and does not start as a log does).
	ErrNotDarshan = errors.New("not a darshan log (bad magic number)")
	// ErrUnsupportedVersion: the file has the magic number, but its log
	// format version is not one of 3.00, 3.10, 3.20, 3.21, 3.41.
	ErrUnsupportedVersion = errors.New("unsupported log format version")
	// ErrIncomplete: the header is all zeros. The runtime writes the header
	// last, so this is a log that is still being written (or never was
	// finished).
	ErrIncomplete = errors.New("header not written yet (log still being written?)")
	// ErrTruncated: the file ends before the data the header promises, or a
	// region's data ends in the middle of a record.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt: the data of a region does not decompress, or a record holds
	// values that cannot be right (a negative count, a record past the
	// format's own size limits).
	ErrCorrupt = errors.New("corrupt data")
	// ErrTooLarge: a region inflates past the bound this reader accepts
	// (see MaxInflateRatio), a record claims more data than that bound, or
	// the log costs more than its memory budget (a *BudgetError, see
	// Options).
	ErrTooLarge = errors.New("data larger than the reader accepts")
	// ErrModuleVersion: a module region is written in a module version this
	// reader does not know (newer than darshan-util 3.5.0, or 0).
	ErrModuleVersion = errors.New("unsupported module version")
	// ErrUnknownModule: the region belongs to a module id this reader has no
	// decoder for.
	ErrUnknownModule = errors.New("unknown module")
	// ErrNotRegular: OpenWith was given a FIFO, a device, a directory or a
	// socket: only regular files are read. It is not a *FormatError.
	ErrNotRegular = errors.New("not a regular file")
)

// FormatError reports bad input: which log, which region of it, and why.
// Everything decoded before the damage stays available to the caller. No
// error of this package holds bytes of the log's content (its text: names,
// version strings), so that one can be logged whoever wrote the file.
type FormatError struct {
	Log    string // the log's name (its path, or the name given to NewReader)
	Region string // "header", "job", "name records", or the module name, e.g. "POSIX"
	Offset int64  // file offset of the region, or -1 when unknown
	Err    error  // the cause; wraps one of the Err* sentinels
}

func (e *FormatError) Error() string {
	where := e.Region
	if e.Offset >= 0 {
		where = fmt.Sprintf("%s region at offset %d", e.Region, e.Offset)
	} else if e.Region != "header" {
		where = e.Region + " region"
	}
	return fmt.Sprintf("darshan log %s: %s: %v", e.Log, where, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// causef builds a cause that wraps sentinel and says more.
func causef(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}
