package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

var collectorSuccess = regexp.MustCompile(`(?m)^hpcio_exporter_scrape_collector_success\{collector="([^"]+)"\} (\S+)$`)

// The sidecar as the README and the systemd unit run it: every collector
// off but darshan and dayu. Both succeed on every scrape, and neither lctl
// nor lnetctl is ever started, whether given by flag or found in $PATH.
func TestEndToEndSidecarMode(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	tools := t.TempDir()
	started := filepath.Join(tools, "started")
	for _, name := range []string{"lctl", "lnetctl"} {
		script := "#!/bin/sh\necho " + name + " >> " + started + "\n"
		if err := os.WriteFile(filepath.Join(tools, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	darshanDir := t.TempDir()
	day := filepath.Join(darshanDir, "2026", "1", "15")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	log, err := darshantest.Job{JobID: 4242, UID: 1000, Exe: "/apps/sim --in x", End: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), Ranks: 2, Bytes: 1 << 20}.Log()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, "user_sim_id4242-1_1-15-43200-1_1.darshan"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	dayuDir := t.TempDir()
	if err := exec.Command("cp", "-r", filepath.Join(corpus.Fixtures(t, "dayu"), "json"), filepath.Join(dayuDir, "run1")).Run(); err != nil {
		t.Fatal(err)
	}

	e := startExporterEnv(t, bin, []string{"PATH=" + tools + ":" + os.Getenv("PATH")},
		"--collector.disable-defaults", "--collector.darshan", "--collector.dayu",
		"--darshan.dir="+darshanDir, "--dayu.dir="+dayuDir, "--darshan.retention=87600h",
		"--lustre.lctl-path="+filepath.Join(tools, "lctl"), "--lustre.lnetctl-path="+filepath.Join(tools, "lnetctl"))
	waitFor(t, e, "the log read", has("darshan_logs_processed_total 1"))
	for range 3 {
		text, _ := scrapeMetrics(t, e, nil)
		promtoolCheck(t, text)
		got := map[string]string{}
		for _, m := range collectorSuccess.FindAllStringSubmatch(text, -1) {
			got[m[1]] = m[2]
		}
		if len(got) != 2 || got["darshan"] != "1" || got["dayu"] != "1" {
			t.Fatalf("collectors of the sidecar: %v, want darshan and dayu, both successful", got)
		}
		if !strings.Contains(text, `dayu_workflow_stages{workflow="run1"}`) {
			t.Error("the DaYu workflow is not exported")
		}
		for _, absent := range []string{"lustre_", "hpcio_exporter_lctl_", "hpcio_exporter_lnetctl_"} {
			if strings.Contains(text, "\n"+absent) {
				t.Errorf("the sidecar exports %s* series", absent)
			}
		}
	}
	if data, err := os.ReadFile(started); err == nil {
		t.Errorf("the sidecar started Lustre tools:\n%s", data)
	}
	e.Cmd.Process.Kill()
	e.Wait() // the log is complete, and no longer written
	scanned := map[string]bool{}
	for _, line := range strings.Split(e.Logs.String(), "\n") {
		if strings.Contains(line, "collector enabled") && !strings.Contains(line, "collector=darshan") && !strings.Contains(line, "collector=dayu") {
			t.Errorf("log: %s", line)
		}
		// Each sidecar says at INFO what its first scan found.
		for what, found := range map[string]string{"Darshan": "parsed=1 ", "DaYu": "runs=1 "} {
			if strings.Contains(line, "level=INFO") && strings.Contains(line, `msg="`+what+` drop directory scanned"`) && strings.Contains(line, found) {
				scanned[what] = true
			}
		}
	}
	if !scanned["Darshan"] || !scanned["DaYu"] {
		t.Errorf("scan lines at INFO: %v, want Darshan and DaYu", scanned)
	}
}
