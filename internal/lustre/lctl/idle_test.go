package lctl

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// idleSeeds are operation values as Lustre prints them, idle and not, and
// values one byte away from an idle one.
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
}

// sameAsParsedAlone parses the values as one entry's operations, twice
// over (so that values repeat after the parser has remembered them), and
// fails unless every operation is what a fresh parser makes of its line
// alone.
func sameAsParsedAlone(t *testing.T, values []string) {
	t.Helper()
	names := []string{"read_bytes", "write_bytes", "read", "write", "getattr", "sync", "punch"}
	var text strings.Builder
	var want []string
	text.WriteString("- job_id: \"j\"\n")
	for pass := 0; pass < 2; pass++ {
		for i, v := range values {
			line := fmt.Sprintf("  %s: %s\n", names[i%len(names)], v)
			text.WriteString(line)
			alone := parseAlone(t, "- job_id: \"j\"\n"+line)
			want = append(want, alone)
		}
	}
	var got recordOps
	p := NewJobStatsParser(&got)
	for _, line := range bytes.SplitAfter([]byte(text.String()), []byte("\n")) {
		if len(line) > 0 {
			p.Line(trimEOL(line))
		}
	}
	p.End(true)
	if len(got.jobs) != 1 {
		t.Fatalf("%d entries, want 1", len(got.jobs))
	}
	var have []string
	ops, malformed := got.jobs[0].ops, got.jobs[0].malformed
	for _, w := range want {
		if w == "malformed" {
			malformed--
			have = append(have, "malformed")
			continue
		}
		if len(ops) == 0 {
			t.Fatalf("fewer operations than lines: %q", values)
		}
		have, ops = append(have, ops[0]), ops[1:]
	}
	if len(ops) != 0 || malformed != 0 {
		t.Fatalf("%d operations and %d malformed lines too many", len(ops), malformed)
	}
	for i := range want {
		if have[i] != want[i] {
			t.Errorf("line %d (%q): got %s, parsed alone %s", i, values[i%len(values)], have[i], want[i])
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

type recordOps struct {
	jobs []struct {
		ops       []string
		malformed int
	}
}

func (r *recordOps) Job(js *JobStat) {
	var ops []string
	for _, op := range js.Ops {
		ops = append(ops, fmt.Sprintf("%s %s samples=%d sum=%d has_sum=%v", op.Op, op.Unit, op.Samples, op.Sum, op.HasSum))
	}
	r.jobs = append(r.jobs, struct {
		ops       []string
		malformed int
	}{ops, js.Malformed})
}

func (r *recordOps) End(bool, SectionStats) {}

// An operation whose value the parser remembers as idle is exactly what
// parsing its line would give, whatever came before.
func TestIdleValuesSameAsParsed(t *testing.T) {
	sameAsParsedAlone(t, idleSeeds)
	// Three idle forms, more than the parser remembers, in turn.
	sameAsParsedAlone(t, []string{idleSeeds[0], idleSeeds[1], idleSeeds[3], idleSeeds[0], idleSeeds[3], idleSeeds[1]})
}

// FuzzIdleValues: values separated by newlines, parsed in one entry and
// each alone, give the same operations.
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
