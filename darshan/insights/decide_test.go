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

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
