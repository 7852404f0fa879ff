package rates

import (
	"math/rand/v2"
	"testing"
)

// A Vector holds what a dense slice would, whatever the order slots are
// set in, past 64 slots too.
func TestVectorAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		slots := 1 + rng.IntN(200)
		var v Vector
		dense := make([]uint64, slots)
		has := make([]bool, slots)
		for range rng.IntN(400) {
			slot := rng.IntN(slots)
			x := rng.Uint64N(1000)
			if rng.IntN(4) == 0 {
				x = 0
			}
			switch rng.IntN(3) {
			case 0:
				v.Set(slot, x)
				dense[slot], has[slot] = x, true
			case 1:
				prev, had := v.Swap(slot, x)
				if had != has[slot] || prev != dense[slot] {
					t.Fatalf("round %d: Swap(%d) = %d, %v; want %d, %v", round, slot, prev, had, dense[slot], has[slot])
				}
				dense[slot], has[slot] = x, has[slot] || x != 0
			case 2:
				v.Add(slot, x)
				dense[slot] += x
				has[slot] = has[slot] || x != 0
			}
		}
		n := 0
		for slot := range slots {
			got, ok := v.Get(slot)
			if ok != has[slot] || got != dense[slot] {
				t.Fatalf("round %d: slot %d = %d, %v; want %d, %v", round, slot, got, ok, dense[slot], has[slot])
			}
			if ok {
				n++
			}
		}
		prev := -1
		for slot, x := range v.All() {
			if slot <= prev || !has[slot] || x != dense[slot] {
				t.Fatalf("round %d: All gave slot %d = %d after %d", round, slot, x, prev)
			}
			prev = slot
			n--
		}
		if n != 0 || v.Len() != len(v.vals) {
			t.Fatalf("round %d: All missed %d slots", round, n)
		}
	}
}
