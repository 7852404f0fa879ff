package collector

import (
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// The demo's server prints every parameter that any Lustre collector asks
// for, those off by default included: its lctl runs are ok, never partial
// (lctl's exit status when a pattern matches nothing), so that the demo
// teaches what a healthy server's runs look like.
func TestDemoServerAnswersEveryPattern(t *testing.T) {
	var lustreCollectors []string
	probe := lustre.New(lustre.Config{})
	for _, name := range Names() {
		// A Lustre collector's factory adds its request to the source;
		// the others (darshan, dayu, lnet) add none.
		before := len(probe.Patterns())
		if _, err := registrations[name].factory(Env{Logger: testLogger(t), lustre: probe}); err == nil && len(probe.Patterns()) > before {
			lustreCollectors = append(lustreCollectors, name)
		}
	}
	if len(lustreCollectors) < 15 {
		t.Fatalf("found %d Lustre collectors: %v", len(lustreCollectors), lustreCollectors)
	}
	onlyCollectors(t, lustreCollectors...)
	r := newTestRegistry(t, lustresim.New(lustresim.DemoConfig()))
	for range 2 {
		text := scrapeText(t, r, expfmt.FmtText)
		for _, c := range lustreCollectors {
			if v := value(t, text, `hpcio_exporter_scrape_collector_success{collector="`+c+`"}`); v != 1 {
				t.Errorf("collector %s: success %v", c, v)
			}
		}
		if partial := value(t, text, `hpcio_exporter_lctl_runs_total{result="partial"}`); partial != 0 {
			t.Errorf("%v partial lctl runs of the demo server, want 0", partial)
		}
	}
}
