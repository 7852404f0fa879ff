package darshan

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Writer writes a Darshan log of format 3.41, zlib-compressed, from Go
// values: job data, names and records of every module, in the current
// module versions (those this package reads). It is how the project makes
// its own test fixtures and demo logs.
//
//	w := darshan.NewWriter(f)
//	w.Job = darshan.Job{NProcs: 4, …}
//	w.Exe = "/bin/app -x"
//	id := w.AddName("/scratch/out.dat")
//	w.Write(&darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: -1, ID: id}, …})
//	err := w.Close()
//
// The regions are assembled in memory (compressed) and written by Close.
type Writer struct {
	Job    Job
	Exe    string  // command line; one that does not fit is cut and ends in "<TRUNCATED>"
	Mounts []Mount // written while they fit the job record, as the runtime does
	// Partial marks modules (bit 1<<id) that ran out of memory.
	Partial uint64
	// RecordsPerStream, when > 0, starts a new zlib stream in a module region
	// every that many records, as the MPI runtime writes one stream per rank.
	RecordsPerStream int
	// BigEndian writes the log as a big-endian machine does (the runtime
	// writes in its machine's byte order; readers swap).
	BigEndian bool

	out     io.Writer
	names   []nameEntry
	modules [MaxModules]*moduleStream
	closed  bool
	err     error
}

type nameEntry struct {
	id   uint64
	name string
}

// moduleStream accumulates a module's compressed region.
type moduleStream struct {
	version uint32
	buf     bytes.Buffer
	z       *zlib.Writer
	inRun   int // records in the current stream
	headed  bool
	rec     []byte // scratch for one encoded record
}

// NewWriter returns a Writer that writes the log to out when closed.
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

// AddName records name and returns its record id, RecordID(name).
func (w *Writer) AddName(name string) uint64 {
	id := RecordID(name)
	w.AddNameID(id, name)
	return id
}

// AddNameID records name under an arbitrary record id (anonymized logs,
// DAOS objects).
func (w *Writer) AddNameID(id uint64, name string) {
	w.names = append(w.names, nameEntry{id, name})
}

// byteOrder is what the writer needs of encoding/binary's byte orders.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (w *Writer) order() byteOrder {
	if w.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Write adds a record to its module's region. Records of a module are
// written in the order given. The module's header record (APMPIHeader,
// APXCHeader) must come before its other records.
func (w *Writer) Write(rec Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("darshan: Write after Close")
	}
	m := rec.RecordKey().Module
	if !m.Known() || m == NullModule {
		return fmt.Errorf("darshan: cannot write records of module %s", m)
	}
	s := w.stream(m, m.CurrentVersion())
	if s.version != m.CurrentVersion() {
		return fmt.Errorf("darshan: %s region already holds raw data of version %d", m, s.version)
	}
	e := &encoder{order: w.order(), big: w.BigEndian, b: s.rec[:0]}
	if err := rec.encode(e, s.headed); err != nil {
		return fmt.Errorf("darshan: %s record (rank %d, id %d): %w", m, rec.RecordKey().Rank, rec.RecordKey().ID, err)
	}
	s.rec = e.b
	s.headed = true
	return w.emit(s, e.b, 1)
}

// WriteRaw appends already encoded, uncompressed record data of module
// version version to module m's region. It is for logs the record types
// cannot express: older module versions, damaged or unusual data in tests.
// A region holds one version: every call for m must give the same one.
func (w *Writer) WriteRaw(m ModuleID, version uint32, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if m < 0 || m >= MaxModules {
		return fmt.Errorf("darshan: module id %d out of range", int(m))
	}
	s := w.stream(m, version)
	if s.version != version {
		return fmt.Errorf("darshan: %s region already holds version %d", m, s.version)
	}
	return w.emit(s, data, 0)
}

func (w *Writer) stream(m ModuleID, version uint32) *moduleStream {
	if w.modules[m] == nil {
		w.modules[m] = &moduleStream{version: version}
	}
	return w.modules[m]
}

// emit compresses data into the module's region, starting a new zlib
// stream every RecordsPerStream records.
func (w *Writer) emit(s *moduleStream, data []byte, records int) error {
	if s.z != nil && w.RecordsPerStream > 0 && s.inRun >= w.RecordsPerStream {
		if err := s.z.Close(); err != nil {
			return w.fail(err)
		}
		s.z, s.inRun = nil, 0
	}
	if s.z == nil {
		s.z = zlib.NewWriter(&s.buf)
	}
	s.inRun += records
	if _, err := s.z.Write(data); err != nil {
		return w.fail(err)
	}
	return nil
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// Close finishes the regions and writes the log: header, job region, name
// region, then the module regions in id order.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	o := w.order()
	job, err := w.jobRegion()
	if err != nil {
		return w.fail(err)
	}
	names := w.nameRegion()
	var regions [MaxModules][]byte
	for i, s := range w.modules {
		if s == nil {
			continue
		}
		if s.z != nil {
			if err := s.z.Close(); err != nil {
				return w.fail(err)
			}
		}
		regions[i] = s.buf.Bytes()
	}

	hdr := make([]byte, headerSize341)
	copy(hdr, "3.41")
	o.PutUint64(hdr[8:], magicNumber)
	hdr[16] = byte(CompressZlib)
	o.PutUint64(hdr[24:], w.Partial)
	off := uint64(headerSize341 + len(job))
	if len(names) > 0 {
		o.PutUint64(hdr[32:], off)
		o.PutUint64(hdr[40:], uint64(len(names)))
		off += uint64(len(names))
	}
	for i, r := range regions {
		if w.modules[i] == nil {
			continue
		}
		if len(r) > 0 {
			o.PutUint64(hdr[48+16*i:], off)
			o.PutUint64(hdr[56+16*i:], uint64(len(r)))
			off += uint64(len(r))
		}
		o.PutUint32(hdr[48+16*MaxModules+4*i:], w.modules[i].version)
	}
	for _, part := range append([][]byte{hdr, job, names}, regions[:]...) {
		if _, err := w.out.Write(part); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// jobRegion compresses the job record and the exe/mount string.
func (w *Writer) jobRegion() ([]byte, error) {
	o := w.order()
	if len(w.Job.Metadata) >= metadataLen {
		return nil, fmt.Errorf("darshan: job metadata has %d bytes, at most %d fit", len(w.Job.Metadata), metadataLen-1)
	}
	rec := make([]byte, jobSize341)
	j := &w.Job
	for i, v := range []int64{j.UID, j.StartTime, j.StartNsec, j.EndTime, j.EndNsec, j.NProcs, j.JobID} {
		o.PutUint64(rec[8*i:], uint64(v))
	}
	copy(rec[56:], j.Metadata)
	rec = append(rec, exeMounts(w.Exe, w.Mounts)...)
	rec = append(rec, 0)
	var buf bytes.Buffer
	z := zlib.NewWriter(&buf)
	z.Write(rec)
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// exeLen is the room for the command line and mount table (DARSHAN_EXE_LEN).
const exeLen = jobRecordSize - jobSize341 - 1

// exeMounts builds the string stored after the job record as the runtime
// does: the command line (cut to fit, ending in "<TRUNCATED>"), then
// "\n<type>\t<path>" per mount while they fit.
func exeMounts(exe string, mounts []Mount) string {
	const truncated = "<TRUNCATED>"
	if len(exe) >= exeLen {
		exe = exe[:exeLen-len(truncated)] + truncated
	}
	s := exe
	for _, m := range mounts {
		entry := "\n" + m.Type + "\t" + m.Path
		if len(s)+len(entry) > exeLen {
			break
		}
		s += entry
	}
	return s
}

// nameRegion compresses the name records ({id; NUL-terminated name}).
func (w *Writer) nameRegion() []byte {
	if len(w.names) == 0 {
		return nil
	}
	o := w.order()
	var buf bytes.Buffer
	z := zlib.NewWriter(&buf)
	var b []byte
	for _, n := range w.names {
		b = o.AppendUint64(b[:0], n.id)
		b = append(append(b, n.name...), 0)
		z.Write(b)
	}
	z.Close()
	return buf.Bytes()
}

// encoder appends the fields of a record in the log's byte order.
type encoder struct {
	order byteOrder
	big   bool
	b     []byte
}

func (e *encoder) u64(v uint64)  { e.b = e.order.AppendUint64(e.b, v) }
func (e *encoder) i64(v int64)   { e.b = e.order.AppendUint64(e.b, uint64(v)) }
func (e *encoder) f64(v float64) { e.b = e.order.AppendUint64(e.b, math.Float64bits(v)) }
func (e *encoder) u32(v uint32)  { e.b = e.order.AppendUint32(e.b, v) }
func (e *encoder) key(k Key)     { e.u64(k.ID); e.i64(k.Rank) }

// str appends s in a fixed field of n bytes, NUL-padded.
func (e *encoder) str(s string, n int) error {
	if len(s) > n {
		return fmt.Errorf("%q is longer than its %d-byte field", s, n)
	}
	e.b = append(e.b, s...)
	e.b = append(e.b, make([]byte, n-len(s))...)
	return nil
}

// uuid appends a UUID as darshan-util reads it in the log's byte order.
func (e *encoder) uuid(u [16]byte) {
	if e.big {
		for i, j := 0, 15; i < j; i, j = i+1, j-1 {
			u[i], u[j] = u[j], u[i]
		}
	}
	e.b = append(e.b, u[:]...)
}

// counters appends the counters of r, which must have its module's current layout.
func (e *encoder) counters(r *CounterRecord, set *counterSet) error {
	set.load()
	if len(r.Ints) != len(set.ints) || len(r.Floats) != len(set.floats) {
		return fmt.Errorf("has %d integer and %d float counters, %s records have %d and %d",
			len(r.Ints), len(r.Floats), set.module, len(set.ints), len(set.floats))
	}
	for _, v := range r.Ints {
		e.i64(v)
	}
	for _, v := range r.Floats {
		e.f64(v)
	}
	return nil
}

// encode writes a plain counter record (POSIX, MPI-IO, STDIO, H5F,
// PNETCDF_FILE, BG/Q: the modules whose records are nothing else).
func (r *CounterRecord) encode(e *encoder, _ bool) error {
	mod := r.Module.Module()
	if mod == nil || !mod.plain {
		return fmt.Errorf("%s records are not plain CounterRecords", r.Module)
	}
	e.key(r.Key)
	return e.counters(r, mod.counters)
}
