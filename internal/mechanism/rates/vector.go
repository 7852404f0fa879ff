package rates

import (
	"iter"
	"math/bits"
)

// Vector holds a counter per slot, only for the slots that have one: a
// bit per slot says which, and the values follow in slot order. A Lustre
// target prints a dozen to forty operations, two slots each, and a job
// uses a few of them: a dense slice per raw series and per identity was
// most of the exporter's memory at a hundred thousand jobs.
type Vector struct {
	lo uint64 // slots 0–63
	// hi are the slots from 64 on, 64 a word: nil on most targets, so a
	// pointer (8 bytes) rather than a slice (24) in every raw series and
	// identity.
	hi   *[]uint64
	vals []uint64
}

// index returns where slot's value is, or would be, in vals.
func (v *Vector) index(slot int) (i int, present bool) {
	if slot < 64 {
		bit := uint64(1) << uint(slot)
		return bits.OnesCount64(v.lo & (bit - 1)), v.lo&bit != 0
	}
	i = bits.OnesCount64(v.lo)
	if v.hi == nil {
		return i, false
	}
	hi := *v.hi
	w, bit := (slot-64)>>6, uint64(1)<<uint(slot&63)
	for k := 0; k < w && k < len(hi); k++ {
		i += bits.OnesCount64(hi[k])
	}
	if w >= len(hi) {
		return i, false
	}
	return i + bits.OnesCount64(hi[w]&(bit-1)), hi[w]&bit != 0
}

func (v *Vector) mark(slot int) {
	if slot < 64 {
		v.lo |= 1 << uint(slot)
		return
	}
	if v.hi == nil {
		v.hi = new([]uint64)
	}
	w := (slot - 64) >> 6
	for len(*v.hi) <= w {
		*v.hi = append(*v.hi, 0)
	}
	(*v.hi)[w] |= 1 << uint(slot&63)
}

// Has reports whether slot has a value.
func (v *Vector) Has(slot int) bool {
	if slot < 64 {
		return v.lo&(1<<uint(slot)) != 0
	}
	_, ok := v.index(slot)
	return ok
}

// Get returns the value of slot, and whether it has one.
func (v *Vector) Get(slot int) (uint64, bool) {
	i, ok := v.index(slot)
	if !ok {
		return 0, false
	}
	return v.vals[i], true
}

// Set gives slot the value x.
func (v *Vector) Set(slot int, x uint64) {
	i, ok := v.index(slot)
	if ok {
		v.vals[i] = x
		return
	}
	v.mark(slot)
	if len(v.vals) == cap(v.vals) {
		// A little room, not append's doubling: a vector rarely gains a
		// slot after its first run.
		grown := make([]uint64, len(v.vals), len(v.vals)+max(2, len(v.vals)/4))
		copy(grown, v.vals)
		v.vals = grown
	}
	v.vals = v.vals[:len(v.vals)+1]
	copy(v.vals[i+1:], v.vals[i:])
	v.vals[i] = x
}

// Swap gives slot the value x and returns the value it had, if any. A
// slot without a value gets none for a zero: to a counter, no value and
// zero are the same, and most of a job's operations stay at zero.
func (v *Vector) Swap(slot int, x uint64) (prev uint64, had bool) {
	i, ok := v.index(slot)
	switch {
	case ok:
		prev, v.vals[i] = v.vals[i], x
		return prev, true
	case x != 0:
		v.Set(slot, x)
	}
	return 0, false
}

// Add adds d to the value of slot, which starts at zero; a slot still
// zero takes no room.
func (v *Vector) Add(slot int, d uint64) {
	i, ok := v.index(slot)
	switch {
	case ok:
		v.vals[i] += d
	case d != 0:
		v.Set(slot, d)
	}
}

// Sub takes d back from slot, which must hold at least d: an increment
// added earlier that is moved to another counter.
func (v *Vector) Sub(slot int, d uint64) {
	if i, ok := v.index(slot); ok {
		v.vals[i] -= d
	}
}

// Reserve makes room for n values in all, so that a vector filled slot
// by slot is allocated once.
func (v *Vector) Reserve(n int) {
	if n > cap(v.vals) {
		grown := make([]uint64, len(v.vals), n)
		copy(grown, v.vals)
		v.vals = grown
	}
}

// Len returns the number of slots with a value.
func (v *Vector) Len() int { return len(v.vals) }

// All iterates over the slots with a value and their values, in slot
// order.
func (v *Vector) All() iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		i := 0
		for w, m := range v.words() {
			for ; m != 0; m &= m - 1 {
				if !yield(w*64+bits.TrailingZeros64(m), v.vals[i]) {
					return
				}
				i++
			}
		}
	}
}

// words iterates over the mask words, slot 0 first.
func (v *Vector) words() iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		if !yield(0, v.lo) {
			return
		}
		if v.hi == nil {
			return
		}
		for k, m := range *v.hi {
			if !yield(k+1, m) {
				return
			}
		}
	}
}

// emptied returns v without values, keeping the room of its values.
func (v Vector) emptied() Vector {
	return Vector{vals: v.vals[:0]}
}
