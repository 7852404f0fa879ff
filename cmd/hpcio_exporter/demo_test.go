package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scrapeUntil scrapes e until every one of want is in the response (the
// sidecars read their directories just after the start), and returns it.
func scrapeUntil(t *testing.T, e *exporter, want ...string) string {
	t.Helper()
	var body string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		body, _ = scrapeMetrics(t, e, nil)
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
			}
		}
		if missing == "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 15 s; last scrape:\n%.3000s", missing, body)
		}
	}
}

var (
	lctlRunsLine   = regexp.MustCompile(`(?m)^hpcio_exporter_lctl_runs_total\{result="(\w+)"\} (\S+)$`)
	demoDropLogged = regexp.MustCompile(`dir=(\S+)/darshan `)
)

// `--demo` alone shows every kind of family: Lustre from the simulator,
// Darshan jobs and DaYu workflows from the drop directory it writes, every
// collector successful and every lctl run ok; the directory goes when the
// demo is stopped.
func TestDemoSidecars(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startExporter(t, bin, "--demo")
	// The demo's Darshan logs are steps of the simulator's fixed jobs, so
	// that jobid joins them with their Lustre traffic.
	body := scrapeUntil(t, e, `darshan_job_info{jobid="90000001"`, `darshan_job_info{jobid="90000002"`, `darshan_job_info{jobid="90000003"`,
		`dayu_stage_io_bytes_total{`, `workflow="wf-7001"`, `workflow="wf-8001"`, `lustre_job_write_bytes_total{`, `lustre_lnet_`)
	promtoolCheck(t, body)
	// The mdtest step's small writes, which Darshan's insights point at.
	if !strings.Contains(body, `darshan_job_posix_small_write_ratio{jobid="90000002",uid="4242",exe="mdtest"} 1`) {
		t.Error("the storm job's Darshan log has no small writes")
	}

	ran := map[string]bool{}
	for _, m := range collectorSuccess.FindAllStringSubmatch(body, -1) {
		ran[m[1]] = true
		if m[2] != "1" {
			t.Errorf("collector %s failed in the demo", m[1])
		}
	}
	for _, c := range []string{"darshan", "dayu", "jobstats", "llite", "exports", "lnet"} {
		if !ran[c] {
			t.Errorf("collector %s did not run in the demo", c)
		}
	}
	// The simulator prints every parameter the collectors ask for (the
	// MGS's eviction_count, the server's own client mount): no run is
	// partial, which would read as a fault.
	for _, body := range []string{body, scrapeUntil(t, e)} {
		runs := map[string]string{}
		for _, m := range lctlRunsLine.FindAllStringSubmatch(body, -1) {
			runs[m[1]] = m[2]
		}
		if runs["ok"] == "0" || runs["ok"] == "" || runs["partial"] != "0" || runs["failed"] != "0" || runs["killed"] != "0" {
			t.Errorf("demo lctl runs: %v, want only ok", runs)
		}
	}

	// Stopped as systemd or ^C stops it: the directory goes with it.
	e.Cmd.Process.Signal(syscall.SIGTERM)
	e.Wait()
	m := demoDropLogged.FindStringSubmatch(e.Logs.String())
	if m == nil {
		t.Fatalf("the demo did not log its drop directory:\n%s", e.Logs)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("the demo's drop directory %s is still there after SIGTERM (%v)", m[1], err)
		os.RemoveAll(m[1])
	}
}

// A directory the user gives is used as given: the demo writes only for the
// collector that has none, and nothing for a collector turned off.
func TestDemoSidecarsUserDirs(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	own := filepath.Join(t.TempDir(), "my-run")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"task_order_list.json", "8001-vol_data_stat.json", "8001-vfd_data_stat.json", "demo-task_to_file.json"} {
		data, err := os.ReadFile(filepath.Join("demodata", "dayu", "wf-8001", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(own, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := startExporter(t, bin, "--demo", "--dayu.dir="+filepath.Dir(own))
	body := scrapeUntil(t, e, `workflow="my-run"`, `darshan_job_info{`)
	if strings.Contains(body, `workflow="wf-7001"`) {
		t.Error("the demo wrote its DaYu runs beside the user's --dayu.dir")
	}

	e = startExporter(t, bin, "--demo", "--no-collector.darshan", "--no-collector.dayu")
	body = scrapeUntil(t, e, `lustre_job_write_bytes_total{`)
	e.Cmd.Process.Signal(syscall.SIGTERM)
	e.Wait() // before its log is read
	if strings.Contains(body, "darshan_") || strings.Contains(body, "dayu_") || strings.Contains(e.Logs.String(), "demo: ") {
		t.Errorf("the demo wrote for collectors turned off:\n%s", e.Logs)
	}
}

// /metrics?collect[]=jobstats on the demo: the jobstats collector's
// families and the exporter's own, nothing of the other collectors.
func TestDemoCollectParam(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startExporter(t, bin, "--demo")
	resp, err := http.Get("http://" + e.Addr + "/metrics?collect[]=jobstats")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(data)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "lustre_job_write_bytes_total{") {
		t.Fatalf("collect[]=jobstats: %s\n%.2000s", resp.Status, body)
	}
	family := regexp.MustCompile(`(?m)^# TYPE (\S+) `)
	allowed := regexp.MustCompile(`^(lustre_job_|lustre_jobid_|lustre_jobstats_|hpcio_exporter_jobstats_|hpcio_exporter_scrape_collector_|hpcio_exporter_lctl_|hpcio_exporter_build_info$)`)
	for _, m := range family.FindAllStringSubmatch(body, -1) {
		if !allowed.MatchString(m[1]) {
			t.Errorf("collect[]=jobstats: family %s", m[1])
		}
	}
	resp, err = http.Get("http://" + e.Addr + "/metrics?collect[]=no_such")
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), `unknown collector "no_such"`) {
		t.Errorf("collect[]=no_such: %s %q", resp.Status, data)
	}
}

// pprof is served, and linked from the landing page, only with
// --web.enable-pprof.
func TestPprofFlag(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	get := func(e *exporter, path string) (int, string) {
		resp, err := http.Get("http://" + e.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	noLustre := onlyCollectors() // nothing to run: the pages are the point
	off := startExporter(t, bin, noLustre...)
	if status, _ := get(off, "/debug/pprof/"); status != http.StatusNotFound {
		t.Errorf("without --web.enable-pprof, /debug/pprof/: %d, want 404", status)
	}
	if status, _ := get(off, "/debug/pprof/heap"); status != http.StatusNotFound {
		t.Errorf("without --web.enable-pprof, /debug/pprof/heap: %d, want 404", status)
	}
	if _, landing := get(off, "/"); strings.Contains(landing, "debug/pprof") || !strings.Contains(landing, "/metrics") {
		t.Errorf("without --web.enable-pprof, the landing page links pprof (or not the metrics):\n%s", landing)
	}

	on := startExporter(t, bin, append(noLustre, "--web.enable-pprof")...)
	if status, index := get(on, "/debug/pprof/"); status != http.StatusOK || !strings.Contains(index, "goroutine") {
		t.Errorf("with --web.enable-pprof, /debug/pprof/: %d\n%.500s", status, index)
	}
	if status, _ := get(on, "/debug/pprof/heap?debug=1"); status != http.StatusOK {
		t.Errorf("with --web.enable-pprof, /debug/pprof/heap: %d", status)
	}
	if _, landing := get(on, "/"); !strings.Contains(landing, "debug/pprof/heap") {
		t.Errorf("with --web.enable-pprof, the landing page does not link the profiles:\n%s", landing)
	}
}
