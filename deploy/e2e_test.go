package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// The end-to-end test's timing. Prometheus scrapes and evaluates every 5 s:
// often enough for rates over a minute or two, with room on a busy 2-core
// CI machine, where one scrape of the demo can take a second or more. The checks
// start after dataFor of scraping: rates over 90 s windows that begin
// after the exporter's first scrapes.
const (
	scrapeEvery = 5 * time.Second
	dataFor     = 105 * time.Second
	truthWindow = 90 * time.Second
	churnWindow = 180 * time.Second
	// Rules are loaded with every `for:` set to this, so that alerts can
	// fire within the test; their expressions are not touched.
	shortFor = "10s"
	// A truth comparison needs this many counted events (samples,
	// operations) in its window: ±1 event at each edge is then under 1 %.
	minEvents = 300.0
	tolerance = 0.05
)

// jobTruth is one job of the demo's /demo/truth.
type jobTruth struct {
	JobID        string             `json:"jobid"`
	UID          string             `json:"uid"`
	Exe          string             `json:"exe"`
	Steady       bool               `json:"steady"`
	Read         float64            `json:"read_bytes_per_second"`
	Write        float64            `json:"write_bytes_per_second"`
	Ops          map[string]float64 `json:"ops_per_second"`
	WriteSamples float64            `json:"write_samples_per_second"`
	Churn        bool               `json:"churn"`
}

// The demo's special jobs (internal/lustre/lustresim/special.go).
const (
	churnJob = "90000001"
	stormJob = "90000002"
)

// unitArgs returns the flags of a unit's ExecStart, with the values of set
// replaced (or added) and the flags in drop left out: the test runs the
// exporter as the units do.
func unitArgs(t testing.TB, unit string, set map[string]string, drop ...string) []string {
	t.Helper()
	var out []string
	done := map[string]bool{}
	for _, a := range execStart(t, unit)[1:] {
		if strings.HasPrefix(a, "$") {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(drop, name) {
			continue
		}
		if v, ok := set[name]; ok {
			if !done[name] {
				out = append(out, name+"="+v)
			}
			done[name] = true
			continue
		}
		out = append(out, a)
	}
	for name := range set {
		if !done[name] {
			t.Fatalf("%s has no %s to replace", unit, name)
		}
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the end-to-end test scrapes the demo for about five and a half minutes")
	}
	// The structural tests run meanwhile; this one mostly waits.
	t.Parallel()
	promBin := needTool(t, "prometheus")
	amBin := needTool(t, "prometheus-alertmanager", "alertmanager")
	begin := time.Now()
	bin := exporterBinary(t)
	dir := t.TempDir()

	demoAddr := startUnitDemo(t, bin)

	// Darshan logs for two of the demo's jobs, so that the jobid join of
	// Lustre and Darshan has something to join: a long-running batch job
	// with reads, writes and opens (the dashboards' $jobid), and the storm.
	truth := fetchTruth(t, demoAddr)
	drill := pickDrillJob(t, truth)
	t.Logf("drill-down job: %s (uid %s): %.0f B/s written, %.0f B/s read", drill.JobID, drill.UID, drill.Write, drill.Read)
	sideAddr, darshanReady := startSidecar(t, start, bin, dir, drill)

	// Alertmanager with the example configuration; its receivers post to
	// a sink on the loopback instead of the placeholder gateway.
	var sinkMu sync.Mutex
	notified := map[string]int{}
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		sinkMu.Lock()
		notified[r.URL.Path]++
		sinkMu.Unlock()
	}))
	t.Cleanup(sink.Close) // after Alertmanager is killed (cleanups run last first)
	amCfg := readFile(t, "alertmanager/alertmanager.yml")
	const gateway = "http://alert-gateway.example.org:9095"
	if strings.Count(amCfg, gateway) < 3 {
		t.Fatalf("alertmanager.yml: expected its receivers at %s", gateway)
	}
	amDir := filepath.Join(dir, "alertmanager")
	os.MkdirAll(amDir, 0o755)
	writeFile(t, filepath.Join(amDir, "alertmanager.yml"), strings.ReplaceAll(amCfg, gateway, sink.URL))
	amAddr := freePort(t)
	am := start(t, "alertmanager", amBin, "--config.file="+filepath.Join(amDir, "alertmanager.yml"),
		"--storage.path="+amDir, "--web.listen-address="+amAddr, "--cluster.listen-address=")
	waitHTTP(t, am, "http://"+amAddr+"/-/ready", 30*time.Second)

	// Prometheus with deploy/prometheus as shipped, except: intervals of
	// 5 s, the test's targets, and shorter `for:` durations.
	promDir := filepath.Join(dir, "prometheus")
	// The demo is one server with MDTs and OSTs: listed once, as an OSS
	// (scraping it twice would double every sum).
	forChanged := preparePrometheus(t, promDir, map[string][]targetGroup{
		"lustre-oss.yml": {{Targets: []string{demoAddr}}}, "lustre-mds.yml": nil,
		"hpcio-sidecar.yml": {{Targets: []string{sideAddr}}}, "alertmanager.yml": {{Targets: []string{amAddr}}}}, scrapeEvery)
	promAddr := freePort(t)
	prom := start(t, "prometheus", promBin, "--config.file="+filepath.Join(promDir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(promDir, "data"), "--web.listen-address="+promAddr,
		"--enable-feature=extra-scrape-metrics")
	waitHTTP(t, prom, "http://"+promAddr+"/-/ready", 60*time.Second)
	api := promAPI{base: "http://" + promAddr}
	t0 := time.Now()
	t.Logf("processes up after %v; rules loaded with %d `for:` durations set to %s", t0.Sub(begin).Round(time.Second), forChanged, shortFor)

	checkTargetsUp(t, api, 2, 60*time.Second)
	time.Sleep(time.Until(t0.Add(dataFor)))

	checkTruth(t, api, demoAddr)
	alerts := waitStormAlert(t, amAddr, darshanReady, drill.JobID, t0.Add(dataFor+120*time.Second))
	if darshanReady {
		checkInsights(t, api, sideAddr, drill.JobID)
	}
	evaluateAll(t, api, darshanReady, map[string]string{
		"fs": "demo", "jobid": drill.JobID, "topn": "10", "workflow": "yaml2023",
		"__rate_interval": "1m", "__interval": "15s", "__range": "5m"})
	checkRecordedLabels(t, api)
	checkMetricNames(t, api, darshanReady)
	checkChurn(t, api, t0)
	// Coverage once the rules' 5-minute windows start a minute after the
	// first scrape. rate() extrapolates a window's data to its start, but
	// not past the point where the counter would have been 0 (window ×
	// first value / increase): a job total only a few scrapes old may be
	// near 0 there (on the bursty OST, 0 until its first burst was seen),
	// and its rate is extrapolated less than the target's counter's, old
	// and large, so the share may read low by up to half a scrape's share
	// of the window (about 1 %). A minute in, the job total is too large for
	// that (a property of rate() on counters a few seconds old, not of the
	// exporter; on a server, the first five minutes after a start).
	time.Sleep(time.Until(t0.Add(5*time.Minute + time.Minute)))
	checkCoverage(t, api, demoAddr)
	checkTargetsUp(t, api, 2, 30*time.Second)

	var failed float64
	if s, err := api.query(`sum(count_over_time(up[10m]) - sum_over_time(up[10m]))`, time.Time{}); err == nil && len(s) == 1 {
		failed = s[0].value()
	}
	sinkMu.Lock()
	t.Logf("alerts in Alertmanager at the end: %s; notifications received by the sink: %v", alerts, notified)
	sinkMu.Unlock()
	t.Logf("failed scrapes during the test: %.0f; end-to-end test took %v", failed, time.Since(begin).Round(time.Second))
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fetchTruth(t testing.TB, addr string) []jobTruth {
	t.Helper()
	var truth []jobTruth
	if err := getJSON("http://"+addr+"/demo/truth", &truth); err != nil {
		t.Fatal(err)
	}
	if len(truth) < 100 {
		t.Fatalf("the demo's truth lists %d jobs", len(truth))
	}
	return truth
}

// pickDrillJob chooses the steady batch job with the most bytes moved that
// also reads and writes at least a request a second (so that its read and
// write series exist and move in any minute) and opens files.
func pickDrillJob(t testing.TB, truth []jobTruth) jobTruth {
	t.Helper()
	var best *jobTruth
	for i := range truth {
		j := &truth[i]
		if !j.Steady || j.Churn || j.JobID == stormJob || strings.HasPrefix(j.JobID, "_") ||
			j.Ops["read"] < 1 || j.WriteSamples < 1 || j.Ops["open"] <= 0 {
			continue
		}
		if best == nil || j.Read+j.Write > best.Read+best.Write {
			best = j
		}
	}
	if best == nil {
		t.Fatal("the demo has no steady batch job that reads, writes and opens")
	}
	return *best
}

// startSidecar writes Darshan logs of the drill-down job into dir and
// starts the sidecar on them and on the DaYu fixtures, as its unit runs it
// (run: start, or startNiced). It returns the sidecar's address and whether
// it exports the drill-down job.
func startSidecar(t *testing.T, run func(*testing.T, string, string, ...string) *process, bin, dir string, drill jobTruth) (addr string, darshanReady bool) {
	t.Helper()
	logDir := filepath.Join(dir, "darshan-logs")
	writeDarshanLogs(t, logDir, drill)
	addr = freePort(t)
	dayuDir, _ := filepath.Abs("../fixtures/dayu")
	// The unit's StateDirectory=, which systemd would make.
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	side := run(t, "sidecar", bin, unitArgs(t, "systemd/hpcio-exporter-sidecar.service",
		map[string]string{"--web.listen-address": addr, "--darshan.dir": logDir, "--dayu.dir": dayuDir,
			"--darshan.state-dir": state, "--dayu.state-dir": state}, "--web.config.file")...)
	waitHTTP(t, side, "http://"+addr+"/metrics", 30*time.Second)
	return addr, waitDarshan(t, addr, drill.JobID)
}

// writeDarshanLogs writes, with the project's own Darshan writer, a log for
// the drill-down job (4 ranks, a shared file written in small, unaligned,
// random requests, the slowest rank moving three times the bytes of the
// fastest: its insights include P16, small writes to a shared file, at
// HIGH, and M01, no MPI-IO, at WARN) and one for the storm job (small
// writes and 300 s of metadata time: P17 at HIGH, what the MDT's storm
// alert sees from the server side).
func writeDarshanLogs(t testing.TB, dir string, drill jobTruth) {
	t.Helper()
	now := time.Now()
	day := filepath.Join(dir, now.Format("2006"), strconv.Itoa(int(now.Month())), strconv.Itoa(now.Day()))
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	type file struct {
		ints   map[string]int64
		floats map[string]float64
		rank   int64
	}
	write := func(name string, jobID, uid string, nprocs int64, exe string, files []file, heat bool) {
		id, _ := strconv.ParseInt(jobID, 10, 64)
		u, _ := strconv.ParseInt(uid, 10, 64)
		var buf bytes.Buffer
		w := darshan.NewWriter(&buf)
		w.Job = darshan.Job{UID: u, JobID: id, NProcs: nprocs, StartTime: now.Add(-20 * time.Minute).Unix(),
			EndTime: now.Add(-time.Minute).Unix(), Metadata: "lib_ver=3.4.6\n"}
		w.Exe = exe
		w.Mounts = []darshan.Mount{{Path: "/scratch", Type: "lustre"}}
		l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
		for i, f := range files {
			key := darshan.Key{Module: darshan.POSIX, Rank: f.rank, ID: w.AddName(fmt.Sprintf("/scratch/%s/file%d", jobID, i))}
			c := &darshan.CounterRecord{Key: key, Layout: l, Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
			for k, v := range f.ints {
				ix := l.IntIndex(k)
				if ix < 0 {
					t.Fatalf("no POSIX counter %s", k)
				}
				c.Ints[ix] = v
			}
			for k, v := range f.floats {
				ix := l.FloatIndex(k)
				if ix < 0 {
					t.Fatalf("no POSIX counter %s", k)
				}
				c.Floats[ix] = v
			}
			if err := w.Write(c); err != nil {
				t.Fatal(err)
			}
		}
		if heat {
			hid := w.AddName("heatmap:POSIX")
			for r := range nprocs {
				h := &darshan.HeatmapRecord{Key: darshan.Key{Module: darshan.Heatmap, Rank: r, ID: hid}, BinWidth: 10,
					ReadBins: make([]int64, 100), WriteBins: make([]int64, 100)}
				for b := range h.WriteBins {
					if b%10 < 3 { // bursts: three bins in ten
						h.WriteBins[b] = (r + 1) << 22
						h.ReadBins[b] = 1 << 20
					}
				}
				if err := w.Write(h); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(day, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const gib = 1 << 30
	write("climate-"+drill.JobID+".darshan", drill.JobID, drill.UID, 4, "/apps/climate/bin/climate_model --config run.yaml", []file{{
		rank: -1, // shared by all ranks
		ints: map[string]int64{
			"POSIX_OPENS": 16, "POSIX_STATS": 64, "POSIX_SEEKS": 30000,
			"POSIX_READS": 20000, "POSIX_WRITES": 40000,
			"POSIX_BYTES_READ": 20000 * 8192, "POSIX_BYTES_WRITTEN": 2 * gib,
			"POSIX_SIZE_READ_1K_10K": 20000, "POSIX_SIZE_WRITE_10K_100K": 40000,
			"POSIX_SEQ_READS": 4000, "POSIX_SEQ_WRITES": 8000, "POSIX_CONSEC_READS": 1000, "POSIX_CONSEC_WRITES": 2000,
			"POSIX_FILE_NOT_ALIGNED": 45000, "POSIX_FILE_ALIGNMENT": 1 << 20,
			"POSIX_MAX_BYTE_READ": 2*gib - 1, "POSIX_MAX_BYTE_WRITTEN": 2*gib - 1,
			"POSIX_FASTEST_RANK": 0, "POSIX_FASTEST_RANK_BYTES": 256 << 20,
			"POSIX_SLOWEST_RANK": 3, "POSIX_SLOWEST_RANK_BYTES": 768 << 20,
		},
		floats: map[string]float64{"POSIX_F_READ_TIME": 12, "POSIX_F_WRITE_TIME": 40, "POSIX_F_META_TIME": 6,
			"POSIX_F_FASTEST_RANK_TIME": 10, "POSIX_F_SLOWEST_RANK_TIME": 30, "POSIX_F_VARIANCE_RANK_BYTES": 1e16},
	}}, true)
	write("storm-"+stormJob+".darshan", stormJob, "4242", 1, "/usr/bin/python3 make_files.py", []file{{
		rank: 0,
		ints: map[string]int64{"POSIX_OPENS": 1000000, "POSIX_STATS": 3000000, "POSIX_WRITES": 10000, "POSIX_BYTES_WRITTEN": 10000 * 4096,
			"POSIX_SIZE_WRITE_1K_10K": 10000, "POSIX_SEQ_WRITES": 10000, "POSIX_CONSEC_WRITES": 10000, "POSIX_MAX_BYTE_WRITTEN": 4095},
		floats: map[string]float64{"POSIX_F_WRITE_TIME": 2, "POSIX_F_META_TIME": 300},
	}}, false)
}

// waitDarshan reports whether the sidecar exports the drill-down job's
// Darshan series. The darshan collector was being finished when this test
// was written: when it exports no job at all, the Darshan checks are
// skipped, loudly. When it does, every darshan_* metric that deploy/'s rules
// and dashboards use must be among its metrics (a renamed metric fails
// here rather than as a silently empty panel).
func waitDarshan(t *testing.T, addr, jobID string) bool {
	t.Helper()
	want := `darshan_job_info{jobid="` + jobID + `"`
	deadline := time.Now().Add(30 * time.Second)
	var body []byte
	for {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if bytes.Contains(body, []byte(want)) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Logf("DARSHAN CHECKS SKIPPED: the sidecar does not export %s…} 30 s after start: the darshan collector is not ready", want)
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
	used := map[string]bool{}
	files := append(globFiles(t, "prometheus/rules/*.yml"), globFiles(t, "grafana/dashboards/*.json")...)
	for _, f := range files {
		for _, name := range regexp.MustCompile(`darshan_[a-z_]*[a-z]`).FindAllString(readFile(t, f), -1) {
			used[name] = true
		}
	}
	delete(used, "darshan_job") // the prefix of {__name__=~"darshan_job_(read|write)_…"}
	for name := range afterEventOnly {
		delete(used, name)
	}
	for name := range used {
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).Match(body) {
			t.Errorf("the sidecar exports no %s, which deploy/ uses", name)
		}
	}
	t.Logf("DARSHAN: the sidecar exports the drill-down job and all %d darshan_* metrics deploy/ uses", len(used))
	return true
}

// targetGroup is one entry of a file_sd target list, as HTTP SD serves
// them too.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// preparePrometheus copies deploy/prometheus to dir with the test's
// changes: intervals and timeouts of every, the target files, and every
// `for:` set to shortFor. It checks that nothing else differs and returns
// how many `for:` lines it changed.
func preparePrometheus(t testing.TB, dir string, targets map[string][]targetGroup, every time.Duration) int {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "prometheus.yml"), setIntervals(t, "prometheus/prometheus.yml", every))
	writeTargets(t, dir, targets)
	forLine := regexp.MustCompile(`(?m)^(\s+for:) *\S+$`)
	changed := 0
	for _, f := range globFiles(t, "prometheus/rules/*.yml") {
		orig := readFile(t, f)
		short := forLine.ReplaceAllString(orig, "${1} "+shortFor)
		// Only `for:` lines differ: the expressions are the shipped ones.
		ol, sl := strings.Split(orig, "\n"), strings.Split(short, "\n")
		for i := range ol {
			if ol[i] != sl[i] {
				if !forLine.MatchString(ol[i]) {
					t.Fatalf("%s:%d changed beyond for:", f, i+1)
				}
				changed++
			}
		}
		writeFile(t, filepath.Join(dir, "rules", filepath.Base(f)), short)
	}
	return changed
}

// setIntervals returns a shipped scrape configuration with every
// scrape_interval, scrape_timeout and evaluation_interval set to every,
// and nothing else changed.
func setIntervals(t testing.TB, file string, every time.Duration) string {
	t.Helper()
	cfg := readFile(t, file)
	interval := regexp.MustCompile(`(?m)^(\s*(?:scrape_interval|evaluation_interval|scrape_timeout):) *\S+`)
	if n := len(interval.FindAllString(cfg, -1)); n < 5 {
		t.Fatalf("%s: %d intervals found", file, n)
	}
	return interval.ReplaceAllString(cfg, "${1} "+every.String())
}

// writeTargets writes dir/targets/NAME for every target list the shipped
// configuration has (prometheus/targets/NAME), with the groups the test
// gives it: a list the test does not mention fails, an empty one is [].
func writeTargets(t testing.TB, dir string, targets map[string][]targetGroup) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "targets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range globFiles(t, "prometheus/targets/*.yml") {
		name := filepath.Base(f)
		groups, ok := targets[name]
		if !ok {
			t.Fatalf("no test target for %s", name)
		}
		if groups == nil {
			groups = []targetGroup{}
		}
		// JSON is YAML: Prometheus and vmagent read it as such.
		data, err := json.Marshal(groups)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "targets", name), string(data)+"\n")
	}
}

// checkTargetsUp waits until Prometheus has n targets, all up.
func checkTargetsUp(t *testing.T, api promAPI, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var r struct {
			Data struct {
				ActiveTargets []struct {
					Labels    map[string]string `json:"labels"`
					Health    string            `json:"health"`
					LastError string            `json:"lastError"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		err := getJSON(api.base+"/api/v1/targets", &r)
		up := 0
		var state []string
		for _, tg := range r.Data.ActiveTargets {
			state = append(state, fmt.Sprintf("%s=%s %s", tg.Labels["job"], tg.Health, tg.LastError))
			if tg.Health == "up" {
				up++
			}
		}
		if err == nil && up == n && len(r.Data.ActiveTargets) == n {
			t.Logf("targets: %d of %d up (%s)", up, n, strings.Join(state, ", "))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("targets not all up after %v: %v %v", within, state, err)
		}
		time.Sleep(time.Second)
	}
}

// startUnitDemo starts the exporter on its demo as the server unit runs it,
// and returns its address once it answers.
func startUnitDemo(t *testing.T, bin string) string {
	t.Helper()
	addr := freePort(t)
	demo := start(t, "demo exporter", bin, append(unitArgs(t, "systemd/hpcio-exporter.service",
		map[string]string{"--web.listen-address": addr}, "--web.config.file"), "--demo")...)
	waitHTTP(t, demo, "http://"+addr+"/metrics", 30*time.Second)
	return addr
}

// checkTruth compares rate() of the demo's per-job counters, summed by
// jobid as a dashboard does, with the simulator's true rates: bytes read
// and written, and operations by type. Only steady jobs (constant rates
// over the window), batch jobs (a jobid of their own), and quantities that
// count at least minEvents in the window are compared.
func checkTruth(t *testing.T, api promAPI, demoAddr string) {
	t.Helper()
	before := fetchTruth(t, demoAddr)
	at := time.Now()
	w := fmt.Sprintf("[%ds]", int(truthWindow.Seconds()))
	measured := map[string]map[string]float64{} // jobid → quantity → rate
	for q, expr := range map[string]string{
		"write_bytes": `sum by (jobid) (rate(lustre_job_write_bytes_total` + w + `))`,
		"read_bytes":  `sum by (jobid) (rate(lustre_job_read_bytes_total` + w + `))`,
		"ops":         `sum by (jobid, operation) (rate(lustre_job_stats_total` + w + `))`,
	} {
		res, err := api.query(expr, at)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		for _, s := range res {
			key := q
			if q == "ops" {
				key = "op:" + s.Metric["operation"]
			}
			if measured[s.Metric["jobid"]] == nil {
				measured[s.Metric["jobid"]] = map[string]float64{}
			}
			measured[s.Metric["jobid"]][key] = s.value()
		}
	}
	after := fetchTruth(t, demoAddr)
	steadyAfter := map[string]bool{}
	for _, j := range after {
		steadyAfter[j.JobID] = j.Steady
	}

	jobs, quantities := 0, 0
	worst, worstWhat := 0.0, ""
	secs := truthWindow.Seconds()
	for _, j := range before {
		if !j.Steady || !steadyAfter[j.JobID] || j.Churn || strings.HasPrefix(j.JobID, "_") {
			continue
		}
		type cmp struct {
			what         string
			truth, count float64
		}
		var cs []cmp
		cs = append(cs, cmp{"write_bytes", j.Write, j.WriteSamples * secs})
		cs = append(cs, cmp{"read_bytes", j.Read, j.Ops["read"] * secs})
		for op, r := range j.Ops {
			cs = append(cs, cmp{"op:" + op, r, r * secs})
		}
		compared := false
		for _, c := range cs {
			if c.truth <= 0 || c.count < minEvents {
				continue
			}
			got, ok := measured[j.JobID][c.what]
			err := math.Abs(got-c.truth) / c.truth
			if !ok {
				err = 1
			}
			if err > worst {
				worst, worstWhat = err, fmt.Sprintf("job %s %s: rate() %.6g, truth %.6g", j.JobID, c.what, got, c.truth)
			}
			if err > tolerance {
				t.Errorf("job %s %s: rate() %.6g, truth %.6g (%.2f%% off)", j.JobID, c.what, got, c.truth, 100*err)
			}
			compared = true
			quantities++
		}
		if compared {
			jobs++
		}
	}
	t.Logf("TRUTH: %d steady batch jobs compared on %d quantities (bytes read, written, operations by type) with rate()%s; worst error %.3f%% (%s)",
		jobs, quantities, w, 100*worst, worstWhat)
	if jobs < 10 {
		t.Errorf("only %d jobs compared: the comparison proves little", jobs)
	}
}

// amAlert is an alert as Alertmanager's API v2 lists it.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Receivers   []struct {
		Name string `json:"name"`
	} `json:"receivers"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

// waitStormAlert waits until the demo's metadata storm has reached
// Alertmanager, routed to the warning receiver; with Darshan, also the
// insights of the drill-down job (P16 at HIGH, M01 at WARN) and of the
// storm job (P17, metadata time, at HIGH), routed to user support with the
// code's recommendation in their description. It returns a summary of
// Alertmanager's alerts.
func waitStormAlert(t *testing.T, amAddr string, darshanReady bool, drillJob string, deadline time.Time) string {
	t.Helper()
	type want struct{ alert, jobid, code, receiver string }
	wants := []want{{"LustreJobMetadataStorm", stormJob, "", "storage-team"}}
	if darshanReady {
		wants = append(wants, want{"DarshanJobInsightHigh", drillJob, "P16", "user-support"},
			want{"DarshanJobInsightWarn", drillJob, "M01", "user-support"},
			want{"DarshanJobInsightHigh", stormJob, "P17", "user-support"})
	}
	texts := map[want]string{}
	for {
		var alerts []amAlert
		err := getJSON("http://"+amAddr+"/api/v2/alerts", &alerts)
		found := map[want]bool{}
		byName := map[string]int{}
		for _, a := range alerts {
			byName[a.Labels["alertname"]+"/"+a.Labels["severity"]]++
			for _, w := range wants {
				if a.Labels["alertname"] == w.alert && a.Labels["jobid"] == w.jobid && a.Labels["code"] == w.code &&
					a.Status.State == "active" && len(a.Receivers) == 1 && a.Receivers[0].Name == w.receiver {
					found[w] = true
					texts[w] = a.Annotations["summary"] + " | " + a.Annotations["description"]
					// An insight's description opens with its code's
					// recommendation, looked up on the sidecar: without
					// it, it opens with the pointer to the report.
					if w.code != "" && strings.HasPrefix(a.Annotations["description"], "The whole report") {
						t.Errorf("%s{jobid=%q,code=%q}: no recommendation in %q", w.alert, w.jobid, w.code, a.Annotations["description"])
					}
				}
			}
		}
		if err == nil && len(found) == len(wants) {
			var names []string
			for n, c := range byName {
				names = append(names, fmt.Sprintf("%s×%d", n, c))
			}
			sort.Strings(names)
			for _, w := range wants {
				t.Logf("ALERT: %s{jobid=%q,code=%q} reached Alertmanager, routed to %s: %s", w.alert, w.jobid, w.code, w.receiver, texts[w])
			}
			return strings.Join(names, " ")
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts not in Alertmanager by the deadline: want %v, have %v (%v)", wants, byName, err)
		}
		time.Sleep(2 * time.Second)
	}
}

// checkInsights checks the drill-down job's insights in Prometheus: its
// darshan_job_insight series (P16 at HIGH among them, with its value and
// threshold, and the code's recommendation once), and the servers' view of
// the same jobid recorded beside them (bytes per OST, metadata
// operations).
func checkInsights(t *testing.T, api promAPI, sideAddr, jobID string) {
	t.Helper()
	sel := fmt.Sprintf(`{instance=%q,jobid=%q}`, sideAddr, jobID)
	res, err := api.query(`darshan_job_insight`+sel, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, s := range res {
		codes = append(codes, s.Metric["code"]+"/"+s.Metric["level"])
	}
	sort.Strings(codes)
	if !slices.Contains(codes, "P16/HIGH") || !slices.Contains(codes, "M01/WARN") {
		t.Errorf("darshan_job_insight%s: %v, want P16/HIGH and M01/WARN among them", sel, codes)
	}
	one := func(expr string) float64 {
		t.Helper()
		r, err := api.query(expr, time.Time{})
		if err != nil || len(r) != 1 {
			t.Errorf("%s: %v (%d series)", expr, err, len(r))
			return math.NaN()
		}
		return r[0].value()
	}
	v := one(fmt.Sprintf(`darshan_job_insight_value{instance=%q,jobid=%q,code="P16"}`, sideAddr, jobID))
	th := one(fmt.Sprintf(`darshan_job_insight_threshold{instance=%q,jobid=%q,code="P16"}`, sideAddr, jobID))
	if v != 1 || th != 0.1 {
		t.Errorf("P16: value %g, threshold %g; want 1 (every write small) and 0.1", v, th)
	}
	one(fmt.Sprintf(`count(darshan_insight_info{instance=%q,code="P16"})`, sideAddr))
	t.Logf("INSIGHTS: job %s: %v; P16 value %g against %g", jobID, codes, v, th)

	res, err = api.query(fmt.Sprintf(`jobid_target:lustre_job_write_bytes:sum_with_insight{jobid=%q}`, jobID), time.Time{})
	if err != nil || len(res) == 0 {
		t.Errorf("the servers' bytes written per OST of job %s, recorded beside its insights: %v (%d series)", jobID, err, len(res))
	}
	perRPC := map[string]float64{}
	if r, err := api.query(fmt.Sprintf(`jobid_target:lustre_job_write_bytes:sum_with_insight{jobid=%q} / jobid_target:lustre_job_write_samples:sum_with_insight > 0`, jobID), time.Time{}); err == nil {
		for _, s := range r {
			perRPC[s.Metric["target"]] = s.value()
		}
	}
	var osts []string
	for _, s := range res {
		osts = append(osts, fmt.Sprintf("%s %.3g B written, %.3g B per write RPC", s.Metric["target"], s.value(), perRPC[s.Metric["target"]]))
	}
	sort.Strings(osts)
	meta := one(fmt.Sprintf(`jobid:lustre_job_metadata_operations:sum_with_insight{jobid=%q}`, jobID))
	t.Logf("INSIGHTS: the servers' view of job %s: %s; %.0f MDT operations", jobID, strings.Join(osts, ", "), meta)
}

// expression is a PromQL expression of a dashboard or a rule.
type expression struct {
	where, expr string
	rangeQuery  bool
	darshan     bool // needs the darshan collector's series
}

var darshanMetric = regexp.MustCompile(`\bdarshan_job_|alertname=~"Darshan`)

// evaluateAll evaluates every expression of every dashboard panel (and
// annotation), with its template variables substituted, and of every rule,
// as Prometheus loaded them. None may fail; at least 90 % must return data.
// Alerting rules return data only while they fire, and a healthy demo
// fires few of them: each is also evaluated with its comparisons made
// `bool`, which returns the data the alert watches; that is what counts
// towards the 90 %, and the alerts firing are reported.
func evaluateAll(t *testing.T, api promAPI, darshanReady bool, vars map[string]string) {
	t.Helper()
	var exprs []expression
	for _, d := range loadDashboards(t) {
		checkVariables(t, api, d, vars, darshanReady)
		for _, a := range d.Annotations.List {
			exprs = append(exprs, expression{where: d.file + " annotation " + a.Name, expr: substitute(t, a.Expr, vars)})
		}
		for _, p := range d.allPanels() {
			for _, q := range p.Targets {
				exprs = append(exprs, expression{where: fmt.Sprintf("%s %q %s", d.file, p.Title, q.RefID),
					expr: substitute(t, q.Expr, vars), rangeQuery: !q.Instant})
			}
		}
	}
	panels := len(exprs)

	var rules struct {
		Data struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name   string `json:"name"`
					Query  string `json:"query"`
					Type   string `json:"type"`
					Health string `json:"health"`
					Error  string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := getJSON(api.base+"/api/v1/rules", &rules); err != nil {
		t.Fatal(err)
	}
	shipped := loadRules(t)
	nRules, nAlerts := 0, 0
	var alertNames []string
	cmp := regexp.MustCompile(`\s(==|!=|>=|<=|>|<)\s+`)
	for _, g := range rules.Data.Groups {
		for _, r := range g.Rules {
			nRules++
			if r.Health != "ok" {
				t.Errorf("rule %s: health %s %s", r.Name, r.Health, r.Error)
			}
			where := g.Name + " " + r.Name
			if r.Type == "alerting" {
				nAlerts++
				res, err := api.query(r.Query, time.Time{})
				if err != nil {
					t.Errorf("%s: %v", where, err)
				} else if len(res) > 0 {
					alertNames = append(alertNames, r.Name)
				}
				watched := cmp.ReplaceAllString(r.Query, " $1 bool ")
				exprs = append(exprs, expression{where: where + " (bool)", expr: watched})
				continue
			}
			exprs = append(exprs, expression{where: where, expr: r.Query})
		}
	}
	if nRules != len(shipped) {
		t.Errorf("Prometheus loaded %d rules, the rule files have %d", nRules, len(shipped))
	}

	now := time.Now()
	data, total, skipped := 0, 0, 0
	var empty []string
	for _, e := range exprs {
		e.darshan = darshanMetric.MatchString(e.expr)
		res, err := api.query(e.expr, now)
		if err == nil && e.rangeQuery {
			var rr []sample
			rr, err = api.queryRange(e.expr, now.Add(-2*time.Minute), now, 15*time.Second)
			if len(res) == 0 {
				res = rr
			}
		}
		if err != nil {
			t.Errorf("%s: %v\n  %s", e.where, err, e.expr)
			continue
		}
		if e.darshan && !darshanReady {
			skipped++
			continue
		}
		total++
		if len(res) > 0 {
			data++
		} else {
			empty = append(empty, e.where)
		}
	}
	share := float64(data) / float64(total)
	t.Logf("EXPRESSIONS: %d of %d return data (%.1f%%): %d dashboard queries and annotations, %d recording rules, %d alerting rules evaluated with `bool` comparisons",
		data, total, 100*share, panels, nRules-nAlerts, nAlerts)
	if skipped > 0 {
		t.Logf("EXPRESSIONS: %d Darshan expressions left out: the darshan collector is not ready", skipped)
	}
	t.Logf("EXPRESSIONS without data: %s", strings.Join(empty, "; "))
	t.Logf("ALERTS: %d of %d alerting rules return data as written (fire or are pending) against the demo: %v", len(alertNames), nAlerts, alertNames)
	if share < 0.9 {
		t.Errorf("only %.1f%% of the expressions return data, want at least 90%%", 100*share)
	}
}

// substitute replaces a dashboard query's template variables.
func substitute(t *testing.T, expr string, vars map[string]string) string {
	t.Helper()
	return varRef.ReplaceAllStringFunc(expr, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		v, ok := vars[sub[1]+sub[2]]
		if !ok {
			t.Errorf("no test value for %s in %s", m, expr)
		}
		return v
	})
}

// checkVariables evaluates a dashboard's query variables (label_values)
// and checks that the value the test substitutes is one they offer.
func checkVariables(t *testing.T, api promAPI, d *dashboard, vars map[string]string, darshanReady bool) {
	t.Helper()
	lv := regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_]+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" || (!darshanReady && darshanMetric.MatchString(v.variableQuery())) {
			continue
		}
		m := lv.FindStringSubmatch(strings.TrimSpace(v.variableQuery()))
		if m == nil {
			t.Errorf("%s: variable %s: not label_values(selector, label)", d.file, v.Name)
			continue
		}
		var r struct {
			Data []string `json:"data"`
		}
		u := api.base + "/api/v1/label/" + m[2] + "/values?" + url.Values{"match[]": {m[1]}}.Encode()
		if err := getJSON(u, &r); err != nil {
			t.Errorf("%s: variable %s: %v", d.file, v.Name, err)
			continue
		}
		// Grafana keeps what the variable's regex captures.
		options := map[string]bool{}
		rx := variableRegex(d, v.Name)
		for _, val := range r.Data {
			if rx == "" {
				options[val] = true
			} else if s := regexp.MustCompile(strings.Trim(rx, "/")).FindStringSubmatch(val); s != nil {
				options[s[len(s)-1]] = true
			}
		}
		if want := vars[v.Name]; !options[want] {
			t.Errorf("%s: variable %s offers %d values without %q", d.file, v.Name, len(options), want)
		}
	}
}

// variableRegex returns the regex field of a dashboard variable.
func variableRegex(d *dashboard, name string) string {
	data, _ := os.ReadFile(filepath.Join("grafana/dashboards", d.file))
	var raw struct {
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Regex string `json:"regex"`
			} `json:"list"`
		} `json:"templating"`
	}
	json.Unmarshal(data, &raw)
	for _, v := range raw.Templating.List {
		if v.Name == name {
			return v.Regex
		}
	}
	return ""
}

// checkRecordedLabels checks that every recording rule's series carry the
// labels its level names (level:metric:operations) and no others. A level
// label may be missing from a series, as Prometheus drops empty labels:
// uid:… has one series for the traffic of job_ids without a uid.
func checkRecordedLabels(t *testing.T, api promAPI) {
	t.Helper()
	n := 0
	for _, r := range loadRules(t) {
		if r.kind != "record" {
			continue
		}
		level := strings.Split(strings.SplitN(r.name, ":", 2)[0], "_")
		res, err := api.query(r.name, time.Time{})
		if err != nil {
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		complete := false
		for _, s := range res {
			have := 0
			for l := range s.Metric {
				if l == "__name__" {
					continue
				}
				if !slices.Contains(level, l) {
					t.Errorf("%s: series %v has a label its level does not name", r.name, s.Metric)
				}
				have++
			}
			complete = complete || have == len(level)
		}
		if len(res) > 0 {
			n++
			if !complete {
				t.Errorf("%s: no series has all the labels of its level", r.name)
			}
		}
	}
	t.Logf("RECORDING RULES: %d with data, each labelled by its level", n)
}

// afterEventOnly are the metrics deploy/ uses that a sidecar exports only
// once what they count has happened, with the test that sees them on the
// built binary.
var afterEventOnly = map[string]string{
	// A series per uid, from the uid's first dropped job.
	"darshan_user_jobs_dropped_total": "cmd/hpcio_exporter's TestEndToEndSidecarFlood",
}

// checkMetricNames checks that every exporter metric deploy/'s rules and
// dashboards name is one Prometheus has scraped from the demo or the
// sidecar: a metric renamed in a collector fails here, by name.
func checkMetricNames(t *testing.T, api promAPI, darshanReady bool) {
	t.Helper()
	var r struct {
		Data []string `json:"data"`
	}
	if err := getJSON(api.base+"/api/v1/label/__name__/values", &r); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, n := range r.Data {
		have[n] = true
	}
	name := regexp.MustCompile(`(?:^|[^:a-z_])((?:lustre|hpcio_exporter|dayu|darshan)_[a-z0-9_]*[a-z0-9])\b`)
	used := map[string]bool{}
	for _, f := range append(globFiles(t, "prometheus/rules/*.yml"), globFiles(t, "grafana/dashboards/*.json")...) {
		for _, m := range name.FindAllStringSubmatch(readFile(t, f), -1) {
			used[m[1]] = true
		}
	}
	// Not metrics: a prefix in {__name__=~"darshan_job_(read|write)_…"},
	// Lustre's lustre_rsync tool in an annotation.
	for _, word := range []string{"darshan_job", "lustre_rsync"} {
		delete(used, word)
	}
	for name := range afterEventOnly {
		delete(used, name)
	}
	missing := 0
	for n := range used {
		if !have[n] && (darshanReady || !strings.HasPrefix(n, "darshan_job_")) {
			t.Errorf("deploy/ uses %s, which neither the demo nor the sidecar exports", n)
			missing++
		}
	}
	t.Logf("METRICS: the %d exporter metrics deploy/ names are all scraped (%d missing)", len(used), missing)
}

// checkChurn checks the churn job: its raw job_ids take turns and its
// counters restart, yet the rate of its bytes written, summed by jobid,
// must stay within 5 % of 64 MiB/s at every step. Its entries switch every
// 300 s (Unix time ≡ 200 mod 300) and the idle ones are cleaned up 120 s
// later; when a switch is due soon, the test waits for it.
//
// The window is 180 s because of rate() itself. At a switch the job's
// bytes move from one set of series to another (the truncated ids carry no
// node label): the old series stop, new ones start from zero. rate()
// extrapolates each series to the window's edges with its average slope,
// which is wrong for a series whose slope changed inside the window: by up
// to one scrape interval over (window - interval) of the rate, 2.9 % for
// 5 s in 180 s (4.3 % in 120 s, 9 % in 60 s; measured -2.7 % and +2.2 % at
// 120 s). rate() of the sum, which the exporter's never-decreasing
// counters make exact, is checked as well and must stay within 1 %.
func checkChurn(t *testing.T, api promAPI, t0 time.Time) {
	t.Helper()
	const want = 64 << 20
	from := t0.Add(churnWindow + 10*time.Second)
	next := func(after time.Time, mod int64) time.Time {
		s := after.Unix()
		d := ((mod-s%300)%300 + 300) % 300
		return time.Unix(s+d, 0)
	}
	end := from.Add(20 * time.Second)
	if sw := next(from.Add(-churnWindow), 200); sw.After(end) && sw.Before(t0.Add(240*time.Second)) {
		end = sw.Add(30 * time.Second)
		t.Logf("CHURN: waiting for the churn job's switch at %s", sw.Format(time.TimeOnly))
	}
	time.Sleep(time.Until(end.Add(scrapeEvery)))
	dataFrom := from.Add(-churnWindow)
	var events []string
	for _, e := range []struct {
		name string
		mod  int64
	}{{"switch of raw job_ids (new entries from zero)", 200}, {"cleanup of the idle entries", 20}} {
		for at := next(dataFrom, e.mod); at.Before(end); at = at.Add(300 * time.Second) {
			events = append(events, fmt.Sprintf("%s at %s", e.name, at.Format(time.TimeOnly)))
		}
	}
	if len(events) == 0 {
		events = []string{"none (neither a switch nor a cleanup fell in the window)"}
	}
	w := int(churnWindow.Seconds())
	for _, c := range []struct {
		expr string
		tol  float64
	}{
		{fmt.Sprintf(`sum by (jobid) (rate(lustre_job_write_bytes_total{jobid=%q}[%ds]))`, churnJob, w), tolerance},
		{fmt.Sprintf(`rate(sum by (jobid) (lustre_job_write_bytes_total{jobid=%q})[%ds:%ds])`, churnJob, w, int(scrapeEvery.Seconds())), 0.01},
	} {
		res, err := api.queryRange(c.expr, from, end, scrapeEvery)
		if err != nil || len(res) != 1 {
			t.Fatalf("%s: %v (%d series)", c.expr, err, len(res))
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range res[0].Values {
			f, _ := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
			lo, hi = min(lo, f), max(hi, f)
			if math.Abs(f-want)/want > c.tol {
				ts, _ := strconv.ParseFloat(fmt.Sprint(v[0]), 64)
				t.Errorf("churn job at %s: %.4g B/s, want 64 MiB/s ± %g%% (%s)", time.Unix(int64(ts), 0).Format(time.TimeOnly), f, 100*c.tol, c.expr)
			}
		}
		t.Logf("CHURN: %s: %d steps from %s to %s: %.3f to %.3f MiB/s (want 64 ± %g%%)",
			c.expr, len(res[0].Values), from.Format(time.TimeOnly), end.Format(time.TimeOnly), lo/(1<<20), hi/(1<<20), 100*c.tol)
	}
	t.Logf("CHURN: events in the data: %s", strings.Join(events, "; "))
}
