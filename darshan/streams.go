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
// begins. So the region is cut into chunks, and helper goroutines run
// ahead of the reader, one per chunk: a helper guesses where its chunk's
// first stream starts — the first offset past the cut that holds a zlib
// header and decodes as a whole stream with a correct checksum — and
// decodes the streams that follow, up to the next cut. The reader decodes
// the chunks no helper took; when its chain of streams reaches a stream a
// helper decoded, it serves the helper's output instead and starts the
// next helpers. A wrong guess costs only time: output is used only where
// the reader's own chain of stream boundaries lands, so it is exactly what
// a sequential decode gives; anything a helper could not decode the reader
// decodes itself, and reports errors as it would alone. The reader never
// waits for a helper longer than the stream it is decoding: reaching a
// chunk whose helper is not done, it takes the streams decoded so far and
// decodes the rest itself (a core busy with other work costs no more than
// that core's share).
//
// Memory stays bounded: at most one helper per spare core runs ahead, each
// holding one chunk's output (a chunk is at most chunkMax compressed
// bytes, and a helper stops at partRatio times that).

const (
	// chunkMin is the compressed size of a chunk below which a helper
	// does not pay for its start-up and the copy of its output.
	chunkMin = 64 << 10
	// chunkMax bounds a chunk, hence a helper's buffered output.
	chunkMax = 256 << 10
	// helpedMin is the compressed size of a region below which the reader
	// inflates it alone. Below it, helpers cost more CPU than they save
	// time: starting them wakes the idle cores' threads, which spin, and
	// their output is copied. A whole `darshan dump` process of the
	// corpus' jeanbez log (regions of 180 KB but for DXT) took 22 ms of
	// CPU with helpers and 17 ms without, in no more time; of e3sm (one
	// region of 330 KB) 40 ms and 24 ms, in two thirds of the time.
	helpedMin = 1 << 20
	// maxAhead bounds the helpers running ahead of one reader.
	maxAhead = 7
	// partRatio bounds a helper's buffered output to partRatio times its
	// compressed chunk plus MinInflateBound (real logs inflate by less than
	// 40): a helper that would exceed it stops, and the reader goes on
	// decoding that chunk itself, streaming, under the region's own limit.
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
	// quit tells the helper the reader has reached its chunk: it stops
	// after the stream it is decoding, and the reader decodes the rest.
	quit atomic.Bool
}

// chunkPlan returns how to inflate a region of n compressed bytes: the
// number of chunks and of helpers running ahead of the reader (0: the
// reader alone). A chunk is the region's size over twice the cores, within
// [chunkMin, chunkMax], so that each core has two chunks or more.
func chunkPlan(n int) (chunks, ahead int) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 || n < max(helpedMin, 2*chunkMin) {
		return 1, 0
	}
	size := min(max(n/(2*procs), chunkMin), chunkMax)
	return n / size, min(procs-1, maxAhead)
}

// startPart starts a helper on the streams of src[cut:limit].
func startPart(src []byte, cut, limit int, stop *atomic.Bool) *part {
	p := &part{cut: cut, limit: limit, done: make(chan struct{})}
	go p.run(src, stop)
	return p
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
		if pos < 0 || stop.Load() || p.quit.Load() {
			return
		}
		if p.decode(z, src, pos, maxOut) {
			break
		}
		pos++
	}
	for p.next < p.limit && !stop.Load() && !p.quit.Load() && p.decode(z, src, p.next, maxOut) {
	}
}

// decode inflates the stream at pos onto p.out and reports whether it
// decoded whole; if not, p.out is left as it was.
func (p *part) decode(z *inflater, src []byte, pos, maxOut int) bool {
	before := len(p.out)
	z.reset(src, pos)
	for {
		room := min(cap(p.out), maxOut) // a pooled buffer may be bigger than asked
		if len(p.out) == room {
			if room == maxOut {
				p.out = p.out[:before]
				return false
			}
			grown := getBytes(min(2*cap(p.out)+64<<10, maxOut))
			copy(grown, p.out)
			putBytes(p.out)
			p.out = grown[:len(p.out)]
			continue
		}
		n, err := z.Read(p.out[len(p.out):room])
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
