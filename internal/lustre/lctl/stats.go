package lctl

import (
	"bytes"
	"sync"
)

// The "stats" format is Lustre's lprocfs counter table, printed by
// obdfilter.*.stats, mdt.*.md_stats, osd-*.*.stats, ost.OSS.*.stats,
// mds.MDS.*.stats, ldlm.services.*.stats, mgs.MGS.mgs.stats, llite.*.stats
// and every exports.*.stats:
//
//	snapshot_time             1716295737.287969347 secs.nsecs
//	start_time                1715712428.324534805 secs.nsecs   (2.14-ddn and 2.15+)
//	elapsed_time              583308.963434542 secs.nsecs
//	create                    4 samples [usecs] 3 1058 1459 1227857
//	ioctl                     114 samples [reqs]
//
// A counter line is name, count, the word "samples", a bracketed unit, and
// then, for counters that keep them, min, max, sum and (optionally) the sum
// of squares. Lustre prints min, max and sum signed.

// Stat is one counter line.
type Stat struct {
	Name    string // interned
	Unit    Unit
	Samples uint64
	// Min, Max and Sum are valid when HasSum is set; SumSq when HasSumSq.
	Min, Max, Sum int64
	SumSq         uint64
	HasSum        bool
	HasSumSq      bool
}

// StatsSection is the body of one stats parameter. Its Stats slice is
// reused by the parser: a handler copies what it keeps.
type StatsSection struct {
	SnapshotTime float64 // Unix seconds; 0 when absent
	StartTime    float64 // Unix seconds the counters started (2.14-ddn, 2.15+); 0 when absent
	Stats        []Stat
	// Malformed counts lines that could not be read (a value printed as
	// "not supported", a cut line, garbage); the other lines are valid.
	Malformed int
}

// StatsParser is the SectionParser of a stats parameter. It matches no
// regular expression and allocates nothing per line once its slice has
// grown to the section's size.
type StatsParser struct {
	sec  StatsSection
	done func(sec *StatsSection, complete bool)
}

// NewStatsParser returns a parser that hands the section to done when it
// ends. complete is false when lctl's output stopped inside it.
func NewStatsParser(done func(sec *StatsSection, complete bool)) *StatsParser {
	return &StatsParser{done: done}
}

// Line implements SectionParser.
func (p *StatsParser) Line(line []byte) {
	name, rest := nextField(line)
	if len(name) == 0 {
		return // blank line
	}
	name = bytes.TrimSuffix(name, []byte{':'})
	switch string(name) {
	case "snapshot_time", "start_time", "elapsed_time":
		t, ok := parseSeconds(trimLeft(rest))
		switch {
		case !ok:
			p.sec.Malformed++
		case string(name) == "snapshot_time":
			p.sec.SnapshotTime = t
		case string(name) == "start_time":
			p.sec.StartTime = t
		}
		return
	}
	st, ok := parseStatLine(name, rest)
	if !ok {
		p.sec.Malformed++
		return
	}
	p.sec.Stats = append(p.sec.Stats, st)
}

// End implements SectionParser.
func (p *StatsParser) End(complete bool) {
	p.done(&p.sec, complete)
	p.sec = StatsSection{Stats: p.sec.Stats[:0]}
}

// parseStatLine reads "N samples [unit] min max sum sumsq" after the name.
func parseStatLine(name, rest []byte) (Stat, bool) {
	st := Stat{Name: internStat(name)}
	if st.Name == "" {
		return st, false
	}
	count, rest := nextField(rest)
	word, rest := nextField(rest)
	var ok bool
	if st.Samples, ok = parseUint(count); !ok || string(word) != "samples" {
		return st, false
	}
	unit, rest := nextField(rest)
	if len(unit) > 0 {
		if len(unit) < 2 || unit[0] != '[' || unit[len(unit)-1] != ']' {
			return st, false
		}
		st.Unit = parseUnit(unit[1 : len(unit)-1])
	}
	var f [4][]byte
	n := 0
	for n < len(f) {
		f[n], rest = nextField(rest)
		if len(f[n]) == 0 {
			break
		}
		n++
	}
	if extra, _ := nextField(rest); len(extra) > 0 {
		return st, false
	}
	switch n {
	case 0:
		return st, true
	case 3, 4:
	default:
		return st, false
	}
	if st.Min, ok = parseInt(f[0]); !ok {
		return st, false
	}
	if st.Max, ok = parseInt(f[1]); !ok {
		return st, false
	}
	if st.Sum, ok = parseInt(f[2]); !ok {
		return st, false
	}
	st.HasSum = true
	if n == 4 {
		if st.SumSq, ok = parseUint(f[3]); !ok {
			return st, false
		}
		st.HasSumSq = true
	}
	return st, true
}

// nextField returns the first run of non-blank bytes of b and what follows.
func nextField(b []byte) (field, rest []byte) {
	b = trimLeft(b)
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	return b[:i], b[i:]
}

// parseInt parses an optionally negative decimal integer.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parseUint(b)
	if !ok || u > 1<<63-1 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// Counter names are interned, as job_stats operations are, so that a run
// allocates nothing per line; the table is separate and bounded, so that
// garbage cannot exhaust it and crowd out real names.
var (
	statNamesMu sync.RWMutex
	statNames   = map[string]string{}
)

const maxStatNames = 4096

func internStat(b []byte) string {
	statNamesMu.RLock()
	s, ok := statNames[string(b)]
	statNamesMu.RUnlock()
	if ok {
		return s
	}
	if len(b) == 0 || len(b) > 64 {
		return ""
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return ""
		}
	}
	statNamesMu.Lock()
	defer statNamesMu.Unlock()
	if s, ok := statNames[string(b)]; ok {
		return s
	}
	if len(statNames) >= maxStatNames {
		return ""
	}
	s = string(b)
	statNames[s] = s
	return s
}
