package insights

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortInsights (keys of level and code) gives the order of a stable sort
// by compareInsights, for any input order: the codes of every trigger,
// duplicates, codes of another length (the slow path), and more Insights
// than the keys hold.
func TestSortInsightsIsStableSortByLevelAndCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	codes := append(slices.Clone(Codes), "X1", "P0100", "")
	for round := range 2000 {
		n := rng.IntN(40)
		if round%100 == 0 {
			n = 64 + rng.IntN(10)
		}
		in := make([]Insight, n)
		for i := range in {
			k := rng.IntN(len(Codes))
			if round%3 == 0 {
				k = rng.IntN(len(codes))
			}
			in[i] = Insight{Code: codes[k], Level: Level(rng.IntN(4)), Value: float64(i)}
		}
		want := slices.Clone(in)
		slices.SortStableFunc(want, func(a, b Insight) int { return compareInsights(&a, &b) })
		got := slices.Clone(in)
		sortInsights(got)
		for i := range want {
			if got[i].Code != want[i].Code || got[i].Level != want[i].Level || got[i].Value != want[i].Value {
				t.Fatalf("round %d: at %d got %s %v (input %v), want %s %v (input %v)", round, i,
					got[i].Code, got[i].Level, got[i].Value, want[i].Code, want[i].Level, want[i].Value)
			}
		}
	}
}

// CodeIndex gives every code its own slot of firstRecs, and no slot to
// what is not a code.
func TestCodeIndex(t *testing.T) {
	seen := map[int]string{}
	for _, c := range Codes {
		i, ok := CodeIndex(c)
		if !ok || i < 0 || i >= len(firstRecs) {
			t.Fatalf("%s: %d %v", c, i, ok)
		}
		if o, dup := seen[i]; dup {
			t.Fatalf("%s and %s share slot %d", c, o, i)
		}
		seen[i] = c
	}
	for _, c := range []string{"", "P00", "P32", "M00", "M33", "S02", "X01", "P1", "P0a", "p01"} {
		if i, ok := CodeIndex(c); ok {
			t.Errorf("%q has slot %d", c, i)
		}
	}
}
