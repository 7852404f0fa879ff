package insights

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// Decide is Evaluate without the text: the same insights in the same
// order, the same decisions and numbers, no message, no files, and only
// the first recommendation of those that fired. Checked on every edge
// fixture and every corpus log that has Totals, with the default
// thresholds and two sensitive sets that make most triggers fire.
func TestDecideIsEvaluateWithoutText(t *testing.T) {
	all := decideCases(t)
	fired, withRecs := 0, 0
	for i, tot := range all {
		for name, cfg := range map[string]Config{"default": DefaultConfig(), "zero": sensitive(), "tiny": tiny()} {
			full, brief := Evaluate(tot, cfg), Decide(tot, cfg)
			if len(full) != len(brief) {
				t.Fatalf("totals %d, %s: %d insights, Evaluate gives %d", i, name, len(brief), len(full))
			}
			for k := range full {
				f, b := full[k], brief[k]
				if b.Code != f.Code || b.Level != f.Level || b.Fired != f.Fired || !sameBits(b.Value, f.Value) ||
					!sameBits(b.Threshold, f.Threshold) || !sameBits(b.Count, f.Count) || !sameBits(b.CountThreshold, f.CountThreshold) {
					t.Errorf("totals %d, %s: Decide %+v, Evaluate %+v", i, name, b, f)
				}
				if b.Message != "" || b.Files != nil {
					t.Errorf("totals %d, %s, %s: Decide has text: %q, files %q", i, name, b.Code, b.Message, b.Files)
				}
				want := []string(nil)
				if len(f.Recommendations) > 0 {
					want = f.Recommendations[:1]
				}
				if !slices.Equal(b.Recommendations, want) {
					t.Errorf("totals %d, %s, %s: recommendations %q, want %q", i, name, b.Code, b.Recommendations, want)
				}
				if f.Fired {
					fired++
				}
				if len(want) > 0 {
					withRecs++
				}
			}
		}
	}
	if fired == 0 || withRecs == 0 {
		t.Errorf("nothing compared: %d fired, %d with recommendations", fired, withRecs)
	}
}

// decideCases are the Totals of every edge fixture and every corpus log
// that has them.
func decideCases(t testing.TB) []*Totals {
	var all []*Totals
	for _, e := range edges {
		all = append(all, e.fire.totals(t))
		for _, q := range e.quiet {
			all = append(all, q.totals(t))
		}
	}
	if root := corpus.Root(); root != "" {
		logs, _ := filepath.Glob(filepath.Join(root, "corpus", "darshan", "*", "*.darshan"))
		for _, p := range logs {
			l, err := darshan.Open(p)
			if err != nil {
				continue
			}
			if tot, err := FromLog(l); err == nil {
				all = append(all, tot)
			}
			l.Close()
		}
	}
	return all
}

// A Decider's Fired gives exactly the insights of Decide whose level is
// above OK, in Decide's order, and the number of those Decide gives; its
// scratch reused from one call to the next changes nothing; nil Totals
// decide nothing.
func TestDeciderFiredIsDecideAboveOK(t *testing.T) {
	var scratch []Insight
	compared := 0
	for i, tot := range append(decideCases(t), nil) {
		for name, cfg := range map[string]Config{"default": DefaultConfig(), "zero": sensitive(), "tiny": tiny()} {
			all := Decide(tot, cfg)
			fired, n := NewDecider(cfg).Fired(scratch, tot)
			scratch = fired
			if n != len(all) {
				t.Errorf("totals %d, %s: decided %d, Decide gives %d", i, name, n, len(all))
			}
			var want []Insight
			for _, in := range all {
				if in.Level != OK {
					want = append(want, in)
				}
			}
			if len(fired) != len(want) {
				t.Fatalf("totals %d, %s: %d fired, want %d", i, name, len(fired), len(want))
			}
			for k := range want {
				g, w := fired[k], want[k]
				if g.Code != w.Code || g.Level != w.Level || g.Fired != w.Fired || !sameBits(g.Value, w.Value) ||
					!sameBits(g.Threshold, w.Threshold) || !sameBits(g.Count, w.Count) || !sameBits(g.CountThreshold, w.CountThreshold) ||
					!slices.Equal(g.Recommendations, w.Recommendations) || g.Message != "" || g.Files != nil {
					t.Errorf("totals %d, %s: fired %+v, want %+v", i, name, g, w)
				}
				compared++
			}
		}
	}
	if compared == 0 {
		t.Error("nothing fired")
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// BenchmarkDeciderFired decides the Totals of the edge cases and corpus
// logs (decideCases) in turn, as the sidecar decides a job whose logs
// changed.
func BenchmarkDeciderFired(b *testing.B) {
	cases := decideCases(b)
	d := NewDecider(DefaultConfig())
	var scratch []Insight
	b.ReportAllocs()
	for b.Loop() {
		for _, tot := range cases {
			scratch, _ = d.Fired(scratch, tot)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cases)), "ns/totals")
}
