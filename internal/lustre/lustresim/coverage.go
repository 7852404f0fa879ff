package lustresim

import (
	"strings"
	"sync"
)

// Jobstats coverage, the truth of it: what a target's job_stats showed to
// whoever read them, against what the target counted. Lustre counts every
// request in the target's stats, but a job_stats entry cleaned up before
// anyone read it takes along what it counted since the last read. Which
// traffic is lost depends on when the reads happened, so the simulator
// notes its reads: for each entry printed, the increase since the entry's
// last read by the δ rule, with the entry's true lifetime (not a guess from
// its values), and, at each read, the target's own counters. A reader that
// counts job_stats exactly (the exporter's lustre_jobstats_*_total) moves as
// Seen does; the ratio of the increases of Seen and Counted between two
// reads is the coverage of that interval.

// Traffic is what coverage is measured in: bytes on OSTs, operations on
// MDTs.
type Traffic struct {
	// Bytes are the sums of read_bytes and write_bytes.
	Bytes uint64 `json:"bytes"`
	// Ops are the samples of every other operation.
	Ops uint64 `json:"operations"`
}

// CoverageRead is one read of a target's job_stats: at Time (Unix
// seconds), the traffic its entries had shown to the reads so far, and
// the traffic the target's own counters held.
type CoverageRead struct {
	Time    float64 `json:"time"`
	Seen    Traffic `json:"seen"`
	Counted Traffic `json:"counted"`
}

// coverageKeep is how long reads are kept.
const coverageKeep = 30 * 60.0

type coverageState struct {
	mu      sync.Mutex
	targets map[string]*targetCoverage
}

type targetCoverage struct {
	// last holds each entry's lifetime start and values at its latest
	// read, by raw job_id (Lustre's key).
	last  map[string]*seenEntry
	seen  Traffic
	reads []CoverageRead
	count int // reads so far
}

type seenEntry struct {
	start float64
	vals  []uint64 // samples and sum of each operation, in turn
	read  int      // the read that printed it last
}

// coverageRead is one read of a target's job_stats, applied when it ends:
// the lock is not held while the text goes out.
type coverageRead struct {
	s       *Sim
	name    string
	mdt     bool
	target  int
	printed []printedEntry
}

type printedEntry struct {
	e     *entry
	start float64
	vals  []uint64
}

// beginRead starts recording a read of target's job_stats, nil when the
// simulator keeps no coverage.
func (s *Sim) beginRead(component, target string) *coverageRead {
	if !s.cfg.Coverage {
		return nil
	}
	return &coverageRead{s: s, name: target, mdt: component == "mdt", target: targetIndex(target)}
}

// entry records an entry printed with lifetime start and, per operation,
// samples and sum, in turn.
func (r *coverageRead) entry(e *entry, start float64, vals []uint64) {
	r.printed = append(r.printed, printedEntry{e, start, vals})
}

// end closes the read at t: what each entry showed since its last read
// (all of it in a new lifetime) is seen; entries not printed are gone at
// the source.
func (r *coverageRead) end(t float64) {
	read := CoverageRead{Time: t}
	if !r.s.cfg.Static {
		c := r.s.targetCounts(t)
		k := kindOf(r.mdt)
		if r.target < len(c[k]) {
			for i, name := range r.s.opNames(r.mdt) {
				oc := c[k][r.target][i]
				if strings.HasSuffix(name, "_bytes") {
					read.Counted.Bytes += oc.sum
				} else {
					read.Counted.Ops += oc.samples
				}
			}
		}
	}

	cs := &r.s.coverage
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.targets == nil {
		cs.targets = map[string]*targetCoverage{}
	}
	tc := cs.targets[r.name]
	if tc == nil {
		tc = &targetCoverage{last: map[string]*seenEntry{}}
		cs.targets[r.name] = tc
	}
	tc.count++
	for _, p := range r.printed {
		prev := tc.last[p.e.rawID]
		if prev == nil || prev.start != p.start || len(prev.vals) != len(p.vals) {
			prev = &seenEntry{start: p.start, vals: make([]uint64, len(p.vals))}
			tc.last[p.e.rawID] = prev
		}
		for i, o := range p.e.ops {
			dn, dsum := delta(p.vals[2*i], prev.vals[2*i]), delta(p.vals[2*i+1], prev.vals[2*i+1])
			if strings.HasSuffix(o.name, "_bytes") {
				tc.seen.Bytes += dsum
			} else {
				tc.seen.Ops += dn
			}
		}
		copy(prev.vals, p.vals)
		prev.read = tc.count
	}
	for id, e := range tc.last {
		if e.read != tc.count {
			delete(tc.last, id)
		}
	}
	read.Seen = tc.seen
	drop := 0
	for drop < len(tc.reads) && tc.reads[drop].Time < t-coverageKeep {
		drop++
	}
	tc.reads = append(tc.reads[drop:], read)
}

// delta is the δ rule: the increase, or the whole value after a restart.
// (A read at an earlier moment than the last one, which only tests make,
// counts as a restart.)
func delta(v, prev uint64) uint64 {
	if v >= prev {
		return v - prev
	}
	return v
}

// Coverage returns, by target name, the reads of its job_stats in the
// last half hour, oldest first. Empty unless Config.Coverage.
func (s *Sim) Coverage() map[string][]CoverageRead {
	cs := &s.coverage
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := map[string][]CoverageRead{}
	for name, tc := range cs.targets {
		out[name] = append([]CoverageRead(nil), tc.reads...)
	}
	return out
}

// Coverages returns, by target, the coverage between the first read at or
// after from and the last read at or before to (Unix seconds): the increase
// of Seen over that of Counted, in bytes for OSTs and operations for
// MDTs. Targets that counted nothing in the interval are left out.
func Coverages(reads map[string][]CoverageRead, from, to float64) map[string]float64 {
	out := map[string]float64{}
	for name := range reads {
		var a, b *CoverageRead
		for i := range reads[name] {
			r := &reads[name][i]
			if r.Time >= from && a == nil {
				a = r
			}
			if r.Time <= to {
				b = r
			}
		}
		if a == nil || b == nil || b.Time <= a.Time {
			continue
		}
		seen, counted := b.Seen.Bytes-a.Seen.Bytes, b.Counted.Bytes-a.Counted.Bytes
		if strings.Contains(name, "-MDT") {
			seen, counted = b.Seen.Ops-a.Seen.Ops, b.Counted.Ops-a.Counted.Ops
		}
		if counted > 0 {
			out[name] = float64(seen) / float64(counted)
		}
	}
	return out
}
