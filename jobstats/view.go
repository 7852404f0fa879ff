package jobstats

import (
	"encoding/binary"

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
	data []byte // the values of Rows, see Row.Values
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
	end     uint32 // the end of its values in TargetView.data
}

// Values returns an iterator over the row's totals, in slot order: zero
// totals are left out unless the tracker was told to emit them.
func (t *TargetView) Values(i int) Values {
	start := uint32(0)
	if i > 0 {
		start = t.Rows[i-1].end
	}
	return Values{b: t.data[start:t.Rows[i].end]}
}

// Values iterates over the totals of one row. Each is stored as two
// uvarints, slot and value: most identities touch a few of a target's
// operations, so a row costs tens of bytes instead of eight per slot, and
// two Views (the one being written, the one being made) fit where one
// dense copy would.
type Values struct {
	b []byte
	// Slot and Value are the current total, after Next returned true.
	Slot  int
	Value uint64
}

// Next moves to the next total.
func (v *Values) Next() bool {
	if len(v.b) == 0 {
		return false
	}
	slot, n := binary.Uvarint(v.b)
	value, m := binary.Uvarint(v.b[n:])
	v.b = v.b[n+m:]
	v.Slot, v.Value = int(slot), value
	return true
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
	tv.Rows = make([]Row, 0, len(ids))
	size := 0
	for _, id := range ids {
		for _, v := range id.Totals {
			if v != 0 {
				size += 1 + uvarintLen(v)
			}
		}
	}
	if t.emitZero {
		size += 2 * len(ids) * slots
	}
	data := make([]byte, 0, size)
	for _, id := range ids {
		for slot := range slots {
			var v uint64
			if slot < len(id.Totals) {
				v = id.Totals[slot]
			}
			if v == 0 && !t.emitZero {
				continue
			}
			data = binary.AppendUvarint(data, uint64(slot))
			data = binary.AppendUvarint(data, v)
		}
		tv.Rows = append(tv.Rows, Row{Key: &id.Key, Created: id.Created, end: uint32(len(data))})
	}
	tv.data = data
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
