package darshan

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Log is an open Darshan log. Open (or NewReader) reads the header, the job
// data and the name table; module records are read on demand, streaming,
// with Records.
//
// A Log reads through an io.ReaderAt and keeps no other state that changes,
// so several RecordReaders (of the same or different modules) may be used at
// the same time, from different goroutines.
type Log struct {
	// Name identifies the log in errors: its path, or the name given to NewReader.
	Name   string
	Header Header
	Job    Job
	// ExeMounts is the string stored after the job record: the command line,
	// then one "\n<fs type>\t<mount point>" per mount.
	ExeMounts string
	// Exe is the command line: ExeMounts up to its first newline. A command
	// line too long for the record ends in "<TRUNCATED>".
	Exe string
	// Mounts is the mount table in stored order.
	Mounts []Mount
	// Names maps record ids to names (file paths, "heatmap:POSIX", …).
	Names map[uint64]string

	r      io.ReaderAt
	size   int64
	closer io.Closer
	mem    memory // the memory budget and what is charged against it
}

// Open opens the log file at path with the default memory budget:
// OpenWith(path, Options{}).
func Open(path string) (*Log, error) { return OpenWith(path, Options{}) }

// OpenWith opens the log file at path. Only a regular file is read: a
// FIFO, a device or a directory is refused with an error wrapping
// ErrNotRegular, without blocking (a FIFO with no writer would block open
// and read for ever, a device never ends). Other errors are those of
// NewReaderWith, or of the file system.
func OpenWith(path string, o Options) (*Log, error) {
	if _, err := o.budget(); err != nil {
		return nil, err
	}
	// Stat first, so that a device is not even opened (opening some has
	// effects); then open without blocking, in case a FIFO took the file's
	// place since, and check what was really opened.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	// O_NONBLOCK changes nothing for a regular file: its reads never block
	// on the file's data. O_NOCTTY: a terminal never becomes ours.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	l, err := NewReaderWith(f, fi.Size(), path, o)
	if l == nil {
		f.Close()
		return nil, err
	}
	l.closer = f
	return l, err
}

// regular refuses what is not a regular file, saying what it is.
func regular(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "irregular file"
	switch {
	case m.IsDir():
		kind = "directory"
	case m&os.ModeNamedPipe != 0:
		kind = "FIFO"
	case m&os.ModeCharDevice != 0:
		kind = "character device"
	case m&os.ModeDevice != 0:
		kind = "block device"
	case m&os.ModeSocket != 0:
		kind = "socket"
	}
	return fmt.Errorf("darshan log %s: %w (%s)", path, ErrNotRegular, kind)
}

// NewReader reads the log held by r, which has size bytes, with the default
// memory budget: NewReaderWith(r, size, name, Options{}).
func NewReader(r io.ReaderAt, size int64, name string) (*Log, error) {
	return NewReaderWith(r, size, name, Options{})
}

// NewReaderWith reads the log held by r, which has size bytes; name
// identifies it in errors. Everything read for the log, now and by its
// RecordReaders later, is charged against o.MemoryBudget (see
// DefaultMemoryBudget); a log that costs more fails with a *FormatError
// whose cause is a *BudgetError (ErrTooLarge).
//
// When the header cannot be read NewReaderWith returns a nil Log and a
// *FormatError. When the header is good but the job data or the name table
// is damaged, it returns the Log, with everything decoded before the damage,
// together with a *FormatError: module records may still be readable (but
// not once the log is over its budget: every later read fails too).
func NewReaderWith(r io.ReaderAt, size int64, name string, o Options) (*Log, error) {
	budget, err := o.budget()
	if err != nil {
		return nil, err
	}
	l := &Log{Name: name, r: r, size: size}
	l.mem.limit = budget
	if err := l.readHeader(); err != nil {
		return nil, err
	}
	jobErr := l.readJob()
	nameErr := l.readNames()
	if jobErr != nil {
		return l, jobErr
	}
	return l, nameErr
}

// Close closes the file opened by Open; it does nothing for NewReader.
func (l *Log) Close() error {
	if l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

// Size returns the size of the log file in bytes.
func (l *Log) Size() int64 { return l.size }

// ModuleInfo describes one module region of a log.
type ModuleInfo struct {
	ID      ModuleID
	Version uint32 // module version the records were written with
	Region  Region
	Partial bool // the module ran out of memory: some records are missing
}

// Modules lists, in id order, the modules that have a region or a partial
// flag — the modules darshan-parser lists under "log file regions".
func (l *Log) Modules() []ModuleInfo {
	var out []ModuleInfo
	h := &l.Header
	for i := range MaxModules {
		m := ModuleID(i)
		if h.ModuleRegions[i].Length != 0 || h.PartialModule(m) {
			out = append(out, ModuleInfo{ID: m, Version: h.ModuleVersions[i], Region: h.ModuleRegions[i], Partial: h.PartialModule(m)})
		}
	}
	return out
}

// moduleDecoder decodes the records of one module region.
type moduleDecoder interface {
	// next decodes the next record; io.EOF at the clean end of the region.
	next(rr *regionReader) (Record, error)
}

// newDecoder returns a decoder for module m written with module version
// ver; it fails with ErrModuleVersion or ErrUnknownModule.
func (l *Log) newDecoder(m ModuleID, ver uint32) (moduleDecoder, error) {
	mod := m.Module()
	if mod == nil || mod.decoder == nil {
		return nil, causef(ErrUnknownModule, "no reader for module id %d", int(m))
	}
	if ver == 0 || ver > mod.Version {
		return nil, causef(ErrModuleVersion, "%s module version %d (this reader knows up to %d)", m, ver, mod.Version)
	}
	return mod.decoder(ver, l.Header.BigEndian, l), nil
}

// RecordReader streams the records of one module, like bufio.Scanner:
//
//	rd := log.Records(darshan.POSIX)
//	for rd.Next() {
//		rec := rd.Record().(*darshan.CounterRecord)
//		…
//	}
//	if err := rd.Err(); err != nil { … }
//
// Only a window of the decompressed region is held at a time. The record
// returned by Record is reused by the next call to Next; Clone it to keep it.
type RecordReader struct {
	module ModuleID
	rr     *regionReader
	dec    moduleDecoder
	rec    Record
	err    error
	n      int
	kept   int64 // decompressed bytes of the records kept (ReadModule, Index)
}

// Records returns a reader of module m's records. A module without a region
// yields no records; a module version or id this package cannot read yields
// an error from Err.
func (l *Log) Records(m ModuleID) *RecordReader {
	rd := &RecordReader{module: m}
	if m < 0 || m >= MaxModules {
		rd.err = &FormatError{Log: l.Name, Region: m.String(), Offset: -1, Err: causef(ErrUnknownModule, "module id %d", int(m))}
		return rd
	}
	reg := l.Header.ModuleRegions[m]
	if reg.Length == 0 {
		rd.rr = l.openRegion(m.String(), int(m), reg)
		return rd
	}
	// the decoder first: a region this package cannot read costs nothing
	dec, err := l.newDecoder(m, l.Header.ModuleVersions[m])
	if err != nil {
		rd.err = &FormatError{Log: l.Name, Region: m.String(), Offset: int64(reg.Offset), Err: err}
		return rd
	}
	rd.rr = l.openRegion(m.String(), int(m), reg)
	rd.dec = dec
	return rd
}

// Next decodes the next record. It returns false at the end of the region or
// at the first error; Err tells which.
func (rd *RecordReader) Next() bool {
	if rd.err != nil || rd.dec == nil {
		return false
	}
	rec, err := rd.dec.next(rd.rr)
	if err != nil {
		if err != io.EOF {
			rd.err = rd.rr.fail(err)
		}
		rd.dec = nil
		rd.rr.release()
		return false
	}
	rd.rec = rec
	rd.n++
	return true
}

// Close stops reading before the end: the region's buffers go back to the
// pools and its helper goroutines stop. Next returns false after it, and
// Err keeps what it was. A reader read to its end needs no Close.
func (rd *RecordReader) Close() {
	if rd.dec != nil {
		rd.dec = nil
		rd.rr.release()
	}
}

// Record returns the record decoded by the last call to Next. It is reused
// by the following call to Next.
func (rd *RecordReader) Record() Record { return rd.rec }

// Err returns the error that stopped Next, or nil at the clean end. It is a
// *FormatError naming the log and the module region.
func (rd *RecordReader) Err() error { return rd.err }

// Count returns the number of records decoded so far.
func (rd *RecordReader) Count() int { return rd.n }

// ReadModule reads all of module m's records into memory. On damage it
// returns the records decoded before it together with the error. The
// records kept are charged to the log's memory budget.
func (l *Log) ReadModule(m ModuleID) ([]Record, error) {
	var out []Record
	rd := l.Records(m)
	for rd.Next() {
		if !rd.keep() {
			break
		}
		out = append(out, rd.Record().Clone())
	}
	return out, rd.Err()
}

// Index reads all of module m's records into a map by key. A key that
// occurs twice keeps its first record. The records kept are charged to the
// log's memory budget.
func (l *Log) Index(m ModuleID) (map[Key]Record, error) {
	out := map[Key]Record{}
	rd := l.Records(m)
	for rd.Next() {
		k := rd.Record().RecordKey()
		if _, dup := out[k]; !dup {
			if !rd.keep() {
				break
			}
			out[k] = rd.Record().Clone()
		}
	}
	return out, rd.Err()
}

// keep charges a copy of the record just decoded to the log's budget (see
// keptRecordCost); when the budget is passed it stops the reader with the
// error and returns false.
func (rd *RecordReader) keep() bool {
	rr := rd.rr
	consumed := rr.total - int64(rr.w-rr.r) // decompressed bytes decoded so far
	cost := (consumed-rd.kept)*3/2 + keptRecordCost
	rd.kept = consumed
	if err := rr.log.mem.charge(cost); err != nil {
		rd.err = rr.fail(err)
		rd.dec = nil
		rr.release()
		return false
	}
	return true
}
