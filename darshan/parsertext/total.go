package parsertext

import (
	"github.com/hpcio/hpcio_exporter/darshan"
)

// The --total aggregation of darshan-parser: darshan-util's accumulator
// folds every record of a module into one with the module's
// log_agg_records function. Each counter has an aggregation rule; this file
// holds the rules' engine, and each module's file its plan of rules.

// The rules, by the names darshan-util's code gives them.
type (
	intRule   = darshan.IntRule
	floatRule = darshan.FloatRule
)

const (
	intIgnore      = darshan.IntIgnore
	intSum         = darshan.IntSum
	intSumClamp    = darshan.IntSumClamp
	intSet         = darshan.IntSet
	intMax         = darshan.IntMax
	intCommon      = darshan.IntCommon
	intCommonSkip0 = darshan.IntCommonSkip0

	floatIgnore     = darshan.FloatIgnore
	floatSum        = darshan.FloatSum
	floatMinNonZero = darshan.FloatMinNonZero
	floatMax        = darshan.FloatMax
	floatMaxTime    = darshan.FloatMaxTime
	floatFastest    = darshan.FloatFastest
	floatSlowest    = darshan.FloatSlowest
	floatZero       = darshan.FloatZero
)

// aggPlan is a module's aggregation: a rule per counter and the indexes of
// the counters the rules involve.
type aggPlan struct {
	ints   []intRule
	floats []floatRule
	sizeOf map[int]int // floatMaxTime counter -> its *_MAX_*_TIME_SIZE int counter

	bytesRead, bytesWritten                                 int // ints
	fastestRank, fastestBytes, slowestRank, slowestBytes    int // ints
	readTime, writeTime, metaTime, fastestTime, slowestTime int // floats
}

// newPlan builds a plan for layout l from a module's Totals; every counter
// not named gets the ignore rule.
func newPlan(l *darshan.Layout, t *darshan.Totals) *aggPlan {
	ints, floats, prefix := t.Ints, t.Floats, t.Prefix
	p := &aggPlan{ints: make([]intRule, len(l.Ints)), floats: make([]floatRule, len(l.Floats)), sizeOf: map[int]int{}}
	for i, n := range l.Ints {
		p.ints[i] = ints[n]
	}
	for i, n := range l.Floats {
		p.floats[i] = floats[n]
	}
	idx := func(n string) int { return l.IntIndex(prefix + n) }
	fidx := func(n string) int { return l.FloatIndex(prefix + n) }
	p.bytesRead, p.bytesWritten = idx("_BYTES_READ"), idx("_BYTES_WRITTEN")
	p.fastestRank, p.fastestBytes = idx("_FASTEST_RANK"), idx("_FASTEST_RANK_BYTES")
	p.slowestRank, p.slowestBytes = idx("_SLOWEST_RANK"), idx("_SLOWEST_RANK_BYTES")
	p.readTime, p.writeTime, p.metaTime = fidx("_F_READ_TIME"), fidx("_F_WRITE_TIME"), fidx("_F_META_TIME")
	p.fastestTime, p.slowestTime = fidx("_F_FASTEST_RANK_TIME"), fidx("_F_SLOWEST_RANK_TIME")
	if i := fidx("_F_MAX_READ_TIME"); i >= 0 {
		p.sizeOf[i] = idx("_MAX_READ_TIME_SIZE")
	}
	if i := fidx("_F_MAX_WRITE_TIME"); i >= 0 {
		p.sizeOf[i] = idx("_MAX_WRITE_TIME_SIZE")
	}
	return p
}

// accumulator folds a module's records into one, as darshan-util's
// darshan_accumulator_inject does with log_agg_records.
type accumulator struct {
	plan   *aggPlan
	layout *darshan.Layout
	n      int
	id     uint64
	rank   int64
	ints   []int64
	floats []float64
}

func newAccumulator(m darshan.ModuleID) *accumulator {
	l := darshan.LayoutOf(m, m.CurrentVersion())
	plan := newPlan(l, m.Module().Totals())
	// darshan-util's aggregate record starts zeroed (calloc).
	return &accumulator{plan: plan, layout: l, ints: make([]int64, len(l.Ints)), floats: make([]float64, len(l.Floats))}
}

func (a *accumulator) add(rec darshan.Record) {
	var r *darshan.CounterRecord
	switch v := rec.(type) {
	case *darshan.CounterRecord:
		r = v
	case *darshan.DFSRecord:
		r = &v.CounterRecord
	case *darshan.DAOSRecord:
		r = &v.CounterRecord
	default:
		return
	}
	a.agg(r, a.n == 0)
	a.n++
}

// agg is log_agg_records: fold record r into the aggregate.
func (a *accumulator) agg(r *darshan.CounterRecord, init bool) {
	p := a.plan
	var fastRank, slowRank, fastBytes, slowBytes int64
	var fastTime, slowTime float64
	if r.Rank == -1 { // shared records carry their reduced fastest/slowest values
		fastRank, slowRank = r.Ints[p.fastestRank], r.Ints[p.slowestRank]
		fastBytes, slowBytes = r.Ints[p.fastestBytes], r.Ints[p.slowestBytes]
		fastTime, slowTime = r.Floats[p.fastestTime], r.Floats[p.slowestTime]
	} else {
		fastRank, slowRank = r.Rank, r.Rank
		fastBytes = r.Ints[p.bytesRead] + r.Ints[p.bytesWritten]
		slowBytes = fastBytes
		fastTime = r.Floats[p.readTime] + r.Floats[p.writeTime] + r.Floats[p.metaTime]
		slowTime = fastTime
	}
	if init {
		a.rank, a.id = r.Rank, r.ID
	}
	sameFile := a.id == r.ID
	if !sameFile {
		a.id = 0
	}
	if a.rank != r.Rank {
		a.rank = -1
	}

	agg, in := a.ints, r.Ints
	var duplicate [4]bool
	for i, rule := range p.ints {
		switch rule {
		case intSum:
			agg[i] += in[i]
		case intSumClamp:
			agg[i] += in[i]
			if agg[i] < 0 {
				agg[i] = -1
			}
		case intSet:
			agg[i] = in[i]
		case intMax:
			if in[i] > agg[i] {
				agg[i] = in[i]
			}
		case intCommon:
			duplicate = [4]bool{}
			collapseCommon(agg, in, i, &duplicate)
		case intCommonSkip0:
			if in[i] != 0 {
				collapseCommon(agg, in, i, &duplicate)
			}
		}
	}

	fagg, fin := a.floats, r.Floats
	for i, rule := range p.floats {
		switch rule {
		case floatSum:
			fagg[i] += fin[i]
		case floatMinNonZero:
			if fin[i] > 0 && (fagg[i] == 0 || fin[i] < fagg[i]) {
				fagg[i] = fin[i]
			}
		case floatMax:
			if fin[i] > fagg[i] {
				fagg[i] = fin[i]
			}
		case floatMaxTime:
			if fin[i] > fagg[i] {
				fagg[i] = fin[i]
				agg[p.sizeOf[i]] = in[p.sizeOf[i]]
			}
		case floatFastest:
			switch {
			case !sameFile: // only meaningful over records of one file
				agg[p.fastestRank], agg[p.fastestBytes], fagg[i] = -1, -1, 0
			case init || fastTime < fagg[i]:
				agg[p.fastestRank], agg[p.fastestBytes], fagg[i] = fastRank, fastBytes, fastTime
			}
		case floatSlowest:
			switch {
			case !sameFile:
				agg[p.slowestRank], agg[p.slowestBytes], fagg[i] = -1, -1, 0
			case init || slowTime > fagg[i]:
				agg[p.slowestRank], agg[p.slowestBytes], fagg[i] = slowRank, slowBytes, slowTime
			}
		case floatZero:
			fagg[i] = 0
		}
	}
}

// collapseCommon merges the record's block of 4 most common values (in[i:i+4],
// counts in[i+4:i+8]) into the aggregate's, exactly as darshan-util does,
// down to its quirks: the running count is a C int (32 bits), and the last
// loop may look past the block when the record repeats a value.
func collapseCommon(agg, in []int64, i int, duplicate *[4]bool) {
	at := func(k int) int64 { // agg[i+k], reading past the counters as 0
		if i+k < len(agg) {
			return agg[i+k]
		}
		return 0
	}
	// first, add the counts of values both already have
	for j := i; j < i+4; j++ {
		for k := range 4 {
			if agg[i+k] == in[j] {
				agg[i+k+4] += in[j+4]
				duplicate[j-i] = true
			}
		}
	}
	// second, insert the new values in count order
	for j := i; j < i+4; j++ {
		if duplicate[j-i] {
			continue
		}
		var vals, cnts [4]int64
		n := 0
		if in[j] == 0 {
			break
		}
		var total int32
		k := 0
		for ; k < 4; k++ {
			if agg[i+k] == in[j] {
				total = int32(agg[i+k+4] + in[j+4])
				break
			}
		}
		if k == 4 {
			total = int32(in[j+4])
		}
		for k = 0; k < 4; k++ {
			if c := agg[i+k+4]; c > int64(total) || (c == int64(total) && agg[i+k] > in[j]) {
				vals[n], cnts[n] = agg[i+k], c
				n++
			} else {
				break
			}
		}
		if n == 4 {
			break
		}
		vals[n], cnts[n] = in[j], in[j+4]
		n++
		for n != 4 {
			if at(k) != in[j] {
				vals[n], cnts[n] = at(k), at(k+4)
				n++
			}
			k++
		}
		copy(agg[i:i+4], vals[:])
		copy(agg[i+4:i+8], cnts[:])
	}
}

// print writes the aggregate as posix_print_total_file and its siblings do.
func (a *accumulator) print(p *printer) {
	for i, n := range a.layout.Ints {
		p.str("total_")
		p.str(n)
		p.str(": ")
		p.int(a.ints[i])
		p.byte('\n')
	}
	for i, n := range a.layout.Floats {
		p.str("total_")
		p.str(n)
		p.str(": ")
		p.fixed(a.floats[i], 6)
		p.byte('\n')
	}
}
