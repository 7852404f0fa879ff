package exposition

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Compressing a large response is as much work as encoding it, and done
// after the encoders, on the goroutine that sends, it held a scrape on one
// core. A Gzip is a gzip stream (RFC 1952) whose large parts are compressed
// on the encoders' goroutines, as pigz does: each such part is a deflate
// stream of its own, ended by a sync flush (an empty stored block, so that
// it ends on a byte boundary and no later block refers back into it), and
// the response is their concatenation between one gzip header and one
// trailer, whose CRC-32 is combined from the parts' (crc32Combine). Bytes
// written with Write, between the parts, are compressed in order by a
// compressor of the stream's own. Any gzip reader reads the result as one
// member.

// gzipLevel: job series compress about 13 to 1 at the fastest level; the
// next levels gain little for much more time.
const gzipLevel = flate.BestSpeed

// minCompressedPart is the smallest part compressed on its own: below it,
// the part's own Huffman tables and a window that starts empty cost more
// than its encoder saves the sending goroutine.
const minCompressedPart = 16 << 10

// Gzip is a gzip stream to which parts compressed elsewhere can be added.
// It is not safe for concurrent use; CompressPart is.
type Gzip struct {
	out io.Writer
	fw  *flate.Writer
	// pending: fw has taken bytes since it was last reset, which must be
	// flushed before a part is written and which the part must not be
	// able to refer back to.
	pending bool
	started bool // the header is written
	crc     uint32
	size    uint32 // ISIZE: the length modulo 2³²
	err     error
}

// NewGzip returns a Gzip writing to out.
func NewGzip(out io.Writer) *Gzip {
	fw, _ := flate.NewWriter(out, gzipLevel)
	return &Gzip{out: out, fw: fw}
}

// Reset discards z's state and makes it write to out, keeping its
// compressor's memory.
func (z *Gzip) Reset(out io.Writer) {
	z.fw.Reset(out)
	*z = Gzip{out: out, fw: z.fw}
}

func (z *Gzip) start() error {
	if z.started || z.err != nil {
		return z.err
	}
	z.started = true
	// ID1 ID2, CM deflate, no flags, no mtime, XFL 4 (fastest), OS unknown.
	_, z.err = z.out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255})
	return z.err
}

// Write compresses p after what was written before.
func (z *Gzip) Write(p []byte) (int, error) {
	if err := z.start(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := z.fw.Write(p)
	z.pending = true
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p[:n])
	z.size += uint32(n)
	if err != nil {
		z.err = err
	}
	return n, err
}

// Close ends the stream: the last deflate block and the trailer. It does
// not close the underlying writer.
func (z *Gzip) Close() error {
	if err := z.start(); err != nil {
		return err
	}
	if err := z.fw.Close(); err != nil {
		z.err = err
		return err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], z.crc)
	binary.LittleEndian.PutUint32(trailer[4:], z.size)
	_, z.err = z.out.Write(trailer[:])
	return z.err
}

// compressedPart is a part compressed by CompressPart.
type compressedPart struct {
	data []byte // a deflate stream ending with a sync flush, no final block
	crc  uint32
	n    int
}

func (c *compressedPart) Write(p []byte) (int, error) {
	c.data = append(c.data, p...)
	return len(p), nil
}

var (
	partCompressors = sync.Pool{New: func() any {
		fw, _ := flate.NewWriter(nil, gzipLevel)
		return fw
	}}
	compressedParts = sync.Pool{New: func() any { return new(compressedPart) }}
)

// compressPart compresses p on its own, on the calling goroutine, or
// returns nil when p is too small to be worth it.
func compressPart(p []byte) *compressedPart {
	if len(p) < minCompressedPart {
		return nil
	}
	c := compressedParts.Get().(*compressedPart)
	c.data = c.data[:0]
	fw := partCompressors.Get().(*flate.Writer)
	fw.Reset(c)
	fw.Write(p) // writes to c never fail
	fw.Flush()
	fw.Reset(nil)
	partCompressors.Put(fw)
	c.crc = crc32.ChecksumIEEE(p)
	c.n = len(p)
	return c
}

func releaseCompressed(c *compressedPart) {
	if c != nil && cap(c.data) <= 4<<20 {
		compressedParts.Put(c)
	}
}

// writeCompressed adds a part compressed by compressPart after what was
// written before.
func (z *Gzip) writeCompressed(c *compressedPart) error {
	if err := z.start(); err != nil {
		return err
	}
	if z.pending {
		// The bytes written so far, up to a byte boundary; the part's
		// window starts empty, so the next bytes' must too.
		if err := z.fw.Flush(); err != nil {
			z.err = err
			return err
		}
		z.fw.Reset(z.out)
		z.pending = false
	}
	if _, err := z.out.Write(c.data); err != nil {
		z.err = err
		return err
	}
	z.crc = crc32Combine(z.crc, c.crc, int64(c.n))
	z.size += uint32(c.n)
	return nil
}

// crc32Combine returns the CRC-32 (IEEE) of a||b from crcA, that of a, and
// crcB, that of b, which is lenB bytes long. For this CRC (initial value
// and final xor all ones, which cancel out), crc(a||b) = crc(a)·x^(8·lenB)
// + crc(b) over GF(2) modulo the polynomial, in the bit-reflected order in
// which bit 31 holds x⁰.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	return mulModP(xPow8n(lenB), crcA) ^ crcB
}

// mulModP multiplies a and b modulo the CRC-32 polynomial, reflected.
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		// b·x
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [3 + 63]uint32) {
	t[0] = 1 << 30 // x¹
	for k := 1; k < len(t); k++ {
		t[k] = mulModP(t[k-1], t[k-1])
	}
	return t
}()

// xPow8n returns x^(8n) modulo the polynomial.
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31 // x⁰
	for k := 3; n > 0; k++ {
		if n&1 != 0 {
			p = mulModP(x2n[k], p)
		}
		n >>= 1
	}
	return p
}
