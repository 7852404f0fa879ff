package lustresim

import (
	"math"
	"strings"
	"sync"
)

// The targets' own counters (obdfilter.*.stats, mdt.*.md_stats and their
// exports): every request of every job, whether or not a reader ever saw
// it in job_stats. With jobs coming and going they are exact from the
// first moment the simulator prints them (the anchor): the sum, over every
// job entry on the target, of its counts since then, in the integers
// job_stats print (floor of rate × active time), so that a target's
// increase between two moments is what its jobs did. The weeks between the
// server's boot and the anchor are not simulated job by job: a base
// integrates the target's average rates over them. Static jobs keep the
// average rates throughout (families_write.go), which are then exact.

// opCount is one operation's counters on a target.
type opCount struct{ samples, sum, sumsq uint64 }

// counts are every target's counters, by kind (0 MDT, 1 OST), target
// index and operation, in the order of the dialect's operation list
// (opNames).
type counts [2][][]opCount

func kindOf(mdt bool) int {
	if mdt {
		return 0
	}
	return 1
}

// opNames are the operations a target's entries print, in their order.
func (s *Sim) opNames(mdt bool) []string {
	modern := s.cfg.Dialect == Lustre215
	switch {
	case mdt && modern:
		return mdtOps215
	case mdt:
		return mdtOps212
	case modern:
		return ostOps215
	}
	return ostOps212
}

func (s *Sim) newCounts() counts {
	var c counts
	for k, n := range []int{s.cfg.MDTs, s.cfg.OSTs} {
		c[k] = make([][]opCount, n)
		for i := range c[k] {
			c[k][i] = make([]opCount, len(s.opNames(k == 0)))
		}
	}
	return c
}

func (c counts) add(d counts) {
	for k := range c {
		for i := range c[k] {
			for o := range c[k][i] {
				c[k][i][o].samples += d[k][i][o].samples
				c[k][i][o].sum += d[k][i][o].sum
				c[k][i][o].sumsq += d[k][i][o].sumsq
			}
		}
	}
}

// totalsState holds the anchor and what is known of the past.
type totalsState struct {
	mu     sync.Mutex
	anchor float64 // Unix seconds; 0 until first asked
	base   counts  // from boot to the anchor, at the average rates
	// Epochs below done have no job left at latest: their jobs' counts
	// since the anchor are summed in finished once and for all.
	first, done int64
	finished    counts
	latest      float64 // the latest moment asked for
	at          float64 // the moment of cached
	cached      counts
}

// addJob adds what job j's entries counted in [from, to).
func (s *Sim) addJob(c counts, j *Job, from, to float64) {
	for _, e := range j.entries {
		k := kindOf(e.mdt)
		if e.target >= len(c[k]) {
			continue
		}
		act := j.activeTime(from-e.phase, to-e.phase)
		if act <= 0 {
			continue
		}
		tc := c[k][e.target]
		for i, o := range e.ops {
			n := uint64(o.rate * act)
			if n == 0 || i >= len(tc) {
				continue
			}
			tc[i].samples += n
			tc[i].sum += n * o.perSample
			tc[i].sumsq += n * o.perSample * o.perSample
		}
	}
}

// epochDone reports whether every job of epoch e has left by t.
func (s *Sim) epochDone(e int64, t float64) bool {
	return s.origin+float64(e+1)*epochLength+lifetimeMax <= t
}

// targetCounts returns every target's counters at t. Not for Static jobs.
func (s *Sim) targetCounts(t float64) counts {
	st := &s.totals
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cached[0] != nil && st.at == t {
		return st.cached
	}
	if st.anchor == 0 || s.boot(t) > st.anchor {
		// First asked, or the server rebooted since the anchor: counters
		// start from the base (none after a reboot, whose jobs are all
		// simulated).
		st.anchor = t
		st.base = s.newCounts()
		if b := s.boot(t); b < t {
			s.averageCounts(st.base, t-b)
		} else {
			st.anchor = b
		}
		st.first = int64(math.Floor((st.anchor-lifetimeMax-s.origin)/epochLength)) - 1
		st.done = st.first
		st.finished = s.newCounts()
		st.latest = st.anchor
	}
	if t < st.anchor {
		// Before the anchor: the average rates, below the base.
		c := s.newCounts()
		s.averageCounts(c, t-s.boot(t))
		return c
	}
	c := s.newCounts()
	finished := st.finished
	done := st.done
	if t < st.latest {
		// Asked about an earlier moment than before: without the
		// epochs summed since, some of whose jobs may not have left yet.
		finished, done = s.newCounts(), st.first
	}
	for ; s.epochDone(done, t); done++ {
		for _, j := range s.epoch(done) {
			s.addJob(finished, j, st.anchor, math.Inf(1))
		}
	}
	if t >= st.latest {
		st.done, st.latest = done, t
	}
	last := int64(math.Floor((t - s.origin) / epochLength))
	for e := done; e <= last; e++ {
		for _, j := range s.epoch(e) {
			s.addJob(c, j, st.anchor, t)
		}
	}
	for _, j := range s.special {
		s.addJob(c, j, st.anchor, t)
	}
	c.add(finished)
	c.add(st.base)
	st.at, st.cached = t, c
	return c
}

// averageCounts adds the targets' average rates (familyState) integrated
// over d seconds.
func (s *Sim) averageCounts(c counts, d float64) {
	f := s.families()
	for k, rates := range [][]targetRates{f.mdt, f.ost} {
		names := s.opNames(k == 0)
		for i := range rates {
			if i >= len(c[k]) {
				continue
			}
			for _, o := range rates[i].ops {
				idx := indexOf(names, o.name)
				if idx < 0 || o.samples <= 0 {
					continue
				}
				n := uint64(math.Max(0, o.samples*d))
				per := uint64(o.sum / o.samples)
				c[k][i][idx] = opCount{n, n * per, n * per * per}
			}
		}
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// writeTargetCounts prints a target's counters at t, scaled by share (an
// export's part of the target's traffic).
func (s *Sim) writeTargetCounts(w *writer, r *targetRates, isMDT bool, idx int, share, t float64) {
	c := s.targetCounts(t)
	k := kindOf(isMDT)
	if idx >= len(c[k]) {
		return
	}
	for i, name := range s.opNames(isMDT) {
		oc := c[k][idx][i]
		if share != 1 {
			// Exact integers for the target itself: float64 has 53 bits,
			// weeks of bytes may need more.
			oc = opCount{uint64(float64(oc.samples) * share), uint64(float64(oc.sum) * share), uint64(float64(oc.sumsq) * share)}
		}
		n, sum, sumsq := oc.samples, oc.sum, oc.sumsq
		if n == 0 {
			continue
		}
		per := sum / n
		switch {
		case strings.HasSuffix(name, "_bytes"):
			lo, hi := sizeRange(r.readRPC)
			if name == "write_bytes" {
				lo, hi = sizeRange(r.writeRPC)
			}
			s.sums(w, name, n, "bytes", lo, hi, sum, sumsq)
		case s.cfg.Dialect == Lustre215:
			s.sums(w, name, n, "usecs", per/3, per*4, sum, sumsq)
		default:
			w.statLine(name, n, "reqs")
		}
	}
}

// sums prints a counter of n samples summing to sum.
func (s *Sim) sums(w *writer, name string, n uint64, unit string, lo, hi, sum, sumsq uint64) {
	if s.cfg.Dialect == Lustre215 {
		w.statLine(name, n, unit, lo, hi, sum, sumsq)
	} else {
		w.statLine(name, n, unit, lo, hi, sum)
	}
}
