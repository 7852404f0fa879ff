// Package insights turns a Darshan log into the I/O insights Drishti
// (hpc-io/drishti-io) reports: the same codes (S01, P01–P22, M01–M10), the
// same levels and default thresholds, the same formulas, computed natively
// from the log's counters (and its DXT traces where a trigger needs them),
// with recommendations in this project's own words.
//
// FromLog reduces a log to Totals, a compact summary that is independent of
// the thresholds: the sidecar keeps one per log, for thousands of logs, and
// Merge adds a job's logs together. Evaluate holds Totals to a Config and
// returns one Insight per trigger the log lets decide. docs/insights.md has
// the table of codes, formulas and thresholds, and the comparison with
// Drishti; each trigger's formula is also documented beside its code in
// triggers.go.
package insights

import (
	"cmp"
	"slices"
)

// Level is the severity of an insight, ordered: a higher Level is worse.
// Drishti's levels are HIGH, WARN, INFO and OK.
type Level uint8

const (
	// OK: the trigger was decided and found nothing to report, or it is one
	// of Drishti's good-news codes (P12, P14, M04, M05, M08, M10).
	OK Level = iota
	// Info: a description of the job's I/O (read or write intensive).
	Info
	// Warn: worth a look.
	Warn
	// High: a known cause of poor I/O performance.
	High
)

// String returns the level as Drishti prints it: "OK", "INFO", "WARN",
// "HIGH".
func (l Level) String() string {
	switch l {
	case OK:
		return "OK"
	case Info:
		return "INFO"
	case Warn:
		return "WARN"
	case High:
		return "HIGH"
	}
	return "UNKNOWN"
}

// ParseLevel is the inverse of Level.String.
func ParseLevel(s string) (Level, bool) {
	for l := OK; l <= High; l++ {
		if l.String() == s {
			return l, true
		}
	}
	return OK, false
}

// Insight is the outcome of one trigger on one log (or one job's logs).
type Insight struct {
	Code  string
	Level Level
	// Value is the number that decided the trigger and Threshold the one it
	// was held to (NaN when the trigger has none, as M01).
	Value, Threshold float64
	// Message is one line, with the numbers.
	Message string
	// Recommendations are what to try, in order; empty for OK and INFO.
	Recommendations []string
	// Files is optional detail: the files that contribute most (full
	// paths; the CLI shortens them), at most MaxFiles.
	Files []string

	// Fired reports whether the trigger's condition holds, i.e. whether
	// Drishti would print this code. For most codes Fired means Level is
	// the code's own level and !Fired means Level is OK; the good-news
	// codes (P12, P14, M04, M05, M08, M10) are OK either way.
	Fired bool
	// Count and CountThreshold are the second condition of the triggers
	// that have two (an absolute count beside a ratio: P05, P06, P11,
	// P13, P15, P16, M02, M03), or the number of files or records that
	// crossed a per-file threshold (P17–P22); NaN when none.
	Count, CountThreshold float64
}

// Evaluate holds t to cfg and returns one Insight per trigger the log lets
// decide, OK ones included, sorted by level (High first) then code. A nil
// t gives nil.
func Evaluate(t *Totals, cfg Config) []Insight {
	return evaluate(t, &evalCtx{Config: cfg})
}

// Decide is Evaluate without the text, for a user that keeps only the
// decisions (the sidecar): every Insight is that of Evaluate, in the same
// order, but for Message and Files, which are empty, and Recommendations,
// which holds only the first one (the general advice) of those that fired,
// in a slice shared between calls (not to be modified). Writing the text
// is most of what Evaluate costs: Decide writes a code's once.
func Decide(t *Totals, cfg Config) []Insight {
	return DecideAppend(nil, t, cfg)
}

// DecideAppend is Decide appending to dst[:0] (a caller's scratch,
// reused from one job to the next: the slice is most of what Decide
// allocates).
func DecideAppend(dst []Insight, t *Totals, cfg Config) []Insight {
	return evaluateTo(dst, t, &evalCtx{Config: cfg, brief: true})
}

// A Decider is Decide with one Config, for a user that decides many
// Totals with the same thresholds and keeps only the insights that fired
// (the sidecar, each time a job's logs change): made once, it allocates
// nothing per call, and sorts only what fired. It is safe for concurrent
// use.
type Decider struct{ c evalCtx }

// NewDecider returns the Decider of cfg.
func NewDecider(cfg Config) *Decider { return &Decider{c: evalCtx{Config: cfg, brief: true}} }

// Fired appends to dst[:0] the insights of Decide(t, cfg) whose Level is
// above OK, as Decide gives them and in its order, and returns them with
// the number of insights Decide gives (OK ones included). dst is the
// caller's scratch, reused from one call to the next.
func (d *Decider) Fired(dst []Insight, t *Totals) (fired []Insight, decided int) {
	if t == nil {
		return dst[:0], 0
	}
	if cap(dst) < len(Codes) {
		dst = make([]Insight, 0, len(Codes)) // at most one per code: no regrowth
	}
	all := dst[:0]
	for _, tr := range triggers {
		all = tr(t, &d.c, all)
	}
	// Those that fired, in place; sorted alone, they come in the order
	// they have among all (the order is total).
	fired = all[:0]
	for i := range all {
		if all[i].Level != OK {
			fired = append(fired, all[i])
		}
	}
	sortInsights(fired)
	return fired, len(all)
}

func evaluate(t *Totals, c *evalCtx) []Insight { return evaluateTo(nil, t, c) }

func evaluateTo(out []Insight, t *Totals, c *evalCtx) []Insight {
	if t == nil {
		return nil
	}
	if cap(out) < len(Codes) {
		out = make([]Insight, 0, len(Codes)) // at most one per code: no regrowth
	}
	out = out[:0]
	for _, tr := range triggers {
		out = tr(t, c, out)
	}
	sortInsights(out)
	return out
}

// sortInsights sorts by level, High first, then code (unique: any sort is
// the stable one). An Insight is 136 bytes: keys are sorted, each holding
// an Insight's level, code and index, and each Insight is moved once.
// Comparing the codes as strings was most of an evaluation's time.
func sortInsights(out []Insight) {
	var keys [64]uint64
	n := len(out)
	ok := n <= len(keys)
	for i := 0; ok && i < n; i++ {
		var k uint64
		k, ok = sortKey(&out[i])
		keys[i] = k<<8 | uint64(i)
	}
	if !ok {
		slices.SortStableFunc(out, func(a, b Insight) int { return compareInsights(&a, &b) })
		return
	}
	inOrder := true
	for i := 1; i < n; i++ {
		k, j := keys[i], i
		for j > 0 && keys[j-1] > k {
			keys[j] = keys[j-1]
			j--
		}
		keys[j] = k
		inOrder = inOrder && j == i
	}
	if inOrder {
		return
	}
	// out[k] takes the Insight at index keys[k]&0xff: the permutation's
	// cycles, each Insight moved once.
	var from [64]uint8
	for k := range n {
		from[k] = uint8(keys[k])
	}
	for k := range n {
		if int(from[k]) == k {
			continue
		}
		tmp, j := out[k], k
		for {
			src := int(from[j])
			from[j] = uint8(j)
			if src == k {
				out[j] = tmp
				break
			}
			out[j] = out[src]
			j = src
		}
	}
}

// sortKey orders an Insight as compareInsights does: level (High first),
// then code, for a code of three bytes (every code is); false otherwise.
func sortKey(in *Insight) (uint64, bool) {
	c := in.Code
	if len(c) != 3 || in.Level > High {
		return 0, false
	}
	return uint64(High-in.Level)<<24 | uint64(c[0])<<16 | uint64(c[1])<<8 | uint64(c[2]), true
}

func compareInsights(a, b *Insight) int {
	if a.Level != b.Level {
		return cmp.Compare(b.Level, a.Level)
	}
	return cmp.Compare(a.Code, b.Code)
}

// Codes lists every code this package can report, in Drishti's order (that
// of its --export_csv columns).
var Codes = []string{
	"S01",
	"P01", "P02", "P03", "P04", "P05", "P06", "P07", "P08", "P09", "P10",
	"P11", "P12", "P13", "P14", "P15", "P16", "P17", "P18", "P19", "P21", "P22",
	"M01", "M02", "M03", "M04", "M05", "M06", "M07", "M08", "M09", "M10",
}
