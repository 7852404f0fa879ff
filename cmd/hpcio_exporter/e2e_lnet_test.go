package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The built binary with a fake lnetctl printing the project's fixtures:
// the lnet collector's metrics pass promtool check metrics; a missing
// lnetctl fails the lnet collector alone, with one error line.
func TestEndToEndLNet(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	fixtures := corpus.Fixtures(t, "lustre")
	lctl := fakeLctl(t, "cat "+filepath.Join(fixtures, "jobstats-edge.txt"))
	lnetctl := fakeLctl(t, fmt.Sprintf(`case "$*" in
"net show -v 4") cat '%s' ;;
"stats show") cat '%s' ;;
*) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac`, filepath.Join(fixtures, "lnet-net-show-libyaml.txt"), filepath.Join(fixtures, "lnet-stats-show-libyaml.txt")))

	t.Run("fixtures", func(t *testing.T) {
		e := startExporter(t, bin, "--lustre.lctl-path="+lctl, "--lustre.lnetctl-path="+lnetctl)
		text, _ := scrapeMetrics(t, e, nil)
		promtoolCheck(t, text)
		for _, want := range []string{
			`hpcio_exporter_scrape_collector_success{collector="lnet"} 1`,
			`hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`,
			`lustre_lnet_ni_status{net_type="o2ib",nid="10.10.1.21@o2ib"} 0`,
			`lustre_lnet_ni_send_count_total{net_type="tcp1",nid="2001:db8:10::21@tcp1"} 5000`,
			`lustre_lnet_ni_health_timeouts_total{net_type="o2ib",nid="10.10.1.21@o2ib"} 96`,
			`lustre_lnet_send_bytes_total 1.8014398509481984e+16`,
			"# TYPE lustre_lnet_ni_sent_messages_total counter",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("scrape lacks %s", want)
			}
		}
	})

	t.Run("missing lnetctl", func(t *testing.T) {
		e := startExporter(t, bin, "--lustre.lctl-path="+lctl, "--lustre.lnetctl-path=/nonexistent/lnetctl")
		for range 2 {
			text, _ := scrapeMetrics(t, e, nil)
			promtoolCheck(t, text)
			for _, want := range []string{
				`hpcio_exporter_scrape_collector_success{collector="lnet"} 0`,
				`hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`,
				`hpcio_exporter_lnetctl_runs_total{command="net show",result="failed"}`,
			} {
				if !strings.Contains(text, want) {
					t.Errorf("scrape lacks %s", want)
				}
			}
		}
		n := 0
		for _, line := range strings.Split(e.Logs.String(), "\n") {
			if strings.Contains(line, "collector failed") && strings.Contains(line, "name=lnet") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lnet error lines for 2 identical failures:\n%s", n, e.Logs)
		}
	})

	t.Run("demo", func(t *testing.T) {
		e := startExporter(t, bin, "--demo", "--lustre.lnetctl-path=/nonexistent/lnetctl")
		text, _ := scrapeMetrics(t, e, nil)
		promtoolCheck(t, text)
		for _, want := range []string{
			`hpcio_exporter_scrape_collector_success{collector="lnet"} 1`,
			`lustre_lnet_ni_status{net_type="o2ib",nid="192.168.101.10@o2ib"} 1`,
			"lustre_lnet_msgs_alloc ",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("demo lacks %s", want)
			}
		}
	})
}
