package collector

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

var fmtSscan = fmt.Sscan

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "lustre"), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The edge fixture holds every job_id shape and every dialect quirk; the
// golden file is what a scrape shows for it, in both formats.
func TestJobstatsEdgeGolden(t *testing.T) {
	onlyCollectors(t, "jobstats")
	r := newTestRegistry(t, &textSource{texts: []string{readFixture(t, "jobstats-edge.txt")}})
	text := stable(scrapeText(t, r, expfmt.FmtText))
	checkGolden(t, "jobstats-edge.txt.prom", text)
	om := stable(scrapeText(t, r, expfmt.FmtOpenMetrics_1_0_0))
	checkGolden(t, "jobstats-edge.txt.om", om)

	// What the golden file must say, spelled out.
	for series, want := range map[string]float64{
		// The well-formed id and every repaired id of job 11317854 (the
		// truncated ones completed from the well-formed id, the overwritten
		// one, the fqdn one) add up on one identity: 7 entries × 41943040.
		`lustre_job_write_bytes_total{component="ost",target="edge-OST0000",jobid="11317854",uid="17627127",node="r01c01"}`: 7 * 41943040,
		// Job missing: the synthetic job, twice (short and fqdn host).
		`lustre_job_write_bytes_total{component="ost",target="edge-OST0000",jobid="_nojob",uid="17627127",node="r01c01"}`: 2 * 41943040,
		`lustre_job_write_bytes_total{component="ost",target="edge-OST0000",jobid="_nojob",uid="1000",exe="bash"}`:        41943040,
		`lustre_job_write_bytes_total{component="ost",target="edge-OST0000",jobid="_nojob",uid="1000",exe="we\"ird\\x"}`:  41943040,
		// Glued values; two entries of one job_id, summed.
		`lustre_job_write_bytes_total{component="ost",target="edge-OST0000",jobid="22",uid="1000",node="n1"}`: 33554432,
		`lustre_job_write_bytes_total{component="ost",target="edge-OST0000",jobid="27",uid="1000",node="n1"}`: 100 + 999999,
		// The good operations of a partly malformed entry.
		`lustre_job_operation_seconds_total{component="ost",target="edge-OST0000",jobid="23",uid="1000",node="n1",operation="sync"}`: 0.0036,
		`lustre_job_stats_total{component="ost",target="edge-OST0000",jobid="23",uid="1000",node="n1",operation="sync"}`:             2,
		// 2.12 reqs on the MDT.
		`lustre_job_stats_total{component="mdt",target="edge-MDT0000",jobid="11317854",uid="17627127",node="r01c01",operation="open"}`: 5,
		`lustre_jobid_entries_total{component="ost",outcome="discarded_extra_char",target="edge-OST0000"}`:                             1,
		`lustre_jobid_entries_total{component="ost",outcome="discarded_invalid",target="edge-OST0000"}`:                                3,
		`lustre_jobid_entries_total{component="ost",outcome="repaired_truncated",target="edge-OST0000"}`:                               4,
		`lustre_jobid_entries_total{component="ost",outcome="repaired_overwritten",target="edge-OST0000"}`:                             1,
		`lustre_jobid_entries_total{component="ost",outcome="synthetic_job",target="edge-OST0000"}`:                                    3,
		`hpcio_exporter_scrape_collector_success{collector="jobstats"}`:                                                                1,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	for _, absent := range []string{"113178544", "\\x01", "\xff", `26\"x`} {
		if strings.Contains(text, "jobid=\""+absent) {
			t.Errorf("discarded id %q has a series", absent)
		}
	}
	// The jobs were there before the exporter first read the target: their
	// counters start at that read (the snapshot_time), not at their
	// start_time (internal/lustre/jobstats/tracker_test.go, TestCreatedTimestamps).
	if !strings.Contains(om, `lustre_job_write_bytes_created{component="ost",target="edge-OST0000",jobid="22",uid="1000",node="n1"} 1.7231146478875158e+09`) {
		t.Error("OpenMetrics output lacks the created timestamp of the first read")
	}
}

// entry is one job_stats entry in Lustre 2.15's format.
func entry(id string, start float64, write uint64) string {
	return fmt.Sprintf("- job_id:          \"%s\"\n  snapshot_time:   %.9f secs.nsecs\n  start_time:      %.9f secs.nsecs\n"+
		"  write_bytes:     { samples: %d, unit: bytes, min: 1, max: 1, sum: %d, sumsq: 0, hist: {  } }\n", id, start+100, start, write/4096, write)
}

func ost(entries ...string) string {
	return "obdfilter.t-OST0000.job_stats=\njob_stats:\n" + strings.Join(entries, "")
}

// A job spread over two nodes whose entries reset at different times, with
// labels aggregated to jobid and uid: the exported counter never goes
// down and ends at the sum of the true increments.
func TestJobstatsAggregatedResets(t *testing.T) {
	onlyCollectors(t, "jobstats")
	setFlag(t, &jobstatsLabels, "jobid,uid")
	runs := []string{
		ost(entry("7:1:a", 10, 100), entry("7:1:b", 10, 1000)),
		ost(entry("7:1:a", 10, 300), entry("7:1:b", 10, 1500)),                       // +200 +500
		ost(entry("7:1:a", 10, 350)),                                                 // +50; b cleaned up
		ost(entry("7:1:a", 10, 360), entry("7:1:b", 500, 40)),                        // +10; b back: +40
		ost(entry("7:1:a", 600, 5000), entry("7:1:b", 500, 80)),                      // a restarted (new start_time, v ≥ v′): +5000; +40
		ost(entry("7:1:a", 600, 5000), entry("7:1:b", 500, 80), entry("7:", 700, 9)), // a truncated id joins: +9
	}
	want := []float64{1100, 1800, 1850, 1900, 6940, 6949}
	src := &textSource{texts: runs}
	r := newTestRegistry(t, src)
	series := `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="7",uid="1"}`
	for i := range runs {
		text := scrapeText(t, r, expfmt.FmtText)
		if got := value(t, text, series); got != want[i] {
			t.Fatalf("run %d: %s = %v, want %v\n%s", i, series, got, want[i], text)
		}
		if strings.Contains(text, `node="`) {
			t.Fatalf("run %d: node label not dropped", i)
		}
	}
}

// With emit-zero off, a job that has not written yet has no write series.
func TestJobstatsEmitZero(t *testing.T) {
	onlyCollectors(t, "jobstats")
	text := ost(entry("8:1:a", 10, 0))
	r := newTestRegistry(t, &textSource{texts: []string{text}})
	if strings.Contains(scrapeText(t, r, expfmt.FmtText), `jobid="8"`) {
		t.Error("zero series emitted")
	}
	setFlag(t, &jobstatsEmitZero, true)
	r = newTestRegistry(t, &textSource{texts: []string{text}})
	if !strings.Contains(scrapeText(t, r, expfmt.FmtText), `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="8",uid="1",node="a"} 0`) {
		t.Error("zero series not emitted with emit-zero")
	}
}

func TestJobstatsUntrustedBucket(t *testing.T) {
	onlyCollectors(t, "jobstats")
	setFlag(t, &jobstatsUntrustedBucket, true)
	r := newTestRegistry(t, &textSource{texts: []string{ost(entry("113178544", 1, 4096), entry("x\x01y", 1, 8192))}})
	text := scrapeText(t, r, expfmt.FmtText)
	if got := value(t, text, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="_untrusted"}`); got != 12288 {
		t.Errorf("_untrusted = %v, want 12288\n%s", got, text)
	}
}

// The jobid_name reported by lctl is used; the flag overrides it.
func TestJobstatsFormatFromLctl(t *testing.T) {
	onlyCollectors(t, "jobstats")
	text := "jobid_name=%u.%j\n" + ost(entry("1000.55", 1, 4096))
	r := newTestRegistry(t, &textSource{texts: []string{text}})
	got := scrapeText(t, r, expfmt.FmtText)
	if value(t, got, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="55",uid="1000"}`) != 4096 {
		t.Errorf("lctl's jobid_name not used:\n%s", got)
	}
	if !strings.Contains(got, `hpcio_exporter_jobstats_jobid_name_info{from="lctl",jobid_name="%u.%j"} 1`) {
		t.Error("format info missing")
	}
	setFlag(t, &jobidNameFlag, "%j.%u")
	r = newTestRegistry(t, &textSource{texts: []string{text}})
	got = scrapeText(t, r, expfmt.FmtText)
	if value(t, got, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="1000",uid="55"}`) != 4096 {
		t.Errorf("--lustre.jobid-name not used:\n%s", got)
	}
}

// lctl failing, missing or printing garbage: the collector reports
// failure, the scrape still succeeds, the process goes on.
func TestJobstatsBadLctl(t *testing.T) {
	onlyCollectors(t, "jobstats")
	for name, src := range map[string]lctl.Source{
		"missing":  &lctl.Command{Path: "/nonexistent/lctl"},
		"garbage":  &textSource{texts: []string{"\x00\x01garbage\n{{{{\n- - -\n"}},
		"no match": &textSource{texts: []string{""}, exit: &toolrun.ExitError{Code: 2, Stderr: "error: get_param: param_path 'obdfilter/*/job_stats': No such file or directory"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := newTestRegistry(t, src)
			text := scrapeText(t, r, expfmt.FmtText)
			if value(t, text, `hpcio_exporter_scrape_collector_success{collector="jobstats"}`) != 0 {
				t.Errorf("success is not 0:\n%s", text)
			}
		})
	}
}

// Concurrent scrapes share one lctl run.
func TestJobstatsSharedRun(t *testing.T) {
	onlyCollectors(t, "jobstats")
	src := &textSource{texts: []string{ost(entry("1:1:a", 1, 4096))}, delay: 300 * time.Millisecond}
	r := newTestRegistry(t, src)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scrapeText(t, r, expfmt.FmtText)
		}()
	}
	wg.Wait()
	if n := src.calls.Load(); n != 1 {
		t.Errorf("%d lctl runs for 8 concurrent scrapes, want 1", n)
	}
}

type deadlineSource struct{ got time.Duration }

func (d *deadlineSource) GetParam(ctx context.Context, _ []string) (io.ReadCloser, error) {
	if dl, ok := ctx.Deadline(); ok {
		d.got = time.Until(dl)
	}
	return io.NopCloser(strings.NewReader("")), nil
}

// The lctl deadline is the scrape's minus the offset, capped by the timeout.
func TestLctlDeadline(t *testing.T) {
	onlyCollectors(t, "jobstats")
	setFlag(t, &lctlTimeout, 20*time.Second)
	setFlag(t, &lctlTimeoutOffset, 500*time.Millisecond)
	for _, tc := range []struct {
		scrape, want time.Duration
	}{
		{10 * time.Second, 9500 * time.Millisecond},
		{60 * time.Second, 20 * time.Second},
		{0, 20 * time.Second}, // no header
	} {
		src := &deadlineSource{}
		r := newTestRegistry(t, src)
		ctx := context.Background()
		if tc.scrape > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tc.scrape)
			defer cancel()
		}
		r.NewScrape(ctx).Collect(make(chan prometheus.Metric, 100))
		if diff := tc.want - src.got; diff < 0 || diff > 200*time.Millisecond {
			t.Errorf("scrape timeout %v: lctl deadline in %v, want %v", tc.scrape, src.got, tc.want)
		}
	}
}

// An OST whose job_stats hold no entry (jobstats turned off, or every entry
// cleaned up before a scrape) has its job totals at 0, not missing, so that
// its jobstats coverage is 0 and the coverage alert can fire; once an entry
// counts, they go on from there. An empty MDT has none (its bytes exist
// only from Lustre 2.14).
func TestJobstatsCountedOfEmptyTarget(t *testing.T) {
	onlyCollectors(t, "jobstats")
	empty := "obdfilter.fs-OST0000.job_stats=\njob_stats:\nmdt.fs-MDT0000.job_stats=\njob_stats:\n"
	later := "obdfilter.fs-OST0000.job_stats=\njob_stats:\n" +
		"- job_id:          \"11:1000:n1\"\n  snapshot_time:   1700000100.000000000 secs.nsecs\n  start_time:      1700000090.000000000 secs.nsecs\n" +
		"  write_bytes:     { samples:           2, unit: bytes, min:  4096, max:  4096, sum:             8192, sumsq: 0 }\n" +
		"mdt.fs-MDT0000.job_stats=\njob_stats:\n"
	r := newTestRegistry(t, &textSource{texts: []string{empty, later}})
	first := scrapeText(t, r, expfmt.FmtText)
	for _, want := range []string{
		`lustre_jobstats_read_bytes_total{component="ost",target="fs-OST0000"} 0`,
		`lustre_jobstats_write_bytes_total{component="ost",target="fs-OST0000"} 0`,
	} {
		if !strings.Contains(first, want+"\n") {
			t.Errorf("empty job_stats: no %s", want)
		}
	}
	if strings.Contains(first, `lustre_jobstats_read_bytes_total{component="mdt"`) {
		t.Error("an empty MDT has job bytes")
	}
	second := scrapeText(t, r, expfmt.FmtText)
	if want := `lustre_jobstats_write_bytes_total{component="ost",target="fs-OST0000"} 8192`; !strings.Contains(second, want+"\n") {
		t.Errorf("after the first entry: no %s", want)
	}
}
