package collector

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Executable names (jobid_name %e takes any printable name) holding the
// bytes a label value escapes (a backslash, a double quote) beside plain
// ones: every per-job family writes them escaped, and a Prometheus parser
// reads back the names the jobs had, with the plain rows' as they were.
func TestJobLabelsEscaped(t *testing.T) {
	onlyCollectors(t, "jobstats")
	d := jobstatsDialects[1] // 2.14: quoted ids
	ids := []string{`c\d.1000`, `a"b.1000`, `dd.1000`, `e\"f\\.1000`}
	var entries []string
	for i, id := range ids {
		entries = append(entries, d.entry(id, 1000, 2000, uint64(1000*(i+1))))
	}
	r := newTestRegistry(t, &textSource{texts: []string{"jobid_name=%e.%u\n" + d.output(entries...)}})
	text := scrapeText(t, r, expfmt.FmtText)
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	for _, name := range []string{"lustre_job_write_bytes_total", "lustre_job_stats_total", "lustre_job_operation_seconds_total"} {
		fam := families[name]
		if fam == nil {
			t.Fatalf("no %s", name)
		}
		byJob := map[string]float64{}
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				if l.GetName() == "exe" {
					byJob[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
		for i, id := range ids {
			job := strings.TrimSuffix(id, ".1000")
			if _, ok := byJob[job]; !ok {
				t.Errorf("%s: no series of exe %q; exes: %q", name, job, slices.Sorted(maps.Keys(byJob)))
			}
			if name == "lustre_job_write_bytes_total" && byJob[job] != float64(1000*(i+1)) {
				t.Errorf("%s{exe=%q} = %v, want %d", name, job, byJob[job], 1000*(i+1))
			}
		}
	}
}
