package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
	"github.com/hpcio/hpcio_exporter/internal/testkit/promtool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var (
	binDir   string // removed by TestMain
	binOnce  sync.Once
	binPath  string
	binBuild error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hpcio-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildExporter builds the binary once per test run: the tests that run
// it share it (and run in parallel, mostly waiting on it).
func buildExporter(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binPath = filepath.Join(binDir, "hpcio_exporter")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binBuild = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binBuild != nil {
		t.Fatal(binBuild)
	}
	return binPath
}

func freeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

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

type exporter struct {
	addr string
	cmd  *exec.Cmd
	logs *bytes.Buffer
}

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
	e := &exporter{addr: freeAddress(t), logs: &bytes.Buffer{}}
	e.cmd = exec.Command(bin, slices.Concat(command, []string{"--web.listen-address=" + e.addr, "--web.disable-exporter-metrics"}, args)...)
	if env != nil {
		e.cmd.Env = append(os.Environ(), env...)
	}
	return e.launch(t)
}

// launch starts e's command, stops it when the test ends (with its log if
// the test failed) and waits until e.addr accepts connections.
func (e *exporter) launch(t testing.TB) *exporter {
	t.Helper()
	e.cmd.Stdout, e.cmd.Stderr = e.logs, e.logs
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM first, as systemd stops it, so that a demo removes its
		// drop directory; SIGKILL if it does not end.
		e.cmd.Process.Signal(syscall.SIGTERM)
		ended := make(chan struct{})
		go func() { e.cmd.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			e.cmd.Process.Kill()
			<-ended
		}
		if t.Failed() {
			t.Logf("exporter log:\n%s", e.logs)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", e.addr); err == nil {
			c.Close()
			return e
		}
	}
	t.Fatalf("exporter did not listen on %s", e.addr)
	return nil
}

func (e *exporter) scrape(t *testing.T, header map[string]string) (string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+e.addr+"/metrics", nil)
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
	text, header := e.scrape(t, nil)
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	promtoolCheck(t, text)
	checkGolden(t, "e2e-edge.prom", volatile.ReplaceAllString(text, ""))

	// The same through gzip and OpenMetrics, as Prometheus asks.
	om, header := e.scrape(t, map[string]string{
		"Accept":          "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		"Accept-Encoding": "gzip",
	})
	if header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(header.Get("Content-Type"), "application/openmetrics-text") {
		t.Errorf("headers %v", header)
	}
	if !strings.HasSuffix(om, "# EOF\n") || !strings.Contains(om, "lustre_job_write_bytes_created{") {
		t.Errorf("OpenMetrics response malformed: ends %q", om[max(0, len(om)-40):])
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
				text, _ := e.scrape(t, c.header)
				if took := time.Since(begin); took > c.maxTime {
					t.Errorf("scrape took %v", took)
				}
				if !strings.Contains(text, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 0`) {
					t.Errorf("success not 0:\n%s", text)
				}
				promtoolCheck(t, text)
			}
			if e.cmd.ProcessState != nil {
				t.Fatal("exporter exited")
			}
			// One error line for repeated identical failures.
			if n := strings.Count(e.logs.String(), "level=ERROR"); n != 1 {
				t.Errorf("%d error lines for 2 identical failures:\n%s", n, e.logs)
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
	first, _ := e.scrape(t, nil)
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
	second, _ := e.scrape(t, nil)
	if first == second {
		t.Error("demo metrics did not change in a second")
	}
	// The ground truth endpoint knows the demo's special jobs.
	resp, err := http.Get("http://" + e.addr + "/demo/truth")
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
