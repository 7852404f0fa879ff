package collector

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

type fakeCollector struct {
	err  error
	desc *prometheus.Desc
}

func (f *fakeCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, 1)
	return f.err
}

// One failing collector does not fail the others or the scrape; it logs
// one error line while it keeps failing the same way.
func TestRegistryIsolatesFailures(t *testing.T) {
	var logs bytes.Buffer
	r := &Registry{
		logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		failing: map[string]string{},
		collectors: map[string]Collector{
			"good": &fakeCollector{desc: prometheus.NewDesc("good_metric", "h", nil, nil)},
			"bad":  &fakeCollector{desc: prometheus.NewDesc("bad_metric", "h", nil, nil), err: errors.New("lctl: not found")},
		},
	}
	var text string
	for range 3 {
		text = scrapeText(t, r, expfmt.FmtText)
	}
	for series, want := range map[string]float64{
		`hpcio_exporter_scrape_collector_success{collector="good"}`: 1,
		`hpcio_exporter_scrape_collector_success{collector="bad"}`:  0,
		"good_metric": 1,
		"bad_metric":  1, // what a failing collector sent is still shown
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if n := strings.Count(logs.String(), "collector failed"); n != 1 {
		t.Errorf("%d error lines for 3 identical failures, want 1:\n%s", n, logs.String())
	}
	r.collectors["bad"].(*fakeCollector).err = nil
	scrapeText(t, r, expfmt.FmtText)
	if !strings.Contains(logs.String(), "collector recovered") {
		t.Error("recovery not logged")
	}
}

func TestRegisterFlagsAndNames(t *testing.T) {
	names := Names()
	if len(names) == 0 || names[0] > names[len(names)-1] {
		t.Fatalf("names %v", names)
	}
	if err := SetEnabled("no-such-collector", true); err == nil {
		t.Error("SetEnabled accepted an unknown collector")
	}
}
