// Package rates keeps the exporter's only state across scrapes: monotonic
// counters built from raw counters that reset and churn.
//
// Lustre's job_stats counters restart from zero whenever an idle job's
// entry is cleaned up, and broken job_ids spread one job over several raw
// series that come and go. Summing raw values would make the sum drop,
// which rate() reads as a reset. The Accumulator instead adds, per raw
// series, only increments (docs/rates.md):
//
//	δ = v − v′  if v ≥ v′,   δ = v  otherwise (the counter restarted),
//
// to one total per identity, so every total only grows, whatever the raw
// series do, and also when several raw series feed one identity.
//
// A damaged output can print one key more than once (dups.go): the
// entries are summed before the rule, in whatever order they come.
package rates

import (
	"cmp"
	"slices"
	"time"
)

// Accumulator holds groups (one per Lustre target) of raw series and the
// identities they feed. K is the identity key, M what the caller keeps per
// raw series (the job_id's classification). An Accumulator is not safe for
// concurrent use; callers serialize runs and reads.
type Accumulator[K comparable, M any] struct {
	// TrackDelta keeps, per identity, the increments of the latest run
	// (Identity.Delta), at the cost of one more slice per identity.
	TrackDelta bool

	ttl    time.Duration
	groups map[string]*Group[K, M]
	// resets and resetsOf: for a key printed more than once (dups.go).
	resets   []resetRec[K, M]
	resetsOf map[*Series[K, M]]int32
	order    []*Group[K, M]
	run      uint64
	now      time.Time
	prevRun  time.Time
	// runTimes maps recent run numbers to their times, so that series and
	// identities need only remember the run they were last seen in.
	runTimes []runTime
}

type runTime struct {
	run uint64
	t   time.Time
}

// New returns an Accumulator that forgets identities and raw series unseen
// for ttl.
func New[K comparable, M any](ttl time.Duration) *Accumulator[K, M] {
	return &Accumulator[K, M]{ttl: ttl, groups: map[string]*Group[K, M]{}}
}

// Group is one namespace of raw series, with its own counter slots.
type Group[K comparable, M any] struct {
	Name string
	acc  *Accumulator[K, M]

	slotNames []string
	slots     map[string]int
	// deltaIndex maps a slot to its place in Identity.Delta, -1 for slots
	// whose increments are not tracked.
	deltaIndex []int
	nDelta     int

	series map[string]*Series[K, M]
	// Lustre prints a target's jobs in the same order from run to run,
	// and at a hundred thousand jobs finding each key in series was a
	// cache miss or two per entry: Observe first tries the series that
	// followed the previous one in the last run (Series.next), from head
	// at the start of a run, and looks in series only when the guess is
	// wrong. prev is the series observed last, in run prevRun.
	head    *Series[K, M]
	prev    *Series[K, M]
	prevRun uint64
	// observed counts the series observed in run prevRun: when it is all
	// of them, EndSection has nothing to forget and need not look.
	observed int
	ids      map[K]*Identity[K]
	idOrder  []*Identity[K]
	pending  []*Series[K, M]
	// born are the series first observed in the current run: a run cut
	// short gives them up (ForgetBorn), so that what it read costs no
	// memory beyond it.
	born []*Series[K, M]

	// notes, noteBuf and latest serve the rare series that Set alone
	// cannot count (dups.go): notes (in noteBuf, reused from run to run),
	// what a key printed more than once or a held series needs in the
	// current run; latest, the latest start of the series whose last
	// output printed their key more than once. All are empty on most
	// servers.
	notes   map[*Series[K, M]]int32
	noteBuf []note
	latest  map[*Series[K, M]]float64

	// counted holds, by slot, every increment added to the group's
	// identities since the group was made (Created): what the group's
	// series add up to over their lifetimes, lost to no eviction and
	// no move between identities.
	counted []uint64
	// Created is when the group was made (the time of its first run).
	Created time.Time
	// CreatedFloor is the earliest created timestamp an identity of the
	// group may have (Unix seconds, 0: none): the time the caller first
	// read the group. An identity's totals start from a raw series' whole
	// value, so a series that started before anyone read it makes a
	// counter that starts here, not at the series' start: after a restart
	// of the exporter, a counter that may be lower than the one it
	// exported before has a new created timestamp, a new lifetime.
	CreatedFloor float64

	lastRun uint64
}

// Series is the state of one raw series.
type Series[K comparable, M any] struct {
	Key  string
	Meta M
	// flags are what sends Set off its common path (dups.go): a restart,
	// a held series, a key printed more than once, an entry lacking
	// operations. Zero on nearly every series in nearly every run.
	flags uint8
	// entries counts the entries of the key in this run (up to 255),
	// prevEntries those of the last output it was in.
	entries, prevEntries uint8
	// run is the latest run that observed the series (the low 32 bits,
	// enough for a century of scrapes every second: with a Meta of one
	// byte, a series then takes 96 bytes, not 112), 0 once it is
	// forgotten: no longer in the group's map, never to be found again
	// through a next link that still points to it. Runs count from 1.
	run uint32
	id  *Identity[K]
	// next is the series observed after this one in the last run that
	// observed it (Group.head).
	next *Series[K, M]
	// last holds the latest value of each slot seen but zero (the sum of
	// the entries of this run); a slot without one counts its next value
	// whole, as a zero would.
	last Vector
	// start is the earliest start time of the entries of the latest
	// output (the only one's, as a rule).
	start float64
	// reset marks the slots 0–63 that Set counted whole or not at all in
	// this run (a restart, a value gone down), for a later entry of the
	// same key.
	reset uint64
}

// Identity is one exported counter set.
type Identity[K comparable] struct {
	Key K
	// Totals are the monotonic counters, by slot of the group; a slot
	// that never counted anything has none.
	Totals Vector
	// Delta holds the increments added in the latest run that touched the
	// identity (DeltaRun), for rates over the last interval, in the order
	// of the slots given to TrackDelta.
	Delta    []uint64
	DeltaRun uint64
	// Created is the Unix time the identity's first raw series started
	// (0 when Lustre does not say); it never changes afterwards.
	Created float64
	lastRun uint64
	// series counts the raw series attached to the identity: with none,
	// it is kept only so that its counters go on if its job comes back
	// within the TTL, and EvictIdle may forget it sooner.
	series int32
}

// BeginRun starts a run of observations at now.
func (a *Accumulator[K, M]) BeginRun(now time.Time) {
	// A run that never ended (a panic) leaves nothing behind.
	a.endNotes()
	a.ForgetBorn()
	for _, g := range a.order {
		g.pending = g.pending[:0]
	}
	a.run++
	a.prevRun = a.now
	a.now = now
	a.runTimes = append(a.runTimes, runTime{a.run, now})
}

// Run returns the number of the current run (1 for the first).
func (a *Accumulator[K, M]) Run() uint64 { return a.run }

// Interval returns the time between the current run and the previous one,
// 0 for the first run.
func (a *Accumulator[K, M]) Interval() time.Duration {
	if a.prevRun.IsZero() {
		return 0
	}
	return a.now.Sub(a.prevRun)
}

// Group returns the group called name, creating it.
func (a *Accumulator[K, M]) Group(name string) *Group[K, M] {
	g, ok := a.groups[name]
	if !ok {
		g = &Group[K, M]{
			Name: name, acc: a, slots: map[string]int{},
			series: map[string]*Series[K, M]{}, ids: map[K]*Identity[K]{},
			Created: a.now,
		}
		a.groups[name] = g
		a.order = append(a.order, g)
	}
	g.lastRun = a.run
	return g
}

// Groups returns the groups in the order they first appeared.
func (a *Accumulator[K, M]) Groups() []*Group[K, M] { return a.order }

// Slot returns the index of the counter called name, adding it.
func (g *Group[K, M]) Slot(name string) int {
	if i, ok := g.slots[name]; ok {
		return i
	}
	i := len(g.slotNames)
	g.slots[name] = i
	g.slotNames = append(g.slotNames, name)
	g.deltaIndex = append(g.deltaIndex, -1)
	g.counted = append(g.counted, 0)
	return i
}

// Counted returns, by slot, every increment the group's identities got
// since the group was made.
func (g *Group[K, M]) Counted() []uint64 { return g.counted }

// TrackDelta keeps the increments of slot in Identity.Delta (when the
// Accumulator's TrackDelta is on) and returns its index there. Only the
// slots asked for cost memory.
func (g *Group[K, M]) TrackDelta(slot int) int {
	if g.deltaIndex[slot] < 0 {
		g.deltaIndex[slot] = g.nDelta
		g.nDelta++
	}
	return g.deltaIndex[slot]
}

// DeltaIndex returns where slot's increments are in Identity.Delta, or -1.
func (g *Group[K, M]) DeltaIndex(slot int) int { return g.deltaIndex[slot] }

// SlotNames returns the names of the group's slots by index.
func (g *Group[K, M]) SlotNames() []string { return g.slotNames }

// Identities returns the group's identities in the order they appeared.
func (g *Group[K, M]) Identities() []*Identity[K] { return g.idOrder }

// Len returns the number of raw series the group tracks.
func (g *Group[K, M]) Len() int { return len(g.series) }

// Observe notes that the raw series key was read in this run, with the
// start time its source reports (0 when unknown), and returns it for Set;
// first tells a series never seen before. A key already observed in this
// run (a damaged output printing it again) returns the same series, whose
// Entries then say how many times it was printed: the values Set gets for
// it are added to the entries' sum (dups.go).
//
// A series without identity (new, or left unattached by an earlier
// Resolve) is pending until the caller resolves it; its values are then
// added whole, as its first increments.
func (g *Group[K, M]) Observe(key []byte, start float64) (s *Series[K, M], first bool) {
	if g.prevRun != g.acc.run {
		g.prev, g.prevRun, g.observed = nil, g.acc.run, 0
	}
	guess := g.head
	if g.prev != nil {
		guess = g.prev.next
	}
	ok := guess != nil && guess.run != 0 && guess.Key == string(key) // run 0: forgotten
	if ok {
		s = guess
	} else if s, ok = g.series[string(key)]; !ok {
		s = &Series[K, M]{Key: string(key), start: start}
		g.series[s.Key] = s
		g.born = append(g.born, s)
	}
	g.follows(s)
	switch {
	case !ok:
		g.observed++
	case s.run == g.run():
		g.again(s, start)
		return s, false
	default:
		g.observed++
		lo, hi := s.start, s.start
		if s.entries > 1 {
			hi = g.latest[s]
			delete(g.latest, s)
		}
		s.prevEntries = s.entries
		s.flags &= flagHeld // what lasts beyond a run
		if start != 0 && lo != 0 && (start < lo || start > hi) {
			s.flags |= flagRestart
			if s.id != nil {
				// A later entry of the key may yet say that one carried on.
				g.keepSpan(s, lo, hi)
			}
		}
		if start != 0 {
			s.start = start
		}
	}
	s.entries, s.reset = 1, 0
	s.run = g.run()
	if s.id == nil {
		g.pending = append(g.pending, s)
	} else {
		g.touch(s.id)
	}
	return s, !ok
}

// follows records that s was observed after the series observed before it
// in this run (Observe's guess in the next run).
func (g *Group[K, M]) follows(s *Series[K, M]) {
	if g.prev == nil {
		g.head = s
	} else {
		g.prev.next = s
	}
	g.prev = s
}

// Entries returns how many times the series' key was printed in the
// current run: more than one in a damaged output.
func (s *Series[K, M]) Entries() int { return int(s.entries) }

// Set records the value of one slot of s in this run: for a key printed
// more than once, one entry's part of the slot's sum.
func (g *Group[K, M]) Set(s *Series[K, M], slot int, v uint64) {
	if s.flags != 0 {
		g.setRare(s, slot, v) // dups.go
		return
	}
	if v == 0 && !s.last.Has(slot) {
		// A counter still at zero (most of a job's operations): nothing
		// to remember, nothing to add.
		return
	}
	prev, seen := s.last.Swap(slot, v)
	if s.id == nil {
		return // pending or discarded: nothing to add to yet
	}
	var d uint64
	switch {
	case !seen:
		d = v
	case v >= prev:
		d = v - prev
	default:
		// Counted whole (or not at all): a later entry of the same key
		// would need prev, which Swap just overwrote.
		d = g.rule(s, v, prev)
		g.keepPrev(s, slot, prev, d)
	}
	g.counted[slot] += d
	g.add(s.id, slot, d)
}

// count adds d, an increment of s in slot, where s counts now.
func (g *Group[K, M]) count(s *Series[K, M], slot int, d uint64) {
	if s.flags&flagHeld != 0 {
		g.note(s).held.Add(slot, d)
		return
	}
	g.counted[slot] += d
	g.add(s.id, slot, d)
}

func (g *Group[K, M]) add(id *Identity[K], slot int, d uint64) {
	if d == 0 {
		// Nothing to add; a run's increments read as zero where absent
		// (RunDelta's users).
		return
	}
	id.Totals.Add(slot, d)
	if di := g.deltaIndex[slot]; g.acc.TrackDelta && di >= 0 {
		if id.DeltaRun != g.acc.run {
			clear(id.Delta)
			id.DeltaRun = g.acc.run
		}
		if di >= len(id.Delta) {
			id.Delta = grow(id.Delta, g.nDelta)
		}
		id.Delta[di] += d
	}
}

// sub takes back d of an increment added to id in this run.
func (g *Group[K, M]) sub(id *Identity[K], slot int, d uint64) {
	id.Totals.Sub(slot, d)
	g.counted[slot] -= d
	if di := g.deltaIndex[slot]; g.acc.TrackDelta && di >= 0 && id.DeltaRun == g.acc.run && di < len(id.Delta) {
		id.Delta[di] -= d
	}
}

// Touch marks id as seen in this run without adding to it.
func (g *Group[K, M]) touch(id *Identity[K]) { id.lastRun = g.acc.run }

// EndSection ends the group's observations in this run. When complete,
// the raw series not observed are gone at the source (Lustre dropped the
// idle job's entry) and are forgotten: if they come back, they start from
// zero and their whole value is new. When the section was cut short,
// nothing can be concluded from an absence and the series are kept.
func (g *Group[K, M]) EndSection(complete bool) {
	if !complete {
		return
	}
	if g.prevRun == g.acc.run && g.observed == len(g.series) {
		return // every series was observed in this run
	}
	for key, s := range g.series {
		if s.run != g.run() {
			g.forget(key, s)
		}
	}
}

// forget drops a raw series.
func (g *Group[K, M]) forget(key string, s *Series[K, M]) {
	delete(g.series, key)
	if s.id != nil {
		s.id.series--
	}
	s.run = 0    // forgotten
	s.next = nil // nothing kept alive through it
	if s.entries > 1 {
		delete(g.latest, s)
	}
}

// ForgetBorn forgets the raw series first observed in the current run,
// before any is resolved: a run cut short (killed, or past its budget)
// keeps nothing of the keys it met first, which come back as new, their
// whole value counted, when a later run meets them. What series known
// before counted in the run stays counted: their sources did count it.
func (a *Accumulator[K, M]) ForgetBorn() {
	for _, g := range a.order {
		if len(g.born) == 0 {
			continue
		}
		for _, s := range g.born {
			if s.run != 0 && s.id == nil {
				g.forget(s.Key, s)
			}
		}
		if g.head != nil && g.head.run == 0 {
			g.head = nil
		}
		kept := g.pending[:0]
		for _, s := range g.pending {
			if s.run != 0 {
				kept = append(kept, s)
			}
		}
		clear(g.pending[len(kept):])
		g.pending = kept
		g.clearBorn()
	}
}

// clearBorn empties born, giving back an array that a run of many new
// keys made large.
func (g *Group[K, M]) clearBorn() {
	if cap(g.born) > 4096 {
		g.born = nil
		return
	}
	clear(g.born)
	g.born = g.born[:0]
}

// Pending returns the series observed in this run that feed no identity:
// the new ones and those an earlier Resolve left unattached.
func (g *Group[K, M]) Pending() []*Series[K, M] { return g.pending }

// Resolve attaches a pending series to the identity key and adds its
// values, whole, to the identity's totals: nothing of it was counted
// before. With keep false the series stays unattached, and its values are
// counted nowhere; a later run may still attach it (a repair that needed
// an id seen later), and then adds everything it has counted so far.
func (g *Group[K, M]) Resolve(s *Series[K, M], key K, keep bool) *Identity[K] {
	if !keep || s.id != nil {
		return s.id
	}
	id, ok := g.ids[key]
	if !ok {
		id = &Identity[K]{Key: key, Created: g.created(s)}
		g.ids[key] = id
		g.idOrder = append(g.idOrder, id)
	}
	s.id = id
	id.series++
	g.touch(id)
	if id.Totals.Len() == 0 {
		id.Totals.Reserve(s.last.Len())
	}
	for slot, v := range s.last.All() {
		g.counted[slot] += v
		g.add(id, slot, v)
	}
	return id
}

// Rebind makes s, attached to an identity already, feed the identity key
// from now on: what it counted in earlier runs stays where it was counted,
// once; what it counted in this run while held (Hold) counts under key,
// and it is held no more. A raw id first counted under an aggregate
// ("_untrusted") and repaired later goes on under its job, from the output
// that repaired it.
func (g *Group[K, M]) Rebind(s *Series[K, M], key K) *Identity[K] {
	id, ok := g.ids[key]
	if !ok {
		id = &Identity[K]{Key: key, Created: g.created(s)}
		g.ids[key] = id
		g.idOrder = append(g.idOrder, id)
	}
	if s.id != id {
		if s.id != nil {
			s.id.series--
		}
		id.series++
	}
	s.id = id
	g.touch(id)
	g.release(s)
	s.flags &^= flagHeld
	return id
}

// created is the created timestamp of an identity s starts: the series'
// start, not before the group's floor; 0 when the source gives no start.
func (g *Group[K, M]) created(s *Series[K, M]) float64 {
	if s.start == 0 {
		return 0
	}
	return max(s.start, g.CreatedFloor)
}

// Fold adds increments, one per tracked slot in the order of Delta, to the
// identity key, which raw
// series need not feed: an aggregate such as the "_other" of identities
// without series of their own. Its totals grow by exactly what is folded
// into it, so they stay monotonic whoever is folded in from run to run.
func (g *Group[K, M]) Fold(key K, delta []uint64) *Identity[K] {
	id, ok := g.ids[key]
	if !ok {
		id = &Identity[K]{Key: key}
		g.ids[key] = id
		g.idOrder = append(g.idOrder, id)
	}
	g.touch(id)
	for slot, di := range g.deltaIndex {
		if di >= 0 && di < len(delta) && delta[di] != 0 {
			g.counted[slot] += delta[di]
			g.add(id, slot, delta[di])
		}
	}
	return id
}

// MoveRun moves the increments id got in the current run, one per tracked
// slot in the order of Delta, to the identity key: an identity without a
// series of its own in this run (past a series cap) gives them to an
// aggregate such as "_other". Each increment then counts once, in the
// aggregate; id's totals stay what its series showed, and grow again from
// there when it has a series once more. Its Delta still says what it did
// in the run, for rates and rankings. It returns the aggregate.
func (g *Group[K, M]) MoveRun(id *Identity[K], key K) *Identity[K] {
	to, ok := g.ids[key]
	if !ok {
		to = &Identity[K]{Key: key}
		g.ids[key] = to
		g.idOrder = append(g.idOrder, to)
	}
	g.touch(to)
	delta := id.RunDelta(g.acc.run)
	for slot, di := range g.deltaIndex {
		if di >= 0 && di < len(delta) && delta[di] != 0 {
			id.Totals.Sub(slot, delta[di])
			g.add(to, slot, delta[di])
		}
	}
	return to
}

// RunDelta returns the identity's increments in run, nil when it got
// none (or TrackDelta is off).
func (id *Identity[K]) RunDelta(run uint64) []uint64 {
	if id.DeltaRun != run {
		return nil
	}
	return id.Delta
}

// Reserve makes room for n slots in the series, so that its first values
// take one allocation.
func (s *Series[K, M]) Reserve(n int) { s.last.Reserve(n) }

// Total returns the identity's total of slot.
func (id *Identity[K]) Total(slot int) uint64 {
	v, _ := id.Totals.Get(slot)
	return v
}

// Identity returns the identity a series feeds, nil if none.
func (s *Series[K, M]) Identity() *Identity[K] { return s.id }

// SeenIn reports whether the series was observed in the current run.
func (s *Series[K, M]) SeenIn(run uint64) bool { return s.run == uint32(run) }

// run is the current run as a Series keeps it.
func (g *Group[K, M]) run() uint32 { return uint32(g.acc.run) }

// EachSeries calls f for every raw series of the group.
func (g *Group[K, M]) EachSeries(f func(*Series[K, M])) {
	for _, s := range g.series {
		f(s)
	}
}

// EndRun finishes a run: pending series not resolved stay unattached, what
// held series hold counts where they are attached, and state unseen for
// the TTL is forgotten.
func (a *Accumulator[K, M]) EndRun() {
	// Everything last seen in a run up to cutoffRun is older than the TTL.
	cutoff := a.now.Add(-a.ttl)
	var cutoffRun uint64
	drop := 0
	for i, rt := range a.runTimes {
		if !rt.t.Before(cutoff) {
			break
		}
		cutoffRun, drop = rt.run, i
	}
	a.runTimes = a.runTimes[drop:]
	a.endNotes()
	keptGroups := a.order[:0]
	for _, g := range a.order {
		g.pending = g.pending[:0]
		g.clearBorn()
		if g.lastRun <= cutoffRun {
			delete(a.groups, g.Name)
			continue
		}
		keptGroups = append(keptGroups, g)
		if cutoffRun == 0 {
			continue
		}
		for key, s := range g.series {
			if uint64(s.run) <= cutoffRun {
				g.forget(key, s)
			}
		}
		kept := g.idOrder[:0]
		for _, id := range g.idOrder {
			if id.lastRun <= cutoffRun {
				delete(g.ids, id.Key)
				continue
			}
			kept = append(kept, id)
		}
		clear(g.idOrder[len(kept):])
		g.idOrder = kept
	}
	clear(a.order[len(keptGroups):])
	a.order = keptGroups
}

// EvictIdle forgets, over every group, the identities that have no raw
// series left, are not of the current run and that evictable allows,
// beyond the max most recently seen: before their TTL, when job_ids come
// and go faster than the TTL forgets them (a user making up a job_id per
// process), so that the identities kept stay within a bound known before
// the run. Nothing they counted is lost (Group.Counted keeps it); their
// series end sooner, and a job that comes back starts a new identity,
// whose created timestamp tells its new lifetime. It returns how many
// identities each group lost, by group name (nil when none).
func (a *Accumulator[K, M]) EvictIdle(max int, evictable func(*Identity[K]) bool) map[string]int {
	type idle struct {
		g  *Group[K, M]
		id *Identity[K]
	}
	var cands []idle
	for _, g := range a.order {
		for _, id := range g.idOrder {
			if id.series == 0 && id.lastRun != a.run && evictable(id) {
				cands = append(cands, idle{g, id})
			}
		}
	}
	if len(cands) <= max {
		return nil
	}
	// The most recently seen are kept; among equals, those that came
	// first go first.
	slices.SortStableFunc(cands, func(x, y idle) int { return cmp.Compare(x.id.lastRun, y.id.lastRun) })
	evicted := map[string]int{}
	gone := map[*Identity[K]]bool{}
	for _, c := range cands[:len(cands)-max] {
		delete(c.g.ids, c.id.Key)
		gone[c.id] = true
		evicted[c.g.Name]++
	}
	for _, g := range a.order {
		if evicted[g.Name] == 0 {
			continue
		}
		kept := g.idOrder[:0]
		for _, id := range g.idOrder {
			if !gone[id] {
				kept = append(kept, id)
			}
		}
		clear(g.idOrder[len(kept):])
		g.idOrder = kept
	}
	return evicted
}

// SeenInRun reports whether the identity was fed by a series in the
// current run.
func (id *Identity[K]) SeenInRun(run uint64) bool { return id.lastRun == run }

// grow returns s extended to n. Slices are sized exactly: a group's slots
// rarely change after its first output, and a hundred thousand slices of
// slack would cost more than the rare reallocation.
func grow(s []uint64, n int) []uint64 {
	if n <= cap(s) {
		return s[:n]
	}
	out := make([]uint64, n)
	copy(out, s)
	return out
}
