package handler

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// collectServer serves a small demo with three collectors on: jobstats and
// capacity (both from the lctl run) and lnet (lnetctl); quota is off.
func collectServer(t *testing.T) *httptest.Server {
	t.Helper()
	on := []string{"jobstats", "capacity", "lnet"}
	for _, name := range collector.Names() {
		collector.SetEnabled(name, slices.Contains(on, name))
	}
	cfg := lustresim.DemoConfig()
	cfg.Jobs = 20
	reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: lustresim.New(cfg), Lnetctl: lustresim.StartLnetctl})
	if err != nil {
		t.Fatal(err)
	}
	own := prometheus.NewRegistry()
	own.MustRegister(collectors.NewGoCollector())
	srv := httptest.NewServer(New(reg, own, Options{Instrument: true}))
	t.Cleanup(srv.Close)
	return srv
}

var familyLine = regexp.MustCompile(`(?m)^# TYPE (\S+) `)

func familiesOf(body string) []string {
	var names []string
	for _, m := range familyLine.FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	return names
}

// The exporter's own families, which every response has, collect[] or not.
var ownFamily = regexp.MustCompile(`^(go_|promhttp_|hpcio_exporter_scrape_collector_|hpcio_exporter_lctl_)`)

// collect[] runs the collectors it names, and only those, as
// node_exporter's does: the response holds their families and the
// exporter's own.
func TestCollectParam(t *testing.T) {
	srv := collectServer(t)
	jobstatsFamily := regexp.MustCompile(`^(lustre_job_|lustre_jobid_|lustre_jobstats_|hpcio_exporter_jobstats_)`)
	capacityFamily := regexp.MustCompile(`^lustre_(capacity|free|available|inodes|files)`)

	_, all := get(t, srv.URL+"?", nil)
	for _, want := range []string{"lustre_job_write_bytes_total", "lustre_capacity_bytes", "lnet_", `collector_success{collector="lnet"} 1`} {
		if !strings.Contains(all, want) {
			t.Errorf("without collect[]: no %s", want)
		}
	}

	resp, body := get(t, srv.URL+"?collect[]=jobstats", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("collect[]=jobstats: %s", resp.Status)
	}
	for _, f := range familiesOf(body) {
		if !jobstatsFamily.MatchString(f) && !ownFamily.MatchString(f) {
			t.Errorf("collect[]=jobstats: family %s is neither the jobstats collector's nor the exporter's", f)
		}
	}
	for _, want := range []string{"lustre_job_write_bytes_total{", `hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`,
		`hpcio_exporter_lctl_runs_total{result="ok"}`, "go_goroutines", "promhttp_metric_handler_requests_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("collect[]=jobstats: no %s", want)
		}
	}
	if n := strings.Count(body, "hpcio_exporter_scrape_collector_success{"); n != 1 {
		t.Errorf("collect[]=jobstats: %d collectors ran, want 1", n)
	}

	// Two names: both collectors, one lctl run for both.
	_, body = get(t, srv.URL+"?collect[]=capacity&collect[]=jobstats", nil)
	var sawCapacity bool
	for _, f := range familiesOf(body) {
		sawCapacity = sawCapacity || capacityFamily.MatchString(f)
		if !jobstatsFamily.MatchString(f) && !capacityFamily.MatchString(f) && !ownFamily.MatchString(f) {
			t.Errorf("collect[]=capacity&collect[]=jobstats: family %s", f)
		}
	}
	if !sawCapacity || !strings.Contains(body, "lustre_job_write_bytes_total{") {
		t.Errorf("collect[]=capacity&collect[]=jobstats: capacity %v, jobstats %v", sawCapacity, strings.Contains(body, "lustre_job_write_bytes_total{"))
	}

	// lnet alone: lnetctl runs, lctl does not.
	_, before := get(t, srv.URL, nil)
	_, body = get(t, srv.URL+"?collect[]=lnet", nil)
	_, after := get(t, srv.URL, nil)
	lnetFamily := regexp.MustCompile(`^(lustre_lnet_|hpcio_exporter_lnetctl_)`)
	for _, f := range familiesOf(body) {
		if !lnetFamily.MatchString(f) && !ownFamily.MatchString(f) {
			t.Errorf("collect[]=lnet: family %s", f)
		}
	}
	if !strings.Contains(body, `collector_success{collector="lnet"} 1`) || strings.Contains(body, "hpcio_exporter_lctl_runs_total") {
		t.Errorf("collect[]=lnet: lnet successful, without an lctl run; got\n%s", body)
	}
	if runs := lctlRuns(t, after) - lctlRuns(t, before); runs != 1 {
		t.Errorf("the collect[]=lnet scrape between two full scrapes: %d lctl runs counted over the three, want the second full scrape's 1", runs)
	}
}

var lctlRunsLine = regexp.MustCompile(`(?m)^hpcio_exporter_lctl_runs_total\{result="(\w+)"\} (\d+)$`)

// lctlRuns sums the lctl runs a scrape reports.
func lctlRuns(t *testing.T, body string) int {
	t.Helper()
	n := 0
	for _, m := range lctlRunsLine.FindAllStringSubmatch(body, -1) {
		v, err := strconv.Atoi(m[2])
		if err != nil {
			t.Fatal(err)
		}
		n += v
	}
	return n
}

// A name that is not a collector, or that does not run here, is a 400
// naming it, as in node_exporter: a typo in a scrape config must not pass
// for an empty collector.
func TestCollectParamRejected(t *testing.T) {
	srv := collectServer(t)
	for _, tc := range []struct{ query, want string }{
		{"collect[]=jobstat", `unknown collector "jobstat"`},
		{"collect[]=jobstats&collect[]=nosuch", `unknown collector "nosuch"`},
		{"collect[]=quota", `collector "quota" does not run on this exporter`},
		{"collect[]=", `unknown collector ""`},
	} {
		resp, body := get(t, srv.URL+"?"+tc.query, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) || !strings.Contains(body, "capacity, jobstats, lnet") {
			t.Errorf("%s: %s %q, want 400 with %q and the collectors that run", tc.query, resp.Status, body, tc.want)
		}
	}
}
