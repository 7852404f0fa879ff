package rates

import (
	"math"
	"math/bits"
)

// A damaged job_stats output can print one job_id twice for a target:
// two entries whose ids the parser reads alike, or a genuine second entry
// after an id was reused. Neither entry is the series: their sum is. The
// entries of a key are summed within the output, whatever their order,
// and the sum goes through the δ rule as one series would:
//
//	δ = S − S′  while the sum grows, which is exact while every entry grows
//	             (and when an entry is added: it counts whole, as it should);
//	δ = S       when every entry started (start_time) after all those of
//	             the last output: they all restarted;
//	δ = 0       when the sum of a key printed more than once (now or in its
//	             last output) shrinks otherwise.
//
// The rule cannot tell the entries apart from one output to the next (they
// have one key, and ≤ 2.12 prints no start_time), so it is conservative: it
// never counts more than the entries did, and counts less only when one of
// them restarted or was cleaned up while another carried on. What that
// costs, with entries A and B of one job_id:
//
//   - A cleaned up (an idle duplicate, the usual end of a reused id) while
//     B grows: the sum falls by A's value. When it still grows, B's growth
//     less A's value is counted; when it shrinks, nothing (the rule of one
//     series, a reset, would count B's whole value again: a spike of all
//     B ever did).
//   - A restarting (a new start_time, or counters from zero) while B
//     grows: likewise, B's growth less A's old value, or nothing.
//   - A and B both cleared and made again between two outputs on ≤ 2.12
//     (lctl set_param …job_stats=clear): their new values are not counted.
//
// Each loses at most the key's true increment over that one interval
// (what is counted is never below zero nor above it); a key printed once
// is counted by the rule of one series, as before.
//
// Set counts the first entry of a key as it comes, before anyone knows
// another follows. The increments a later entry changes are those Set
// counted whole or not at all (a restart, a value gone down): for them it
// keeps the value before the run, and a later entry corrects the count.
// The common case, a key printed once that grows, keeps nothing; a key
// printed once that restarts keeps its old values in the accumulator's
// journal, a slice made once and reused from run to run, up to maxResets
// values a run. Past that (a server whose counters all went down
// at once), a later entry of such a key does not know the values before
// the run, and counts the least the rule could: nothing, unless every
// entry restarted. A key printed more than once in the last output keeps
// its values in its note, exactly.

// maxResets bounds the journal: 4,096 values (96 KiB, made once, at the
// first restart), the slots of some 200 entries restarting between two
// scrapes, far more than a server's counters do short of a mass reset.
// (A variable for the tests of what happens past it.)
var maxResets = 1 << 12

// resetRec is one value before the run of a slot of s that Set counted
// whole or not at all; slot -1 holds the start time of s's last output
// (the bits of a float64).
type resetRec[K comparable, M any] struct {
	s    *Series[K, M]
	slot int32
	prev uint64
}

// The flags of a series.
const (
	// flagRestart: every entry of the key in this run so far started
	// outside the start times of its last output: every slot restarted.
	flagRestart uint8 = 1 << iota
	// flagHeld: its increments wait in its note until the caller says
	// where they count (Hold, Rebind), at the latest at the end of the
	// run. The only flag that lasts beyond a run.
	flagHeld
	// flagDup: the key was printed more than once in this run.
	flagDup
	// flagPartial: the current entry lacks operations (Partial): the
	// slots it sets are marked in the note.
	flagPartial
	// flagComplete: an earlier entry of this run printed every operation.
	flagComplete
)

// Partial says that the entry just observed for s lacks operations that
// its target prints (a malformed line left one out): a later entry of the
// same key must not take such an operation's value for part of its sum.
// Lustre prints every operation of every entry, so entries are taken to be
// complete unless told.
func (g *Group[K, M]) Partial(s *Series[K, M]) {
	s.flags |= flagPartial
}

// setRare is Set for a series with flags: a restart, a held series, a key
// printed more than once, an entry lacking operations.
func (g *Group[K, M]) setRare(s *Series[K, M], slot int, v uint64) {
	if s.flags&flagDup != 0 && g.setInRun(s, slot) {
		g.addEntry(s, slot, v)
		return
	}
	if s.flags&flagPartial != 0 && s.flags&flagComplete == 0 {
		g.note(s).mark(slot)
	}
	prev, seen := s.last.Swap(slot, v)
	if s.id == nil {
		return // pending or discarded: nothing to add to yet
	}
	var d uint64
	switch {
	case !seen:
		d = v
	case s.flags&flagRestart == 0 && v >= prev:
		d = v - prev
	default:
		d = g.rule(s, v, prev)
		g.keepPrev(s, slot, prev, d)
	}
	g.count(s, slot, d)
}

// setInRun reports whether slot already has a value from an earlier entry
// of this run: every slot, if one of them was complete; else those the
// earlier (partial) entries marked.
func (g *Group[K, M]) setInRun(s *Series[K, M], slot int) bool {
	if s.flags&flagComplete != 0 {
		return true
	}
	i, ok := g.notes[s]
	return ok && g.noteBuf[i].marked(slot)
}

// note is what the group keeps about a series in the current run beyond
// what Set keeps: made only for keys printed more than once, held series,
// partial entries and restarts of keys printed more than once before,
// kept in a buffer reused from run to run.
type note struct {
	// lo, hi are the earliest and latest start times of the last output's
	// entries (span: known), while the run's entries so far all restarted.
	lo, hi float64
	span   bool
	// slots are the slots Set counted whole or not at all in this run.
	slots []slotNote
	// held are the increments of a held series in this run (Hold).
	held Vector
	// set marks the slots the partial entries of this run set.
	set []uint64
}

func (n *note) mark(slot int) {
	for len(n.set) <= slot>>6 {
		n.set = append(n.set, 0)
	}
	n.set[slot>>6] |= 1 << uint(slot&63)
}

func (n *note) marked(slot int) bool {
	return slot>>6 < len(n.set) && n.set[slot>>6]&(1<<uint(slot&63)) != 0
}

type slotNote struct {
	slot    int
	prev    uint64 // the value before this run
	unknown bool   // prev is not known (past maxResets)
	added   uint64 // what this run counted for the slot so far
}

// note returns the note of s in this run, making it. The note is in a
// buffer that grows: a pointer to it holds only until a note is made for
// another series.
func (g *Group[K, M]) note(s *Series[K, M]) *note {
	if i, ok := g.notes[s]; ok {
		return &g.noteBuf[i]
	}
	if g.notes == nil {
		g.notes = map[*Series[K, M]]int32{}
	}
	if n := len(g.noteBuf); n < cap(g.noteBuf) {
		// A note of an earlier run: its slices keep their room.
		g.noteBuf = g.noteBuf[:n+1]
		old := &g.noteBuf[n]
		*old = note{slots: old.slots[:0], held: old.held.emptied(), set: old.set[:0]}
	} else {
		g.noteBuf = append(g.noteBuf, note{})
	}
	g.notes[s] = int32(len(g.noteBuf) - 1)
	return &g.noteBuf[len(g.noteBuf)-1]
}

// keep records that slot, whose value before the run was prev, was
// counted d by the rule rather than as plain growth.
func (n *note) keep(slot int, prev, d uint64) {
	if sn := n.find(slot); sn != nil {
		sn.added += d // an operation printed twice in one entry
		return
	}
	n.slots = append(n.slots, slotNote{slot: slot, prev: prev, added: d})
}

func (n *note) find(slot int) *slotNote {
	for i := range n.slots {
		if n.slots[i].slot == slot {
			return &n.slots[i]
		}
	}
	return nil
}

// keepPrev keeps prev, the value before the run of a slot of s that Set
// counted d by the rule.
func (g *Group[K, M]) keepPrev(s *Series[K, M], slot int, prev, d uint64) {
	if s.entries > 1 || s.prevEntries > 1 {
		g.note(s).keep(slot, prev, d) // a key printed more than once: rare
		return
	}
	if slot < 64 {
		s.reset |= 1 << uint(slot)
	}
	if !g.acc.journal(s, int32(slot), prev) && slot >= 64 {
		g.note(s).keep(slot, prev, d) // no bit in reset to say it
	}
}

// keepSpan keeps the start times of the last output of s, whose first
// entry in this run restarted.
func (g *Group[K, M]) keepSpan(s *Series[K, M], lo, hi float64) {
	if s.prevEntries > 1 {
		n := g.note(s)
		n.lo, n.hi, n.span = lo, hi, true
		return
	}
	g.acc.journal(s, -1, math.Float64bits(lo))
}

// journal records prev for slot of s, and reports whether there was room.
func (a *Accumulator[K, M]) journal(s *Series[K, M], slot int32, prev uint64) bool {
	if len(a.resets) >= maxResets {
		return false
	}
	if a.resets == nil {
		a.resets = make([]resetRec[K, M], 0, maxResets)
	}
	if a.resetsOf != nil {
		if _, ok := a.resetsOf[s]; !ok {
			a.resetsOf[s] = int32(len(a.resets))
		}
	}
	a.resets = append(a.resets, resetRec[K, M]{s: s, slot: slot, prev: prev})
	return true
}

// firstReset returns where the journal's records of s start: they were
// all made by its first entry of the run, one after another.
func (a *Accumulator[K, M]) firstReset(s *Series[K, M]) (int, bool) {
	if a.resetsOf == nil {
		// The first duplicate of the run: index the journal once.
		a.resetsOf = make(map[*Series[K, M]]int32, 8)
		for i := range a.resets {
			if _, ok := a.resetsOf[a.resets[i].s]; !ok {
				a.resetsOf[a.resets[i].s] = int32(i)
			}
		}
	}
	i, ok := a.resetsOf[s]
	return int(i), ok
}

// adopt moves into the note of s, whose key was printed once so far in
// this run and once (or never) before, what its first entry kept in the
// journal: it is printed again.
func (g *Group[K, M]) adopt(s *Series[K, M]) {
	a := g.acc
	n := g.note(s)
	var found uint64
	if i, ok := a.firstReset(s); ok {
		for ; i < len(a.resets) && a.resets[i].s == s; i++ {
			r := a.resets[i]
			if r.slot < 0 {
				n.lo = math.Float64frombits(r.prev)
				n.hi, n.span = n.lo, true
				continue
			}
			// Counted whole: the first entry's value, by the rule of
			// one series.
			v, _ := s.last.Get(int(r.slot))
			n.keep(int(r.slot), r.prev, v)
			if r.slot < 64 {
				found |= 1 << uint(r.slot)
			}
		}
	}
	// Past maxResets: counted whole, the value before unknown.
	for m := s.reset &^ found; m != 0; m &= m - 1 {
		slot := bits.TrailingZeros64(m)
		v, _ := s.last.Get(slot)
		if sn := n.find(slot); sn == nil {
			n.slots = append(n.slots, slotNote{slot: slot, unknown: true, added: v})
		}
	}
}

// rule is the increment of a slot whose sum in this run is sum and whose
// value before the run was prev, when that is not plain growth.
func (g *Group[K, M]) rule(s *Series[K, M], sum, prev uint64) uint64 {
	switch {
	case s.flags&flagRestart != 0:
		return sum
	case sum >= prev:
		return sum - prev
	case s.entries > 1 || s.prevEntries > 1:
		return 0 // see above: a duplicate gone or restarted, not a reset
	default:
		return sum // one series' counter reset
	}
}

// again takes another entry of a key already observed in this run.
func (g *Group[K, M]) again(s *Series[K, M], start float64) {
	if s.entries < math.MaxUint8 {
		s.entries++
	}
	// The entry before this one, complete or not.
	if s.flags&flagPartial == 0 {
		s.flags |= flagComplete
	}
	s.flags = s.flags&^flagPartial | flagDup
	if s.entries == 2 && s.prevEntries <= 1 && s.id != nil {
		g.adopt(s)
	}
	if s.flags&flagRestart != 0 {
		// A restart holds only if this entry started after the last
		// output's too; where that is unknown (past maxResets), it does not.
		i, ok := g.notes[s]
		if !ok || !g.noteBuf[i].span || start == 0 || (start >= g.noteBuf[i].lo && start <= g.noteBuf[i].hi) {
			s.flags &^= flagRestart
		}
	}
	// The span of this output's start times: s.start the earliest, latest
	// the latest, for the next output's restart test.
	if g.latest == nil {
		g.latest = map[*Series[K, M]]float64{}
	}
	hi, ok := g.latest[s]
	if !ok {
		hi = s.start
	}
	if start != 0 {
		hi = max(hi, start)
		if s.start == 0 || start < s.start {
			s.start = start
		}
	}
	g.latest[s] = hi
	// The rule changed (a key printed more than once; maybe no restart
	// after all): what it counted whole or not at all is counted again.
	if i, ok := g.notes[s]; ok && s.id != nil {
		n := &g.noteBuf[i]
		for k := range n.slots {
			sum, _ := s.last.Get(n.slots[k].slot)
			g.recount(s, &n.slots[k], sum)
		}
	}
}

// addEntry adds v, a later entry's value of slot, to the slot's sum in
// this run, and corrects what the slot counted.
func (g *Group[K, M]) addEntry(s *Series[K, M], slot int, v uint64) {
	sum, _ := s.last.Get(slot)
	if sum > math.MaxUint64-v {
		v = math.MaxUint64 - sum // garbage; counters do not reach 2⁶⁴
	}
	sum += v
	s.last.Swap(slot, sum)
	if s.id == nil {
		return // pending: counted whole when resolved
	}
	if i, ok := g.notes[s]; ok {
		if sn := g.noteBuf[i].find(slot); sn != nil {
			g.recount(s, sn, sum)
			return
		}
	}
	// Counted as growth, or whole at first sight: the sum grows by v, and
	// so does its increment.
	g.count(s, slot, v)
}

// recount brings what sn's slot counted in this run to what the rule says
// of sum. sn is in the note of s, which exists.
func (g *Group[K, M]) recount(s *Series[K, M], sn *slotNote, sum uint64) {
	var d uint64
	switch {
	case !sn.unknown:
		d = g.rule(s, sum, sn.prev)
	case s.flags&flagRestart != 0:
		d = sum
	}
	switch {
	case d > sn.added:
		g.count(s, sn.slot, d-sn.added)
	case d < sn.added:
		// Taken back from what this run added: totals end the run no
		// lower than they started it.
		if s.flags&flagHeld != 0 {
			g.note(s).held.Sub(sn.slot, sn.added-d)
		} else {
			g.sub(s.id, sn.slot, sn.added-d)
		}
	}
	sn.added = d
}

// Hold makes the increments of s wait, from now on and run after run,
// until the caller says where they count: Rebind counts them under a new
// identity, and what is still held at the end of a run counts where s is
// attached. A raw id counted under an aggregate for lack of context is
// held, so that the output that repairs it counts its increments of that
// output under the job, whichever order its entries came in.
func (g *Group[K, M]) Hold(s *Series[K, M], on bool) {
	if !on {
		g.release(s)
		s.flags &^= flagHeld
		return
	}
	s.flags |= flagHeld
}

// release counts what s holds where it is attached.
func (g *Group[K, M]) release(s *Series[K, M]) {
	i, ok := g.notes[s]
	if !ok || s.id == nil {
		return
	}
	n := &g.noteBuf[i]
	for slot, d := range n.held.All() {
		g.counted[slot] += d
		g.add(s.id, slot, d)
	}
	n.held = n.held.emptied()
}

// endNotes counts what is still held, and drops the run's notes and
// journal, keeping their room for the next run.
func (a *Accumulator[K, M]) endNotes() {
	for _, g := range a.order {
		if len(g.notes) == 0 {
			continue
		}
		for s := range g.notes {
			g.release(s)
		}
		clear(g.notes)
		g.noteBuf = g.noteBuf[:0]
	}
	clear(a.resets)
	a.resets, a.resetsOf = a.resets[:0], nil
}
