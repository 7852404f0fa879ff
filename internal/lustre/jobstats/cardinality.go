package jobstats

import "container/heap"

// What the tracker does about cardinality: the rate density
// (docs/rates.md, "The rate density"), which sums up
// thousands of jobs in a few series; a cap on the identities with series,
// the rest folded into jobid="_other"; and filters on the identity labels
// (config.go).

// Density is one target's and operation's rate density over the last
// interval: how many identities moved at which rate.
type Density struct {
	// Op is the operation: "read" and "write" for the bytes of
	// read_bytes and write_bytes, else the job_stats operation.
	Op string
	// Bytes tells a density of bytes per second from one of operations
	// per second.
	Bytes bool
	// Below[j] counts the identities whose rate was below View.Bounds[j].
	Below   []uint64
	Count   uint64
	SumRate float64
}

func (d *Density) observe(bounds []float64, rate float64) {
	d.Count++
	d.SumRate += rate
	// The bucket y = floor(log_b(rate)), found on the exact bounds rather
	// than with a logarithm that may round across a bound.
	for j := len(bounds) - 1; j >= 0 && rate < bounds[j]; j-- {
		d.Below[j]++
	}
}

// summarize runs after each lctl run: it forgets the targets whose group
// the accumulator forgot, counts the active identities, builds the rate
// density, picks the identities with series of their own and folds the
// increments of the others into "_other". Everything it makes is new, so
// that the Views of earlier runs stay as they were published.
func (t *Tracker) summarize() {
	live := make(map[*group]bool, len(t.order))
	for _, g := range t.acc.Groups() {
		live[g] = true
	}
	run := t.acc.Run()
	interval := t.acc.Interval().Seconds()
	otherKey := Key{OtherJob}
	for _, tg := range t.order {
		tg.active, tg.density, tg.visible = 0, nil, nil
		if tg.group != nil && !live[tg.group] {
			tg.group, tg.ops, tg.opList, tg.byPlace, tg.shown = nil, nil, nil, nil, nil
			tg.recheck = nil
		}
		if tg.group == nil {
			continue
		}
		var byDelta []*Density // by index in Identity.Delta
		if interval > 0 && t.bounds != nil {
			byDelta = make([]*Density, len(tg.group.SlotNames()))
			tg.density = make([]Density, 0, len(tg.opList))
			for i := range tg.opList {
				o := &tg.opList[i]
				switch o.op {
				case "read_bytes", "write_bytes":
					if o.sum >= 0 {
						tg.density = append(tg.density, Density{Op: o.op[:len(o.op)-len("_bytes")], Bytes: true, Below: make([]uint64, len(t.bounds))})
						byDelta[tg.group.DeltaIndex(o.sum)] = &tg.density[len(tg.density)-1]
					}
				default:
					tg.density = append(tg.density, Density{Op: o.op, Below: make([]uint64, len(t.bounds))})
					byDelta[tg.group.DeltaIndex(o.samples)] = &tg.density[len(tg.density)-1]
				}
			}
		}
		for _, id := range tg.group.Identities() {
			if aggregate(id) {
				continue // not a job: neither active nor in the density
			}
			if id.SeenInRun(run) {
				tg.active++
			}
			if byDelta == nil {
				continue
			}
			for di, d := range id.RunDelta(run) {
				if d > 0 && byDelta[di] != nil {
					byDelta[di].observe(t.bounds, float64(d)/interval)
				}
			}
		}
		if t.maxSeries > 0 {
			t.capSeries(tg, run, otherKey)
		}
	}
}

// capSeries keeps the maxSeries identities that moved the most bytes (then
// operations) in the last run, preferring those already shown so that
// series do not flap at the boundary; the increments of the others move to
// "_other".
func (t *Tracker) capSeries(tg *target, run uint64, otherKey Key) {
	ids := tg.group.Identities()
	if len(ids) <= t.maxSeries {
		return
	}
	isBytes := make([]bool, len(tg.group.SlotNames()))
	isSamples := make([]bool, len(tg.group.SlotNames()))
	for _, o := range tg.opList {
		if (o.op == "read_bytes" || o.op == "write_bytes") && o.sum >= 0 {
			isBytes[tg.group.DeltaIndex(o.sum)] = true
		}
		isSamples[tg.group.DeltaIndex(o.samples)] = true
	}
	score := func(id *identity) float64 {
		var bytes, ops float64
		for di, d := range id.RunDelta(run) {
			switch {
			case isBytes[di]:
				bytes += float64(d)
			case isSamples[di]:
				ops += float64(d)
			}
		}
		s := bytes*1e6 + ops // bytes first, operations break ties
		if tg.shown[id] {
			s = s*2 + 1
		}
		return s
	}
	top := &scoreHeap{}
	for _, id := range ids {
		if aggregate(id) {
			continue
		}
		heap.Push(top, scored{id, score(id)})
		if top.Len() > t.maxSeries {
			heap.Pop(top)
		}
	}
	shown := make(map[*identity]bool, top.Len())
	for _, s := range *top {
		shown[s.id] = true
	}
	other := tg.group.Fold(otherKey, nil)
	visible := make([]*identity, 0, t.maxSeries+1)
	for _, id := range ids {
		switch {
		case id.Key == otherKey:
		case shown[id] || aggregate(id):
			visible = append(visible, id)
		default:
			// Its increments of this run count in "_other" alone: its
			// own series, if it gets one back, goes on from where it
			// stopped, and sums over all series stay exact.
			tg.group.MoveRun(id, otherKey)
		}
	}
	tg.visible = append(visible, other)
	tg.shown = shown
}

// aggregate tells the identities that are not one job: "_other" and
// "_untrusted", which always keep their series, outside the cap.
func aggregate(id *identity) bool {
	return id.Key == Key{OtherJob} || id.Key == Key{UntrustedJob}
}

type scored struct {
	id    *identity
	score float64
}

// scoreHeap is a min-heap: the root is the weakest of the kept.
type scoreHeap []scored

func (h scoreHeap) Len() int           { return len(h) }
func (h scoreHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h scoreHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoreHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *scoreHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
