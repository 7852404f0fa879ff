package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/report/prom"
	"github.com/hpcio/hpcio_exporter/internal/testkit/browser"
	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// The report test's timing: the demo scraped every scrapeEvery (5 s) for
// reportDataFor before the servers' view is read, and the storm alert
// (LustreJobMetadataStorm, `for:` shortened to shortFor) waited for until
// reportAlertBy after Prometheus starts.
const (
	reportDataFor = 45 * time.Second
	reportAlertBy = 150 * time.Second
)

// demoDarshanDir matches the demo's log line that gives its Darshan drop
// directory (cmd/hpcio_exporter/demo_drop.go).
var demoDarshanDir = regexp.MustCompile(`msg="demo: Darshan logs written for the darshan collector" dir=(\S+)`)

// TestReportEndToEnd: the servers' view of a job report and its verdicts,
// against a real Prometheus with deploy/'s configuration and rules
// scraping the demo, whose storm job (90000002) has a Darshan log of small
// requests (mdtest: 4 KiB writes and reads, P05 and P06) and writes 4 KiB
// RPCs to one OST while storming the MDT. It checks prom.Servers against
// the simulator's truth, the verdicts of the job's own log against it, the
// `report` command's JSON with both views, and the HTML in Chromium.
func TestReportEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the report's end-to-end test scrapes the demo for about two minutes")
	}
	t.Parallel()
	promBin := needTool(t, "prometheus")
	bin := exporterBinary(t)
	dir := t.TempDir()

	demoAddr := freePort(t)
	demo := start(t, "demo exporter", bin, "--demo", "--web.listen-address="+demoAddr)
	waitHTTP(t, demo, "http://"+demoAddr+"/metrics", 30*time.Second)
	m := demoDarshanDir.FindSubmatch(demo.Logs.Bytes())
	if m == nil {
		t.Fatalf("the demo does not log its Darshan drop directory:\n%s", demo.Tail(20))
	}
	darshanDir := string(m[1])

	// The demo is one server with MDTs and OSTs and the sidecar's
	// families: listed once, as an OSS, as TestEndToEnd does.
	promDir := filepath.Join(dir, "prometheus")
	preparePrometheus(t, promDir, map[string][]targetGroup{
		"lustre-oss.yml": {{Targets: []string{demoAddr}}}, "lustre-mds.yml": nil,
		"hpcio-sidecar.yml": nil, "alertmanager.yml": nil}, scrapeEvery)
	promAddr := freePort(t)
	p := start(t, "prometheus", promBin, "--config.file="+filepath.Join(promDir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(promDir, "data"), "--web.listen-address="+promAddr)
	promURL := "http://" + promAddr
	waitHTTP(t, p, promURL+"/-/ready", 60*time.Second)
	t0 := time.Now()
	api := promAPI{base: promURL}
	checkTargetsUp(t, api, 1, 60*time.Second)
	time.Sleep(time.Until(t0.Add(reportDataFor)))

	c, err := prom.New(promURL, "")
	if err != nil {
		t.Fatal(err)
	}
	from := t0.Add(-time.Minute)
	var srv *report.Servers
	// Until the storm alert fires (or the deadline): the rest is there
	// from the first read.
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		srv, err = c.Servers(ctx, stormJob, from, time.Now(), "flags")
		cancel()
		if err != nil {
			t.Fatalf("Servers: %v", err)
		}
		if hasAlert(srv, "LustreJobMetadataStorm", nil) || time.Now().After(t0.Add(reportAlertBy)) {
			break
		}
		time.Sleep(5 * time.Second)
	}
	checkServers(t, api, srv, fetchTruth(t, demoAddr))

	// An unknown job: no error, Found false, and a note that says so.
	if s, err := c.Servers(context.Background(), "424242424242", from, time.Now(), "flags"); err != nil || s.Found ||
		len(s.Notes) == 0 || !strings.Contains(s.Notes[0], "no job_stats series of job 424242424242") {
		t.Errorf("unknown job: %+v, %v; want Found false and a note", s, err)
	}
	// An unreachable Prometheus: one line that says so.
	if dead, err := prom.New("http://"+freePort(t), ""); err == nil {
		if _, err := dead.Servers(context.Background(), stormJob, from, time.Now(), "flags"); err == nil ||
			!strings.Contains(err.Error(), "cannot reach it") || strings.Contains(err.Error(), "\n") {
			t.Errorf("unreachable Prometheus: %v", err)
		}
	}

	// The verdicts of the job's own log against the servers.
	logs := jobLogs(t, darshanDir, stormJob)
	_, app, err := report.FromLogs(logs, report.LogOptions{Insights: insights.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := report.Verdicts(app, srv)
	checkSmallWrites(t, verdicts, srv)

	// The speed of a 24-hour window (over the few minutes of data this
	// Prometheus holds: an optimistic figure for a server with a day of
	// scrapes), logged, not asserted.
	var took []time.Duration
	for range 5 {
		begin := time.Now()
		if _, err := c.Servers(context.Background(), stormJob, time.Now().Add(-24*time.Hour), time.Now(), "flags"); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(begin))
	}
	slices.Sort(took)
	t.Logf("servers' view of a 24-hour window: median %v (min %v, max %v) of 5", took[2], took[0], took[4])

	checkReportCommand(t, bin, dir, darshanDir, promURL, from)
}

// hasAlert tells whether srv lists alert name with the labels of want.
func hasAlert(srv *report.Servers, name string, want map[string]string) bool {
	for _, a := range srv.Alerts {
		if a.Name != name {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && a.Labels[k] == v
		}
		if ok {
			return true
		}
	}
	return false
}

// checkServers holds the storm job's servers' view to the simulator's
// truth: its write rate, its bytes per write RPC (4 KiB), its MDT
// operations in the truth's proportions, its one OST, and its alerts.
func checkServers(t *testing.T, api promAPI, srv *report.Servers, truth []jobTruth) {
	t.Helper()
	var job *jobTruth
	for i := range truth {
		if truth[i].JobID == stormJob {
			job = &truth[i]
		}
	}
	if job == nil {
		t.Fatalf("the demo's truth has no job %s", stormJob)
	}
	if !srv.Found || srv.Step <= 0 {
		t.Fatalf("servers' view: found %v, step %v; notes %v", srv.Found, srv.Step, srv.Notes)
	}
	for _, rule := range []string{"jobid:lustre_job_write_bytes:rate5m", "component_jobid:lustre_job_stats:rate5m",
		"component_target:lustre_jobstats_coverage_bytes:ratio_rate5m"} {
		if !slices.Contains(srv.Rules, rule) {
			t.Errorf("recording rule %s not used (Prometheus runs deploy's rules): %v; notes %v", rule, srv.Rules, srv.Notes)
		}
	}

	// The bytes written in the window: what Prometheus holds of the
	// job's counters (last less first sample), at the simulator's rate,
	// and increase()'s extrapolation of it to the window's edges (at most
	// the scrape interval at each end, the window ending at the last
	// scrape or just after).
	raw, err := api.query(`lustre_job_write_bytes_total{component="ost",jobid="`+stormJob+`"}[10m]`, srv.To.T)
	if err != nil || len(raw) != 1 || len(raw[0].Values) < 5 {
		t.Fatalf("the storm job's written bytes in Prometheus: %v %v", raw, err)
	}
	vs := raw[0].Values
	t1, v1 := pointOf(vs[0])
	t2, v2 := pointOf(vs[len(vs)-1])
	if got := (v2 - v1) / (t2 - t1); math.Abs(got-job.Write) > tolerance*job.Write {
		t.Errorf("Prometheus holds %.0f B/s written, the simulator writes %.0f B/s", got, job.Write)
	}
	if moved, ext := v2-v1, job.Write*2*scrapeEvery.Seconds(); srv.WriteBytes.V < moved || srv.WriteBytes.V > moved+ext {
		t.Errorf("written bytes %v, Prometheus holds %.0f between its first and last sample (+ up to %.0f to the window's edges)", srv.WriteBytes, moved, ext)
	}
	// The write rate: rate5m, on every point since the rule's first
	// evaluations, never above the simulator's rate (the 5-minute windows
	// hold less than 5 minutes of scrapes: lower).
	w := srv.Rates.Values["write"]
	if len(w) != len(srv.Rates.Times) || len(w) < 10 {
		t.Fatalf("write rate: %d values at %d times", len(w), len(srv.Rates.Times))
	}
	for i, v := range w[len(w)*3/4:] {
		if !v.OK || v.V <= 0 || v.V > (1+tolerance)*job.Write {
			t.Errorf("write rate at %.0f: %v, the simulator writes %.0f B/s", srv.Rates.Times[len(w)*3/4+i], v, job.Write)
			break
		}
	}
	if job.Read == 0 && srv.ReadBytes.V != 0 {
		t.Errorf("read bytes %v for a job that reads nothing", srv.ReadBytes)
	}

	// Bytes per RPC: the simulator's request size, exactly (bytes and
	// samples are extrapolated alike).
	wantPer := job.Write / job.WriteSamples
	if !srv.WritePerRPC.OK || math.Abs(srv.WritePerRPC.V-wantPer) > 0.01*wantPer {
		t.Errorf("bytes per write RPC %v, the simulator writes %.0f", srv.WritePerRPC, wantPer)
	}
	if srv.ReadPerRPC.OK {
		t.Errorf("bytes per read RPC %v for a job that reads nothing", srv.ReadPerRPC)
	}

	// Its OST: one, holding all its bytes, with a share and coverage.
	if len(srv.OSTs) != 1 {
		t.Fatalf("OSTs %+v, the storm job writes to one", srv.OSTs)
	}
	o := srv.OSTs[0]
	if o.WriteBytes.V != srv.WriteBytes.V || o.WriteBytes.V <= 0 {
		t.Errorf("OST %s wrote %v, the job %v", o.Target, o.WriteBytes, srv.WriteBytes)
	}
	if !o.Share.OK || o.Share.V <= 0 || o.Share.V > 1 || !o.Coverage.OK || o.Coverage.V < 0.9 {
		t.Errorf("OST %s: share %v, coverage %v", o.Target, o.Share, o.Coverage)
	}

	// MDT operations: those of the truth, in its proportions.
	if len(srv.MDTs) != 1 || !srv.MDTOps.OK || srv.MDTOps.V <= 0 {
		t.Fatalf("MDTs %+v, operations %v", srv.MDTs, srv.MDTOps)
	}
	var truthOps, gotOps float64
	for _, op := range srv.MDTOperations {
		truthOps += job.Ops[op.Name]
		gotOps += float64(op.Count)
	}
	for _, op := range srv.MDTOperations {
		want := job.Ops[op.Name] / truthOps
		if got := float64(op.Count) / gotOps; math.Abs(got-want) > 0.02 {
			t.Errorf("MDT %s: %.3f of the operations, the simulator %.3f", op.Name, got, want)
		}
	}
	if len(srv.MDTOperations) == 0 || len(srv.MDTRates.Values) != len(srv.MDTOperations) {
		t.Errorf("MDT operations by type %v, rates of %d types", srv.MDTOperations, len(srv.MDTRates.Values))
	}
	if !srv.PeakMDTRate.OK || srv.PeakMDTRate.V <= 0 || srv.PeakMDTRate.V > (1+tolerance)*truthOps {
		t.Errorf("peak MDT rate %v, the simulator makes %.0f operations a second", srv.PeakMDTRate, truthOps)
	}

	// Alerts: the sidecar's insights of the job (from the demo's Darshan
	// log), and the storm.
	for _, code := range []string{"P05", "P06"} {
		if !hasAlert(srv, "DarshanJobInsightHigh", map[string]string{"jobid": stormJob, "code": code}) {
			t.Errorf("no DarshanJobInsightHigh for %s among %+v", code, srv.Alerts)
		}
	}
	if !hasAlert(srv, "LustreJobMetadataStorm", map[string]string{"jobid": stormJob}) {
		t.Errorf("no LustreJobMetadataStorm among %+v", srv.Alerts)
	}
	for _, a := range srv.Alerts {
		if a.Last.T.Before(a.First.T) || a.First.T.Before(srv.From.T) || a.Last.T.After(srv.To.T) {
			t.Errorf("alert %s fired from %v to %v, outside the window", a.Name, a.First.T, a.Last.T)
		}
	}
	t.Logf("servers' view of %s: %.0f B written at %.0f B/RPC on %s, %.0f MDT operations (peak %.0f/s), %d alerts, notes %v",
		stormJob, srv.WriteBytes.V, srv.WritePerRPC.V, o.Target, srv.MDTOps.V, srv.PeakMDTRate.V, len(srv.Alerts), srv.Notes)
}

// checkSmallWrites: the demo's log has small writes (P06) and the OST
// received 4 KiB RPCs: the servers confirm. Its small reads (P05) the OSTs
// never saw: no data.
func checkSmallWrites(t *testing.T, verdicts []report.Verdict, srv *report.Servers) {
	t.Helper()
	got := map[string]report.Verdict{}
	for _, v := range verdicts {
		for _, c := range v.Codes {
			got[c] = v
		}
	}
	w, ok := got["P06"]
	if !ok || w.Outcome != report.Confirms || !w.App.Value.OK || w.App.Value.V != 4096 || w.Server.Value.V != srv.WritePerRPC.V {
		t.Errorf("P06 verdict %+v; want confirms, 4096 B requests beside %v B per RPC", w, srv.WritePerRPC)
	}
	if r, ok := got["P05"]; !ok || r.Outcome != report.NoData {
		t.Errorf("P05 verdict %+v; want no_data (the storm job reads nothing from the OSTs)", r)
	}
	for _, v := range verdicts {
		t.Logf("verdict %v: %s (%s)", v.Codes, v.Outcome, v.Why)
	}
}

// jobLogs returns the job's logs under a darshan-runtime log directory,
// by the job id in their names.
func jobLogs(t *testing.T, dir, jobID string) []string {
	t.Helper()
	var logs []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), "_id"+jobID+"-") {
			logs = append(logs, path)
		}
		return nil
	})
	if len(logs) == 0 {
		t.Fatalf("no Darshan log of job %s under %s", jobID, dir)
	}
	return logs
}

// checkReportCommand runs `hpcio_exporter report` on the demo's storm job
// with both views: its JSON has the application's view with the
// small-request insights, the servers' view with the bytes per RPC, and
// the verdicts; its HTML renders in Chromium (when installed) without
// console errors.
func checkReportCommand(t *testing.T, bin, dir, darshanDir, promURL string, from time.Time) {
	t.Helper()
	// The command, as a user types it on the demo: no window. The
	// demo's log ended before this Prometheus started, so the window runs
	// from the log's start to now (logs_to_now), which holds the whole
	// test.
	args := []string{"report", "--jobid=" + stormJob, "--darshan.dir=" + darshanDir, "--prometheus.url=" + promURL}
	begin := time.Now()
	out, err := exec.Command(bin, append(args, "--format=json")...).Output()
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderrOf(err))
	}
	t.Logf("report --format=json of job %s with both views took %v", stormJob, time.Since(begin).Round(time.Millisecond))
	var r struct {
		Application *struct {
			Insights []struct {
				Code  string `json:"code"`
				Fired bool   `json:"fired"`
			} `json:"insights"`
		} `json:"application"`
		Servers *struct {
			Found  bool   `json:"found"`
			Window string `json:"window"`
			From   struct {
				Unix float64 `json:"unix"`
			} `json:"from"`
			WritePerRPC *float64 `json:"bytes_per_write_rpc"`
		} `json:"servers"`
		Verdicts []struct {
			Codes   []string `json:"codes"`
			Outcome string   `json:"outcome"`
			Server  struct {
				Value *float64 `json:"value"`
			} `json:"servers"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	if r.Application == nil || r.Servers == nil || !r.Servers.Found {
		t.Fatalf("report JSON: application %v, servers %+v: want both views", r.Application != nil, r.Servers)
	}
	if r.Servers.Window != "logs_to_now" {
		t.Errorf("report JSON: servers' window from %q, want logs_to_now (the demo's log ended before Prometheus started)", r.Servers.Window)
	}
	if start := time.Unix(int64(r.Servers.From.Unix), 0); !start.Before(from) {
		t.Errorf("report JSON: servers' window starts at %v, want the log's start, before %v", start, from)
	}
	var fired []string
	for _, in := range r.Application.Insights {
		if in.Fired {
			fired = append(fired, in.Code)
		}
	}
	if !slices.Contains(fired, "P05") || !slices.Contains(fired, "P06") {
		t.Errorf("report JSON: insights fired %v, want the small requests P05 and P06", fired)
	}
	if r.Servers.WritePerRPC == nil || *r.Servers.WritePerRPC != 4096 {
		t.Errorf("report JSON: bytes per write RPC %v, want 4096", r.Servers.WritePerRPC)
	}
	found := false
	for _, v := range r.Verdicts {
		if slices.Contains(v.Codes, "P06") {
			found = true
			if v.Outcome != report.Confirms || v.Server.Value == nil || *v.Server.Value != 4096 {
				t.Errorf("report JSON: P06 verdict %+v, want confirms beside 4096 B per RPC", v)
			}
		}
	}
	if !found {
		t.Errorf("report JSON: no verdict for P06 among %+v", r.Verdicts)
	}

	path := browser.Find()
	if path == "" {
		t.Log("BROWSER CHECK SKIPPED: headless Chromium not found (apt-get install chromium)")
		return
	}
	page := filepath.Join(dir, "report-"+stormJob+".html")
	if out, err := exec.Command(bin, append(args, "-o", page)...).CombinedOutput(); err != nil {
		if strings.Contains(string(out), "not in this build") {
			t.Logf("BROWSER CHECK SKIPPED: %s", strings.TrimSpace(string(out)))
			return
		}
		t.Fatalf("report -o: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	png := filepath.Join(dir, "report.png")
	res, err := browser.New(path).Screenshot(ctx, page, png)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if len(res.Console) != 0 {
		t.Errorf("the report's console: %q", res.Console)
	}
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if blank, err := browser.Blank(data); err != nil || blank {
		t.Errorf("the report's screenshot is blank (%v)", err)
	}
	dom, err := browser.New(path).DumpDOM(ctx, page)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	// Both views and the verdicts, as the page names its sections.
	var missing []string
	for _, id := range []string{"job", "application", "servers", "verdicts", "servers-rpc", "servers-osts", "servers-rates", "servers-mdt", "servers-alerts"} {
		if !strings.Contains(dom.DOM, `id="`+id+`"`) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 || !strings.Contains(dom.DOM, report.Confirms) || !strings.Contains(dom.DOM, "P06") {
		t.Errorf("the rendered report lacks sections %v, or the P06 verdict (confirms)", missing)
	}
	t.Logf("the report's HTML renders in %s: %d bytes of DOM, screenshot not blank, no console message", filepath.Base(path), len(dom.DOM))
}

// pointOf reads a range sample's time and value.
func pointOf(p []any) (at, v float64) {
	if len(p) == 2 {
		fmt.Sscan(fmt.Sprint(p[0]), &at)
		fmt.Sscan(fmt.Sprint(p[1]), &v)
	}
	return at, v
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// BenchmarkReportServers24h measures the servers' view of a 24-hour job
// on the demo: Prometheus, with deploy's rules loaded, holds a day of the
// demo's series at the shipped 30 s interval for what the report reads —
// the storm job's own series, every target's, and the recording rules'
// and alerts' series of the job — backfilled with promtool from one real
// scrape of the demo (counters advanced at a steady rate). The other
// jobs' series are left out: the report selects by jobid, and a day of
// all of them would take gigabytes to backfill.
//
//	go test -run '^$' -bench ReportServers24h ./deploy/
func BenchmarkReportServers24h(b *testing.B) {
	promBin := needTool(b, "prometheus")
	promtool := needTool(b, "promtool")
	bin := exporterBinary(b)
	dir := b.TempDir()

	demoAddr := freePort(b)
	exportertest.Start(b, "demo exporter", bin, "--demo", "--web.listen-address="+demoAddr)
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + demoAddr + "/metrics")
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(data), `jobid="`+stormJob+`"`) {
				body = string(data)
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("the demo does not answer: %v", err)
		}
	}

	const step = 30
	end := time.Now().Add(-time.Hour).Truncate(time.Minute)
	begin := end.Add(-24 * time.Hour)
	om := filepath.Join(dir, "day.om")
	series := writeDay(b, om, body, begin, end, step)
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput(); err != nil {
		b.Fatalf("promtool: %v\n%s", err, out)
	}
	os.Remove(om)

	// The same day in a copy, for a Prometheus without deploy's rules.
	rawData := filepath.Join(dir, "data-raw")
	if out, err := exec.Command("cp", "-a", data, rawData).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v\n%s", err, out)
	}
	promDir := filepath.Join(dir, "prometheus")
	preparePrometheus(b, promDir, map[string][]targetGroup{"lustre-oss.yml": nil, "lustre-mds.yml": nil,
		"hpcio-sidecar.yml": nil, "alertmanager.yml": nil}, step*time.Second)
	rawConfig := filepath.Join(dir, "raw.yml")
	writeFile(b, rawConfig, "global: {scrape_interval: 30s, evaluation_interval: 30s}\n")

	for _, bc := range []struct {
		name, config, data string
		rules              bool
	}{
		{"deploy-rules", filepath.Join(promDir, "prometheus.yml"), data, true},
		{"raw-series", rawConfig, rawData, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			promAddr := freePort(b)
			p := exportertest.Start(b, "prometheus", promBin, "--config.file="+bc.config,
				"--storage.tsdb.path="+bc.data, "--web.listen-address="+promAddr, "--storage.tsdb.retention.time=30d")
			defer p.Stop()
			promURL := "http://" + promAddr
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				resp, err := http.Get(promURL + "/-/ready")
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == 200 {
						break
					}
				}
				if time.Now().After(deadline) {
					b.Fatalf("prometheus not ready: %v", err)
				}
			}
			c, err := prom.New(promURL, "")
			if err != nil {
				b.Fatal(err)
			}
			srv, err := c.Servers(context.Background(), stormJob, begin, end, "flags")
			if err != nil || !srv.Found || len(srv.OSTs) == 0 || (len(srv.Rules) > 0) != bc.rules {
				b.Fatalf("servers' view of the backfilled day: %+v, %v", srv, err)
			}
			b.Logf("%d series over 24 h backfilled; the view: %d OSTs, %d alerts, %d rules used, step %.0f s",
				series, len(srv.OSTs), len(srv.Alerts), len(srv.Rules), srv.Step)
			b.ResetTimer()
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if _, err := c.Servers(ctx, stormJob, begin, end, "flags"); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
		})
	}
}

// dayFamilies are the families the servers' view reads: the storm job's
// (lustre_job_*) and every target's.
var dayFamilies = map[string]bool{
	"lustre_job_read_bytes_total": true, "lustre_job_write_bytes_total": true, "lustre_job_read_samples_total": true,
	"lustre_job_write_samples_total": true, "lustre_job_stats_total": true,
	"lustre_read_bytes_total": true, "lustre_write_bytes_total": true, "lustre_read_samples_total": true,
	"lustre_write_samples_total": true, "lustre_stats_total": true,
	"lustre_jobstats_read_bytes_total": true, "lustre_jobstats_write_bytes_total": true, "lustre_jobstats_stats_total": true,
}

// writeDay writes an OpenMetrics file of the scrape's series of
// dayFamilies (the storm job's only, for the per-job ones) from begin to
// end every step seconds, each counter growing by a steady rate from its
// scraped value, with the series deploy's rules and alerts would have
// recorded for the job. It returns the number of series.
func writeDay(b *testing.B, path, scrape string, begin, end time.Time, step int64) int {
	b.Helper()
	type series struct {
		labels string // {…}
		v0     float64
	}
	families := map[string][]series{}
	targets := map[string]bool{}
	for line := range strings.Lines(scrape) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !dayFamilies[name] {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || strings.HasPrefix(name, "lustre_job_") && !strings.Contains(labels, `jobid="`+stormJob+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			b.Fatalf("scrape line %q: %v", line, err)
		}
		families[name] = append(families[name], series{labels: "{" + labels + "}", v0: v})
		if m := regexp.MustCompile(`target="([^"]+)"`).FindStringSubmatch(labels); m != nil && strings.Contains(m[1], "-OST") {
			targets[m[1]] = true
		}
	}
	// What the rules and alerts record for the job, and per target.
	gauge := func(name, labels string, v float64) {
		families[name] = append(families[name], series{labels: labels, v0: -v}) // negative: a gauge
	}
	job := `jobid="` + stormJob + `"`
	gauge("jobid:lustre_job_read_bytes:rate5m", "{"+job+"}", 0)
	gauge("jobid:lustre_job_write_bytes:rate5m", "{"+job+"}", 1<<20)
	gauge("component_jobid:lustre_job_stats:rate5m", `{component="mdt",`+job+`}`, 20000)
	gauge("ALERTS", `{alertname="LustreJobMetadataStorm",alertstate="firing",component="mdt",`+job+`,severity="warning"}`, 1)
	for t := range targets {
		gauge("component_target:lustre_jobstats_coverage_bytes:ratio_rate5m", `{component="ost",target="`+t+`"}`, 1)
	}
	gauge("jobid_target:lustre_job_read_write_bytes:ratio_rate5m", `{`+job+`,target="demo-OST0002"}`, 0.2)
	gauge("component_target:lustre_jobstats_coverage_operations:ratio_rate5m", `{component="mdt",target="demo-MDT0000"}`, 1)

	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n := 0
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, s := range families[name] {
			n++
			rate := math.Max(1, s.v0/86400)
			for t := begin.Unix(); t <= end.Unix(); t += step {
				v := s.v0 + rate*float64(t-begin.Unix())
				if s.v0 <= 0 {
					v = -s.v0
				}
				fmt.Fprintf(w, "%s%s %g %d\n", name, s.labels, v, t)
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}
