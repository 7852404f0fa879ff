package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// familyCollectors are the collectors of the Lustre families other than
// job_stats; quota and export_stats are off by default.
var familyCollectors = []string{"brw_stats", "capacity", "changelog", "export_stats", "exports", "health", "ldlm", "llite",
	"mdt_stats", "memory", "osd_stats", "osp", "ost_stats", "quota", "recovery", "service_stats", "version"}

// The built binary with a fake lctl printing each families fixture, every
// family collector on: every collector succeeds and the whole scrape
// passes promtool check metrics.
func TestEndToEndFamilies(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	files, err := filepath.Glob(filepath.Join(corpus.Fixtures(t, "lustre"), "families-*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no families fixtures: %v", err)
	}
	for _, fixture := range files {
		t.Run(filepath.Base(fixture), func(t *testing.T) {
			lctl := fakeLctl(t, "cat "+fixture)
			e := startExporter(t, bin, "--lustre.lctl-path="+lctl, "--collector.quota", "--collector.export_stats",
				"--no-collector.jobstats", "--no-collector.lnet")
			text, _ := scrapeMetrics(t, e, nil)
			promtoolCheck(t, text)
			for _, name := range familyCollectors {
				if want := `hpcio_exporter_scrape_collector_success{collector="` + name + `"} 1`; !strings.Contains(text, want) {
					t.Errorf("scrape lacks %s", want)
				}
			}
			if !strings.Contains(text, "lustre_build_info{") && !strings.Contains(fixture, "edge") {
				t.Error("no lustre_build_info")
			}
		})
	}
}

// The demo shows every family, consistently with its jobs, without bad
// input, and passes promtool check metrics.
func TestEndToEndDemoFamilies(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startExporter(t, bin, "--demo", "--collector.quota", "--collector.export_stats")
	text, _ := scrapeMetrics(t, e, nil)
	promtoolCheck(t, text)
	for _, want := range []string{
		`lustre_brw_rpc_size_bytes_bucket{component="ost",operation="write",target="demo-OST0003",le="4096"}`,
		`lustre_brw_io_time_seconds_count{component="ost",operation="read",target="demo-OST0000"}`,
		`lustre_capacity_bytes{component="ost",target="demo-OST0007"}`,
		`lustre_inodes_free{component="mdt",target="demo-MDT0001"}`,
		`lustre_recovery_status{component="ost",status="COMPLETE",target="demo-OST0002"} 1`,
		`lustre_write_bytes_total{component="ost",target="demo-OST0004"}`,
		`lustre_stats_total{component="mdt",operation="open",target="demo-MDT0000"}`,
		`lustre_service_stats_total{operation="ost_write",service="ost_io"}`,
		`lustre_client_export_bytes_total{component="ost",nid="2001:db8::21@tcp",operation="write_bytes",target="demo-OST0001"}`,
		`lustre_changelog_user_index{component="mdt",target="demo-MDT0001",user="cl1"}`,
		`lustre_osp_active{component="ost",mdt="demo-MDT0000",target="demo-OST0005"} 1`,
		`lustre_quota_used_bytes{accounting="user",component="ost",id="1000",target="demo-OST0000"}`,
		`lustre_locks{component="mdt",target="demo-MDT0000"}`,
		`lustre_health_check 1`,
		`lustre_build_info{build="",version="2.15.4"} 1`,
		`lustre_memory_used_bytes `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %s", want)
		}
	}
	for _, name := range familyCollectors {
		if want := `hpcio_exporter_scrape_collector_success{collector="` + name + `"} 1`; !strings.Contains(text, want) {
			t.Errorf("demo scrape lacks %s", want)
		}
		if want := `hpcio_exporter_lctl_bad_input_total{collector="` + name + `"} 0`; !strings.Contains(text, want) {
			t.Errorf("demo scrape lacks %s", want)
		}
	}
}
