package darshan

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
	// alphabet turns a symbol and its code length into an entry.
	alphabet func(sym int, length uint) entry
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

func litSymbol(sym int, length uint) entry {
	switch {
	case sym < 256:
		return mkEntry(length, kindLiteral, 0, sym)
	case sym == 256:
		return mkEntry(length, kindEnd, 0, 0)
	case sym <= 285:
		return mkEntry(length, kindBase, lengthExtra[sym-257], lengthBase[sym-257])
	}
	return mkEntry(length, kindInvalid, 0, 0)
}

func distSymbol(sym int, length uint) entry {
	if sym < 30 {
		return mkEntry(length, kindBase, distExtra[sym], distBase[sym])
	}
	return mkEntry(length, kindInvalid, 0, 0)
}

func codeSymbol(sym int, length uint) entry { return mkEntry(length, kindLiteral, 0, sym) }

// build makes the table of the canonical Huffman code with the given code
// lengths (0: unused symbol) over alphabet. It rejects over-subscribed codes
// and incomplete ones, except, as zlib does, an empty code and — when
// single is set (literal/length and distance codes) — a code of a single
// 1-bit symbol.
//
// Symbols are taken in canonical order (by length, then symbol) and their
// codes are counted in bit-reversed form, so that each code indexes the
// table directly; codes longer than root continue in a subtable per
// root-bit prefix, sized for the codes that share that prefix.
func (t *huffTable) build(lens []uint8, root uint, alphabet func(int, uint) entry, single bool) bool {
	t.root, t.alphabet = root, alphabet
	var count [16]int
	maxLen := uint(0)
	for _, l := range lens {
		count[l]++
		maxLen = max(maxLen, uint(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false // over-subscribed
		}
	}
	if left > 0 && maxLen > 0 && !(single && maxLen == 1) {
		return false // incomplete
	}
	// symbols in canonical order
	var offs [16]int
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [320]uint16
	for sym, l := range lens {
		if l != 0 {
			sorted[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	n := offs[15]

	size := 1 << root
	if cap(t.entries) < size {
		t.entries = make([]entry, size, 4*size)
	}
	t.entries = t.entries[:size]
	if left > 0 { // incomplete: some entries stay unused
		invalid := mkEntry(root, kindInvalid, 0, 0)
		for i := range t.entries {
			t.entries[i] = invalid
		}
	}
	code := 0    // bit-reversed canonical code of the current symbol
	prefix := -1 // root-bit prefix of the current subtable
	sub, subBase := uint(0), 0
	// For a complete code the primary table is filled by doubling: the
	// codes of length l go to their index below 1<<l, and before the codes
	// of length l+1 the first 1<<l entries are copied to the next 1<<l, so
	// that each short code ends up at all its indexes through a few
	// memmoves instead of strided writes. Slots not yet decided are
	// prefixes of longer codes, overwritten at their own length.
	filled := uint(0) // entries[:1<<filled] are placed (complete codes)
	double := func(to uint) {
		if filled == 0 {
			filled = to // nothing placed yet: nothing to copy
		}
		for ; filled < to; filled++ {
			copy(t.entries[1<<filled:2<<filled], t.entries[:1<<filled])
		}
	}
	for i := range n {
		sym := int(sorted[i])
		l := uint(lens[sym])
		e := alphabet(sym, l)
		if l <= root {
			if left == 0 {
				double(l)
				t.entries[code] = e
			} else {
				for k := code; k < size; k += 1 << l {
					t.entries[k] = e
				}
			}
		} else {
			if left == 0 {
				double(root)
			}
			if p := code & (size - 1); p != prefix {
				// a new subtable: as many index bits as the codes that
				// start with this prefix need (zlib's inflate_table)
				prefix = p
				sub = l - root
				room := 1 << sub
				for sub+root < maxLen {
					room -= count[sub+root]
					if room <= 0 {
						break
					}
					sub++
					room <<= 1
				}
				subBase = len(t.entries)
				t.entries[p] = mkEntry(root, kindSub, sub, subBase)
				if end := subBase + 1<<sub; left == 0 && end <= cap(t.entries) {
					t.entries = t.entries[:end] // a complete code fills every entry
				} else {
					fill := mkEntry(root+sub, kindInvalid, 0, 0)
					for range 1 << sub {
						t.entries = append(t.entries, fill)
					}
				}
			}
			for k := code >> root; k < 1<<sub; k += 1 << (l - root) {
				t.entries[subBase+k] = e
			}
		}
		count[l]-- // the subtable sizing above counts the codes still to place
		// next code in bit-reversed order
		step := 1 << (l - 1)
		for code&step != 0 {
			step >>= 1
		}
		if step == 0 {
			code = 0
		} else {
			code = code&(step-1) + step
		}
	}
	if left == 0 && n > 0 {
		double(root)
	}
	return true
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
	if !lit.build(ll[:], litRoot, litSymbol, true) || !dist.build(dl[:], distRoot, distSymbol, true) {
		panic("darshan: fixed Huffman tables")
	}
	return lit, dist
}()
