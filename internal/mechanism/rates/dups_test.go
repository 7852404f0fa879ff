package rates

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// dupEntry is one printed entry of a key: its start time and its values,
// by slot; a slot missing from vals was not printed (a malformed line).
type dupEntry struct {
	start   float64
	vals    map[int]uint64
	partial bool // an operation left out
}

// refSeries is the reference's state of one key: what the rule of dups.go
// says, computed from each whole output at once rather than entry by entry.
type refSeries struct {
	last        map[int]uint64 // slots with a value
	lo, hi      float64
	entries     int
	identity    string
	pendingOnce bool
}

// refRun applies one output's entries of a key to its reference state and
// returns the increments, by slot.
func refRun(st *refSeries, es []dupEntry) map[int]uint64 {
	d := map[int]uint64{}
	isNew := st.last == nil
	if isNew {
		st.last = map[int]uint64{}
	}
	// Restart: every entry started outside the last output's span.
	restart := !isNew && st.lo != 0
	for _, e := range es {
		restart = restart && e.start != 0 && (e.start < st.lo || e.start > st.hi)
	}
	sums := map[int]uint64{}
	printed := map[int]bool{}
	for _, e := range es {
		for slot, v := range e.vals {
			sums[slot] += v
			printed[slot] = true
		}
	}
	multi := len(es) > 1 || st.entries > 1
	for slot := range printed {
		sum := sums[slot]
		prev, seen := st.last[slot]
		switch {
		case !seen || restart:
			d[slot] = sum
		case sum >= prev:
			d[slot] = sum - prev
		case multi:
			d[slot] = 0
		default:
			d[slot] = sum
		}
		if seen || sum != 0 {
			st.last[slot] = sum
		}
	}
	// The span of this output, as Observe and again keep it.
	if es[0].start != 0 {
		st.lo = es[0].start
	}
	st.hi = st.lo
	for _, e := range es[1:] {
		if e.start != 0 {
			st.hi = max(st.hi, e.start)
			if st.lo == 0 || e.start < st.lo {
				st.lo = e.start
			}
		}
	}
	st.entries = len(es)
	return d
}

// The streaming sum of duplicate entries (Set counting the first entry
// before it knows of the others, corrections after) ends each run where
// the rule applied to the whole output ends, whatever the order of the
// entries, however they restart, shrink, vanish or skip a slot.
func TestDuplicatesMatchTheRule(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { dupHistory(t, seed, false) })
	}
}

// Past maxResets, a later entry of a key whose first entry restarted does
// not know the values before the run: the increments are then never more
// than the rule's, and totals still never go down.
func TestDuplicatesPastTheJournal(t *testing.T) {
	saved := maxResets
	defer func() { maxResets = saved }()
	for seed := range uint64(60) {
		maxResets = int(seed % 4)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { dupHistory(t, seed, true) })
	}
}

func dupHistory(t *testing.T, seed uint64, short bool) {
	r := rand.New(rand.NewPCG(seed, 0xd0b))
	const nKeys, nSlots = 4, 5
	withStart := r.IntN(4) != 0
	// Five of 70 slots, some past 64.
	slots := r.Perm(70)[:nSlots]
	// Each key has up to three live entries; each entry counts up, restarts,
	// and comes and goes.
	type live struct {
		start float64
		vals  map[int]uint64
	}
	src := make([][]*live, nKeys)
	acc := New[string, struct{}](time.Hour)
	acc.TrackDelta = true
	ref := map[string]*refSeries{}
	want := map[string]map[int]uint64{} // identity → slot → total
	ident := map[string]string{}        // key → the identity it feeds
	gotBefore := map[string]map[int]uint64{}
	now := time.Unix(1_700_000_000, 0)
	clock := 1000.0
	var g *Group[string, struct{}]
	for run := range 40 {
		now = now.Add(30 * time.Second)
		clock += 30
		acc.BeginRun(now)
		g = acc.Group("g")
		for s := range 70 {
			g.TrackDelta(g.Slot(fmt.Sprint("slot", s)))
		}
		var out []struct {
			key string
			e   dupEntry
		}
		for k := range src {
			// Entries come, go, restart, grow.
			if len(src[k]) < 3 && r.IntN(4) == 0 {
				src[k] = append(src[k], &live{start: clock - float64(r.IntN(5)), vals: map[int]uint64{}})
			}
			kept := src[k][:0]
			for _, e := range src[k] {
				switch x := r.IntN(20); {
				case x == 0:
					continue // cleaned up
				case x == 1:
					e.start, e.vals = clock, map[int]uint64{} // restarted
				case x == 2:
					for s := range e.vals {
						e.vals[s] /= 2 // counters restart, start unchanged
					}
				}
				for _, s := range slots {
					if r.IntN(3) > 0 {
						e.vals[s] += uint64(r.IntN(100))
					}
				}
				kept = append(kept, e)
			}
			src[k] = kept
			for _, e := range src[k] {
				de := dupEntry{start: e.start, vals: map[int]uint64{}}
				if !withStart {
					de.start = 0
				}
				for _, s := range slots {
					// Every operation, zeros too, as Lustre prints them; a
					// malformed line now and then leaves one out.
					if r.IntN(15) == 0 {
						de.partial = true
						continue
					}
					de.vals[s] = e.vals[s]
				}
				out = append(out, struct {
					key string
					e   dupEntry
				}{fmt.Sprint("k", k), de})
			}
		}
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		byKey := map[string][]dupEntry{}
		for _, o := range out {
			byKey[o.key] = append(byKey[o.key], o.e)
			s, _ := g.Observe([]byte(o.key), o.e.start)
			if o.e.partial {
				g.Partial(s) // as the tracker says it
			}
			if s.Entries() != len(byKey[o.key]) {
				t.Fatalf("run %d: %s: %d entries, want %d", run, o.key, s.Entries(), len(byKey[o.key]))
			}
			for _, slot := range slots {
				if v, ok := o.e.vals[slot]; ok {
					g.Set(s, slot, v)
				}
			}
		}
		g.EndSection(true)
		for _, s := range g.Pending() {
			g.Resolve(s, "id-"+s.Key, true)
		}
		// Held keys (an id counted under an aggregate, waiting for a
		// repair): this run's increments go where the end of the run
		// says, rebound to another identity or not.
		countedIn := map[string]string{}
		for key := range byKey {
			ser := g.series[key]
			countedIn[key] = ident[key]
			if ident[key] == "" {
				countedIn[key] = "id-" + key // resolved just now
				ident[key] = countedIn[key]
				continue
			}
			if ser.flags&flagHeld != 0 && r.IntN(3) == 0 {
				ident[key] = "alt-" + key
				g.Rebind(ser, ident[key])
				countedIn[key] = ident[key]
			}
			if r.IntN(5) == 0 {
				g.Hold(ser, ser.flags&flagHeld == 0)
			}
		}
		acc.EndRun()
		// The reference: keys gone from the output are forgotten.
		for key := range ref {
			if _, ok := byKey[key]; !ok {
				delete(ref, key)
				delete(ident, key)
			}
		}
		for key, es := range byKey {
			st := ref[key]
			if st == nil {
				st = &refSeries{}
				ref[key] = st
			}
			id := countedIn[key]
			if want[id] == nil {
				want[id] = map[int]uint64{}
			}
			for slot, d := range refRun(st, es) {
				want[id][slot] += d
			}
		}
		for _, id := range g.Identities() {
			for slot := range g.SlotNames() {
				got, w := id.Total(slot), want[id.Key][slot]
				switch {
				case !short && got != w:
					t.Fatalf("run %d (start times %v): %s slot %d = %d, the rule says %d", run, withStart, id.Key, slot, got, w)
				case short && got > w:
					t.Fatalf("run %d (start times %v, journal of %d): %s slot %d = %d, more than the rule's %d", run, withStart, maxResets, id.Key, slot, got, w)
				case short && got < gotBefore[id.Key][slot]:
					t.Fatalf("run %d: %s slot %d went down from %d to %d", run, id.Key, slot, gotBefore[id.Key][slot], got)
				}
				if short {
					// Compare increments from here on: the rule's total
					// restarts from what was counted.
					if gotBefore[id.Key] == nil {
						gotBefore[id.Key] = map[int]uint64{}
					}
					gotBefore[id.Key][slot] = got
					want[id.Key][slot] = got
				}
			}
		}
	}
}

// Two entries of one key whose order swaps between outputs count their
// sum, not a restart each time the other comes first.
func TestDuplicateOrderSwap(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	now := time.Unix(1_700_000_000, 0)
	type e struct {
		start float64
		v     uint64
	}
	runs := [][]e{{{10, 1000}, {20, 50}}, {{20, 50}, {10, 1050}}, {{10, 1050}, {20, 100}}}
	want := []uint64{1050, 1100, 1150}
	for i, entries := range runs {
		now = now.Add(time.Minute)
		acc.BeginRun(now)
		g := acc.Group("g")
		for _, x := range entries {
			s, _ := g.Observe([]byte("a"), x.start)
			g.Set(s, g.Slot("x"), x.v)
		}
		g.EndSection(true)
		for _, p := range g.Pending() {
			g.Resolve(p, "job", true)
		}
		acc.EndRun()
		if got := g.Identities()[0].Total(0); got != want[i] {
			t.Errorf("run %d: total %d, want %d", i, got, want[i])
		}
	}
}

// A duplicate cleaned up while the other entry carries on takes nothing
// back and counts nothing twice: the sum shrinks, and a key printed more
// than once does not read a shrink as a reset.
func TestDuplicateGone(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	now := time.Unix(1_700_000_000, 0)
	runs := [][]uint64{{1000, 50}, {1000, 80}, {90}, {95}, {20}}
	// 1050; +30; the idle 1000 cleaned up: nothing (not 90 again); +5; a
	// single entry's reset: +20.
	want := []uint64{1050, 1080, 1080, 1085, 1105}
	for i, vals := range runs {
		now = now.Add(time.Minute)
		acc.BeginRun(now)
		g := acc.Group("g")
		for _, v := range vals {
			s, _ := g.Observe([]byte("a"), 0)
			g.Set(s, g.Slot("x"), v)
		}
		g.EndSection(true)
		for _, p := range g.Pending() {
			g.Resolve(p, "job", true)
		}
		acc.EndRun()
		if got := g.Identities()[0].Total(0); got != want[i] {
			t.Errorf("run %d: total %d, want %d", i, got, want[i])
		}
	}
}

// A held series' increments of a run count where the caller puts it at the
// end of the run: under the identity it is rebound to, or, without a
// rebind, where it was attached.
func TestHeldUntilRebound(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	acc.TrackDelta = true
	now := time.Unix(1_700_000_000, 0)
	var g *Group[string, struct{}]
	var s *Series[string, struct{}]
	total := func(key string) uint64 {
		for _, id := range g.Identities() {
			if id.Key == key {
				return id.Total(0)
			}
		}
		return 0
	}
	for i, v := range []uint64{100, 250, 400, 450} {
		now = now.Add(time.Minute)
		acc.BeginRun(now)
		g = acc.Group("g")
		g.TrackDelta(g.Slot("x"))
		s, _ = g.Observe([]byte("cut"), 0)
		g.Set(s, 0, v)
		if held := map[int]uint64{1: 100, 2: 250}; held[i] != 0 && total("bucket")+total("job") != held[i] {
			t.Fatalf("run %d: the held increment counted before the end of the run", i)
		}
		g.EndSection(true)
		switch i {
		case 0:
			g.Resolve(s, "bucket", true)
			g.Hold(s, true)
		case 2:
			g.Rebind(s, "job")
		}
		acc.EndRun()
		w := map[int][2]uint64{0: {100, 0}, 1: {250, 0}, 2: {250, 150}, 3: {250, 200}}[i]
		if total("bucket") != w[0] || total("job") != w[1] {
			t.Errorf("run %d: bucket %d, job %d; want %v", i, total("bucket"), total("job"), w)
		}
		if c := g.Counted()[0]; c != v {
			t.Errorf("run %d: counted %d, want %d", i, c, v)
		}
	}
	if s.flags&flagHeld != 0 {
		t.Error("still held after Rebind")
	}
}
