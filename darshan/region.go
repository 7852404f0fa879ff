package darshan

import (
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// MaxInflateRatio bounds decompression: a region may inflate to at most
// MaxInflateRatio times its compressed length plus MinInflateBound bytes.
// Real logs inflate by less than 40 (the corpus maximum is 39); zlib's own
// limit is 1032, so a decompression bomb stops here with ErrTooLarge instead
// of running the reader out of memory or time.
const (
	MaxInflateRatio = 256
	MinInflateBound = 1 << 20
)

// region is one {offset, length} entry of the header's maps: a span of the
// file, in compressed bytes.
type Region struct {
	Offset uint64
	Length uint64
}

// regionReader streams the decompressed bytes of one region. It holds the
// region's compressed bytes (never more than the file really has) and a
// window of decompressed data; records are cut from that window.
type regionReader struct {
	log    *Log
	name   string
	offset int64
	slot   int // the region's slot in the log's memory charge (see budget.go)

	dec   io.Reader // decompressed data
	limit int64     // decompressed bytes allowed, see MaxInflateRatio
	total int64     // decompressed bytes produced so far

	buf  []byte // window: unread decompressed bytes are buf[r:w]
	r, w int
	err  error // sticky error of dec (io.EOF at the clean end)

	src []byte // the compressed bytes, pooled
}

// Buffers and inflaters are pooled: a log of many small regions would
// otherwise spend its time allocating (and collecting) them.
var (
	bytesPool    sync.Pool // *[]byte
	inflaterPool = sync.Pool{New: func() any { return newInflater() }}
)

func getBytes(n int) []byte {
	if p, ok := bytesPool.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}

func putBytes(b []byte) {
	if cap(b) > 0 && cap(b) <= 16<<20 {
		bytesPool.Put(&b)
	}
}

// release returns the region's buffers to the pools once it is read to its
// end; records decoded from it hold copies, never slices of them.
func (rr *regionReader) release() {
	if rr.buf != nil {
		putBytes(rr.buf)
		rr.buf, rr.r, rr.w = nil, 0, 0
	}
	if z, ok := rr.dec.(*zlibStreams); ok && z.z != nil {
		z.close() // first: its helpers read src until they stop
	}
	if rr.src != nil {
		putBytes(rr.src)
		rr.src = nil
	}
	if rr.err == nil {
		rr.err = io.EOF
	}
}

// openRegion prepares to read region reg under name (for error messages),
// charged to slot (a module id, slotNames or slotJob). A region that
// extends past the end of the file is read as far as the file goes; the
// error comes when the data runs out.
func (l *Log) openRegion(name string, slot int, reg Region) *regionReader {
	rr := &regionReader{log: l, name: name, offset: int64(reg.Offset), slot: slot}
	if reg.Length == 0 {
		rr.err = io.EOF
		return rr
	}
	end := reg.Offset + reg.Length
	if reg.Offset >= uint64(l.size) || end < reg.Offset {
		rr.err = causef(ErrTruncated, "region of %d bytes at offset %d starts past the end of the file (%d bytes)",
			reg.Length, reg.Offset, l.size)
		return rr
	}
	truncated := end > uint64(l.size)
	if truncated {
		end = uint64(l.size)
	}
	// The compressed bytes are held while the region is read: charged
	// before they are.
	if err := l.mem.chargeRegion(slot, int64(end-reg.Offset)); err != nil {
		rr.err = err
		return rr
	}
	src, err := l.readInto(getBytes(int(end-reg.Offset)), int64(reg.Offset))
	if err != nil {
		rr.err = err
		return rr
	}
	rr.src = src
	rr.limit = MaxInflateRatio*int64(len(src)) + MinInflateBound
	var missing error
	if truncated {
		missing = causef(ErrTruncated, "region claims %d bytes at offset %d but the file ends after %d",
			reg.Length, reg.Offset, len(src))
	}
	switch l.Header.Compression {
	case CompressZlib:
		rr.dec = newZlibStreams(src, missing)
	case CompressBzip2:
		rr.dec = &bzip2Streams{src: bytes.NewReader(src), missing: missing}
	case CompressNone:
		rr.dec = &rawBytes{src: src, missing: missing}
	default:
		rr.err = causef(ErrCorrupt, "unknown compression type %d", l.Header.Compression)
	}
	return rr
}

// fail wraps err as a FormatError naming this region.
func (rr *regionReader) fail(err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return &FormatError{Log: rr.log.Name, Region: rr.name, Offset: rr.offset, Err: err}
}

// next returns the next n decompressed bytes; the slice is valid until the
// next call. At the clean end of the region it returns io.EOF; when the data
// ends after 0 < k < n bytes it returns those k bytes and an error.
func (rr *regionReader) next(n int) ([]byte, error) {
	if rr.w-rr.r < n {
		rr.fill(n)
	}
	avail := rr.w - rr.r
	if avail >= n {
		b := rr.buf[rr.r : rr.r+n]
		rr.r += n
		return b, nil
	}
	b := rr.buf[rr.r:rr.w]
	rr.r = rr.w
	if avail == 0 && rr.err == io.EOF {
		return nil, io.EOF
	}
	err := rr.err
	if err == io.EOF {
		err = causef(ErrTruncated, "data ends %d bytes into a %d-byte record", avail, n)
	}
	return b, rr.fail(err)
}

// fill reads from the decompressor until the window holds n bytes or the
// data ends. Past windowUpfront, the window grows only as data arrives,
// doubling each time whatever n is, so that a claim of more data than the
// region holds costs no memory (the window is at most twice the data it
// has held); every byte inflated is charged to the log's budget. It
// doubles even when n is one byte more than it holds: a caller looking for
// the end of a name asks for one more byte at a time, and a window grown
// by what was asked copied itself once per byte (a 2 KB log with one name
// of a megabyte took three minutes to open).
func (rr *regionReader) fill(n int) {
	if rr.r > 0 { // slide unread bytes to the front
		rr.w = copy(rr.buf, rr.buf[rr.r:rr.w])
		rr.r = 0
	}
	if rr.err != nil {
		return
	}
	if len(rr.buf) < n && len(rr.buf) < windowUpfront {
		rr.grow(min(max(n, 2*len(rr.buf)), windowUpfront))
	}
	for rr.w < n && rr.err == nil {
		if rr.w == len(rr.buf) {
			// never past what the budget has left: one name as long as
			// the budget fails when its bytes are charged, not by a
			// window twice its size
			rr.grow(min(2*len(rr.buf), len(rr.buf)+int(min(max(rr.log.mem.remaining(), 0), 1<<40))+64<<10))
		}
		k, err := rr.dec.Read(rr.buf[rr.w:])
		rr.w += k
		rr.total += int64(k)
		if rr.total > rr.limit {
			err = causef(ErrTooLarge, "inflates past %d bytes (%d times its compressed size plus %d)",
				rr.limit, MaxInflateRatio, MinInflateBound)
		} else if k > 0 {
			if cerr := rr.log.mem.chargeRegion(rr.slot, int64(len(rr.src))+rr.total); cerr != nil {
				err = cerr
			}
		}
		if err != nil {
			rr.err = err
		}
	}
}

// windowUpfront is the window a request gets before any data arrives:
// every record's fixed part fits (the largest is a DXT chunk of segments,
// 160 KiB); only the name table asks for more.
const windowUpfront = 1 << 20

// grow makes the window at least size bytes (and 64 KiB), keeping its data.
func (rr *regionReader) grow(size int) {
	size = max(size, 64<<10, len(rr.buf))
	if size == len(rr.buf) {
		return
	}
	nb := getBytes(size)
	copy(nb, rr.buf[:rr.w])
	if rr.buf != nil {
		putBytes(rr.buf)
	}
	rr.buf = nb
}

// zlibStreams inflates a region made of one or more concatenated zlib
// streams (the MPI runtime writes one per rank). A big region is inflated
// on several cores (see streams.go).
type zlibStreams struct {
	src     []byte
	pos     int // start of the next stream
	z       *inflater
	missing error // the error to report when the input runs out: the file was cut short

	nchunks   int         // chunk i is src[i*len/nchunks : (i+1)*len/nchunks]
	ahead     int         // helpers to keep running ahead of the reader's chunk
	nextChunk int         // the next chunk to start a helper for
	parts     []*part     // helpers whose streams are still ahead, in order
	serving   []byte      // the rest of a helper's output, read out before decoding goes on
	served    *part       // the helper that serving belongs to
	stop      atomic.Bool // the region was abandoned: helpers stop
}

func newZlibStreams(src []byte, missing error) *zlibStreams {
	z := inflaterPool.Get().(*inflater)
	z.started = false
	s := &zlibStreams{src: src, missing: missing, z: z, nextChunk: 1}
	s.nchunks, s.ahead = chunkPlan(len(src))
	return s
}

func (s *zlibStreams) Read(p []byte) (int, error) {
	for {
		if len(s.serving) > 0 {
			n := copy(p, s.serving)
			s.serving = s.serving[n:]
			return n, nil
		}
		if s.z.done() {
			if s.z.started {
				s.pos = s.z.next()
				s.z.started = false
			}
			if s.takeOver() {
				continue
			}
			if s.pos >= len(s.src) {
				return 0, io.EOF
			}
			s.z.reset(s.src, s.pos)
		}
		n, err := s.z.Read(p)
		if err == io.EOF {
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && s.missing != nil {
				return n, s.missing
			}
			return n, causef(ErrCorrupt, "zlib stream at region byte %d: %v", s.pos, err)
		}
		return n, nil
	}
}

// cut returns the start of chunk i.
func (s *zlibStreams) cut(i int) int { return i * len(s.src) / s.nchunks }

// takeOver switches to a helper's output when the next stream is one the
// helper decoded; the region then goes on after the helper's last stream.
// Either way it keeps helpers running on the chunks just ahead.
func (s *zlibStreams) takeOver() bool {
	if s.served != nil {
		putBytes(s.served.out)
		s.served = nil
	}
	defer s.startHelpers()
	for len(s.parts) > 0 {
		p := s.parts[0]
		if s.pos < p.cut {
			return false
		}
		p.quit.Store(true) // take what is done rather than wait for the rest
		<-p.done
		if out, ok := p.output(s.pos); ok {
			s.parts = s.parts[1:]
			s.serving, s.served, s.pos = out, p, p.next
			return true
		}
		if s.pos < p.next {
			return false // the helper's chain may still meet this one further on
		}
		s.parts = s.parts[1:] // the helper guessed wrong, or decoded nothing
		putBytes(p.out)
	}
	return false
}

// startHelpers starts helpers on the chunks after the one the reader is in,
// up to s.ahead of them.
func (s *zlibStreams) startHelpers() {
	if s.ahead == 0 || s.stop.Load() {
		return
	}
	c := s.pos * s.nchunks / max(len(s.src), 1) // the reader's chunk, or one before it
	for c+1 < s.nchunks && s.cut(c+1) <= s.pos {
		c++
	}
	s.nextChunk = max(s.nextChunk, c+1)
	for ; s.nextChunk < s.nchunks && s.nextChunk <= c+s.ahead; s.nextChunk++ {
		i := s.nextChunk
		s.parts = append(s.parts, startPart(s.src, s.cut(i), s.cut(i+1), &s.stop))
	}
}

// close stops the helpers and returns what can be pooled.
func (s *zlibStreams) close() {
	s.stop.Store(true)
	if s.served != nil {
		putBytes(s.served.out)
		s.served, s.serving = nil, nil
	}
	// Helpers read src, which goes back to the pool after this: wait for
	// them (each stops after the stream it is decoding).
	for _, p := range s.parts {
		<-p.done
		putBytes(p.out)
	}
	s.parts = nil
	inflaterPool.Put(s.z)
	s.z = nil
}

// bzip2Streams decompresses a bzip2 region (darshan-convert --bzip2).
// compress/bzip2 reads concatenated streams by itself.
type bzip2Streams struct {
	src     *bytes.Reader
	r       io.Reader
	missing error
}

func (s *bzip2Streams) Read(p []byte) (int, error) {
	if s.r == nil {
		s.r = bzip2.NewReader(s.src)
	}
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) && s.missing != nil {
			return n, s.missing
		}
		return n, causef(ErrCorrupt, "bzip2: %v", err)
	}
	return n, err
}

// rawBytes serves an uncompressed region (compression type NONE).
type rawBytes struct {
	src     []byte
	missing error
}

func (s *rawBytes) Read(p []byte) (int, error) {
	if len(s.src) == 0 {
		if s.missing != nil {
			err := s.missing
			s.missing = nil
			return 0, err
		}
		return 0, io.EOF
	}
	n := copy(p, s.src)
	s.src = s.src[n:]
	return n, nil
}

// readAt reads n bytes at off, bounded by the file's real size.
func (l *Log) readAt(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > l.size || n > l.size-off {
		return nil, causef(ErrTruncated, "%d bytes at offset %d are past the end of the file (%d bytes)", n, off, l.size)
	}
	return l.readInto(make([]byte, n), off)
}

// readInto fills b from offset off (b lies within the file).
func (l *Log) readInto(b []byte, off int64) ([]byte, error) {
	n := len(b)
	k, err := l.r.ReadAt(b, off)
	if k == len(b) {
		return b, nil
	}
	if err == nil || err == io.EOF {
		return b[:k], causef(ErrTruncated, "file ends after %d of %d bytes at offset %d", k, n, off)
	}
	return b[:k], fmt.Errorf("reading %d bytes at offset %d: %w", n, off, err)
}

// atEndAfter reports whether the region holds at most n more bytes, reading
// ahead into the window as needed.
func (rr *regionReader) atEndAfter(n int) bool {
	if rr.w-rr.r <= n {
		rr.fill(n + 1)
	}
	return rr.w-rr.r <= n
}
