package main

import (
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
	"github.com/hpcio/hpcio_exporter/internal/testkit/promtool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) {
	raceEpilogIfAsked() // the epilog race test's racer, when asked, never returns
	os.Exit(exportertest.Main(m))
}

// buildExporter builds the binary once per test run: the tests that run
// it share it (and run in parallel, mostly waiting on it).
func buildExporter(t testing.TB) string { return exportertest.Binary(t) }

func freeAddress(t testing.TB) string { return exportertest.FreeAddress(t) }

// onlyCollectors returns the flags that enable the named collectors and
// disable every other, so that a test's output does not change when a
// collector is added.
func onlyCollectors(names ...string) []string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var flags []string
	for _, n := range collector.Names() {
		if want[n] {
			flags = append(flags, "--collector."+n)
		} else {
			flags = append(flags, "--no-collector."+n)
		}
	}
	return flags
}

// fakeLctl writes an lctl that runs body (a shell script) and returns its path.
func fakeLctl(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lctl")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// exporter is a running exporter: its address, command and log.
type exporter = exportertest.Process

func startExporter(t testing.TB, bin string, args ...string) *exporter {
	t.Helper()
	return startExporterEnv(t, bin, nil, args...)
}

// startExporterEnv is startExporter with env ("NAME=value") added to the
// exporter's environment.
func startExporterEnv(t testing.TB, bin string, env []string, args ...string) *exporter {
	t.Helper()
	return startCommand(t, bin, env, nil, args...)
}

// startCommand is startExporterEnv with command (such as "serve") before
// the flags; nil leaves kingpin to select the default command, as the
// systemd units do.
func startCommand(t testing.TB, bin string, env, command []string, args ...string) *exporter {
	t.Helper()
	addr := freeAddress(t)
	e := exportertest.Command("exporter", bin, slices.Concat(command, []string{"--web.listen-address=" + addr, "--web.disable-exporter-metrics"}, args)...)
	e.Addr = addr
	if env != nil {
		e.Cmd.Env = append(os.Environ(), env...)
	}
	return launch(t, e)
}

// launch starts e, stops it when the test ends (with its log if the test
// failed) and waits until e.Addr accepts connections.
func launch(t testing.TB, e *exporter) *exporter {
	t.Helper()
	return e.Start(t).WaitListening(t, 10*time.Second)
}

// scrapeMetrics scrapes e's /metrics with header, and fails the test unless it
// answers 200.
func scrapeMetrics(t *testing.T, e *exporter, header map[string]string) (string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+e.Addr+"/metrics", nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %s", resp.Status)
	}
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), resp.Header
}

// volatile drops lines that change between builds and runs.
var volatile = regexp.MustCompile(`(?m)^(hpcio_exporter_build_info|hpcio_exporter_scrape_collector_duration_seconds|hpcio_exporter_lctl_last_run_duration_seconds)\b.*\n`)

// promtoolCheck runs promtool check metrics on a scrape. Under CI it must
// be installed; elsewhere the check is skipped with a message.
func promtoolCheck(t testing.TB, text string) {
	t.Helper()
	promtool.CheckMetrics(t, text)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update)
}

// The built binary with a fake lctl printing the edge fixture: /metrics is
// diffed against a golden file and passes promtool check metrics.
func TestEndToEndFixture(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	fixture := filepath.Join(corpus.Fixtures(t, "lustre"), "jobstats-edge.txt")
	lctl := fakeLctl(t, "cat "+fixture)
	e := startExporter(t, bin, append(onlyCollectors("jobstats"), "--lustre.lctl-path="+lctl)...)
	text, header := scrapeMetrics(t, e, nil)
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	promtoolCheck(t, text)
	checkGolden(t, "e2e-edge.prom", volatile.ReplaceAllString(text, ""))

	// The same through gzip and OpenMetrics, as Prometheus asks.
	om, header := scrapeMetrics(t, e, map[string]string{
		"Accept":          "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		"Accept-Encoding": "gzip",
	})
	if header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(header.Get("Content-Type"), "application/openmetrics-text") {
		t.Errorf("headers %v", header)
	}
	if !strings.HasSuffix(om, "# EOF\n") || !strings.Contains(om, "lustre_job_write_bytes_total{") {
		t.Errorf("OpenMetrics response malformed: ends %q", om[max(0, len(om)-40):])
	}
	// No _created line by default (--web.openmetrics-created-samples).
	if strings.Contains(om, "_created") {
		t.Errorf("OpenMetrics response has _created lines by default")
	}
}

// lctl missing, failing, hanging or printing garbage: the collector
// reports failure, the response is still served, the process lives on.
func TestEndToEndBadLctl(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cases := []struct {
		name, lctl string
		header     map[string]string
		maxTime    time.Duration
	}{
		{"missing", "/nonexistent/lctl", nil, 5 * time.Second},
		{"failing", fakeLctl(t, "echo 'error: get_param: permission denied' >&2; exit 1"), nil, 5 * time.Second},
		{"garbage", fakeLctl(t, "head -c 100000 /dev/urandom"), nil, 5 * time.Second},
		// Hangs past the scrape timeout (2s, minus the 0.5s offset).
		{"hanging", fakeLctl(t, "echo 'obdfilter.x-OST0000.job_stats='; sleep 60 & echo $! > "+pidFile+"; wait"),
			map[string]string{"X-Prometheus-Scrape-Timeout-Seconds": "2"}, 4 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := startExporter(t, bin, append(onlyCollectors("jobstats"), "--lustre.lctl-path="+c.lctl)...)
			for i := 0; i < 2; i++ {
				begin := time.Now()
				text, _ := scrapeMetrics(t, e, c.header)
				if took := time.Since(begin); took > c.maxTime {
					t.Errorf("scrape took %v", took)
				}
				if !strings.Contains(text, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 0`) {
					t.Errorf("success not 0:\n%s", text)
				}
				promtoolCheck(t, text)
			}
			if e.Exited() {
				t.Fatal("exporter exited")
			}
			// One error line for repeated identical failures.
			if n := strings.Count(e.Logs.String(), "level=ERROR"); n != 1 {
				t.Errorf("%d error lines for 2 identical failures:\n%s", n, e.Logs)
			}
			if c.name == "hanging" {
				data, _ := os.ReadFile(pidFile)
				var pid int
				fmt.Sscan(string(data), &pid)
				if pid > 0 {
					if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
						stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
						if f := strings.Fields(string(stat)); len(f) > 2 && f[2] != "Z" {
							t.Errorf("the hanging lctl's child %d was not killed", pid)
						}
					}
				}
			}
		})
	}
}

// The demo needs no Lustre and shows live, changing metrics.
func TestEndToEndDemo(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startExporter(t, bin, "--demo")
	first, _ := scrapeMetrics(t, e, nil)
	promtoolCheck(t, first)
	if !strings.Contains(first, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`) {
		t.Fatalf("demo scrape failed:\n%.2000s", first)
	}
	for _, want := range []string{`lustre_job_write_bytes_total{component="ost",target="demo-OST0000"`, `target="demo-MDT0001"`, `outcome="repaired_truncated"`} {
		if !strings.Contains(first, want) {
			t.Errorf("demo output lacks %s", want)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	second, _ := scrapeMetrics(t, e, nil)
	if first == second {
		t.Error("demo metrics did not change in a second")
	}
	// The ground truth endpoint knows the demo's special jobs.
	resp, err := http.Get("http://" + e.Addr + "/demo/truth")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var truth []struct {
		JobID string  `json:"jobid"`
		Write float64 `json:"write_bytes_per_second"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&truth); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range truth {
		found = found || j.JobID == "90000001" && j.Write == 64<<20
	}
	if len(truth) < 100 || !found {
		t.Errorf("truth lists %d jobs, churn job found: %v", len(truth), found)
	}
}
