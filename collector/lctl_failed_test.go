package collector

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

var collectorSuccess = regexp.MustCompile(`(?m)^hpcio_exporter_scrape_collector_success\{collector="(\w+)"\} (\S+)$`)

// An lctl that prints nothing and exits 1 (sudo wanting a password) fails
// every Lustre collector enabled, with job_stats tracked or not: each
// reports success 0, the run counts failed, and one error line says why,
// with the tool's message. Before, the run was partial and, without the
// jobstats collector, every collector succeeded with nothing to show.
func TestLctlExitWithoutOutputFailsEveryCollector(t *testing.T) {
	var lustre []string
	for _, n := range Names() {
		if !slices.Contains([]string{"lnet", "darshan", "dayu"}, n) {
			lustre = append(lustre, n)
		}
	}
	for _, jobstats := range []bool{true, false} {
		name := "jobstats"
		enabled := lustre
		if !jobstats {
			name = "no-jobstats"
			enabled = slices.DeleteFunc(slices.Clone(lustre), func(n string) bool { return n == "jobstats" })
		}
		t.Run(name, func(t *testing.T) {
			onlyCollectors(t, enabled...)
			var logs logtest.Capture
			src := &textSource{texts: []string{""}, exit: &toolrun.ExitError{Code: 1, Stderr: "sudo: a password is required"}}
			r, err := NewRegistry(Env{Logger: logs.Logger(), LctlSource: src, Lnetctl: testLnetctl})
			if err != nil {
				t.Fatal(err)
			}
			for scrape := 1; scrape <= 2; scrape++ {
				text := scrapeText(t, r, expfmt.FmtText)
				if got := value(t, text, `hpcio_exporter_lctl_runs_total{result="failed"}`); got != float64(scrape) {
					t.Errorf("scrape %d: failed runs %v", scrape, got)
				}
				if got := value(t, text, `hpcio_exporter_lctl_runs_total{result="partial"}`); got != 0 {
					t.Errorf("scrape %d: partial runs %v", scrape, got)
				}
				var seen []string
				for _, m := range collectorSuccess.FindAllStringSubmatch(text, -1) {
					seen = append(seen, m[1])
					if m[2] != "0" {
						t.Errorf("scrape %d: collector %s success %s", scrape, m[1], m[2])
					}
				}
				slices.Sort(seen)
				if !slices.Equal(seen, enabled) {
					t.Errorf("collectors %v, want %v", seen, enabled)
				}
				if strings.Contains(text, "\nlustre_") {
					t.Errorf("lustre_ series from a failed run:\n%s", text)
				}
			}
			var errs []logtest.Record
			for _, rec := range logs.Next(t) {
				if rec["level"] == "ERROR" {
					errs = append(errs, rec)
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0]["err"].(string), "exited with status 1: sudo: a password is required") {
				t.Errorf("error lines %v, want one with the tool's message", errs)
			}
		})
	}
}
