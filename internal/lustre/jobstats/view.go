package jobstats

import (
	"encoding/binary"
	"math/bits"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// View is what one lctl run left of the per-job state: published once,
// never changed, read by any number of scrapes at once. A scrape that
// writes it slowly to a congested client holds nothing the next run needs.
type View struct {
	// Format is the jobid_name the job_ids were read with; FormatFrom says
	// where it came from: flag, lctl or default.
	Format, FormatFrom string
	// Bounds are the upper bounds of the rate density buckets.
	Bounds  []float64
	Targets []*TargetView
	// Err tells why the run met no job_stats at all (not a Lustre server,
	// jobstats off); nil when it did, or when the run itself failed.
	Err error

	arena *arena // the rows and totals of Targets
}

// TargetView is one OST's or MDT's part of a View.
type TargetView struct {
	Component, Target string
	// Outcomes counts the entries read since the exporter started, by
	// what their job_id turned out to be.
	Outcomes   [jobid.NumOutcomes]uint64
	Malformed  uint64 // lines of job_stats skipped, since the start
	Duplicates uint64 // entries printed twice in one output, since the start
	// Evicted counts the identities without raw series forgotten before
	// their TTL, since the start: more of them than Config.MaxEntries.
	Evicted    uint64
	RawSeries  int // raw job_ids tracked
	Identities int // identities with totals, "_other" included
	Active     int // identities seen in the run
	Density    []Density
	// Counted holds, by slot, every increment the target's identities
	// got since CountedSince (Unix seconds; the target's first run, or its
	// return after being forgotten): what its per-job series add up to
	// over their lifetimes, "_other" and "_untrusted" included, whatever
	// came and went. Nil for a forgotten target.
	Counted      []uint64
	CountedSince float64
	// Ops are the target's operations in the order lctl first printed
	// them; their slots index the values of Rows.
	Ops  []Op
	Rows []Row
	// The totals of Rows, see Values.
	words int // mask words per row
	masks []uint64
	data  []byte
}

// Op is one job_stats operation of a target.
type Op struct {
	Name string
	Unit lctl.Unit
	// Samples and Sum are the slots of its sample count and of its sum,
	// Sum -1 when the operation has none (unit reqs, or a unit that is
	// neither bytes nor usecs).
	Samples, Sum int
}

// Row is one identity with series: its labels, the time its first raw
// series started (Unix seconds, 0 when Lustre does not say) and its
// monotonic totals.
type Row struct {
	// Key is shared with the tracker, which never changes a key once
	// made.
	Key     *Key
	Created float64
	data    uint32 // where its totals start in TargetView.data
	// Plain says that no value of Key holds a byte that an exposition
	// escapes in a label value (a backslash, a double quote, a newline):
	// the per-job families write a row's key once per family, and most
	// keys are plain.
	Plain bool
}

// Values returns the totals of row i.
func (t *TargetView) Values(i int) Values {
	first := i * t.words
	return Values{mask: t.masks[first : first+t.words], data: t.data[t.Rows[i].data:]}
}

// Values are the totals of one row: a bit per slot tells which totals are
// stored, in slot order, each as a uvarint. Most identities touch a few of
// a target's operations, and most totals take a few bytes: a row costs
// tens of bytes instead of eight per slot, and the two Views a server
// keeps (the published one, the one being written) cost less than the
// totals they copy.
type Values struct {
	mask []uint64
	data []byte
	next int // the first slot Get may still be asked for
}

// Get returns the total of slot, and whether it is stored: a zero total
// is not, unless the tracker was told to emit zeros. Slots must be asked
// for in increasing order: Get reads the totals as it goes.
func (v *Values) Get(slot int) (uint64, bool) {
	if slot < v.next {
		panic("jobstats: Values.Get out of order")
	}
	// Step over the totals of the slots before it.
	for w := v.next >> 6; w < len(v.mask) && w <= slot>>6; w++ {
		m := v.mask[w]
		if w == v.next>>6 {
			m &^= 1<<uint(v.next&63) - 1
		}
		if w == slot>>6 {
			m &= 1<<uint(slot&63) - 1
		}
		v.skip(bits.OnesCount64(m))
	}
	v.next = slot + 1
	if w := slot >> 6; w >= len(v.mask) || v.mask[w]&(1<<uint(slot&63)) == 0 {
		return 0, false
	}
	x, n := binary.Uvarint(v.data)
	v.data = v.data[n:]
	return x, true
}

// Next returns the next stored total, in slot order, of a slot in cols (a
// bit per slot, as the row's mask): a family that shows a few of a
// target's operations asks for the totals a row has, not for each of its
// columns. ok is false once there is none left. Next and Get may be mixed,
// in increasing slot order.
func (v *Values) Next(cols []uint64) (slot int, total uint64, ok bool) {
	for w := v.next >> 6; w < len(v.mask) && w < len(cols); w++ {
		// The stored slots of the word from next on, and those asked for.
		stored := v.mask[w] &^ (1<<uint(v.next&63) - 1)
		m := stored & cols[w]
		if m == 0 {
			v.skip(bits.OnesCount64(stored))
			v.next = (w + 1) << 6
			continue
		}
		b := bits.TrailingZeros64(m)
		v.skip(bits.OnesCount64(stored & (1<<uint(b) - 1)))
		slot = w<<6 | b
		v.next = slot + 1
		total, n := binary.Uvarint(v.data)
		v.data = v.data[n:]
		return slot, total, true
	}
	return 0, 0, false
}

// skip steps over n totals. A uvarint ends at its first byte below 0x80,
// so the totals ending in eight bytes are counted at once: the per-job
// families read a row's totals six times per scrape, each family a few of
// its slots, and stepping over the others one byte at a time was most of
// reading them.
func (v *Values) skip(n int) {
	data := v.data
	for n > 0 && len(data) >= 8 {
		ends := ^binary.LittleEndian.Uint64(data) & 0x8080808080808080
		if c := bits.OnesCount64(ends); c < n {
			n -= c
			data = data[8:]
			continue
		}
		for ; n > 1; n-- {
			ends &= ends - 1
		}
		data = data[bits.TrailingZeros64(ends)>>3+1:]
		n = 0
	}
	for ; n > 0; n-- {
		i := 0
		for data[i] >= 0x80 {
			i++
		}
		data = data[i+1:]
	}
	v.data = data
}

// arena holds the rows and totals of every target of a View in three
// arrays. A View's arena is handed back (Tracker.Recycle) once no scrape
// reads the View any more, and the next run's View is written into it: at
// a hundred thousand jobs, a new arena per run is ten megabytes of garbage
// per scrape, and a heap that grows to twice its size between collections.
type arena struct {
	rows  []Row
	masks []uint64
	data  []byte
}

// maxSpareArenas is how many arenas the tracker keeps for reuse: with the
// published View's, two, which a steady server needs (the published one,
// and the one being written); a scrape still writing an older View costs a
// new arena, which the collector takes back.
const maxSpareArenas = 1

// Recycle hands back the arena of a View no one reads any more, for a
// later run to reuse. The caller must be sure of that: the View's rows and
// totals will be overwritten. Views not recycled are simply collected.
func (t *Tracker) Recycle(v *View) {
	if v == nil || v.arena == nil {
		return
	}
	a := v.arena
	v.arena = nil
	t.spareMu.Lock()
	if len(t.spare) < maxSpareArenas {
		t.spare = append(t.spare, a)
	}
	t.spareMu.Unlock()
}

// arenaFor returns an arena that holds rows rows, masks mask words and
// size bytes of totals: a spare one, with whatever of it is too small
// replaced. A spare too small is taken all the same, not left in the
// spares: totals only grow, so it would never fit again, and it would keep
// out the arenas recycled after it, which do.
func (t *Tracker) arenaFor(rows, masks, size int) *arena {
	t.spareMu.Lock()
	a := &arena{}
	if n := len(t.spare); n > 0 {
		a = t.spare[n-1]
		t.spare = t.spare[:n-1]
	}
	t.spareMu.Unlock()
	// Room to grow: jobs come and go and totals grow, and an arena a
	// little too small for the next run would be made anew.
	grow := func(n int) int { return n + n/8 + 64 }
	if cap(a.rows) < rows {
		a.rows = make([]Row, 0, grow(rows))
	}
	if cap(a.masks) < masks {
		a.masks = make([]uint64, 0, grow(masks))
	}
	if cap(a.data) < size {
		a.data = make([]byte, 0, grow(size))
	}
	clear(a.rows[rows:cap(a.rows)]) // no old identity kept alive
	a.rows, a.masks, a.data = a.rows[:rows], a.masks[:masks], a.data[:0]
	clear(a.masks)
	return a
}

// publish makes the View of the run just ended.
func (t *Tracker) publish(err error) *View {
	v := &View{Format: t.format.String(), FormatFrom: t.formatFrom, Bounds: t.bounds, Err: err,
		Targets: make([]*TargetView, 0, len(t.order))}
	// The identities with series of each target, and their rows and masks.
	shown := make([][]*identity, len(t.order))
	var rows, masks int
	for i, tg := range t.order {
		if tg.group == nil {
			continue
		}
		ids := tg.group.Identities()
		if tg.visible != nil {
			ids = tg.visible
		}
		shown[i] = ids
		rows += len(ids)
		masks += len(ids) * words(len(tg.group.SlotNames()))
	}
	// The totals are written into the room the last View's took (and the
	// eighth more arenaFor gives): sizing them first was a pass over every
	// identity, a third of the publish, which the run's end waits for.
	// Totals that outgrow it are appended all the same (the arena's data
	// then grows as append grows it); only the first View is sized, so
	// that its data is not grown from nothing.
	size := t.dataSize
	if size == 0 {
		size = t.totalsSize(shown)
	}
	v.arena = t.arenaFor(rows, masks, size)
	t.writeTargets(v, shown)
	t.dataSize = len(v.arena.data)
	return v
}

// totalsSize returns the bytes the totals of the identities shown take.
func (t *Tracker) totalsSize(shown [][]*identity) int {
	size := 0
	for i, ids := range shown {
		if len(ids) == 0 {
			continue
		}
		slots := len(t.order[i].group.SlotNames())
		for _, id := range ids {
			if t.emitZero {
				size += slots - id.Totals.Len() // a zero takes a byte
			}
			for _, x := range id.Totals.All() {
				if x != 0 || t.emitZero {
					size += uvarintLen(x)
				}
			}
		}
	}
	return size
}

// writeTargets writes the TargetViews of v, their rows and totals into
// its arena.
func (t *Tracker) writeTargets(v *View, shown [][]*identity) {
	rows, masks := 0, 0
	// Where each target's totals start in the arena's data, which may move
	// as it grows: the targets' slices of it are taken at the end.
	starts := make([]int, len(t.order)+1)
	for i, tg := range t.order {
		tv := &TargetView{Component: tg.component, Target: tg.target,
			Outcomes: tg.outcomes, Malformed: tg.malformedLines, Duplicates: tg.duplicates,
			Evicted: tg.evicted}
		v.Targets = append(v.Targets, tv)
		starts[i] = len(v.arena.data)
		if tg.group == nil {
			continue // forgotten: its identities with it
		}
		// Not nil, also before any slot: nil says the target was forgotten.
		tv.Counted = append([]uint64{}, tg.group.Counted()...)
		tv.CountedSince = float64(tg.group.Created.UnixNano()) / 1e9
		tv.RawSeries = tg.group.Len()
		tv.Identities = len(tg.group.Identities())
		tv.Active = tg.active
		tv.Density = tg.density
		tv.Ops = make([]Op, len(tg.opList))
		for i, o := range tg.opList {
			tv.Ops[i] = Op{Name: o.op, Unit: o.unit, Samples: o.samples, Sum: o.sum}
		}
		slots := len(tg.group.SlotNames())
		n, w := len(shown[i]), words(slots)
		tv.words = w
		tv.Rows = v.arena.rows[rows : rows+n : rows+n]
		tv.masks = v.arena.masks[masks : masks+n*w : masks+n*w]
		rows, masks = rows+n, masks+n*w
		v.arena.data = t.encodeRows(tv, shown[i], slots, v.arena.data)
	}
	starts[len(t.order)] = len(v.arena.data)
	for i, tv := range v.Targets {
		tv.data = v.arena.data[starts[i]:starts[i+1]:starts[i+1]]
	}
}

func words(slots int) int { return (slots + 63) / 64 }

// encodeRows writes the rows and masks of ids in tv, and appends their
// totals to data.
func (t *Tracker) encodeRows(tv *TargetView, ids []*identity, slots int, data []byte) []byte {
	start := len(data)
	for i, id := range ids {
		first := i * tv.words
		tv.Rows[i] = Row{Key: &id.Key, Created: id.Created, data: uint32(len(data) - start), Plain: plainKey(&id.Key)}
		if t.emitZero {
			for slot := range slots {
				tv.masks[first+slot>>6] |= 1 << uint(slot&63)
				data = binary.AppendUvarint(data, id.Total(slot))
			}
			continue
		}
		for slot, v := range id.Totals.All() {
			if v != 0 {
				tv.masks[first+slot>>6] |= 1 << uint(slot&63)
				data = binary.AppendUvarint(data, v)
			}
		}
	}
	return data
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// plainKey reports whether no value of k holds a backslash, a double
// quote or a newline.
func plainKey(k *Key) bool {
	for _, v := range k {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c == '\\' || c == '"' || c == '\n' {
				return false
			}
		}
	}
	return true
}
