package deploy

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// coverageRead is one read of a target's job_stats by the demo's
// exporter, as /demo/coverage lists them (lustresim.CoverageRead).
type coverageRead struct {
	Time float64 `json:"time"`
	Seen struct {
		Bytes uint64 `json:"bytes"`
		Ops   uint64 `json:"operations"`
	} `json:"seen"`
	Counted struct {
		Bytes uint64 `json:"bytes"`
		Ops   uint64 `json:"operations"`
	} `json:"counted"`
}

// coverageTolerance is how far, relatively, the recorded coverage may be
// from the simulator's, on every target, the bursty one included. (It was
// 1.2-5.2 % off on the bursty OST while the rule divided two recorded
// rates: a scrape ingested between the evaluations of the two gave them
// windows one sample apart. The rule is one expression now.)
const coverageTolerance = 0.01

// checkCoverage compares deploy/'s jobstats coverage rules, as Prometheus
// recorded them from the demo, with the simulator's truth. The demo's last
// OST cleans up job_stats entries after one second, and a job writing there
// in bursts is mostly cleaned up between two scrapes: its coverage is well
// below 1, the others' is 1. LustreJobstatsCoverageLow fires for that OST
// alone.
//
// Two checks per target:
//   - exact: between the first and last samples of the window the recorded
//     rate() read, the exporter's per-target job totals grew by what the
//     simulator's job_stats showed at those reads, and the target's own
//     counters by what it counted (bytes on OSTs, operations on MDTs);
//   - the recorded share within 1 % of the simulator's share over the
//     samples the rule read. A rule evaluated while a scrape is being
//     ingested reads the window without that scrape's sample (Prometheus
//     evaluates rules and scrapes independently): the share of the window
//     one sample shorter, at either end, is the truth of that evaluation.
//     On a target whose coverage changes from one scrape to the next (the
//     bursts), the windows differ by a few percent; the closest is taken,
//     and said. rate() extrapolates each series to the window's edges
//     but not back past its zero (extrapolationBias): the truth of a
//     window is the simulator's share as rate() would extrapolate its
//     counts, said when that differs from the plain share.
func checkCoverage(t *testing.T, api promAPI, demoAddr string) {
	t.Helper()
	type rule struct{ record, component string }
	rules := []rule{
		{"component_target:lustre_jobstats_coverage_bytes:ratio_rate5m", "ost"},
		{"component_target:lustre_jobstats_coverage_operations:ratio_rate5m", "mdt"},
	}
	var truth map[string][]coverageRead
	targets, low := 0, []string{}
	worst, worstWhat := 0.0, ""
	for _, r := range rules {
		// The recorded samples themselves, not an instant query of them:
		// an instant query answers at its own time, up to an evaluation
		// interval after the rule's, and a window that much later may hold
		// one more scrape at its start, a burst on the bursty OST (3.5 %).
		recorded, err := api.query(r.record+"[1m]", time.Time{})
		if err != nil {
			t.Fatalf("%s: %v", r.record, err)
		}
		// The simulator's reads, fetched after the recorded samples of this
		// rule, so that they hold the reads of every sample: fetched once
		// for both rules, the MDTs' latest samples, queried after it, could
		// be of a read it did not yet hold (a slow machine, one scrape).
		truth = nil
		if err := getJSON("http://"+demoAddr+"/demo/coverage", &truth); err != nil {
			t.Fatal(err)
		}
		for _, s := range recorded {
			target := s.Metric["target"]
			if len(s.Values) == 0 {
				t.Fatalf("%s: no recorded sample of %s in the last minute", target, r.record)
			}
			lastRecorded := s.Values[len(s.Values)-1]
			at, _ := lastRecorded[0].(float64)
			evalAt := time.UnixMilli(int64(math.Round(at * 1000)))
			seenExpr, countedExpr := coverageSeries(r.component, target)
			seenSeries, err := seriesAt(api, seenExpr, evalAt)
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			countedSeries, err := seriesAt(api, countedExpr, evalAt)
			if err != nil {
				t.Fatalf("%s: %v", target, err)
			}
			seen, counted := sumAtCommonTimes(seenSeries), sumAtCommonTimes(countedSeries)
			// The scrapes both sides have samples of (a target's stats
			// print a line only once it counted something).
			seen, counted = commonSamples(seen, counted)
			if len(seen) < 4 {
				t.Fatalf("%s: %d samples in the window", target, len(seen))
			}
			// Exact: the exporter's series against the simulator's reads.
			first, last := seen[0], seen[len(seen)-1]
			a, b, ok := readsAt(truth[target], first.t, last.t)
			if !ok {
				t.Fatalf("%s: the demo did not record the reads of %.3f–%.3f", target, first.t, last.t)
			}
			sa, sb, ca, cb := a.Seen.Bytes, b.Seen.Bytes, a.Counted.Bytes, b.Counted.Bytes
			if r.component == "mdt" {
				sa, sb, ca, cb = a.Seen.Ops, b.Seen.Ops, a.Counted.Ops, b.Counted.Ops
			}
			if got := last.v - first.v; got != float64(sb-sa) {
				t.Errorf("%s: the exporter's job totals grew by %.0f in %.0f s, the simulator's job_stats showed %d", target, got, last.t-first.t, sb-sa)
			}
			if got := counted[len(counted)-1].v - counted[0].v; math.Abs(got-float64(cb-ca)) > 4*float64(cb)/(1<<53) {
				t.Errorf("%s: the target's counters grew by %.0f in %.0f s, the simulator counted %d", target, got, last.t-first.t, cb-ca)
			}

			text, _ := lastRecorded[1].(string)
			got, err := strconv.ParseFloat(text, 64)
			if err != nil {
				t.Fatalf("%s: recorded value %q: %v", target, text, err)
			}
			var want float64
			span := ""
			rangeEnd := float64(evalAt.UnixMilli()) / 1000
			for _, w := range [][2]int{{0, len(seen) - 1}, {0, len(seen) - 2}, {1, len(seen) - 1}} {
				from, to := seen[w[0]].t, seen[w[1]].t
				share, ok := coverageBetween(truth[target], r.component, from, to+scrapeEvery.Seconds()/2)
				if !ok {
					continue
				}
				bias := extrapolationBias(seenSeries, countedSeries, from, to, rangeEnd-coverageRange, rangeEnd)
				if span == "" || math.Abs(got-share*bias) < math.Abs(got-want) {
					want, span = share*bias, fmt.Sprintf("samples %d–%d of %d", w[0]+1, w[1]+1, len(seen))
					if math.Abs(bias-1) > 1e-6 {
						span += fmt.Sprintf(", rate()'s extrapolation ×%.5f", bias)
					}
				}
			}
			rel := math.Abs(got-want) / want
			if rel > worst {
				worst, worstWhat = rel, fmt.Sprintf("%s: recorded %.5f, truth %.5f", target, got, want)
			}
			if rel > coverageTolerance {
				t.Errorf("%s: %s recorded %.5f, the simulator's truth %.5f (%.2f%% off)", target, r.record, got, want, 100*rel)
			}
			t.Logf("COVERAGE: %s %.4f recorded, %.4f true (%s, %.0f s)", target, got, want, span, last.t-first.t)
			if want < 0.9 {
				low = append(low, target)
			}
			targets++
		}
	}
	t.Logf("COVERAGE: %d targets compared, exact increments; worst error of the recorded share %.3f%% (%s)", targets, 100*worst, worstWhat)
	if targets != 10 {
		t.Errorf("coverage recorded for %d targets, the demo has 10", targets)
	}
	if !slices.Equal(low, []string{"demo-OST0007"}) {
		t.Errorf("targets with coverage below 90 %%: %v, want the demo's last OST alone", low)
	}

	// The alert, as written (its `for:` shortened): for that OST alone.
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := api.query(`ALERTS{alertname="LustreJobstatsCoverageLow"}`, time.Time{})
		var firing []string
		for _, s := range res {
			firing = append(firing, s.Metric["target"]+" "+s.Metric["alertstate"])
		}
		slices.Sort(firing)
		if err == nil && slices.Equal(firing, []string{"demo-OST0007 firing"}) {
			t.Logf("ALERT: LustreJobstatsCoverageLow fires for demo-OST0007 alone")
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("LustreJobstatsCoverageLow: %v (%v), want demo-OST0007 firing alone", firing, err)
			return
		}
		time.Sleep(2 * time.Second)
	}
}

// coverageSeries returns the selectors of what a target's job_stats showed
// and what it counted, as the coverage rules sum them: bytes read and
// written on an OST, the operations of both on an MDT.
func coverageSeries(component, target string) (seen, counted []string) {
	sel := fmt.Sprintf(`{component=%q,target=%q}`, component, target)
	if component == "mdt" {
		return []string{"lustre_jobstats_stats_total" + sel}, []string{"lustre_stats_total" + sel}
	}
	return []string{"lustre_jobstats_read_bytes_total" + sel, "lustre_jobstats_write_bytes_total" + sel},
		[]string{"lustre_read_bytes_total" + sel, "lustre_write_bytes_total" + sel}
}

type point struct{ t, v float64 }

// coverageRange is the window of the coverage rules' rate(), in seconds.
const coverageRange = 300.0

// seriesAt returns the samples of each series of selectors in the 5
// minutes up to at: the samples a rate()[5m] evaluated at at reads.
func seriesAt(api promAPI, selectors []string, at time.Time) ([][]point, error) {
	var out [][]point
	for _, sel := range selectors {
		res, err := api.query(sel+"[5m]", at)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			var series []point
			for _, v := range r.Values {
				t, _ := v[0].(float64)
				s, _ := v[1].(string)
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, err
				}
				series = append(series, point{t, f})
			}
			out = append(out, series)
		}
	}
	return out, nil
}

// sumAtCommonTimes returns the sums of the series at the scrapes every
// series has a sample of.
func sumAtCommonTimes(series [][]point) []point {
	sums, counts := map[float64]float64{}, map[float64]int{}
	for _, s := range series {
		for _, p := range s {
			sums[p.t] += p.v
			counts[p.t]++
		}
	}
	var out []point
	for t, v := range sums {
		if counts[t] == len(series) {
			out = append(out, point{t, v})
		}
	}
	slices.SortFunc(out, func(a, b point) int { return cmp.Compare(a.t, b.t) })
	return out
}

// extrapolationBias is by how much rate() makes the share of the seen
// series in the counted ones differ from the share of their increases,
// for their samples from `from` to `to` in a window [rangeStart,
// rangeEnd]. rate() extrapolates each series' increase to the window's
// edges, but never back past the time the counter would have been zero
// (the Prometheus 2 rule this test's Prometheus applies). The ratio of two
// sums of rates is the ratio of their increases when every series is
// extrapolated alike; in a window that starts at the exporter's first
// scrapes, the bursty OST's job total is still 0 (no burst caught yet) and
// is not extrapolated back at all, where the OST's own counters, counting
// for a day, are: the recorded share is up to one scrape interval in 300 s
// (1.7 %) below the share of the increases. That is rate()'s rule, not
// the exporter's count, which the exact check above holds to the byte.
func extrapolationBias(seen, counted [][]point, from, to, rangeStart, rangeEnd float64) float64 {
	sum := func(series [][]point) (increase, extrapolated float64) {
		for _, s := range series {
			s = slices.DeleteFunc(slices.Clone(s), func(p point) bool { return p.t < from || p.t > to })
			inc, ext := promRateIncrease(s, rangeStart, rangeEnd)
			increase += inc
			extrapolated += ext
		}
		return increase, extrapolated
	}
	seenInc, seenExt := sum(seen)
	countedInc, countedExt := sum(counted)
	if seenInc == 0 || countedInc == 0 || countedExt == 0 {
		return 1
	}
	return (seenExt / countedExt) / (seenInc / countedInc)
}

// promRateIncrease returns a counter's increase over samples and that
// increase as Prometheus 2's rate() extrapolates it to [rangeStart,
// rangeEnd] (promql's extrapolatedRate, before it divides by the range).
func promRateIncrease(samples []point, rangeStart, rangeEnd float64) (increase, extrapolated float64) {
	if len(samples) < 2 {
		return 0, 0
	}
	for i := 1; i < len(samples); i++ {
		if d := samples[i].v - samples[i-1].v; d >= 0 {
			increase += d
		} else {
			increase += samples[i].v // a reset: counted again from zero
		}
	}
	first, last := samples[0], samples[len(samples)-1]
	toStart, toEnd := first.t-rangeStart, rangeEnd-last.t
	sampled := last.t - first.t
	average := sampled / float64(len(samples)-1)
	if increase > 0 && first.v >= 0 {
		if toZero := sampled * first.v / increase; toZero < toStart {
			toStart = toZero
		}
	}
	interval := sampled
	for _, d := range []float64{toStart, toEnd} {
		if d < average*1.1 {
			interval += d
		} else {
			interval += average / 2
		}
	}
	return increase, increase * interval / sampled
}

// commonSamples keeps the samples of a and b taken at the same scrapes.
func commonSamples(a, b []point) ([]point, []point) {
	at := map[float64]bool{}
	for _, p := range b {
		at[p.t] = true
	}
	a = slices.DeleteFunc(slices.Clone(a), func(p point) bool { return !at[p.t] })
	in := map[float64]bool{}
	for _, p := range a {
		in[p.t] = true
	}
	b = slices.DeleteFunc(slices.Clone(b), func(p point) bool { return !in[p.t] })
	return a, b
}

// readsAt returns the simulator's reads at the scrapes of two samples: the
// first read at or after each.
func readsAt(reads []coverageRead, t1, t2 float64) (a, b coverageRead, ok bool) {
	var oka, okb bool
	for _, r := range reads {
		if !oka && r.Time >= t1 {
			a, oka = r, true
		}
		if !okb && r.Time >= t2 {
			b, okb = r, true
		}
	}
	return a, b, oka && okb
}

// coverageBetween is the simulator's coverage of a target between its
// first read at or after from and its last read at or before to: bytes on
// OSTs, operations on MDTs.
func coverageBetween(reads []coverageRead, component string, from, to float64) (float64, bool) {
	var a, b *coverageRead
	for i := range reads {
		if reads[i].Time >= from && a == nil {
			a = &reads[i]
		}
		if reads[i].Time <= to {
			b = &reads[i]
		}
	}
	if a == nil || b == nil || b.Time <= a.Time {
		return 0, false
	}
	seen, counted := b.Seen.Bytes-a.Seen.Bytes, b.Counted.Bytes-a.Counted.Bytes
	if strings.EqualFold(component, "mdt") {
		seen, counted = b.Seen.Ops-a.Seen.Ops, b.Counted.Ops-a.Counted.Ops
	}
	if counted == 0 {
		return 0, false
	}
	return float64(seen) / float64(counted), true
}

// promRateIncrease reproduces Prometheus' rate() on the counters that
// matter to the coverage check (a counter from zero, one far from it, one
// from just above zero, one with a reset, ones missing samples): promtool
// evaluates rate() on the same samples and compares with it.
func TestPromRateIncrease(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	const step, evalAt = 5.0, 302.0 // the window [2 s, 302 s]
	nan := math.NaN()
	ramp := func(missing int, from, by float64, n int) []float64 {
		var v []float64
		for range missing {
			v = append(v, nan)
		}
		for i := range n {
			v = append(v, from+by*float64(i))
		}
		return v
	}
	cases := map[string][]float64{
		"from_zero":    ramp(1, 0, 10, 61),
		"far_from_0":   ramp(0, 1000, 10, 62),
		"just_above_0": ramp(1, 1, 10, 61),
		"reset":        append(ramp(0, 100, 10, 31), ramp(0, 5, 10, 31)...),
		"gaps":         append(ramp(3, 0, 7, 20), append([]float64{nan, nan}, ramp(0, 140, 7, 37)...)...),
		"bursts":       {0, 0, 0, 0, 0, 0, 0, 0, 50, 50, 50, 50, 90, 90, 90, 90, 90, 90, 90, 90, 90, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 333},
	}
	// 26 samples from 15 s to 300 s: 11.4 s apart on average, the first
	// 13 s after the window's start, between 1.1 and 1.2 times that.
	sparse := make([]float64, 61)
	for i := range sparse {
		sparse[i] = nan
	}
	for i := range 26 {
		slot := 3 + int(math.Round(float64(i)*57/25))
		sparse[slot] = 500 + 3*float64(slot)
	}
	cases["sparse"] = sparse
	var in, exp strings.Builder
	for name, values := range cases {
		var text []string
		var samples []point
		for i, v := range values {
			if math.IsNaN(v) {
				text = append(text, "_")
				continue
			}
			text = append(text, strconv.FormatFloat(v, 'f', -1, 64))
			if at := float64(i) * step; at >= evalAt-coverageRange && at <= evalAt {
				samples = append(samples, point{at, v})
			}
		}
		fmt.Fprintf(&in, "      - series: 'c{case=%q}'\n        values: '%s'\n", name, strings.Join(text, " "))
		_, extrapolated := promRateIncrease(samples, evalAt-coverageRange, evalAt)
		want := extrapolated / coverageRange
		fmt.Fprintf(&exp, "      - expr: 'abs(rate(c{case=%q}[5m]) - %s) < bool 1e-9 * %s'\n        eval_time: %gs\n        exp_samples:\n          - labels: '{case=%q}'\n            value: 1\n",
			name, strconv.FormatFloat(want, 'g', 17, 64), strconv.FormatFloat(want, 'g', 17, 64), evalAt, name)
	}
	file := filepath.Join(t.TempDir(), "rate.test.yml")
	test := "rule_files: []\ntests:\n  - interval: 5s\n    input_series:\n" + in.String() + "    promql_expr_test:\n" + exp.String()
	if err := os.WriteFile(file, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, promtool, "test", "rules", file); err != nil {
		t.Errorf("rate() differs from promRateIncrease: %v\n%s\n%s", err, out, test)
	}
}

// extrapolationBias on the window that failed CI once: the bursty OST's job
// total still 0 at the window's first scrape (nothing caught yet), 4 s after
// its start, and the OST's own counters far from zero. rate() does not
// extrapolate the first back past its zero and extrapolates the second by
// the 4 s: the recorded share is (295+2)/(295+4+2) of the plain one, as the
// CI run saw (0.32735 recorded against a plain share of 0.33181: 0.98656
// of it, where 296/300 is 0.98667). Series
// extrapolated alike have no bias.
func TestExtrapolationBias(t *testing.T) {
	t.Parallel()
	const start, end = 1000.0, 1300.0 // a 5-minute window
	series := func(first, step float64) []point {
		var s []point
		for i := range 60 {
			s = append(s, point{start + 4 + 5*float64(i), first + step*float64(i)})
		}
		return s
	}
	from, to := start+4, start+4+5*59
	seen := [][]point{series(0, 1000)}       // from zero: not extrapolated back
	counted := [][]point{series(1e12, 3000)} // far from zero: extrapolated by 4 s
	want := (295.0 + 1) / (295 + 4 + 1)      // the last sample 1 s before the end
	if got := extrapolationBias(seen, counted, from, to, start, end); math.Abs(got-want) > 1e-12 {
		t.Errorf("bias %.9f, want %.9f", got, want)
	}
	if got := extrapolationBias(counted, counted, from, to, start, end); math.Abs(got-1) > 1e-12 {
		t.Errorf("bias of a series against itself %.9f, want 1", got)
	}
	t.Logf("the CI case: a plain share of 0.33181 is recorded as %.5f (Prometheus recorded 0.32735)", 0.33181*want)
}
