package darshan

import (
	"io"
	"runtime"
	"slices"
	"sync/atomic"
)

// Inflating a big region on several cores.
//
// A region written by N ranks is N zlib streams end to end, and nothing
// records where each starts: only decoding a stream tells where the next
// begins. So the region is cut into parts, and a helper goroutine per part
// (but the first) guesses where its first stream starts — the first offset
// past its cut that holds a zlib header and decodes as a whole stream with
// a correct checksum — and decodes the streams that follow, up to the next
// cut. The reader decodes the first part itself; when its chain of streams
// reaches a stream a helper decoded, it serves the helper's output instead.
// A wrong guess costs only time: output is used only where the reader's own
// chain of stream boundaries lands, so it is exactly what a sequential
// decode gives; anything a helper could not decode the reader decodes
// itself, and reports errors as it would alone.

const (
	// partMin is the compressed size per part below which splitting does
	// not pay for the helper's start-up and the copy of its output.
	partMin = 64 << 10
	// maxParts bounds the helpers of one region.
	maxParts = 8
	// partRatio bounds a helper's buffered output to partRatio times its
	// compressed part plus MinInflateBound (real logs inflate by less than
	// 40): a helper that would exceed it stops, and the reader goes on
	// decoding that part itself, streaming, under the region's own limit.
	partRatio = 48
)

// part is the work and the result of one helper.
type part struct {
	cut   int // the helper looks for a stream start from here
	limit int // and decodes streams that start before limit (the next cut)

	starts []int  // region offsets of the streams decoded, consecutive
	ends   []int  // out[ends[i-1]:ends[i]] is the output of stream i
	next   int    // region offset after the last stream decoded
	out    []byte // decoded output, pooled
	done   chan struct{}
}

// regionParts returns the number of parts to cut a region of n compressed
// bytes into: one per goroutine that can run at once, of partMin bytes at
// least.
func regionParts(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/partMin, maxParts))
}

// splitStreams cuts src into n parts and starts a helper for each but the
// first. The parts come back in order.
func splitStreams(src []byte, n int, stop *atomic.Bool) []*part {
	if n < 2 || len(src) < n {
		return nil
	}
	parts := make([]*part, n-1)
	for k := range parts {
		p := &part{cut: (k + 1) * len(src) / n, limit: (k + 2) * len(src) / n, done: make(chan struct{})}
		parts[k] = p
		go p.run(src, stop)
	}
	return parts
}

// run decodes the part's streams into p.out.
func (p *part) run(src []byte, stop *atomic.Bool) {
	defer close(p.done)
	p.next = p.cut
	z := inflaterPool.Get().(*inflater)
	defer inflaterPool.Put(z)
	compressed := p.limit - p.cut
	maxOut := partRatio*compressed + MinInflateBound
	p.out = getBytes(4 * compressed)[:0]
	// the first stream: the first candidate that decodes
	pos := p.cut
	for {
		pos = nextZlibHeader(src, pos, p.limit)
		if pos < 0 || stop.Load() {
			return
		}
		if p.decode(z, src, pos, maxOut) {
			break
		}
		pos++
	}
	for p.next < p.limit && !stop.Load() && p.decode(z, src, p.next, maxOut) {
	}
}

// decode inflates the stream at pos onto p.out and reports whether it
// decoded whole; if not, p.out is left as it was.
func (p *part) decode(z *inflater, src []byte, pos, maxOut int) bool {
	before := len(p.out)
	z.reset(src, pos)
	for {
		if len(p.out) == cap(p.out) {
			if len(p.out) >= maxOut {
				p.out = p.out[:before]
				return false
			}
			grown := getBytes(min(2*cap(p.out)+64<<10, maxOut))
			copy(grown, p.out)
			putBytes(p.out)
			p.out = grown[:len(p.out)]
		}
		n, err := z.Read(p.out[len(p.out):cap(p.out)])
		p.out = p.out[:len(p.out)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			p.out = p.out[:before]
			return false
		}
	}
	p.starts = append(p.starts, pos)
	p.ends = append(p.ends, len(p.out))
	p.next = z.next()
	return true
}

// output returns the output from the stream at region offset pos to the
// end of the part, if the helper decoded a stream there.
func (p *part) output(pos int) ([]byte, bool) {
	i, found := slices.BinarySearch(p.starts, pos)
	if !found {
		return nil, false
	}
	from := 0
	if i > 0 {
		from = p.ends[i-1]
	}
	return p.out[from:], true
}

// nextZlibHeader returns the first offset in [from, limit) holding a valid
// zlib header (deflate, a window of at most 32 KiB, no preset dictionary),
// or -1.
func nextZlibHeader(src []byte, from, limit int) int {
	for i := from; i < limit && i+1 < len(src); i++ {
		cmf, flg := uint(src[i]), uint(src[i+1])
		if cmf&0x0f == 8 && cmf>>4 <= 7 && (cmf<<8|flg)%31 == 0 && flg&0x20 == 0 {
			return i
		}
	}
	return -1
}
