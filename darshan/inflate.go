package darshan

import (
	"encoding/binary"
	"errors"
	"io"
)

// inflater decodes zlib streams (RFC 1950 around RFC 1951 deflate data)
// held in memory. It exists because the region data of a log is already in
// memory and compress/flate, built around an io.ByteReader, inflates at
// less than half the speed a table-driven decoder reaches on it.
//
// It decodes one stream at a time from a position in a shared input, and
// leaves the position just after the stream (after its Adler-32), where the
// next stream of a region starts. Output is produced into a window that
// keeps the last 32 KiB of the stream for back-references, so memory stays
// bounded however long the stream.
type inflater struct {
	in    []byte
	pos   int    // next unread input byte
	bits  uint64 // bit buffer, least significant bit first
	nbits uint   // valid bits in bits; bits above may hold the next input bits

	out      []byte // window: out[:r] was read; history for matches reaches back to out[0]
	r        int
	produced int64 // bytes of output of this stream so far

	state    inflateState
	final    bool // the current block is the stream's last
	stored   int  // bytes left in a stored block
	copyLen  int  // bytes left of a match interrupted by a full window
	copyDist int

	lit, dist *huffTable // tables of the current block
	dynLit    huffTable  // storage for a dynamic block's tables
	dynDist   huffTable
	codeLens  huffTable

	adler   uint32 // Adler-32 of the output so far
	summed  int    // out[:summed] is in the checksum
	err     error
	started bool
}

type inflateState uint8

const (
	stateHeader  inflateState = iota // zlib header
	stateBlock                       // deflate block header
	stateStored                      // inside a stored block
	stateHuffman                     // inside a Huffman block
	stateTrailer                     // Adler-32 of the stream
	stateDone
)

const (
	windowSize = 32 << 10
	outChunk   = 256 << 10
	maxMatch   = 258
)

var (
	errZlibHeader  = errors.New("invalid zlib header")
	errBlockType   = errors.New("invalid block type")
	errStoredLen   = errors.New("invalid stored block lengths")
	errCodeLengths = errors.New("invalid code lengths")
	errSymbol      = errors.New("invalid literal/length or distance code")
	errDistance    = errors.New("invalid distance too far back")
	errChecksum    = errors.New("incorrect data check")
)

func newInflater() *inflater {
	return &inflater{out: make([]byte, 0, windowSize+outChunk+maxMatch+8)}
}

// reset starts a stream at in[pos:].
func (z *inflater) reset(in []byte, pos int) {
	z.in, z.pos, z.bits, z.nbits = in, pos, 0, 0
	z.out, z.r, z.produced = z.out[:0], 0, 0
	z.state, z.final, z.stored, z.copyLen = stateHeader, false, 0, 0
	z.adler = 1
	z.summed, z.err, z.started = 0, nil, true
}

// done reports whether the current stream ended (and was read out).
func (z *inflater) done() bool { return !z.started || (z.state == stateDone && z.r == len(z.out)) }

// next returns the input position after the stream's last byte.
func (z *inflater) next() int { return z.pos - int(z.nbits/8) }

// Read copies decompressed data into p. It returns io.EOF at the end of the
// stream, io.ErrUnexpectedEOF when the input ends inside it, or a format
// error.
func (z *inflater) Read(p []byte) (int, error) {
	for z.r == len(z.out) {
		if z.err != nil {
			return 0, z.err
		}
		if z.state == stateDone {
			return 0, io.EOF
		}
		z.slide()
		z.err = z.decode()
	}
	n := copy(p, z.out[z.r:])
	z.r += n
	return n, nil
}

// slide drops the output that was read, keeping the last 32 KiB as history.
func (z *inflater) slide() {
	if len(z.out) > windowSize {
		keep := z.out[len(z.out)-windowSize:]
		z.out = z.out[:copy(z.out[:windowSize], keep)]
		z.r, z.summed = len(z.out), len(z.out)
	}
}

// decode produces output until the window is full, or the stream ends, or
// an error. It checksums what it produced.
func (z *inflater) decode() error {
	start := len(z.out)
	err := z.run()
	z.produced += int64(len(z.out) - start)
	z.adler = adler32Update(z.adler, z.out[z.summed:])
	z.summed = len(z.out)
	if err == nil && z.state == stateTrailer {
		err = z.trailer()
	}
	return err
}

// room reports whether the window can take a full match more (and the
// 8 bytes a word copy in huffmanFast may write past it).
func (z *inflater) room() bool { return len(z.out)+maxMatch+8 <= cap(z.out) }

func (z *inflater) run() error {
	for z.room() {
		switch z.state {
		case stateHeader:
			if err := z.header(); err != nil {
				return err
			}
		case stateBlock:
			if z.final {
				z.state = stateTrailer
				return nil
			}
			if err := z.blockHeader(); err != nil {
				return err
			}
		case stateStored:
			if err := z.copyStored(); err != nil {
				return err
			}
		case stateHuffman:
			if err := z.huffman(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// refill tops the bit buffer up to at least 56 bits from the 8 input bytes
// at pos (which must exist). It may leave the next input bits above nbits:
// they are the bits of the input that follows, so a later refill ORs the
// same values onto them.
func (z *inflater) refill() {
	z.bits |= binary.LittleEndian.Uint64(z.in[z.pos:]) << z.nbits
	n := (63 - z.nbits) >> 3
	z.pos += int(n)
	z.nbits += n * 8
}

// need makes sure n <= 56 bits are in the bit buffer.
func (z *inflater) need(n uint) error {
	if z.nbits < n && z.pos+8 <= len(z.in) {
		z.refill()
		return nil
	}
	for z.nbits < n {
		if z.pos >= len(z.in) {
			return io.ErrUnexpectedEOF
		}
		z.bits |= uint64(z.in[z.pos]) << z.nbits
		z.pos++
		z.nbits += 8
	}
	return nil
}

// take removes and returns n bits (which must be there).
func (z *inflater) take(n uint) uint64 {
	v := z.bits & (1<<n - 1)
	z.bits >>= n
	z.nbits -= n
	return v
}

func (z *inflater) header() error {
	if err := z.need(16); err != nil {
		return err
	}
	cmf, flg := z.take(8), z.take(8)
	if cmf&0x0f != 8 || cmf>>4 > 7 || (cmf<<8|flg)%31 != 0 || flg&0x20 != 0 {
		return errZlibHeader
	}
	z.state = stateBlock
	return nil
}

func (z *inflater) blockHeader() error {
	if err := z.need(3); err != nil {
		return err
	}
	z.final = z.take(1) == 1
	switch z.take(2) {
	case 0:
		z.take(z.nbits % 8) // to a byte boundary
		if err := z.need(32); err != nil {
			return err
		}
		n, nn := z.take(16), z.take(16)
		if n != ^nn&0xffff {
			return errStoredLen
		}
		z.stored, z.state = int(n), stateStored
	case 1:
		z.lit, z.dist, z.state = &fixedLit, &fixedDist, stateHuffman
	case 2:
		if err := z.dynamicTables(); err != nil {
			return err
		}
		z.lit, z.dist, z.state = &z.dynLit, &z.dynDist, stateHuffman
	default:
		return errBlockType
	}
	return nil
}

func (z *inflater) copyStored() error {
	for z.stored > 0 && z.room() {
		if z.nbits >= 8 { // whole bytes still in the bit buffer
			z.out = append(z.out, byte(z.take(8)))
			z.stored--
			continue
		}
		if z.pos >= len(z.in) {
			return io.ErrUnexpectedEOF
		}
		z.bits = 0 // drop bits read ahead: the raw bytes are copied from the input
		n := min(z.stored, len(z.in)-z.pos, cap(z.out)-len(z.out))
		z.out = append(z.out, z.in[z.pos:z.pos+n]...)
		z.pos += n
		z.stored -= n
	}
	if z.stored == 0 {
		z.state = stateBlock
	}
	return nil
}

// codeLengthOrder is the order of the code length code lengths (RFC 1951 3.2.7).
var codeLengthOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

func (z *inflater) dynamicTables() error {
	if err := z.need(14); err != nil {
		return err
	}
	nlit, ndist, nclen := int(z.take(5))+257, int(z.take(5))+1, int(z.take(4))+4
	if nlit > 286 || ndist > 30 {
		return errCodeLengths
	}
	var clens [19]uint8
	for i := range nclen {
		if err := z.need(3); err != nil {
			return err
		}
		clens[codeLengthOrder[i]] = uint8(z.take(3))
	}
	cl := &z.codeLens
	if !cl.build(clens[:], 7, codeAlphabet[:], false) {
		return errCodeLengths
	}
	var lens [286 + 30]uint8
	codes := (*[128]entry)(cl.entries) // 7-bit codes at most: no subtables
	// The bit buffer lives in locals here (a chain of loads and stores
	// through z otherwise); z has it back before any other call.
	in, bits, nbits, pos := z.in, z.bits, z.nbits, z.pos
	for i, n := 0, nlit+ndist; i < n; {
		// A code length code (7 bits at most) and its repeat bits (7 at
		// most) are in the buffer after 14 bits; the block data and the
		// trailer follow, so a valid stream always has those bits.
		if nbits < 14 {
			if pos+8 <= len(in) {
				bits |= binary.LittleEndian.Uint64(in[pos:]) << nbits
				k := (63 - nbits) >> 3
				pos += int(k)
				nbits += k * 8
			} else {
				z.bits, z.nbits, z.pos = bits, nbits, pos
				if err := z.need(14); err != nil {
					return err
				}
				bits, nbits, pos = z.bits, z.nbits, z.pos
			}
		}
		e := codes[bits&127]
		if e&flagLiteral == 0 {
			return errCodeLengths
		}
		bits >>= e.length()
		nbits -= e.length()
		sym := e.value()
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return errCodeLengths
			}
			rep, val = 3+int(bits&3), lens[i-1]
			bits, nbits = bits>>2, nbits-2
		case 17:
			rep = 3 + int(bits&7)
			bits, nbits = bits>>3, nbits-3
		default:
			rep = 11 + int(bits&127)
			bits, nbits = bits>>7, nbits-7
		}
		if i+rep > n {
			return errCodeLengths
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	z.bits, z.nbits, z.pos = bits, nbits, pos
	if lens[256] == 0 { // no end-of-block code
		return errCodeLengths
	}
	if !z.dynLit.build(lens[:nlit], litRoot, litAlphabet[:], true) || !z.dynDist.build(lens[nlit:nlit+ndist], distRoot, distAlphabet[:], true) {
		return errCodeLengths
	}
	return nil
}

// symbol decodes one symbol with t, reading input a byte at a time (the
// slow path, near the end of the input). An invalid code is returned as its
// entry, for the caller to reject.
func (z *inflater) symbol(t *huffTable) (entry, error) {
	for {
		e := t.lookup(z.bits)
		if n := e.length(); n <= z.nbits {
			z.take(n)
			return e, nil
		}
		if z.pos+8 <= len(z.in) {
			z.refill()
			continue
		}
		if z.pos >= len(z.in) {
			return 0, io.ErrUnexpectedEOF
		}
		z.bits |= uint64(z.in[z.pos]) << z.nbits
		z.pos++
		z.nbits += 8
	}
}

// huffman decodes a Huffman block until its end, a full window, or an error.
func (z *inflater) huffman() error {
	if z.copyLen > 0 { // finish a match the full window interrupted
		z.match(z.copyLen, z.copyDist)
		if z.copyLen > 0 {
			return nil
		}
	}
	for z.room() {
		if z.pos+8 <= len(z.in) {
			if done, err := z.huffmanFast(); done || err != nil {
				return err
			}
			continue
		}
		done, err := z.huffmanSlow()
		if done || err != nil {
			return err
		}
	}
	return nil
}

// huffmanFast decodes while at least 8 input bytes and room for a match
// remain, refilling the bit buffer 8 bytes at a time. It returns done when
// the block ended.
//
// The loop keeps its state in locals and writes into the window's spare
// capacity by index, with no call on any path but a panic's: a call (an
// append that might grow, a deferred closure) would make the compiler keep
// the bit buffer in memory, and every step would wait on it.
func (z *inflater) huffmanFast() (done bool, err error) {
	bits, nbits, pos := z.bits, z.nbits, z.pos
	in := z.in
	buf, o := z.out[:cap(z.out)], len(z.out) // output goes to buf[o:]
	// Every table has the same root sizes: fixed-size views of the primary
	// tables index without bounds checks.
	lt, dt := z.lit.entries, z.dist.entries
	lroot, droot := (*[1 << litRoot]entry)(lt), (*[1 << distRoot]entry)(dt)
	const lmask, dmask = 1<<litRoot - 1, 1<<distRoot - 1
	history := z.produced - int64(z.summed) // stream bytes before buf[0]
	for pos+8 <= len(in) && o+maxMatch+8 <= len(buf) {
		if nbits < 48 { // room for a length code with extra bits and a distance code with extra bits
			bits |= binary.LittleEndian.Uint64(in[pos:]) << nbits
			n := (63 - nbits) >> 3
			pos += int(n)
			nbits += n * 8
		}
		e := lroot[bits&lmask]
		if e&flagLiteral != 0 {
			n := e.length()
			bits >>= n
			nbits -= n
			buf[o] = byte(e.value())
			o++
			// Up to three more literals of the primary table (codes of at
			// most litRoot bits) while the buffer surely holds their bits:
			// the loop starts with 48 bits or more.
			for range 3 {
				e = lroot[bits&lmask]
				if e&flagLiteral == 0 {
					break
				}
				n := e.length()
				bits >>= n
				nbits -= n
				buf[o] = byte(e.value())
				o++
			}
			continue
		}
		if e&flagExceptional != 0 {
			if e.isSub() {
				e = lt[int(e.value())+int((bits>>litRoot)&(1<<e.extra()-1))]
			}
			if e&flagExceptional != 0 {
				if e.kind() == kindEnd {
					n := e.length()
					bits >>= n
					nbits -= n
					z.state = stateBlock
					z.bits, z.nbits, z.pos, z.out = bits, nbits, pos, buf[:o]
					return true, nil
				}
				z.bits, z.nbits, z.pos, z.out = bits, nbits, pos, buf[:o]
				return true, errSymbol
			}
			if e&flagLiteral != 0 { // a literal with a long code
				n := e.length()
				bits >>= n
				nbits -= n
				buf[o] = byte(e.value())
				o++
				continue
			}
		}
		n := e.length()
		bits >>= n
		nbits -= n
		extra := e.extra()
		length := int(e.value()) + int(bits&(1<<extra-1))
		bits >>= extra
		nbits -= extra
		d := droot[bits&dmask]
		if d&flagExceptional != 0 {
			if d.isSub() {
				d = dt[int(d.value())+int((bits>>distRoot)&(1<<d.extra()-1))]
			}
			if d&flagExceptional != 0 {
				z.bits, z.nbits, z.pos, z.out = bits, nbits, pos, buf[:o]
				return true, errSymbol
			}
		}
		n = d.length()
		bits >>= n
		nbits -= n
		extra = d.extra()
		distance := int(d.value()) + int(bits&(1<<extra-1))
		bits >>= extra
		nbits -= extra
		if int64(distance) > history+int64(o) {
			z.bits, z.nbits, z.pos, z.out = bits, nbits, pos, buf[:o]
			return true, errDistance
		}
		// Copy the match. Words are copied 8 bytes at a time when the
		// distance allows (each read is of bytes already written); the last
		// word may spill past the match, into the room the loop keeps.
		from := o - distance
		switch {
		case distance >= 8 && length <= 16:
			w := buf[o : o+16]
			binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(buf[from:]))
			binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(buf[from+8:]))
		case distance >= 8:
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(buf[o+i:], binary.LittleEndian.Uint64(buf[from+i:]))
			}
		case distance == 1:
			v := uint64(buf[from]) * 0x0101010101010101
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(buf[o+i:], v)
			}
		default:
			for i := range length {
				buf[o+i] = buf[from+i]
			}
		}
		o += length
	}
	z.bits, z.nbits, z.pos, z.out = bits, nbits, pos, buf[:o]
	return false, nil
}

// huffmanSlow decodes one symbol at a time near the end of the input.
func (z *inflater) huffmanSlow() (done bool, err error) {
	e, err := z.symbol(z.lit)
	if err != nil {
		return true, err
	}
	switch e.kind() {
	case kindLiteral:
		z.out = append(z.out, byte(e.value()))
		return false, nil
	case kindEnd:
		z.state = stateBlock
		return true, nil
	case kindInvalid:
		return true, errSymbol
	}
	if err := z.need(e.extra()); err != nil {
		return true, err
	}
	length := int(e.value()) + int(z.take(e.extra()))
	d, err := z.symbol(z.dist)
	if err != nil {
		return true, err
	}
	if d.kind() != kindBase {
		return true, errSymbol
	}
	if err := z.need(d.extra()); err != nil {
		return true, err
	}
	distance := int(d.value()) + int(z.take(d.extra()))
	if int64(distance) > z.produced+int64(len(z.out)-z.summed) {
		return true, errDistance
	}
	z.match(length, distance)
	return false, nil
}

// match copies length bytes from distance back, stopping early (and
// remembering the rest) when the window fills.
func (z *inflater) match(length, distance int) {
	for length > 0 && len(z.out) < cap(z.out) {
		k := min(length, distance, cap(z.out)-len(z.out))
		start := len(z.out) - distance
		z.out = append(z.out, z.out[start:start+k]...)
		length -= k
	}
	z.copyLen, z.copyDist = length, distance
}

func (z *inflater) trailer() error {
	z.take(z.nbits % 8)
	if err := z.need(32); err != nil {
		return err
	}
	sum := uint32(z.take(8))<<24 | uint32(z.take(8))<<16 | uint32(z.take(8))<<8 | uint32(z.take(8))
	if sum != z.adler {
		return errChecksum
	}
	z.state = stateDone
	return nil
}
