package darshan

import "math/bits"

// Huffman decoding tables for the inflater: a primary table indexed by the
// next root bits of input, whose entries either decode a symbol or point to
// a subtable for the longer codes sharing that prefix.

// entry packs a table entry:
//
//	bits 0-4   code length: input bits the entry consumes (for an invalid
//	           entry, the bits needed to know the code is invalid)
//	bits 8-11  extra bits that follow (base entries), or subtable index bits
//	bits 12-13 kind of an exceptional entry: subtable link, end, invalid
//	bit 14     exceptional: not a literal, length or distance
//	bit 15     literal
//	bits 16-31 value: literal byte, base length or distance, subtable offset
//
// The decoding loop tests the two flag bits first: most entries are
// literals or bases found in the primary table.
type entry uint32

const (
	kindLiteral = iota
	kindBase    // length or distance: value + extra bits
	kindEnd     // end of block
	kindSub     // link to a subtable
	kindInvalid // an unused code

	flagExceptional entry = 1 << 14
	flagLiteral     entry = 1 << 15
)

func mkEntry(length uint, kind int, extra uint, value int) entry {
	e := entry(uint32(length) | uint32(extra)<<8 | uint32(value)<<16)
	switch kind {
	case kindLiteral:
		e |= flagLiteral
	case kindSub:
		e |= flagExceptional
	case kindEnd:
		e |= flagExceptional | 1<<12
	case kindInvalid:
		e |= flagExceptional | 2<<12
	}
	return e
}

func (e entry) length() uint  { return uint(e & 31) }
func (e entry) extra() uint   { return uint(e>>8) & 15 }
func (e entry) value() uint32 { return uint32(e >> 16) }

func (e entry) kind() int {
	switch {
	case e&flagLiteral != 0:
		return kindLiteral
	case e&flagExceptional == 0:
		return kindBase
	}
	return [...]int{kindSub, kindEnd, kindInvalid, kindInvalid}[(e>>12)&3]
}

// isSub reports whether e links to a subtable.
func (e entry) isSub() bool { return e&(flagExceptional|3<<12) == flagExceptional }

// Primary table sizes: a region is often many small streams (one per
// rank) of one dynamic block each, so building tables costs as much as
// decoding; these are zlib's sizes.
const (
	litRoot  = 10 // primary index bits of literal/length tables
	distRoot = 6  // primary index bits of distance tables
)

type huffTable struct {
	root    uint
	entries []entry
}

// lookup returns the entry for the next input bits.
func (t *huffTable) lookup(b uint64) entry {
	e := t.entries[b&(1<<t.root-1)]
	if e.isSub() {
		e = t.entries[int(e.value())+int((b>>t.root)&(1<<e.extra()-1))]
	}
	return e
}

// Bases and extra bits of the length (symbols 257-285) and distance codes.
var (
	lengthBase  = [29]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// The entries of each alphabet's symbols, without their code length (the
// builder ORs it in): looking them up costs less than deciding per symbol.
var (
	litAlphabet, distAlphabet, codeAlphabet = alphabets()
	invalidSymbol                           = mkEntry(0, kindInvalid, 0, 0)
)

func alphabets() (lit [288]entry, dist [32]entry, code [19]entry) {
	for sym := range lit {
		switch {
		case sym < 256:
			lit[sym] = mkEntry(0, kindLiteral, 0, sym)
		case sym == 256:
			lit[sym] = mkEntry(0, kindEnd, 0, 0)
		case sym <= 285:
			lit[sym] = mkEntry(0, kindBase, lengthExtra[sym-257], lengthBase[sym-257])
		default:
			lit[sym] = mkEntry(0, kindInvalid, 0, 0)
		}
	}
	for sym := range dist {
		dist[sym] = mkEntry(0, kindInvalid, 0, 0)
		if sym < 30 {
			dist[sym] = mkEntry(0, kindBase, distExtra[sym], distBase[sym])
		}
	}
	for sym := range code {
		code[sym] = mkEntry(0, kindLiteral, 0, sym)
	}
	return lit, dist, code
}

// build makes the table of the canonical Huffman code with the given code
// lengths (0: unused symbol); alphabet holds each symbol's entry. It
// rejects over-subscribed codes and incomplete ones, except, as zlib does,
// an empty code and — when single is set (literal/length and distance
// codes) — a code of a single 1-bit symbol.
//
// Symbols are taken in canonical order (by length, then symbol); each code
// is bit-reversed to index the table directly, since deflate sends codes
// most significant bit first into a least-significant-first bit buffer.
// Codes longer than root continue in a subtable per root-bit prefix, sized
// for the codes that share that prefix.
//
// A region is often a thousand small streams of one dynamic block each,
// so building costs as much as decoding: the loops are per length, with
// no per-symbol calls.
func (t *huffTable) build(lens []uint8, root uint, alphabet []entry, single bool) bool {
	t.root = root
	// The counts in four arrays: one array would make each increment wait
	// for the one before whenever lengths repeat, as they mostly do.
	var c0, c1, c2, c3 [16]uint16
	n4 := len(lens) &^ 3
	for i := 0; i < n4; i += 4 {
		c0[lens[i]&15]++
		c1[lens[i+1]&15]++
		c2[lens[i+2]&15]++
		c3[lens[i+3]&15]++
	}
	for _, l := range lens[n4:] {
		c0[l&15]++
	}
	var count [16]int
	for l := 1; l < 16; l++ {
		count[l] = int(c0[l]) + int(c1[l]) + int(c2[l]) + int(c3[l])
	}
	maxLen := 0
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false // over-subscribed
		}
		if count[l] != 0 {
			maxLen = l
		}
	}
	if left > 0 && maxLen > 0 && !(single && maxLen == 1) {
		return false // incomplete
	}
	size := 1 << root
	if left == 0 && maxLen > 0 && maxLen <= int(root)-2 {
		t.placeShort(lens, &count, maxLen, alphabet)
		return true
	}
	// symbols in canonical order
	var offs [17]int
	for l := 1; l <= 15; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [320]uint16
	for sym, l := range lens {
		if l != 0 { // unused symbols, in runs, are skipped
			sorted[offs[l&15]] = uint16(sym)
			offs[l&15]++
		}
	}

	if cap(t.entries) < size {
		t.entries = make([]entry, size, 4*size)
	}
	t.entries = t.entries[:size]
	complete := left == 0
	if !complete { // some entries stay unused
		invalid := invalidSymbol | entry(root)
		for i := range t.entries {
			t.entries[i] = invalid
		}
	}
	code := 0    // canonical code, most significant bit first
	next := 0    // index in sorted of the next symbol
	filled := 0  // complete codes: entries[:1<<filled] are placed
	prefix := -1 // root-bit prefix of the current subtable
	sub, subBase := 0, 0
	for l := 1; l <= maxLen; l++ {
		n := count[l]
		if l <= int(root) {
			if complete && n > 0 {
				// The primary table is filled by doubling: the codes of
				// length l go to their index below 1<<l, after the first
				// 1<<filled entries were copied up to 1<<l, so each short
				// code reaches all its indexes through a few memmoves.
				// Undecided slots are prefixes of longer codes, overwritten
				// at their own length.
				if filled == 0 {
					filled = l
				}
				for ; filled < l; filled++ {
					copy(t.entries[1<<filled:2<<filled], t.entries[:1<<filled])
				}
			}
			for _, sym := range sorted[next : next+n] {
				e := alphabet[sym] | entry(l)
				r := reverse(code, l)
				if complete {
					t.entries[r] = e
				} else {
					for k := r; k < size; k += 1 << l {
						t.entries[k] = e
					}
				}
				code++
			}
			next += n
			code <<= 1
			continue
		}
		if complete && filled > 0 {
			for ; filled < int(root); filled++ {
				copy(t.entries[1<<filled:2<<filled], t.entries[:1<<filled])
			}
		}
		for _, sym := range sorted[next : next+n] {
			e := alphabet[sym] | entry(l)
			r := reverse(code, l)
			if p := r & (size - 1); p != prefix {
				// a new subtable: as many index bits as the codes that
				// start with this prefix need (zlib's inflate_table);
				// count holds the codes still to place
				prefix = p
				sub = l - int(root)
				room := 1 << sub
				for sub+int(root) < maxLen {
					room -= count[sub+int(root)]
					if room <= 0 {
						break
					}
					sub++
					room <<= 1
				}
				subBase = len(t.entries)
				t.entries[p] = mkEntry(root, kindSub, uint(sub), subBase)
				if end := subBase + 1<<sub; complete && end <= cap(t.entries) {
					t.entries = t.entries[:end] // a complete code fills every entry
				} else {
					fill := invalidSymbol | entry(int(root)+sub)
					for range 1 << sub {
						t.entries = append(t.entries, fill)
					}
				}
			}
			for k := r >> root; k < 1<<sub; k += 1 << (l - int(root)) {
				t.entries[subBase+k] = e
			}
			count[l]--
			code++
		}
		next += n
		code <<= 1
	}
	if complete && filled > 0 {
		for ; filled < int(root); filled++ {
			copy(t.entries[1<<filled:2<<filled], t.entries[:1<<filled])
		}
	}
	return true
}

// placeShort fills the table of a complete code whose codes are all
// shorter than the primary table's index (maxLen <= root-2 bits: the
// codes of the small streams of a LUSTRE region, say), without sorting
// the symbols: each symbol, in symbol order, takes the next canonical code
// of its length and fills its entries among the first 1<<maxLen, which the
// table then repeats up to its size. Longer codes are left to build's
// sorted placement: a code of a few bits fills many entries one at a time
// here, where build copies them in blocks (halving the build of a LUSTRE
// region's tables, doubling that of a HEATMAP region's, whose codes reach
// 9 and 10 bits, when used for them).
func (t *huffTable) placeShort(lens []uint8, count *[16]int, maxLen int, alphabet []entry) {
	size := 1 << t.root
	if cap(t.entries) < size {
		t.entries = make([]entry, size, 4*size)
	}
	t.entries = t.entries[:size]
	var next [16]int // the next canonical code of each length
	code := 0
	for l := 1; l <= maxLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	span := 1 << maxLen
	entries := t.entries[:span]
	for sym, l := range lens {
		if l == 0 {
			continue
		}
		l &= 15
		e := alphabet[sym] | entry(l)
		r := reverse(next[l], int(l))
		next[l]++
		for k := r; k < span; k += 1 << l {
			entries[k] = e
		}
	}
	for filled := span; filled < size; filled *= 2 {
		copy(t.entries[filled:2*filled], t.entries[:filled])
	}
}

// reverse returns the l low bits of code in reverse order.
func reverse(code, l int) int {
	return int(bits.Reverse16(uint16(code)) >> (16 - l))
}

// The tables of fixed Huffman blocks (RFC 1951 3.2.6).
var fixedLit, fixedDist = func() (huffTable, huffTable) {
	var lit, dist huffTable
	var ll [288]uint8
	for i := range ll {
		switch {
		case i < 144:
			ll[i] = 8
		case i < 256:
			ll[i] = 9
		case i < 280:
			ll[i] = 7
		default:
			ll[i] = 8
		}
	}
	var dl [32]uint8
	for i := range dl {
		dl[i] = 5
	}
	if !lit.build(ll[:], litRoot, litAlphabet[:], true) || !dist.build(dl[:], distRoot, distAlphabet[:], true) {
		panic("darshan: fixed Huffman tables")
	}
	return lit, dist
}()
