package insights

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Packed is a Totals in a compact binary form (Totals.AppendPacked,
// Packed.Unpack), for a holder of many: a sidecar keeps one per log. A
// small log's takes a few hundred bytes, which the garbage collector does
// not scan, where its Totals take 1,024 bytes and its Rankings' entries
// more, all of it scanned at every collection: holding Totals was about
// half of what insights cost a sidecar's small logs (docs/performance.md).
// It is not a file format: a Packed is read by the build that wrote it.
type Packed []byte

// errPacked is Unpack's error: p is not a Packed this build wrote.
var errPacked = errors.New("insights: not a packed Totals")

// ints lists the integer fields of t, in one order for AppendPacked and
// Unpack: everything but Logs, Modules, HDF5Names, Hosts and the Rankings.
func (t *Totals) ints() [numInts]*int64 {
	return [...]*int64{
		&t.STDIOBytesRead, &t.STDIOBytesWritten, &t.POSIXBytesRead, &t.POSIXBytesWritten,
		&t.MPIIOBytesRead, &t.MPIIOBytesWritten, &t.Reads, &t.Writes,
		&t.ReadBins[0], &t.ReadBins[1], &t.ReadBins[2], &t.ReadBins[3], &t.ReadBins[4],
		&t.ReadBins[5], &t.ReadBins[6], &t.ReadBins[7], &t.ReadBins[8], &t.ReadBins[9],
		&t.WriteBins[0], &t.WriteBins[1], &t.WriteBins[2], &t.WriteBins[3], &t.WriteBins[4],
		&t.WriteBins[5], &t.WriteBins[6], &t.WriteBins[7], &t.WriteBins[8], &t.WriteBins[9],
		&t.MemNotAligned, &t.FileNotAligned, &t.MaxByteRead, &t.MaxByteWritten,
		&t.ConsecReads, &t.ConsecWrites, &t.SeqReads, &t.SeqWrites,
		&t.SharedRecords, &t.SharedReads, &t.SharedWrites,
		&t.SharedReadBins[0], &t.SharedReadBins[1], &t.SharedReadBins[2], &t.SharedReadBins[3], &t.SharedReadBins[4],
		&t.SharedReadBins[5], &t.SharedReadBins[6], &t.SharedReadBins[7], &t.SharedReadBins[8], &t.SharedReadBins[9],
		&t.SharedWriteBins[0], &t.SharedWriteBins[1], &t.SharedWriteBins[2], &t.SharedWriteBins[3], &t.SharedWriteBins[4],
		&t.SharedWriteBins[5], &t.SharedWriteBins[6], &t.SharedWriteBins[7], &t.SharedWriteBins[8], &t.SharedWriteBins[9],
		&t.POSIXRecords, &t.MPIIORecords,
		&t.IndepReads, &t.CollReads, &t.SplitReads, &t.NBReads,
		&t.IndepWrites, &t.CollWrites, &t.SplitWrites, &t.NBWrites,
		&t.CBNodes,
	}
}

const numInts = 70

// AppendPacked appends the Packed form of t to b: its counts, a bit per
// integer field that is not zero (most are, in most logs) and those
// fields as varints, the hosts, and the Rankings that have entries.
func (t *Totals) AppendPacked(b []byte) Packed {
	b = binary.AppendUvarint(b, uint64(t.Logs))
	b = binary.AppendUvarint(b, t.Modules)
	flags := byte(0)
	if t.HDF5Names {
		flags = 1
	}
	b = append(b, flags)
	ints := t.ints()
	var set [2]uint64
	for i, p := range ints {
		if *p != 0 {
			set[i>>6] |= 1 << uint(i&63)
		}
	}
	b = binary.LittleEndian.AppendUint64(b, set[0])
	b = binary.LittleEndian.AppendUint64(b, set[1])
	for w, m := range set {
		for ; m != 0; m &= m - 1 {
			v := *ints[w<<6|bits.TrailingZeros64(m)]
			if u := uint64(v<<1) ^ uint64(v>>63); u < 0x80 { // most: one byte
				b = append(b, byte(u))
			} else {
				b = binary.AppendUvarint(b, u)
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(t.Hosts)))
	for _, h := range t.Hosts {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	rankings := t.rankings()
	var ranked uint16
	for i, r := range rankings {
		if r.N != 0 || len(r.Top) != 0 {
			ranked |= 1 << uint(i)
		}
	}
	b = binary.LittleEndian.AppendUint16(b, ranked)
	for i, r := range rankings {
		if ranked&(1<<uint(i)) == 0 {
			continue
		}
		b = binary.AppendVarint(b, r.N)
		b = binary.AppendUvarint(b, uint64(len(r.Top)))
		for _, e := range r.Top {
			b = appendEntry(b, &e)
		}
	}
	return b
}

// An entry is a tag byte, its value and aux, and its name when it has one.
// A value or aux that is a whole number below 2⁵³ (a count of requests, a
// rank, 0), most of them, is a uvarint, any other its 8 bytes: a small
// log's entries take a third of the bytes they took at 17 each.
const (
	tagValueWhole = 1 << iota // the value is a uvarint, else 8 bytes
	tagAuxWhole               // the aux is a uvarint, else 8 bytes
	tagNamed                  // a uvarint length and the name follow
	tagAll        = tagValueWhole | tagAuxWhole | tagNamed
)

func appendEntry(b []byte, e *Ranked) []byte {
	tag := byte(0)
	v, vWhole := whole(e.Value)
	a, aWhole := whole(e.Aux)
	if vWhole {
		tag |= tagValueWhole
	}
	if aWhole {
		tag |= tagAuxWhole
	}
	if e.Name != "" {
		tag |= tagNamed
	}
	b = append(b, tag)
	if vWhole {
		b = binary.AppendUvarint(b, v)
	} else {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Value))
	}
	if aWhole {
		b = binary.AppendUvarint(b, a)
	} else {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Aux))
	}
	if e.Name != "" {
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
	}
	return b
}

// whole returns x as a uint64 when that gives x back bit for bit (not −0,
// nor a fraction, a negative number or one of 2⁵³ or more).
func whole(x float64) (uint64, bool) {
	if !(x >= 0 && x < 1<<53) {
		return 0, false
	}
	u := uint64(x)
	return u, math.Float64bits(float64(u)) == math.Float64bits(x)
}

// Unpack sets *t to the Totals p holds. The Rankings' entries are written
// into the memory of those a Builder or an Unpack gave t before, when it
// is large enough (a Totals unpacked into again and again allocates
// nothing once grown): t must not share them with another Totals (a copy
// of the struct does). The names are new strings: t holds nothing of p.
// A p this build did not write is an error, and t is then empty.
func (p Packed) Unpack(t *Totals) error {
	d := unpacker{b: p}
	entries := t.entries[:0]
	*t = Totals{}
	t.Logs = int(d.uvarint())
	t.Modules = d.uvarint()
	t.HDF5Names = d.byte() == 1
	ints := t.ints()
	set := [2]uint64{d.uint64(), d.uint64()}
	if set[1]>>(numInts-64) != 0 {
		d.fail()
	}
	for w, m := range set {
		for ; m != 0 && !d.bad; m &= m - 1 {
			var u uint64
			if b := d.b; len(b) > 0 && b[0] < 0x80 { // most: one byte
				u, d.b = uint64(b[0]), b[1:]
			} else {
				u = d.longUvarint()
			}
			*ints[w<<6|bits.TrailingZeros64(m)] = int64(u>>1) ^ -int64(u&1)
		}
	}
	if n := d.count(8); n > 0 {
		t.Hosts = make([]uint64, n)
		for i := range t.Hosts {
			t.Hosts[i] = d.uint64()
		}
	}
	// The entries into one array, then each Ranking's slice of it (the
	// array may move while it grows).
	var lens [numRankings]int
	ranked := d.uint16()
	if ranked>>numRankings != 0 {
		d.fail()
	}
	for i, r := range t.rankings() {
		if ranked&(1<<uint(i)) == 0 || d.bad {
			continue
		}
		r.N = d.varint()
		lens[i] = d.count(3) // an entry takes at least a tag and two one-byte uvarints
		for range lens[i] {
			entries = append(entries, d.entry())
		}
	}
	if d.bad || len(d.b) != 0 {
		*t = Totals{}
		return errPacked
	}
	k := 0
	for i, r := range t.rankings() {
		if lens[i] > 0 {
			r.Top = entries[k : k+lens[i] : k+lens[i]]
			k += lens[i]
		}
	}
	t.entries = entries
	return nil
}

// unpacker reads a Packed; past its end or on a malformed number it reads
// zeros and sets bad.
type unpacker struct {
	b   []byte
	bad bool
}

func (d *unpacker) fail() { d.bad, d.b = true, nil }

// uvarint reads a uvarint; one of one byte, most of them, without
// binary.Uvarint.
func (d *unpacker) uvarint() uint64 {
	if b := d.b; len(b) != 0 && b[0] < 0x80 {
		d.b = b[1:]
		return uint64(b[0])
	}
	return d.longUvarint()
}

func (d *unpacker) longUvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads a varint (binary.AppendVarint's zig-zag encoding).
func (d *unpacker) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// bytes takes the next n bytes of p; nil (and bad) when fewer are left.
func (d *unpacker) bytes(n int) []byte {
	if len(d.b) < n {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *unpacker) byte() byte {
	if p := d.bytes(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *unpacker) uint16() uint16 {
	if p := d.bytes(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (d *unpacker) uint64() uint64 {
	if p := d.bytes(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// entry reads an entry (appendEntry).
func (d *unpacker) entry() (e Ranked) {
	tag := d.byte()
	if tag&^tagAll != 0 {
		d.fail()
		return e
	}
	if tag&tagValueWhole != 0 {
		e.Value = d.whole()
	} else {
		e.Value = math.Float64frombits(d.uint64())
	}
	if tag&tagAuxWhole != 0 {
		e.Aux = d.whole()
	} else {
		e.Aux = math.Float64frombits(d.uint64())
	}
	if tag&tagNamed != 0 {
		// A name is not empty: an empty one would pack otherwise.
		if k := d.count(1); k > 0 {
			e.Name = string(d.bytes(k))
		} else {
			d.fail()
		}
	}
	return e
}

// whole reads a number appendEntry wrote as a uvarint: one whole() gave.
func (d *unpacker) whole() float64 {
	u := d.uvarint()
	if u >= 1<<53 {
		d.fail()
		return 0
	}
	return float64(u)
}

// count reads a count of items of at least size bytes each: one the
// rest of p cannot hold is malformed (and is 0), so that no count makes
// Unpack allocate more than p's size.
func (d *unpacker) count(size int) int {
	n := d.uvarint()
	if rest := uint64(len(d.b)); n > rest || n*uint64(size) > rest { // n ≤ rest: no overflow
		d.fail()
		return 0
	}
	return int(n)
}

// totalsPool keeps the Totals that Builders fill and Packed gives back: a
// sidecar builds one per log and keeps only its Packed form.
var totalsPool = sync.Pool{New: func() any { return new(Totals) }}

// putTotals gives t back to totalsPool, holding nothing (NewBuilder sets
// the rest).
func putTotals(t *Totals) {
	t.Hosts, t.entries = nil, nil
	for _, r := range t.rankings() {
		r.Top = nil
	}
	totalsPool.Put(t)
}

// Packed returns the Packed form of the Totals of the records added, as
// Totals would return them (err: the damage met reading the records). The
// Builder is done with; where Totals gives the caller a new Totals and
// their entries, Packed allocates nothing but the Packed.
func (b *Builder) Packed(err error) (Packed, error) {
	if b.s == nil {
		panic("insights: Builder.Packed called after the Builder was done with")
	}
	s, t := b.s, b.t
	b.s = nil
	defer func() {
		b.t = nil
		b.clearTops(s, t)
		s.release()
		putTotals(t)
	}()
	if err != nil {
		return nil, err
	}
	b.offerFiles(s)
	// Packed into the scratch's buffer (the Rankings' entries are the
	// scratch's too), then copied into one allocation of its size: an
	// append from nothing made six, and left five as garbage.
	s.packed = t.AppendPacked(s.packed[:0])
	return Packed(slices.Clone(s.packed)), nil
}
