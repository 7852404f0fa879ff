package collector

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// fakeLnetctl writes an lnetctl that logs its arguments to calls (one line
// per run), runs pre (shell), and prints net for `net show -v 4` and stats
// for `stats show` (files; "" prints nothing), then runs post. It sets
// --lustre.lnetctl-path to it for the test and returns the calls file.
func fakeLnetctl(t *testing.T, net, stats, pre, post string) string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	cat := func(f string) string {
		if f == "" {
			return ":"
		}
		return "cat '" + f + "'"
	}
	script := fmt.Sprintf(`#!/bin/sh
echo "$*" >> '%s'
%s
case "$*" in
"net show -v 4") %s ;;
"stats show") %s ;;
*) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac
%s
`, calls, pre, cat(net), cat(stats), post)
	path := filepath.Join(dir, "lnetctl")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	setFlag(t, &testLnetctl, toolrun.Path(path))
	return calls
}

func lnetFixture(t *testing.T, name string) string {
	return filepath.Join(corpus.Fixtures(t, "lustre"), name)
}

// collectorFunc adapts one collector's Update to a prometheus.Collector.
type collectorFunc func(ch chan<- prometheus.Metric)

func (f collectorFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// updateLNet runs the lnet collector's Update once under ctx, through a
// pedantic registry (which rejects duplicate or inconsistent series), and
// returns the exposition and Update's error.
func updateLNet(t *testing.T, r *Registry, ctx context.Context) (string, error) {
	t.Helper()
	var err error
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		err = r.Collector("lnet").Update(r.NewScrape(ctx), ch)
	}))
	mfs, gerr := reg.Gather()
	if gerr != nil {
		t.Fatalf("gather: %v", gerr)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.FmtText)
	for _, mf := range mfs {
		if e := enc.Encode(mf); e != nil {
			t.Fatal(e)
		}
	}
	return buf.String(), err
}

func checkValues(t *testing.T, text string, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		if got := value(t, text, series); got != w {
			t.Errorf("%s = %v, want %v", series, got, w)
		}
	}
}

// Both fixtures of a -v 4 server: the golden file, and values read by
// hand from the fixtures.
func TestLNetFixturesGolden(t *testing.T) {
	onlyCollectors(t, "lnet")
	fakeLnetctl(t, lnetFixture(t, "lnet-net-show-cyaml.txt"), lnetFixture(t, "lnet-stats-show-libyaml.txt"), "", "")
	r := newTestRegistry(t, nil)
	text := stable(scrapeText(t, r, expfmt.FmtText))
	checkGolden(t, "lnet/fixtures.prom", text)
	checkValues(t, text, map[string]float64{
		`lustre_lnet_ni_status{net_type="o2ib",nid="10.10.0.21@o2ib"}`:                                   1,
		`lustre_lnet_ni_status{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                                   0,
		`lustre_lnet_ni_send_count_total{net_type="o2ib",nid="10.10.0.21@o2ib"}`:                         98765432,
		`lustre_lnet_ni_drop_count_total{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                         250,
		`lustre_lnet_ni_health_value{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                             0,
		`lustre_lnet_ni_health_fatal_error{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                       1,
		`lustre_lnet_ni_health_timeouts_total{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                    96,
		`lustre_lnet_ni_health_no_route_total{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                    7,
		`lustre_lnet_ni_health_ping_count_total{net_type="o2ib",nid="10.10.1.21@o2ib"}`:                  311,
		`lustre_lnet_ni_sent_messages_total{msg_type="get",net_type="o2ib",nid="10.10.0.21@o2ib"}`:       28765432,
		`lustre_lnet_ni_received_messages_total{msg_type="reply",net_type="o2ib",nid="10.10.0.21@o2ib"}`: 14770000,
		`lustre_lnet_ni_dropped_messages_total{msg_type="put",net_type="o2ib",nid="10.10.1.21@o2ib"}`:    200,
		`lustre_lnet_ni_interface_info{interface="eth2",net_type="tcp1",nid="2001:db8:10::21@tcp1"}`:     1,
		`lustre_lnet_ni_send_count_total{net_type="tcp1",nid="2001:db8:10::21@tcp1"}`:                    5000,
		`lustre_lnet_ni_lnd_tunable{net_type="o2ib",nid="10.10.0.21@o2ib",tunable="tos"}`:                -1,
		`lustre_lnet_ni_tunable{net_type="tcp1",nid="2001:db8:10::21@tcp1",tunable="peer_timeout"}`:      180,
		`lustre_lnet_msgs_alloc`:                                              17,
		`lustre_lnet_errors_total`:                                            3,
		`lustre_lnet_send_bytes_total`:                                        18014398509481984,
		`lustre_lnet_receive_count_total`:                                     71230000,
		`lustre_lnet_local_no_route_count_total`:                              4,
		`lustre_lnet_network_timeout_count_total`:                             11,
		`hpcio_exporter_scrape_collector_success{collector="lnet"}`:           1,
		`hpcio_exporter_lnetctl_runs_total{command="net show",result="ok"}`:   1,
		`hpcio_exporter_lnetctl_runs_total{command="stats show",result="ok"}`: 1,
	})
	// lo has no LND tunables and no interface; every NI has 12 numbers.
	if strings.Contains(text, `lustre_lnet_ni_lnd_tunable{net_type="lo"`) || strings.Contains(text, `lustre_lnet_ni_interface_info{interface="",`) {
		t.Error("lo has LND tunables or an empty interface")
	}
	if n := strings.Count(text, "\nlustre_lnet_ni_health_value{"); n != 4 {
		t.Errorf("%d health values, want 4 NIs", n)
	}
}

// Sparse and damaged output: what is there is exported, nothing else.
func TestLNetSparseGolden(t *testing.T) {
	onlyCollectors(t, "lnet")
	fakeLnetctl(t, lnetFixture(t, "lnet-net-show-sparse.txt"), lnetFixture(t, "lnet-stats-show-2.10.txt"), "", "")
	text := stable(scrapeText(t, newTestRegistry(t, nil), expfmt.FmtText))
	checkGolden(t, "lnet/sparse.prom", text)
	checkValues(t, text, map[string]float64{
		`lustre_lnet_ni_status{net_type="tcp",nid="fe80::1%eth0@tcp"}`:                 1,
		`lustre_lnet_ni_status{net_type="o2ib3",nid="10.20.0.5@o2ib3"}`:                1, // the first of two
		`lustre_lnet_ni_drop_count_total{net_type="o2ib3",nid="10.20.0.5@o2ib3"}`:      4294967296,
		`lustre_lnet_ni_receive_count_total{net_type="o2ib3",nid="10.20.0.5@o2ib3"}`:   -1, // "not supported"
		`lustre_lnet_ni_health_value{net_type="o2ib3",nid="10.20.0.5@o2ib3"}`:          900,
		`lustre_lnet_ni_health_timeouts_total{net_type="o2ib3",nid="10.20.0.5@o2ib3"}`: -1,
		`lustre_lnet_send_count_total`:                                                 3e9,
		`lustre_lnet_resend_count_total`:                                               -1, // not in 2.10
		`hpcio_exporter_scrape_collector_success{collector="lnet"}`:                    1,
	})
	if n := strings.Count(text, "\nlustre_lnet_ni_status{"); n != 5 {
		t.Errorf("%d NIs, want 5", n)
	}
}

// The corpus's lnetctl outputs, one golden per source.
func TestLNetCorpusGolden(t *testing.T) {
	dir := corpus.Dir(t, "lustre")
	for _, c := range []struct{ name, net, stats string }{
		{"whamcloud", "whamcloud-lustrefs-exporter/lustrefs-exporter/fixtures/lnetctl_net_show.txt",
			"whamcloud-lustrefs-exporter/lustrefs-exporter/fixtures/lnetctl_stats.txt"},
		{"datadog", "DataDog-integrations-core/lustre/tests/fixtures/all_lnet_net.txt",
			"DataDog-integrations-core/lustre/tests/fixtures/all_lnet_stats.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			onlyCollectors(t, "lnet")
			fakeLnetctl(t, filepath.Join(dir, c.net), filepath.Join(dir, c.stats), "", "")
			text := stable(scrapeText(t, newTestRegistry(t, nil), expfmt.FmtText))
			checkGolden(t, "lnet/corpus-"+c.name+".prom", text)
			if value(t, text, `hpcio_exporter_scrape_collector_success{collector="lnet"}`) != 1 {
				t.Error("failed")
			}
			if c.name == "whamcloud" {
				checkValues(t, text, map[string]float64{
					`lustre_lnet_ni_send_count_total{net_type="tcp",nid="172.16.0.24@tcp"}`: 464970,
					`lustre_lnet_ni_drop_count_total{net_type="lo",nid="0@lo"}`:             4,
					`lustre_lnet_drop_bytes_total`:                                          4832,
					`lustre_lnet_rst_alloc`:                                                 15,
				})
			}
		})
	}
}

// lnetctl missing, failing, printing an error or garbage, or failing after
// a whole output.
func TestLNetFailures(t *testing.T) {
	cyaml, stats := lnetFixture(t, "lnet-net-show-cyaml.txt"), lnetFixture(t, "lnet-stats-show-libyaml.txt")
	down := lnetFixture(t, "lnet-net-show-down.txt")
	for _, c := range []struct {
		name, net, stats, pre, post string
		missing                     bool
		wantErr                     []string // substrings; none means success
		wantNIs                     bool     // per-NI metrics exported
		wantGlobal                  bool
		runs                        map[string]float64
	}{
		{name: "missing", missing: true,
			wantErr: []string{"lnetctl net show: starting", "lnetctl stats show: starting"},
			runs:    map[string]float64{"net show,failed": 1, "stats show,failed": 1}},
		{name: "exit 1, stderr", pre: "echo 'permission denied' >&2; exit 1",
			wantErr: []string{"lnetctl net show: exited with status 1: permission denied"},
			runs:    map[string]float64{"net show,failed": 1, "stats show,failed": 1}},
		{name: "network down on stdout", net: down, stats: stats, post: `[ "$1" = net ] && exit 1; exit 0`,
			wantErr: []string{"lnetctl net show: show net: cannot get networks: No such device (errno -19)"}, wantGlobal: true,
			runs: map[string]float64{"net show,failed": 1, "stats show,ok": 1}},
		{name: "garbage", pre: "head -c 3000 /dev/urandom | tr -d '\\n'; echo; exit 0",
			wantErr: []string{`lnetctl net show: no "net" section in the output`, `lnetctl stats show: no "statistics" section`},
			runs:    map[string]float64{"net show,failed": 1, "stats show,failed": 1}},
		{name: "exit 1 after a whole output", net: cyaml, stats: stats, post: "exit 1",
			wantNIs: true, wantGlobal: true,
			runs: map[string]float64{"net show,partial": 1, "stats show,partial": 1}},
		{name: "stats show fails", net: cyaml, post: `[ "$1" = stats ] && { echo 'no stats' >&2; exit 3; }; exit 0`,
			wantErr: []string{"lnetctl stats show: exited with status 3: no stats"}, wantNIs: true,
			runs: map[string]float64{"net show,ok": 1, "stats show,failed": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			onlyCollectors(t, "lnet")
			fakeLnetctl(t, c.net, c.stats, c.pre, c.post)
			if c.missing {
				setFlag(t, &testLnetctl, toolrun.Path("/nonexistent/lnetctl"))
			}
			text, err := updateLNet(t, newTestRegistry(t, nil), context.Background())
			for _, w := range c.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want it to contain %q", err, w)
				}
			}
			if len(c.wantErr) == 0 && err != nil {
				t.Errorf("error %v", err)
			}
			if got := strings.Contains(text, "\nlustre_lnet_ni_"); got != c.wantNIs {
				t.Errorf("per-NI metrics: %v, want %v", got, c.wantNIs)
			}
			if got := strings.Contains(text, "\nlustre_lnet_send_count_total "); got != c.wantGlobal {
				t.Errorf("global metrics: %v, want %v", got, c.wantGlobal)
			}
			for k, n := range c.runs {
				cmd, result, _ := strings.Cut(k, ",")
				series := fmt.Sprintf(`hpcio_exporter_lnetctl_runs_total{command="%s",result="%s"}`, cmd, result)
				if got := value(t, text, series); got != n {
					t.Errorf("%s = %v, want %v", series, got, n)
				}
			}
		})
	}
}

// A missing lnetctl logs one error line over several scrapes, and leaves
// the other collectors alone.
func TestLNetOneErrorLine(t *testing.T) {
	onlyCollectors(t, "lnet", "jobstats")
	setFlag(t, &testLnetctl, toolrun.Path("/nonexistent/lnetctl"))
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r, err := NewRegistry(Env{Logger: logger, LctlSource: &textSource{texts: []string{readFixture(t, "jobstats-edge.txt")}}, Lnetctl: testLnetctl})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		text := scrapeText(t, r, expfmt.FmtText)
		checkValues(t, text, map[string]float64{
			`hpcio_exporter_scrape_collector_success{collector="lnet"}`:     0,
			`hpcio_exporter_scrape_collector_success{collector="jobstats"}`: 1,
		})
	}
	mu.Lock()
	defer mu.Unlock()
	out := logs.String()
	if n := strings.Count(out, "level=ERROR"); n != 1 {
		t.Errorf("%d error lines for 3 identical failures:\n%s", n, out)
	}
	if n := strings.Count(out, `msg="collector failed again" name=lnet`); n != 2 {
		t.Errorf("%d debug lines for the repeats:\n%s", n, out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A hanging lnetctl is killed at the run's deadline: --lustre.timeout, or
// the scrape's deadline less the offset, whichever comes first.
func TestLNetDeadline(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration
		scrape  time.Duration // 0: no scrape deadline
		within  time.Duration
	}{
		// Killed 0.7 s in; anything well under the 20 s default shows the
		// cap applied, with room for a loaded machine.
		{"lustre.timeout", 700 * time.Millisecond, 0, 2900 * time.Millisecond},
		// Killed 1 s in, 2 s before the scrape's deadline: done before the
		// scrape's 3 s shows the offset applied.
		{"scrape deadline", 20 * time.Second, 3 * time.Second, 2900 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			onlyCollectors(t, "lnet")
			setFlag(t, &lctlTimeout, c.timeout)
			setFlag(t, &lctlTimeoutOffset, 2*time.Second)
			fakeLnetctl(t, "", "", "sleep 30", "")
			r := newTestRegistry(t, nil)
			ctx := context.Background()
			if c.scrape > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.scrape)
				defer cancel()
			}
			begin := time.Now()
			text, err := updateLNet(t, r, ctx)
			if took := time.Since(begin); took > c.within {
				t.Errorf("took %v", took)
			}
			if err == nil || !strings.Contains(err.Error(), "killed at the scrape deadline") {
				t.Errorf("error %v", err)
			}
			if value(t, text, `hpcio_exporter_lnetctl_runs_total{command="net show",result="killed"}`) != 1 {
				t.Errorf("kill not counted (error %v):\n%s", err, text)
			}
		})
	}
}

// Concurrent scrapes share one run of each command.
func TestLNetConcurrentScrapes(t *testing.T) {
	onlyCollectors(t, "lnet")
	calls := fakeLnetctl(t, lnetFixture(t, "lnet-net-show-cyaml.txt"), lnetFixture(t, "lnet-stats-show-libyaml.txt"), "sleep 0.5", "")
	r := newTestRegistry(t, nil)
	var wg sync.WaitGroup
	texts := make([]string, 4)
	for i := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts[i] = scrapeText(t, r, expfmt.FmtText)
		}()
	}
	wg.Wait()
	for i, text := range texts {
		if value(t, text, `lustre_lnet_ni_send_count_total{net_type="o2ib",nid="10.10.0.21@o2ib"}`) != 98765432 {
			t.Errorf("scrape %d lacks the NI metrics", i)
		}
	}
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); got != "net show -v 4\nstats show\n" && got != "stats show\nnet show -v 4\n" {
		t.Errorf("lnetctl runs for 4 concurrent scrapes:\n%s", got)
	}
	// The next scrape runs lnetctl again.
	scrapeText(t, r, expfmt.FmtText)
	if data, _ := os.ReadFile(calls); strings.Count(string(data), "\n") != 4 {
		t.Errorf("runs after one more scrape:\n%s", data)
	}
}

// --demo reads the simulator; no lnetctl is needed.
func TestLNetDemo(t *testing.T) {
	onlyCollectors(t, "lnet")
	setFlag(t, &testLnetctl, toolrun.Path("/nonexistent/lnetctl"))
	r, err := NewRegistry(Env{Logger: testLogger(t), Lnetctl: lustresim.StartLnetctl})
	if err != nil {
		t.Fatal(err)
	}
	text, err := updateLNet(t, r, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`lustre_lnet_ni_status{net_type="o2ib",nid="192.168.100.10@o2ib"} 1`,
		`lustre_lnet_ni_health_value{net_type="o2ib",nid="192.168.101.10@o2ib"}`,
		`lustre_lnet_ni_interface_info{interface="ib1",net_type="o2ib",nid="192.168.101.10@o2ib"} 1`,
		"lustre_lnet_send_bytes_total ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo lacks %s", want)
		}
	}
}
