package lctl

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// idleSeeds are operation values as Lustre prints them, idle and not,
// values one byte away from an idle one, and values of one shape that
// differ from each other in a few bytes.
var idleSeeds = []string{
	"{ samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }",
	"{ samples:           0, unit: bytes, min:        0, max:        0, sum:                0, sumsq:                  0, hist: {  } }",
	"{ samples:           0, unit: usecs, min:        0, max:        0, sum:                7, sumsq:                  0 }",
	"{ samples:           0, unit: reqs }",
	"{ samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 ",
	"{ samples:           1, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }",
	"{ samples:        1800, unit: usecs, min:        2, max:       24, sum:            10800, sumsq:              64800 }",
	"{ samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }x",
	"{ samples: 0, unit: usecs, sum: 0 }",
	// Values of one shape with other numbers, wider numbers, letters or
	// signs where digits were, and other tails.
	"{ samples:       86288, unit: bytes, min:  1048576, max:  1048576, sum:      90479525888, sumsq:  94874659337535488, hist: { 1M: 86288 } }",
	"{ samples:           5, unit: bytes, min:     4096, max:     4096, sum:            20480, sumsq:           83886080, hist: { 4K: 5 } }",
	"{ samples: 12345678901234, unit: bytes, min:  1048576, max:  1048576, sum:      90479525888, sumsq:  94874659337535488, hist: { 1M: 86288 } }",
	"{ samples:       86288, unit: bytes, min:  1048576, max:  1048576, sum:      90479525888, sumsq:  94874659337535488, hist: { 1M: 86288 } } x",
	"{ samples:       86288, unit: bytes, min:  1048576, max:  1048576, sum:      90479525888, sumsq:  94874659337535488, hist: { 1M: 86288 }",
	"{ samples:        1801, unit: usecs, min:        x, max:       24, sum:            10800, sumsq:              64800 }",
	"{ samples:        1802, unit: usecs, min:        2, max:       24, sum:           -10800, sumsq:              64800 }",
	"{ samples:        1803, unit: usecs, min:        2, max:       24, sum:            1 800, sumsq:              64800 }",
	"{ samples:        1804, unit: usecs, min:        2, max:       24, sum:                 , sumsq:              64800 }",
	"{ samples:        1805, unit: usecs, min:        2, max:       24, sum: 99999999999999999999, sumsq:     64800 }",
	"{ samples:        1806, unit: usecs, min:        2, max:       24, sum:            10800, sumsq: 99999999999999999999 }",
	"{ samples:          12, unit:  reqs }",
	"{ samples:          13, unit:  reqs, samples:  7 }",
	"{ samples:        1807, unit: usecs, min:        2, max:       24, sum:            10800, sum:     5 }",
	// One value with its unit, a key, or two keys changed, at the same length.
	"{ samples:        1800, unit: bytes, min:        2, max:       24, sum:            10800, sumsq:              64800 }",
	"{ samples:        1800, unit: usecs, mix:        2, max:       24, sum:            10800, sumsq:              64800 }",
	"{ samples:        1800, unit: usecs, min:        2, max:       24, sumsq:          10800, sum:                64800 }",
	// A number padded wide, and one too big for 64 bits in as many bytes.
	"{ samples: 5, sum:                     1 }",
	"{ samples: 5, sum:  99999999999999999999 }",
}

// sameAsParsedAlone parses the values as the operations of three entries,
// the second with the values rotated by one place (so that each place
// meets another value after one) and the third as the first (so that
// values repeat once remembered), and fails unless every operation is
// what a fresh parser makes of its line alone.
func sameAsParsedAlone(t *testing.T, values []string) {
	t.Helper()
	names := []string{"read_bytes", "write_bytes", "read", "write", "getattr", "sync", "punch"}
	rotated := append(append([]string(nil), values[1:]...), values[0])
	var text strings.Builder
	var want [][]string
	for e, vs := range [][]string{values, rotated, values} {
		fmt.Fprintf(&text, "- job_id: \"j%d\"\n", e)
		var w []string
		for i, v := range vs {
			line := fmt.Sprintf("  %s: %s\n", names[i%len(names)], v)
			text.WriteString(line)
			w = append(w, parseAlone(t, "- job_id: \"j\"\n"+line))
		}
		want = append(want, w)
	}
	var got recordOps
	p := NewJobStatsParser(&got)
	for _, line := range bytes.SplitAfter([]byte(text.String()), []byte("\n")) {
		if len(line) > 0 {
			p.Line(trimEOL(line))
		}
	}
	p.End(true)
	if len(got.jobs) != len(want) {
		t.Fatalf("%d entries, want %d", len(got.jobs), len(want))
	}
	for e := range want {
		var have []string
		ops, malformed := got.jobs[e].ops, got.jobs[e].malformed
		for _, w := range want[e] {
			if w == "malformed" {
				malformed--
				have = append(have, "malformed")
				continue
			}
			if len(ops) == 0 {
				t.Fatalf("entry %d: fewer operations than lines: %q", e, values)
			}
			have, ops = append(have, ops[0]), ops[1:]
		}
		if len(ops) != 0 || malformed != 0 {
			t.Fatalf("entry %d: %d operations and %d malformed lines too many", e, len(ops), malformed)
		}
		for i := range want[e] {
			if have[i] != want[e][i] {
				t.Errorf("entry %d, line %d: got %s, parsed alone %s", e, i, have[i], want[e][i])
			}
		}
	}
}

// parseAlone returns what a fresh parser makes of one entry of one line.
func parseAlone(t *testing.T, text string) string {
	var r recordOps
	p := NewJobStatsParser(&r)
	for _, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			p.Line(trimEOL([]byte(line)))
		}
	}
	p.End(true)
	if len(r.jobs) != 1 {
		t.Fatalf("%d entries from %q", len(r.jobs), text)
	}
	switch j := r.jobs[0]; {
	case j.malformed == 1 && len(j.ops) == 0:
		return "malformed"
	case j.malformed == 0 && len(j.ops) == 1:
		return j.ops[0]
	default:
		t.Fatalf("%q: %d operations, %d malformed", text, len(j.ops), j.malformed)
		return ""
	}
}

type recordOps struct{ jobs []recordedJob }

type recordedJob struct {
	ops       []string
	malformed int
}

func (r *recordOps) Job(js *JobStat) {
	var ops []string
	for _, op := range js.Ops {
		ops = append(ops, fmt.Sprintf("%s %s samples=%d sum=%d has_sum=%v", op.Op, op.Unit, op.Samples, op.Sum, op.HasSum))
	}
	r.jobs = append(r.jobs, recordedJob{ops, js.Malformed})
}

func (r *recordOps) End(bool, SectionStats) {}

// An operation whose value the parser remembers as idle, or reads as the
// operation it expects next, is exactly what parsing its line alone would
// give, whatever came before.
func TestIdleValuesSameAsParsed(t *testing.T) {
	sameAsParsedAlone(t, idleSeeds)
	// Every value after every other at one place, both ways.
	for _, a := range idleSeeds {
		for _, b := range idleSeeds {
			sameAsParsedAlone(t, []string{a, b})
		}
	}
	// Three idle forms, more than the parser remembers, in turn.
	sameAsParsedAlone(t, []string{idleSeeds[0], idleSeeds[1], idleSeeds[3], idleSeeds[0], idleSeeds[3], idleSeeds[1]})
}

// FuzzIdleValues: values separated by newlines give the same operations
// parsed as three entries' (sameAsParsedAlone) and each alone.
func FuzzIdleValues(f *testing.F) {
	f.Add(strings.Join(idleSeeds, "\n"))
	f.Add(idleSeeds[0] + "\n" + idleSeeds[2] + "\n" + idleSeeds[0])
	f.Fuzz(func(t *testing.T, data string) {
		var values []string
		for _, v := range strings.Split(data, "\n") {
			// One operation's value per line: "{…", nothing that the
			// parser would take for another kind of line.
			if strings.HasPrefix(v, "{") && !strings.ContainsAny(v, "\r\x00") && len(values) < 50 {
				values = append(values, v)
			}
		}
		if len(values) > 0 {
			sameAsParsedAlone(t, values)
		}
	})
}
