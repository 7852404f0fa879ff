package darshan

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

func init() {
	for _, m := range []struct {
		id      ModuleID
		name    string
		version uint32
	}{{DXTPOSIX, "DXT_POSIX", 2}, {DXTMPIIO, "DXT_MPIIO", 3}} {
		id := m.id
		register(&Module{ID: id, Name: m.name, Version: m.version, Traces: true,
			decoder: func(ver uint32, big bool, _ *Log) moduleDecoder { return newDXTDecoder(id, ver, big) }})
	}
}

// DXT_POSIX and DXT_MPIIO modules: extended traces, one record per file and
// rank with every write and read operation (segment) in order.

// Segment is one traced operation.
type Segment struct {
	Offset int64 // -1 in DXT_MPIIO version 1, which did not record offsets
	Length int64
	Start  float64 // seconds since the job started
	End    float64
	// PthreadID is the calling thread; recorded from DXT_POSIX version 2
	// and DXT_MPIIO version 3 on (see DXTRecord.HasThreads).
	PthreadID uint64
}

// DXTRecord is a DXT_POSIX or DXT_MPIIO record.
type DXTRecord struct {
	Key
	Shared   int64 // the runtime's shared-record flag
	Hostname string
	Writes   []Segment
	Reads    []Segment
	// HasThreads reports whether the module version records PthreadID.
	HasThreads bool
}

// Clone returns a deep copy of r.
func (r *DXTRecord) Clone() Record {
	c := *r
	c.Writes = append([]Segment(nil), r.Writes...)
	c.Reads = append([]Segment(nil), r.Reads...)
	return &c
}

const (
	dxtFixedSize   = 16 + 8 + 64 + 8 + 8
	segmentSize    = 32 // offset, length, start, end
	segmentThreads = 40 // … and the pthread id
	segmentsChunk  = 4096
)

type dxtDecoder struct {
	module      ModuleID
	big         bool
	segSize     int
	noOffsets   bool // DXT_MPIIO v1
	rec         DXTRecord
	hostnameRaw []byte
	held        int64 // bytes of the segment slices of rec (see budget.go)
}

func newDXTDecoder(m ModuleID, ver uint32, big bool) moduleDecoder {
	d := &dxtDecoder{module: m, big: big, segSize: segmentSize}
	if (m == DXTPOSIX && ver >= 2) || (m == DXTMPIIO && ver >= 3) {
		d.segSize = segmentThreads
		d.rec.HasThreads = true
	}
	d.noOffsets = m == DXTMPIIO && ver == 1
	return d
}

func (d *dxtDecoder) next(rr *regionReader) (Record, error) {
	b, err := rr.next(dxtFixedSize)
	if err != nil {
		return nil, err
	}
	r := &d.rec
	r.Key = base(d.module, b, d.big)
	r.Shared = int64(getUint64(b[16:], d.big))
	if host := b[24:88]; string(host) != string(d.hostnameRaw) { // the same host repeats: keep the string
		d.hostnameRaw = append(d.hostnameRaw[:0], host...)
		r.Hostname = cString(host)
	}
	writes, reads := int64(getUint64(b[88:], d.big)), int64(getUint64(b[96:], d.big))
	if writes < 0 || reads < 0 || writes > math.MaxInt32 || reads > math.MaxInt32 {
		return nil, causef(ErrCorrupt, "%s record claims %d writes and %d reads", d.module, writes, reads)
	}
	// Segments are decoded a chunk at a time, so that memory follows the
	// data actually present rather than the counts the record claims.
	if r.Writes, err = d.segments(rr, r.Writes[:0], int(writes)); err != nil {
		return nil, err
	}
	if r.Reads, err = d.segments(rr, r.Reads[:0], int(reads)); err != nil {
		return nil, err
	}
	return r, nil
}

func (d *dxtDecoder) segments(rr *regionReader, out []Segment, n int) ([]Segment, error) {
	for n > 0 {
		k := min(n, segmentsChunk)
		b, err := rr.next(k * d.segSize)
		if err != nil {
			if err == io.EOF {
				err = causef(ErrTruncated, "data ends inside a record")
			}
			return out, err
		}
		if cap(out)-len(out) < k {
			// the record's segments are held until the next record: a
			// bigger slice is charged before it is made
			grown := len(out) + max(k, len(out)/2)
			d.held += int64(grown-cap(out)) * segmentCost
			if err := rr.log.mem.chargeHeld(rr.slot, d.held); err != nil {
				return out, err
			}
			out = append(make([]Segment, 0, grown), out...)
		}
		// filled in place: building each Segment and appending it costs
		// twice the stores
		at := len(out)
		out = out[:at+k]
		segs := out[at:]
		for i := range segs {
			s, seg := b[i*d.segSize:(i+1)*d.segSize], &segs[i]
			if d.big {
				seg.Offset, seg.Length = int64(binary.BigEndian.Uint64(s)), int64(binary.BigEndian.Uint64(s[8:]))
				seg.Start = math.Float64frombits(binary.BigEndian.Uint64(s[16:]))
				seg.End = math.Float64frombits(binary.BigEndian.Uint64(s[24:]))
				seg.PthreadID = 0
				if d.segSize == segmentThreads {
					seg.PthreadID = binary.BigEndian.Uint64(s[32:])
				}
			} else {
				seg.Offset, seg.Length = int64(binary.LittleEndian.Uint64(s)), int64(binary.LittleEndian.Uint64(s[8:]))
				seg.Start = math.Float64frombits(binary.LittleEndian.Uint64(s[16:]))
				seg.End = math.Float64frombits(binary.LittleEndian.Uint64(s[24:]))
				seg.PthreadID = 0
				if d.segSize == segmentThreads {
					seg.PthreadID = binary.LittleEndian.Uint64(s[32:])
				}
			}
			if d.noOffsets {
				seg.Offset = -1
			}
		}
		n -= k
	}
	return out, nil
}

// encode writes the record in the current DXT versions, with thread ids.
func (r *DXTRecord) encode(e *encoder, _ bool) error {
	e.key(r.Key)
	e.i64(r.Shared)
	if err := e.str(r.Hostname, 64); err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	e.i64(int64(len(r.Writes)))
	e.i64(int64(len(r.Reads)))
	for _, segs := range [][]Segment{r.Writes, r.Reads} {
		for _, s := range segs {
			e.i64(s.Offset)
			e.i64(s.Length)
			e.f64(s.Start)
			e.f64(s.End)
			e.u64(s.PthreadID)
		}
	}
	return nil
}
