package deploy

import (
	"fmt"
	"math"
	"slices"
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
// from the simulator's.
const coverageTolerance = 0.01

// checkCoverage compares deploy/'s jobstats coverage rules, as Prometheus
// recorded them from the demo, with the simulator's truth: per target, the
// increase of the traffic its job_stats showed over that of the traffic it
// counted, between the reads the recorded rate() used. The demo's last OST
// cleans up job_stats entries after one second, and a job writing there in
// bursts is mostly cleaned up between two scrapes: its coverage is well
// below 1, the others' is 1. LustreJobstatsCoverageLow fires for that OST
// alone.
func checkCoverage(t *testing.T, api promAPI, demoAddr string) {
	t.Helper()
	type rule struct{ record, series, component string }
	rules := []rule{
		{"component_target:lustre_jobstats_coverage_bytes:ratio_rate5m", "lustre_jobstats_write_bytes_total{", "ost"},
		{"component_target:lustre_jobstats_coverage_operations:ratio_rate5m", `lustre_jobstats_stats_total{operation="open",`, "mdt"},
	}
	var truth map[string][]coverageRead
	targets, low := 0, []string{}
	worst, worstWhat := 0.0, ""
	for _, r := range rules {
		recorded, err := api.query(r.record, time.Time{})
		if err != nil {
			t.Fatalf("%s: %v", r.record, err)
		}
		if truth == nil {
			if err := getJSON("http://"+demoAddr+"/demo/coverage", &truth); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range recorded {
			target := s.Metric["target"]
			// The evaluation that recorded it, and the samples its rate()
			// read: the reads of the same scrapes.
			at, _ := s.Value[0].(float64)
			evalAt := time.UnixMilli(int64(math.Round(at * 1000)))
			first, last, err := sampleSpan(api, fmt.Sprintf(`%scomponent=%q,target=%q}[5m]`, r.series, r.component, target), evalAt)
			if err != nil {
				t.Fatalf("%s %s: %v", r.record, target, err)
			}
			want, ok := coverageBetween(truth[target], r.component, first, last+scrapeEvery.Seconds()/2)
			if !ok {
				t.Errorf("%s: the demo did not record the reads of %.3f–%.3f", target, first, last)
				continue
			}
			got := s.value()
			rel := math.Abs(got-want) / want
			if rel > worst {
				worst, worstWhat = rel, fmt.Sprintf("%s: recorded %.5f, truth %.5f", target, got, want)
			}
			if rel > coverageTolerance {
				t.Errorf("%s: %s recorded %.5f, the simulator's truth %.5f (%.2f%% off)", target, r.record, got, want, 100*rel)
			}
			t.Logf("COVERAGE: %s %.4f recorded, %.4f true (%.0f s of reads)", target, got, want, last-first)
			if want < 0.9 {
				low = append(low, target)
			}
			targets++
		}
	}
	t.Logf("COVERAGE: %d targets compared; worst error %.3f%% (%s)", targets, 100*worst, worstWhat)
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

// sampleSpan returns the timestamps of the first and last samples of a
// range vector selector evaluated at at.
func sampleSpan(api promAPI, selector string, at time.Time) (first, last float64, err error) {
	res, err := api.query(selector, at)
	if err != nil {
		return 0, 0, err
	}
	if len(res) != 1 || len(res[0].Values) < 2 {
		return 0, 0, fmt.Errorf("%s: %d series, want one with samples", selector, len(res))
	}
	vals := res[0].Values
	first, _ = vals[0][0].(float64)
	last, _ = vals[len(vals)-1][0].(float64)
	return first, last, nil
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
