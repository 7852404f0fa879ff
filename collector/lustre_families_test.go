package collector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// familyCollectorNames are the collectors of the Lustre families other
// than job_stats, those off by default included.
var familyCollectorNames = []string{"brw_stats", "capacity", "changelog", "export_stats", "exports", "health", "ldlm", "llite",
	"mdt_stats", "memory", "osd_stats", "osp", "ost_stats", "quota", "recovery", "service_stats", "version"}

// scrapeFamilies scrapes text with every family collector and no other.
func scrapeFamilies(t *testing.T, text string, format expfmt.Format) string {
	t.Helper()
	onlyCollectors(t, familyCollectorNames...)
	return stable(scrapeText(t, newTestRegistry(t, &textSource{texts: []string{text}}), format))
}

// The fixtures' expositions, in both formats, against golden files.
func TestFamiliesFixturesGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus.Fixtures(t, "lustre"), "families-*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no families fixtures: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			text := readFixture(t, name)
			checkGolden(t, "families/"+name+".prom", scrapeFamilies(t, text, expfmt.FmtText))
			checkGolden(t, "families/"+name+".om", scrapeFamilies(t, text, expfmt.FmtOpenMetrics_1_0_0))
		})
	}
}

// expectValues checks series of a scrape against values worked out by
// hand from the fixture; -1 means the series must be absent.
func expectValues(t *testing.T, text string, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		if got := value(t, text, canonicalSeries(series)); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
}

// canonicalSeries writes a series as the exposition does: labels sorted by
// name, le last. Label values must not hold commas.
func canonicalSeries(series string) string {
	open := strings.IndexByte(series, '{')
	if open < 0 || !strings.HasSuffix(series, "}") {
		return series
	}
	pairs := strings.Split(series[open+1:len(series)-1], ",")
	slices.SortFunc(pairs, func(a, b string) int {
		if strings.HasPrefix(a, "le=") != strings.HasPrefix(b, "le=") {
			if strings.HasPrefix(a, "le=") {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	return series[:open+1] + strings.Join(pairs, ",") + "}"
}

// Values of families-oss-2.15.txt, worked out by hand.
func TestFamiliesOSSValues(t *testing.T) {
	text := scrapeFamilies(t, readFixture(t, "families-oss-2.15.txt"), expfmt.FmtText)
	const ost0, ost1 = `component="ost",target="lab-OST0000"`, `component="ost",target="lab-OST0001"`
	expectValues(t, text, map[string]float64{
		// kbytes are KiB: 15625000000 KiB = 16e12 bytes.
		`lustre_capacity_bytes{` + ost0 + `}`:                       15625000000 * 1024,
		`lustre_free_bytes{` + ost0 + `}`:                           9765625000 * 1024,
		`lustre_available_bytes{` + ost0 + `}`:                      9000000000 * 1024,
		`lustre_available_bytes{` + ost1 + `}`:                      -1, // "not supported": dropped
		`lustre_inodes_maximum{` + ost1 + `}`:                       100000000,
		`lustre_inodes_free{` + ost1 + `}`:                          99999000,
		`hpcio_exporter_lctl_bad_input_total{collector="capacity"}`: 1,
		// brw_stats: 10 one-page and 90 256-page reads.
		`lustre_brw_rpc_size_bytes_bucket{` + ost0 + `,operation="read",le="4096"}`:         10,
		`lustre_brw_rpc_size_bytes_bucket{` + ost0 + `,operation="read",le="524288"}`:       10,
		`lustre_brw_rpc_size_bytes_bucket{` + ost0 + `,operation="read",le="1.048576e+06"}`: 100,
		`lustre_brw_rpc_size_bytes_count{` + ost0 + `,operation="read"}`:                    100,
		`lustre_brw_rpc_size_bytes_sum{` + ost0 + `,operation="read"}`:                      10*4096 + 90*256*4096,
		`lustre_brw_rpc_size_bytes_count{` + ost0 + `,operation="write"}`:                   100,
		// I/O time in seconds: 70 reads of ≤1 ms, 20 of ≤2 ms, 10 of ≤4 ms.
		`lustre_brw_io_time_seconds_bucket{` + ost0 + `,operation="read",le="0.001"}`: 70,
		`lustre_brw_io_time_seconds_bucket{` + ost0 + `,operation="read",le="0.002"}`: 90,
		`lustre_brw_io_time_seconds_bucket{` + ost0 + `,operation="read",le="0.004"}`: 100,
		`lustre_brw_io_time_seconds_sum{` + ost0 + `,operation="write"}`:              (10*1 + 60*2 + 30*4) / 1000.0,
		// Linear: in flight 1, 2, 3 for 50, 30, 20 writes; sum exact.
		`lustre_brw_ios_in_flight_bucket{` + ost0 + `,operation="write",le="2"}`:     80,
		`lustre_brw_ios_in_flight_sum{` + ost0 + `,operation="write"}`:               50*1 + 30*2 + 20*3,
		`lustre_brw_discontiguous_pages_sum{` + ost0 + `,operation="write"}`:         2,
		`lustre_brw_io_size_bytes_bucket{` + ost0 + `,operation="write",le="16384"}`: 5,
		// An OST with no I/O yet: empty histograms, count 0.
		`lustre_brw_rpc_size_bytes_count{` + ost1 + `,operation="write"}`: 0,
		// Stats: read_bytes and write_bytes to their families, the rest by operation.
		`lustre_read_samples_total{` + ost0 + `}`:                                    100,
		`lustre_read_bytes_total{` + ost0 + `}`:                                      94413824,
		`lustre_read_minimum_size_bytes{` + ost0 + `}`:                               4096,
		`lustre_write_maximum_size_bytes{` + ost0 + `}`:                              1048576,
		`lustre_stats_total{` + ost0 + `,operation="read"}`:                          100,
		`lustre_operation_seconds_total{` + ost0 + `,operation="write"}`:             0.25,
		`lustre_stats_total{` + ost1 + `,operation="statfs"}`:                        5000,
		`lustre_stats_total{` + ost0 + `,operation="read_bytes"}`:                    -1,
		`lustre_osd_stats_total{` + ost0 + `,operation="cache_hit"}`:                 50,
		`lustre_osd_stats_pages_total{` + ost0 + `,operation="cache_miss"}`:          15000,
		`lustre_osd_stats_seconds_total{` + ost0 + `,operation="get_page"}`:          0.002,
		`lustre_exports{` + ost0 + `}`:                                               3,
		`lustre_exports_granted_bytes{` + ost0 + `}`:                                 1887764159,
		`lustre_evictions_total{` + ost0 + `}`:                                       2,
		`lustre_recovery_status{` + ost0 + `,status="COMPLETE"}`:                     1,
		`lustre_recovery_status{` + ost0 + `,status="RECOVERING"}`:                   0,
		`lustre_recovery_status{` + ost1 + `,status="INACTIVE"}`:                     1,
		`lustre_recovery_status_completed_clients{` + ost0 + `}`:                     3,
		`lustre_recovery_status_total_clients{` + ost0 + `}`:                         3,
		`lustre_recovery_status_duration_seconds{` + ost0 + `}`:                      95,
		`lustre_recovery_status_completed_clients{` + ost1 + `}`:                     -1,
		`lustre_locks{` + ost0 + `}`:                                                 1200,
		`lustre_lock_timeout_total{` + ost0 + `}`:                                    1,
		`lustre_quota_used_bytes{accounting="user",` + ost0 + `,id="1000"}`:          1048576 * 1024,
		`lustre_quota_used_inodes{accounting="group",` + ost0 + `,id="0"}`:           3841,
		`lustre_service_stats_total{operation="ost_read",service="ost_io"}`:          100,
		`lustre_service_stats_seconds_total{operation="ost_read",service="ost_io"}`:  0.518576,
		`lustre_service_stats_seconds_total{operation="req_waittime",service="ost"}`: 0.006162,
		`lustre_service_stats_sum_total{operation="req_qdepth",service="ost_io"}`:    169,
		`lustre_service_stats_total{operation="ldlm_cancel",service="ldlm_canceld"}`: 10,
		// Per client, IPv6 NIDs included; exports without counters have no series.
		`lustre_client_export_bytes_total{component="ost",nid="10.1.0.7@o2ib",operation="write_bytes",target="lab-OST0000"}`:   73400320,
		`lustre_client_export_stats_total{component="ost",nid="2001:db8::17@tcp",operation="read_bytes",target="lab-OST0000"}`: 40,
		`lustre_client_export_seconds_total{component="ost",nid="10.1.0.7@o2ib",operation="read",target="lab-OST0000"}`:        0.072,
		`lustre_health_check`:                          1,
		`lustre_memory_used_bytes`:                     812345678,
		`lustre_memory_used_max_bytes`:                 912345678,
		`lustre_lnet_memory_used_bytes`:                33554432,
		`lustre_build_info{build="",version="2.15.4"}`: 1,
	})
	for _, nid := range []string{`nid="[2001:db8::18]@tcp6"`, `nid="0@lo"`} {
		if strings.Contains(text, nid) {
			t.Errorf("an export without counters has series: %s", nid)
		}
	}
	for _, name := range familyCollectorNames {
		if got := value(t, text, `hpcio_exporter_scrape_collector_success{collector="`+name+`"}`); got != 1 {
			t.Errorf("collector %s success %v", name, got)
		}
	}
}

// Values of families-mds-2.12.txt: the 2.12 dialect of an MDS.
func TestFamiliesMDSValues(t *testing.T) {
	text := scrapeFamilies(t, readFixture(t, "families-mds-2.12.txt"), expfmt.FmtText)
	const mdt = `component="mdt",target="lab-MDT0000"`
	expectValues(t, text, map[string]float64{
		`lustre_build_info{build="2.12.9_1.site",version="2.12.9"}`: 1,
		`lustre_health_check`: 0, // "NOT HEALTHY"
		`lustre_capacity_bytes{component="mgs",target="MGS"}`: 1953125 * 1024,
		`lustre_capacity_bytes{` + mdt + `}`:                  976562500 * 1024,
		// The old brw_stats header; 10 reads of 1 and 2 pages.
		`lustre_brw_rpc_size_bytes_sum{` + mdt + `,operation="read"}`:                 7*4096 + 3*8192,
		`lustre_brw_io_size_bytes_bucket{` + mdt + `,operation="read",le="512"}`:      4,
		`lustre_brw_io_time_seconds_bucket{` + mdt + `,operation="write",le="0.004"}`: 3,
		// 2.12 md_stats: counts only.
		`lustre_stats_total{` + mdt + `,operation="getattr"}`:                                   1600,
		`lustre_operation_seconds_total{` + mdt + `,operation="open"}`:                          -1,
		`lustre_recovery_status{` + mdt + `,status="RECOVERING"}`:                               1,
		`lustre_recovery_status_connected_clients{` + mdt + `}`:                                 10,
		`lustre_recovery_status_total_clients{` + mdt + `}`:                                     12,
		`lustre_recovery_status_completed_clients{` + mdt + `}`:                                 9,
		`lustre_recovery_status_evicted_clients{` + mdt + `}`:                                   2,
		`lustre_recovery_status_time_remaining_seconds{` + mdt + `}`:                            119,
		`lustre_changelog_current_index{` + mdt + `}`:                                           34,
		`lustre_changelog_user_index{` + mdt + `,user="cl2"}`:                                   34,
		`lustre_changelog_user_idle_seconds{` + mdt + `,user="cl1"}`:                            1725676,
		`lustre_osp_active{component="ost",mdt="lab-MDT0000",target="lab-OST0001"}`:             0,
		`lustre_osp_max_create_objects{component="ost",mdt="lab-MDT0000",target="lab-OST0000"}`: 20000,
		`lustre_osp_active{component="mdt",mdt="lab-MDT0000",target="lab-MDT0001"}`:             1,
		`lustre_locks{component="mgs",target="MGS"}`:                                            9,
		// 2.12 service units: "usec", "sec".
		`lustre_service_stats_seconds_total{operation="mds_connect",service="mdt"}`:                                   0.133751,
		`lustre_service_stats_seconds_total{operation="req_timeout",service="mdt"}`:                                   57294,
		`lustre_service_stats_total{operation="llog_origin_handle_next_block",service="mgs"}`:                         119,
		`lustre_service_stats_sum_total{operation="mds_reint_setattr",service="mdt"}`:                                 57,
		`lustre_client_export_stats_total{component="mdt",nid="10.1.0.7@o2ib",operation="open",target="lab-MDT0000"}`: 600,
		// Quota limits: dt in bytes (KiB × 1024), md in inodes, pool 0x0 as "".
		`lustre_quota_hard_limit_bytes{accounting="user",id="1000",pool="",target="lab-QMT0000"}`:       1073741824 * 1024,
		`lustre_quota_granted_inodes{accounting="user",id="1000",pool="",target="lab-QMT0000"}`:         4096,
		`lustre_quota_hard_limit_bytes{accounting="project",id="42",pool="flash",target="lab-QMT0000"}`: 104857600 * 1024,
	})
}

// A client's llite stats, 2.14 and 2.10 ("[regs]") dialects.
func TestFamiliesClientValues(t *testing.T) {
	text := scrapeFamilies(t, readFixture(t, "families-client.txt"), expfmt.FmtText)
	expectValues(t, text, map[string]float64{
		`lustre_read_samples_total{component="client",target="lab-ffff88105db50000"}`:                          3,
		`lustre_write_bytes_total{component="client",target="old-ffff88105db60000"}`:                           93813797294080,
		`lustre_stats_total{component="client",operation="ioctl",target="lab-ffff88105db50000"}`:               114,
		`lustre_stats_total{component="client",operation="open",target="old-ffff88105db60000"}`:                136,
		`lustre_operation_seconds_total{component="client",operation="getattr",target="lab-ffff88105db50000"}`: 0.002317,
		`lustre_service_stats_total{operation="ldlm_bl_callback",service="ldlm_cbd"}`:                          4,
	})
}

// Bad input drops the value or lines it spoils and nothing else, with one
// warning per kind of trouble, then debug lines; no collector fails.
func TestFamiliesBadInput(t *testing.T) {
	onlyCollectors(t, familyCollectorNames...)
	var logs bytes.Buffer
	r, err := NewRegistry(Env{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LctlSource: &textSource{texts: []string{readFixture(t, "families-edge.txt")}}})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for range 3 {
		text = stable(scrapeText(t, r, expfmt.FmtText))
	}
	for _, name := range familyCollectorNames {
		if got := value(t, text, `hpcio_exporter_scrape_collector_success{collector="`+name+`"}`); got != 1 {
			t.Errorf("collector %s success %v", name, got)
		}
	}
	const ost = `component="ost",target="edge-OST0000"`
	expectValues(t, text, map[string]float64{
		`lustre_health_check`:                                0, // LBUG
		`lustre_memory_used_bytes`:                           -1,
		`lustre_memory_used_max_bytes`:                       1000,
		`lustre_capacity_bytes{` + ost + `}`:                 1000 * 1024, // printed twice: the first counts
		`lustre_free_bytes{` + ost + `}`:                     -1,
		`lustre_stats_total{` + ost + `,operation="statfs"}`: 12, // the first of two lines
		`lustre_stats_total{` + ost + `,operation="punch"}`:  3,
		`lustre_read_samples_total{` + ost + `}`:             -1,
		// The rows of a linear histogram past 30 go to +Inf only; a G row is read.
		`lustre_brw_discontiguous_pages_bucket{` + ost + `,operation="read",le="30"}`:             8,
		`lustre_brw_discontiguous_pages_bucket{` + ost + `,operation="read",le="+Inf"}`:           10,
		`lustre_brw_rpc_size_bytes_bucket{` + ost + `,operation="read",le="8.796093022208e+12"}`:  2,
		`lustre_recovery_status_evicted_clients{` + ost + `}`:                                     1,
		`lustre_changelog_user_index{component="mdt",target="edge-MDT0000",user="cl2-robinhood"}`: 20,
		`lustre_quota_used_bytes{accounting="user",` + ost + `,id="5"}`:                           2048,
		`lustre_locks{` + ost + `}`: 77,
		// Three scrapes of the same trouble count three times.
		`hpcio_exporter_lctl_bad_input_total{collector="ost_stats"}`: 3 * 5,
		`hpcio_exporter_lctl_bad_input_total{collector="capacity"}`:  3 * 3,
		`hpcio_exporter_lctl_bad_input_total{collector="version"}`:   3,
	})
	warns := strings.Count(logs.String(), "level=WARN")
	debugs := strings.Count(logs.String(), `level=DEBUG msg="bad input from lctl dropped"`)
	// Distinct kinds: memused, version, brw_stats, kbytesfree, kbytesavail,
	// filestotal, stats, recovery_status, changelog_users, acct_user,
	// active, health_check is a value (LBUG), not bad input.
	if warns != 11 {
		t.Errorf("%d warnings, want 11 (one per kind of bad input):\n%s", warns, logs.String())
	}
	if debugs != 2*11 {
		t.Errorf("%d debug lines for repeated bad input, want 22", debugs)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("bad input logged as an error:\n%s", logs.String())
	}
}

// A server without a family (an OSS has no mdt.*) is not an error, nor is
// lctl exiting non-zero because a pattern matched nothing.
func TestFamiliesAbsent(t *testing.T) {
	onlyCollectors(t, familyCollectorNames...)
	src := &textSource{texts: []string{"memused=1\n"}, exit: &toolrun.ExitError{Code: 2, Stderr: "error: get_param: param_path 'mdt/*/md_stats': No such file or directory"}}
	text := stable(scrapeText(t, newTestRegistry(t, src), expfmt.FmtText))
	for _, name := range familyCollectorNames {
		if got := value(t, text, `hpcio_exporter_scrape_collector_success{collector="`+name+`"}`); got != 1 {
			t.Errorf("collector %s success %v with its parameters absent", name, got)
		}
	}
	expectValues(t, text, map[string]float64{`lustre_memory_used_bytes`: 1, `hpcio_exporter_lctl_runs_total{result="partial"}`: 1})
}

// When lctl cannot run, every Lustre collector reports the failure.
func TestFamiliesLctlFails(t *testing.T) {
	onlyCollectors(t, "capacity", "brw_stats")
	text := stable(scrapeText(t, newTestRegistry(t, failingSource{}), expfmt.FmtText))
	expectValues(t, text, map[string]float64{
		`hpcio_exporter_scrape_collector_success{collector="capacity"}`:  0,
		`hpcio_exporter_scrape_collector_success{collector="brw_stats"}`: 0,
	})
}

type failingSource struct{}

func (failingSource) GetParam(context.Context, []string) (io.ReadCloser, error) {
	return nil, errors.New("exec: \"lctl\": executable file not found in $PATH")
}

// One lctl run serves every family collector, and the patterns they ask
// for are those of their families.
func TestFamiliesShareOneRun(t *testing.T) {
	onlyCollectors(t, append([]string{"jobstats"}, familyCollectorNames...)...)
	src := &textSource{texts: []string{readFixture(t, "families-oss-2.15.txt")}}
	r := newTestRegistry(t, src)
	scrapeText(t, r, expfmt.FmtText)
	if n := src.calls.Load(); n != 1 {
		t.Errorf("%d lctl runs for one scrape", n)
	}
	patterns := r.lustre.Patterns()
	for _, want := range []string{"obdfilter.*.job_stats", "osd-*.*.brw_stats", "osd-*.*.kbytesavail", "mdd.*.changelog_users",
		"ost.OSS.*.stats", "obdfilter.*.exports.*.stats", "health_check", "version", "qmt.*.*.glb-usr"} {
		found := false
		for _, p := range patterns {
			found = found || p == want
		}
		if !found {
			t.Errorf("pattern %s not asked for (patterns: %v)", want, patterns)
		}
	}
}

// Every lctl dump of the shared corpus scrapes without bad input and with
// values checked by hand against the files.
func TestFamiliesCorpus(t *testing.T) {
	root := corpus.Dir(t, "lustre")
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	const fixtures = "whamcloud-lustrefs-exporter/lustre-collector/src/fixtures/"
	dumps, _ := filepath.Glob(filepath.Join(root, fixtures, "valid", "*.txt"))
	more, _ := filepath.Glob(filepath.Join(root, fixtures, "valid", "*", "*.txt"))
	dumps = append(dumps, more...)
	extra, _ := filepath.Glob(filepath.Join(root, fixtures, "*.txt"))
	dumps = append(dumps, extra...)
	dumps = append(dumps, filepath.Join(root, "whamcloud-lustrefs-exporter/lustrefs-exporter/testcmds-stdout/lctl_get_param_all_ai400x2.txt"))
	for _, path := range dumps {
		rel, _ := filepath.Rel(root, path)
		text := scrapeFamilies(t, read(rel), expfmt.FmtText)
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "hpcio_exporter_lctl_bad_input_total") && !strings.HasSuffix(line, " 0") {
				t.Errorf("%s: %s", rel, line)
			}
		}
	}
	text := scrapeFamilies(t, read(fixtures+"valid/valid.txt"), expfmt.FmtText)
	const ost0 = `component="ost",target="ai400-OST0000"`
	expectValues(t, text, map[string]float64{
		`lustre_capacity_bytes{` + ost0 + `}`:                                                     3978095168 * 1024,
		`lustre_brw_rpc_size_bytes_bucket{` + ost0 + `,operation="write",le="4.194304e+06"}`:      25001,
		`lustre_brw_rpc_size_bytes_bucket{` + ost0 + `,operation="write",le="131072"}`:            1,
		`lustre_brw_io_size_bytes_bucket{` + ost0 + `,operation="write",le="2.097152e+06"}`:       50004,
		`lustre_brw_ios_in_flight_count{` + ost0 + `,operation="write"}`:                          50004,
		`lustre_write_bytes_total{` + ost0 + `}`:                                                  104857600000,
		`lustre_operation_seconds_total{` + ost0 + `,operation="write"}`:                          41.700926,
		`lustre_exports{component="mdt",target="ai400-MDT0000"}`:                                  19,
		`lustre_locks{component="mdt",target="ai400-MDT0000"}`:                                    9,
		`lustre_service_stats_total{operation="ost_write",service="ost_io"}`:                      2247452,
		`lustre_service_stats_seconds_total{operation="ost_write",service="ost_io"}`:              4660.586823,
		`lustre_changelog_user_idle_seconds{component="mdt",target="ai400x2-MDT0000",user="cl1"}`: 327,
		`lustre_health_check`:      1,
		`lustre_memory_used_bytes`: 5969573401,
	})
	text = scrapeFamilies(t, read(fixtures+"recovery-multiple-recovering.txt"), expfmt.FmtText)
	expectValues(t, text, map[string]float64{
		`lustre_recovery_status{component="mdt",status="RECOVERING",target="fs-MDT0002"}`:    1,
		`lustre_recovery_status_time_remaining_seconds{component="mdt",target="fs-MDT0002"}`: 119,
		`lustre_recovery_status_completed_clients{component="ost",target="fs-OST0004"}`:      8,
		`lustre_recovery_status_duration_seconds{component="mdt",target="fs-MDT0000"}`:       1760,
	})
	text = scrapeFamilies(t, read(fixtures+"valid/lustre-2.14.0_ddn133/2.14.0_ddn133_quota.txt"), expfmt.FmtText)
	expectValues(t, text, map[string]float64{
		`lustre_quota_used_inodes{accounting="user",component="mdt",id="23",target="ai400x2-MDT0000"}`: 241123355,
		`lustre_quota_used_bytes{accounting="user",component="ost",id="0",target="ai400x2-OST0001"}`:   3255431104 * 1024,
		`lustre_quota_hard_limit_inodes{accounting="group",id="0",pool="",target="ai400x2-QMT0000"}`:   0,
	})
	text = scrapeFamilies(t, read(fixtures+"osp.txt"), expfmt.FmtText)
	expectValues(t, text, map[string]float64{
		`lustre_osp_active{component="ost",mdt="tesfs-MDT0000",target="tesfs-OST0001"}`:             0,
		`lustre_osp_max_create_objects{component="ost",mdt="tesfs-MDT0000",target="tesfs-OST0002"}`: 16384,
	})
}
