package jobstats

import (
	"math/bits"

	"github.com/hpcio/hpcio_exporter/jobid"
	"github.com/hpcio/hpcio_exporter/lctl"
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
}

// TargetView is one OST's or MDT's part of a View.
type TargetView struct {
	Component, Target string
	// Outcomes counts the entries read since the exporter started, by
	// what their job_id turned out to be.
	Outcomes   [jobid.NumOutcomes]uint64
	Malformed  uint64 // lines of job_stats skipped, since the start
	Duplicates uint64 // entries printed twice in one output, since the start
	RawSeries  int    // raw job_ids tracked
	Identities int    // identities with totals, "_other" included
	Active     int    // identities seen in the run
	Density    []Density
	// Ops are the target's operations in the order lctl first printed
	// them; their slots index the values of Rows.
	Ops  []Op
	Rows []Row
	// The totals of Rows, see Values.
	words  int // mask words per row
	masks  []uint64
	values []uint64
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
	first   uint32 // index of its first mask word and of its first value
	value   uint32
}

// Values returns the totals of row i.
func (t *TargetView) Values(i int) Values {
	r := &t.Rows[i]
	return Values{mask: t.masks[r.first : int(r.first)+t.words], values: t.values[r.value:]}
}

// Values are the totals of one row: a bit per slot tells the totals
// stored, in slot order. Most identities touch a few of a target's
// operations, so a row costs its non-zero totals instead of eight bytes
// per slot, and a total is found without decoding the others.
type Values struct {
	mask   []uint64
	values []uint64
}

// Get returns the total of slot, and whether it is stored: a zero total
// is not, unless the tracker was told to emit zeros.
func (v Values) Get(slot int) (uint64, bool) {
	w, bit := slot>>6, uint(slot&63)
	if w >= len(v.mask) || v.mask[w]&(1<<bit) == 0 {
		return 0, false
	}
	i := bits.OnesCount64(v.mask[w] & (1<<bit - 1))
	for _, m := range v.mask[:w] {
		i += bits.OnesCount64(m)
	}
	return v.values[i], true
}

// publish makes the View of the run just ended.
func (t *Tracker) publish(err error) *View {
	v := &View{Format: t.format.String(), FormatFrom: t.formatFrom, Bounds: t.bounds, Err: err,
		Targets: make([]*TargetView, 0, len(t.order))}
	for _, tg := range t.order {
		tv := &TargetView{Component: tg.component, Target: tg.target,
			Outcomes: tg.outcomes, Malformed: tg.malformedLines, Duplicates: tg.duplicates}
		v.Targets = append(v.Targets, tv)
		if tg.group == nil {
			continue // forgotten: its identities with it
		}
		tv.RawSeries = tg.group.Len()
		tv.Identities = len(tg.group.Identities())
		tv.Active = tg.active
		tv.Density = tg.density
		tv.Ops = make([]Op, len(tg.opList))
		for i, o := range tg.opList {
			tv.Ops[i] = Op{Name: o.op, Unit: o.unit, Samples: o.samples, Sum: o.sum}
		}
		ids := tg.group.Identities()
		if tg.visible != nil {
			ids = tg.visible
		}
		t.encodeRows(tv, ids, len(tg.group.SlotNames()))
	}
	return v
}

// encodeRows stores the totals of ids in tv.
func (t *Tracker) encodeRows(tv *TargetView, ids []*identity, slots int) {
	tv.words = (slots + 63) / 64
	tv.Rows = make([]Row, len(ids))
	tv.masks = make([]uint64, len(ids)*tv.words)
	n := 0
	for _, id := range ids {
		if t.emitZero {
			n += slots
			continue
		}
		for _, v := range id.Totals {
			if v != 0 {
				n++
			}
		}
	}
	tv.values = make([]uint64, 0, n)
	for i, id := range ids {
		first := i * tv.words
		tv.Rows[i] = Row{Key: &id.Key, Created: id.Created, first: uint32(first), value: uint32(len(tv.values))}
		for slot := range slots {
			var v uint64
			if slot < len(id.Totals) {
				v = id.Totals[slot]
			}
			if v == 0 && !t.emitZero {
				continue
			}
			tv.masks[first+slot>>6] |= 1 << uint(slot&63)
			tv.values = append(tv.values, v)
		}
	}
}
