package darshan

import (
	"io"
	"os"
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
}

// Open opens the log file at path. See NewReader for the errors.
func Open(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	l, err := NewReader(f, fi.Size(), path)
	if l == nil {
		f.Close()
		return nil, err
	}
	l.closer = f
	return l, err
}

// NewReader reads the log held by r, which has size bytes; name identifies
// it in errors.
//
// When the header cannot be read NewReader returns a nil Log and a
// *FormatError. When the header is good but the job data or the name table
// is damaged, it returns the Log, with everything decoded before the damage,
// together with a *FormatError: module records may still be readable.
func NewReader(r io.ReaderAt, size int64, name string) (*Log, error) {
	l := &Log{Name: name, r: r, size: size}
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
	rd.rr = l.openRegion(m.String(), reg)
	if reg.Length == 0 {
		return rd
	}
	dec, err := l.newDecoder(m, l.Header.ModuleVersions[m])
	if err != nil {
		rd.err = rd.rr.fail(err)
		return rd
	}
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

// Record returns the record decoded by the last call to Next. It is reused
// by the following call to Next.
func (rd *RecordReader) Record() Record { return rd.rec }

// Err returns the error that stopped Next, or nil at the clean end. It is a
// *FormatError naming the log and the module region.
func (rd *RecordReader) Err() error { return rd.err }

// Count returns the number of records decoded so far.
func (rd *RecordReader) Count() int { return rd.n }

// ReadModule reads all of module m's records into memory. On damage it
// returns the records decoded before it together with the error.
func (l *Log) ReadModule(m ModuleID) ([]Record, error) {
	var out []Record
	rd := l.Records(m)
	for rd.Next() {
		out = append(out, rd.Record().Clone())
	}
	return out, rd.Err()
}

// Index reads all of module m's records into a map by key. A key that
// occurs twice keeps its first record.
func (l *Log) Index(m ModuleID) (map[Key]Record, error) {
	out := map[Key]Record{}
	rd := l.Records(m)
	for rd.Next() {
		k := rd.Record().RecordKey()
		if _, dup := out[k]; !dup {
			out[k] = rd.Record().Clone()
		}
	}
	return out, rd.Err()
}
