package deploy

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// The fleet test's site: one MDS with one MDT and eight OSS with two OSTs
// each, 5,000 jobs, each server a scrape target of its own, as a site's
// servers are. Scraped every 10 s, rules evaluated every 10 s: the rules'
// 5-minute windows hold 30 samples, and a 2-core CI machine has room for
// it (about a core and 3 GB of memory, most of both Prometheus').
const (
	fleetOSS        = 8
	fleetOSTsPerOSS = 2
	fleetMDTs       = 1
	fleetJobs       = 5000
	fleetEvery      = 10 * time.Second
	// The recorded rates are compared once the rules' 5-minute windows
	// hold scraped data only: Prometheus' rate() extrapolates at the
	// start of a series' data, and reads a window it does not fill as
	// lower than the truth.
	fleetWindow = 5 * time.Minute
	// Recorded rates must be this close to the simulator's true ones.
	fleetTolerance = 0.02
	// A job (a user) is compared when every one of its series counted at
	// least this many requests in the window: a counter of whole requests
	// read twice is off by less than one request at either end, under
	// 0.5 % of 200, whatever the number of its series.
	fleetMinEvents = 200.0
)

// fleetRates are true bytes per second, of a job, a user or a target.
type fleetRates struct {
	Read  float64 `json:"read_bytes_per_second"`
	Write float64 `json:"write_bytes_per_second"`
}

type fleetTargetTruth struct {
	Component string `json:"component"`
	fleetRates
	Ops map[string]float64 `json:"operations_per_second"`
}

// fleetTruth is the fleet's /demo/fleet/truth: constant rates of a static
// population of jobs.
type fleetTruth struct {
	Jobs    map[string]fleetRates       `json:"jobs"`
	UIDs    map[string]fleetRates       `json:"uids"`
	Targets map[string]fleetTargetTruth `json:"targets"`
}

// TestFleet runs the distributed path for real: a simulated site of nine
// servers and 5,000 jobs scraped by two vmagents sharing the targets
// (deploy/victoriametrics/vmagent.yml), stored in VictoriaMetrics,
// deploy/prometheus/rules evaluated by vmalert; beside them Debian's
// Prometheus scrapes the same servers with deploy/prometheus as shipped.
// It checks that each server is scraped by exactly one agent, that the
// recorded per-job, per-user and per-target rates equal the simulator's
// in both, and that the dashboards' queries return data from
// VictoriaMetrics; it logs what the site costs each of them.
func TestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the fleet test scrapes a simulated site for about six minutes")
	}
	// Not beside the end-to-end test: on 2 cores, both starve each
	// other's scrapes; one after the other, deploy/ takes some 15 minutes.
	promBin := needTool(t, "prometheus")
	vm := victoriaMetrics.binaries(t)
	begin := time.Now()
	bin := exporterBinary(t)
	dir := t.TempDir()

	// The fleet, with the server unit's command line: its site address
	// serves the targets (HTTP SD) and the truth, each server listens on
	// one of the following ports.
	servers := 1 + fleetOSS // one MDS holds the MDTs
	fleetAddr := exportertest.FreeAddresses(t, 1+servers)
	fleet := startNiced(t, "fleet", bin, append(unitArgs(t, "systemd/hpcio-exporter.service",
		map[string]string{"--web.listen-address": fleetAddr}, "--web.config.file"), "--demo",
		fmt.Sprintf("--demo.fleet.oss=%d", fleetOSS), fmt.Sprintf("--demo.fleet.osts-per-oss=%d", fleetOSTsPerOSS),
		fmt.Sprintf("--demo.fleet.mdts=%d", fleetMDTs), fmt.Sprintf("--demo.fleet.jobs=%d", fleetJobs))...)
	waitHTTP(t, fleet, "http://"+fleetAddr+"/demo/fleet", 60*time.Second)
	mds, oss := fleetTargets(t, fleet, fleetAddr, servers)
	truth := fetchFleetTruth(t, fleetAddr)
	fs := fleetFS(t, truth)

	// The sidecar with Darshan logs of a fleet job and the DaYu fixtures,
	// so that every dashboard has its data.
	drill := fleetDrillJob(t, truth, "http://"+mds[0].Targets[0]+"/metrics")
	sideAddr, darshanReady := startSidecar(t, startNiced, bin, dir, drill)
	targets := map[string][]targetGroup{
		"lustre-mds.yml": mds, "lustre-oss.yml": oss,
		"hpcio-sidecar.yml": {{Targets: []string{sideAddr}, Labels: map[string]string{"role": "sidecar"}}},
		"alertmanager.yml":  nil,
	}
	want := []string{sideAddr}
	for _, g := range append(slices.Clone(mds), oss...) {
		want = append(want, g.Targets...)
	}

	// VictoriaMetrics: single node, its Prometheus API at its root, and
	// vmalert's rules API through it (-vmalert.proxyURL), as Grafana
	// reads them.
	vmAddr, vmalertAddr := freePort(t), freePort(t)
	vmData := filepath.Join(dir, "victoria-metrics-data")
	vmProc := startNiced(t, "victoria-metrics", filepath.Join(vm, "victoria-metrics"), "-httpListenAddr="+vmAddr,
		"-storageDataPath="+vmData, "-retentionPeriod=1d", "-vmalert.proxyURL=http://"+vmalertAddr)
	waitHTTP(t, vmProc, "http://"+vmAddr+"/health", 60*time.Second)
	vmURL := "http://" + vmAddr

	// Two vmagents share the targets, each with the shipped vmagent.yml.
	agentDir := filepath.Join(dir, "vmagent")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	agentCfg := filepath.Join(agentDir, "vmagent.yml")
	writeFile(t, agentCfg, setIntervals(t, "victoriametrics/vmagent.yml", fleetEvery))
	writeTargets(t, agentDir, targets)
	if out, err := run(t, filepath.Join(vm, "vmagent"), "-dryRun", "-promscrape.config="+agentCfg); err != nil {
		t.Fatalf("vmagent -dryRun rejects victoriametrics/vmagent.yml: %v\n%s", err, out)
	}
	var agents []*process
	var agentAddrs []string
	for i := range 2 {
		addr := freePort(t)
		agents = append(agents, startNiced(t, fmt.Sprintf("vmagent %d", i), filepath.Join(vm, "vmagent"), "-httpListenAddr="+addr,
			"-promscrape.config="+agentCfg,
			"-promscrape.cluster.membersCount=2", "-promscrape.cluster.memberNum="+strconv.Itoa(i),
			"-promscrape.cluster.memberLabel=vmagent",
			"-remoteWrite.url="+vmURL+"/api/v1/write", "-remoteWrite.tmpDataPath="+filepath.Join(dir, fmt.Sprintf("vmagent-%d-data", i))))
		agentAddrs = append(agentAddrs, addr)
	}
	for i, a := range agents {
		waitHTTP(t, a, "http://"+agentAddrs[i]+"/health", 30*time.Second)
	}

	// Prometheus with deploy/prometheus as shipped (intervals and `for:`
	// aside); vmalert evaluates the same rule files, first checked one by
	// one so that a rule it rejects is named.
	promDir := filepath.Join(dir, "prometheus")
	forChanged := preparePrometheus(t, promDir, targets, fleetEvery)
	for _, f := range globFiles(t, filepath.Join(promDir, "rules", "*.yml")) {
		if out, err := run(t, filepath.Join(vm, "vmalert"), "-dryRun", "-rule="+f); err != nil {
			t.Errorf("vmalert rejects prometheus/rules/%s: %v\n%s", filepath.Base(f), err, vmErrors(out))
		}
	}
	vmalert := startNiced(t, "vmalert", filepath.Join(vm, "vmalert"), "-httpListenAddr="+vmalertAddr,
		"-rule="+filepath.Join(promDir, "rules", "*.yml"),
		"-datasource.url="+vmURL, "-remoteWrite.url="+vmURL, "-remoteRead.url="+vmURL,
		"-evaluationInterval="+fleetEvery.String(), "-notifier.blackhole")
	waitHTTP(t, vmalert, "http://"+vmalertAddr+"/health", 30*time.Second)
	promAddr := freePort(t)
	promData := filepath.Join(promDir, "data")
	prom := startNiced(t, "prometheus", promBin, "--config.file="+filepath.Join(promDir, "prometheus.yml"),
		"--storage.tsdb.path="+promData, "--web.listen-address="+promAddr,
		"--enable-feature=extra-scrape-metrics")
	waitHTTP(t, prom, "http://"+promAddr+"/-/ready", 60*time.Second)
	promURL := "http://" + promAddr
	t0 := time.Now()
	t.Logf("fleet of %d servers (%d MDT, %d OSTs), %d jobs; processes up after %v; rules loaded with %d `for:` durations set to %s",
		servers, fleetMDTs, fleetOSS*fleetOSTsPerOSS, fleetJobs, t0.Sub(begin).Round(time.Second), forChanged, shortFor)

	promAPIc, vmAPI := promAPI{base: promURL}, promAPI{base: vmURL}
	// Up to 4 minutes: under `go test ./...` the niced site shares CI's 2
	// cores with other packages' tests for its first minutes.
	checkTargetsUp(t, promAPIc, len(want), 4*time.Minute)
	waitVMUp(t, vmAPI, want, 120*time.Second)
	rows0, _, _ := scrapeValue(vmURL+"/metrics", "vm_rows_inserted_total")
	appended0, _, _ := scrapeValue(promURL+"/metrics", "prometheus_tsdb_head_samples_appended_total")
	mid := time.Now()

	time.Sleep(time.Until(t0.Add(fleetWindow + 3*fleetEvery)))
	full := waitFullWindow(t, promAPIc, t0, t0.Add(fleetWindow+4*time.Minute))
	final := fetchFleetTruth(t, fleetAddr)
	checkFleetTruth(t, prometheusBackend(t, promAPIc), final)
	checkFleetTruth(t, fleetBackend{name: "VictoriaMetrics", api: vmAPI}, final)

	t.Run("dashboards through VictoriaMetrics", func(t *testing.T) {
		vars := map[string]string{
			"fs": fs, "jobid": drill.JobID, "topn": "10", "workflow": "yaml2023",
			"__rate_interval": "1m", "__interval": "15s", "__range": "5m"}
		evaluateAll(t, vmAPI, darshanReady, vars)
		checkRecordedLabels(t, vmAPI)
		compareDashboards(t, promAPIc, vmAPI, vars, full)
	})

	checkShards(t, vmAPI, want, time.Since(t0))
	checkTargetsUp(t, promAPIc, len(want), 30*time.Second)

	// Figures for the cardinality and resource budget.
	elapsed := time.Since(mid).Seconds()
	rows1, _, _ := scrapeValue(vmURL+"/metrics", "vm_rows_inserted_total")
	appended1, _, _ := scrapeValue(promURL+"/metrics", "prometheus_tsdb_head_samples_appended_total")
	logScrapeSizes(t, promAPIc, vmAPI)
	var tsdb struct {
		Data struct {
			TotalSeries int64 `json:"totalSeries"`
		} `json:"data"`
	}
	if err := getJSON(vmURL+"/api/v1/status/tsdb", &tsdb); err != nil {
		t.Errorf("VictoriaMetrics /api/v1/status/tsdb: %v", err)
	}
	hourIDs, _, _ := scrapeValue(vmURL+"/metrics", "vm_cache_entries", `type="storage/hour_metric_ids"`)
	head, _, _ := scrapeValue(promURL+"/metrics", "prometheus_tsdb_head_series")
	t.Logf("FIGURES: VictoriaMetrics: %d series today (/api/v1/status/tsdb), %.0f active in the last hour (storage/hour_metric_ids), %.0f rows/s inserted; Prometheus: %.0f head series, %.0f samples/s appended (both over %.0f s)",
		tsdb.Data.TotalSeries, hourIDs, (rows1-rows0)/elapsed, head, (appended1-appended0)/elapsed, elapsed)
	var evals []string
	for _, g := range []string{"hpcio-lustre-per-job", "hpcio-lustre-per-user", "hpcio-lustre-per-target"} {
		sum, _, _ := scrapeValue("http://"+vmalertAddr+"/metrics", "vmalert_iteration_duration_seconds_sum", `group="`+g+`"`)
		n, _, _ := scrapeValue("http://"+vmalertAddr+"/metrics", "vmalert_iteration_duration_seconds_count", `group="`+g+`"`)
		missed, _, _ := scrapeValue("http://"+vmalertAddr+"/metrics", "vmalert_iteration_missed_total", `group="`+g+`"`)
		pd, _, _ := scrapeValue(promURL+"/metrics", "prometheus_rule_group_last_duration_seconds", g+`"`)
		pm, _, _ := scrapeValue(promURL+"/metrics", "prometheus_rule_group_iterations_missed_total", g+`"`)
		evals = append(evals, fmt.Sprintf("%s: vmalert %.2f s on average (%.0f iterations missed), Prometheus %.2f s at its latest (%.0f missed)", g, sum/max(n, 1), missed, pd, pm))
	}
	t.Logf("FIGURES: rule group evaluations: %s", strings.Join(evals, "; "))
	t.Logf("FIGURES: on disk after %v: VictoriaMetrics %.1f MiB, Prometheus %.1f MiB (WAL included)",
		time.Since(t0).Round(time.Second), float64(dirSize(vmData))/(1<<20), float64(dirSize(promData))/(1<<20))
	procs := []*process{fleet, vmProc, agents[0], agents[1], vmalert, prom}
	var usage []string
	for _, p := range procs {
		rss, cpu, err := procUsage(p.Cmd.Process.Pid)
		if err != nil {
			t.Logf("%s: %v", p.Name, err)
			continue
		}
		usage = append(usage, fmt.Sprintf("%s %.0f MiB, %.0f CPU s (%.2f cores)", p.Name, rss/(1<<20), cpu, cpu/time.Since(begin).Seconds()))
	}
	t.Logf("FIGURES: resident memory and CPU since start: %s", strings.Join(usage, "; "))
	t.Logf("fleet test took %v", time.Since(begin).Round(time.Second))
}

// compareDashboards evaluates every dashboard query in both stores at one
// moment (35 s ago: VictoriaMetrics hides the last 30 s; not before full,
// when Prometheus' 5-minute windows hold no break) and logs
// where their answers differ: in the series they return, or in a value by
// more than 5 %. Both hold the same servers' series but for the service
// times vmagent drops; what differs by design is left out of the series'
// identity: the labels the agents add (vmagent, site), vmalert's alertgroup
// on ALERTS, and the spelling of le (Prometheus asks for OpenMetrics,
// le="4096.0"; vmagent for the text format, le="4096"). What remains is a
// query that depends on who scrapes (scrape durations, the exporter's runs
// per scrape) or on MetricsQL's reading of it (rate() without
// extrapolation over short windows); it is logged, not failed, for
// whoever maintains the dashboards for VictoriaMetrics.
func compareDashboards(t *testing.T, prom, vm promAPI, vars map[string]string, full time.Time) {
	t.Helper()
	const hidden = 35 * time.Second
	time.Sleep(time.Until(full.Add(hidden)))
	at := time.Now().Add(-hidden)
	key := func(m map[string]string) string {
		var parts []string
		for k, v := range m {
			switch k {
			case "vmagent", "site", "alertgroup":
				continue
			case "le":
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					v = strconv.FormatFloat(f, 'g', -1, 64)
				}
			}
			parts = append(parts, k+"="+v)
		}
		sort.Strings(parts)
		return strings.Join(parts, ",")
	}
	same, n := 0, 0
	var diffs []string
	for _, d := range loadDashboards(t) {
		for _, p := range d.allPanels() {
			for _, q := range p.Targets {
				expr := substitute(t, q.Expr, vars)
				pr, perr := prom.query(expr, at)
				vr, verr := vm.query(expr, at)
				if perr != nil || verr != nil {
					continue // evaluateAll reports errors
				}
				n++
				pv, vv := map[string]float64{}, map[string]float64{}
				for _, s := range pr {
					pv[key(s.Metric)] = s.value()
				}
				for _, s := range vr {
					vv[key(s.Metric)] = s.value()
				}
				var why []string
				onlyP, onlyV, off := 0, 0, 0
				for k, a := range pv {
					b, ok := vv[k]
					switch {
					case !ok:
						onlyP++
					case math.Abs(a-b) > 0.05*math.Max(math.Abs(a), math.Abs(b)):
						off++
					}
				}
				for k := range vv {
					if _, ok := pv[k]; !ok {
						onlyV++
					}
				}
				if onlyP > 0 {
					why = append(why, fmt.Sprintf("%d series in Prometheus only", onlyP))
				}
				if onlyV > 0 {
					why = append(why, fmt.Sprintf("%d in VictoriaMetrics only", onlyV))
				}
				if off > 0 {
					why = append(why, fmt.Sprintf("%d of %d values more than 5 %% apart", off, len(pv)))
				}
				if len(why) == 0 {
					same++
					continue
				}
				diffs = append(diffs, fmt.Sprintf("%s %q %s: %s", d.file, p.Title, q.RefID, strings.Join(why, ", ")))
			}
		}
	}
	t.Logf("DASHBOARDS: %d of %d queries answer the same in VictoriaMetrics and Prometheus (series, values within 5 %%); the others: %s",
		same, n, strings.Join(diffs, "; "))
}

// fleetTargets reads the fleet's HTTP SD and returns its groups by role,
// once every server answers /metrics.
func fleetTargets(t *testing.T, fleet *process, addr string, servers int) (mds, oss []targetGroup) {
	t.Helper()
	var groups []targetGroup
	if err := getJSON("http://"+addr+"/demo/fleet", &groups); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		switch g.Labels["role"] {
		case "mds":
			mds = append(mds, g)
		case "oss":
			oss = append(oss, g)
		default:
			t.Fatalf("/demo/fleet: a group of role %q: %v", g.Labels["role"], g)
		}
		for _, a := range g.Targets {
			waitHTTP(t, fleet, "http://"+a+"/metrics", 60*time.Second)
		}
	}
	n := 0
	for _, g := range groups {
		n += len(g.Targets)
	}
	if len(mds) != 1 || len(oss) != fleetOSS || n != servers {
		t.Fatalf("/demo/fleet lists %d MDS and %d OSS groups, %d targets; want 1, %d, %d: %v", len(mds), len(oss), n, fleetOSS, servers, groups)
	}
	return mds, oss
}

func fetchFleetTruth(t *testing.T, addr string) fleetTruth {
	t.Helper()
	var truth fleetTruth
	if err := getJSON("http://"+addr+"/demo/fleet/truth", &truth); err != nil {
		t.Fatal(err)
	}
	osts, mdts := 0, 0
	for _, tg := range truth.Targets {
		switch tg.Component {
		case "ost":
			osts++
		case "mdt":
			mdts++
		}
	}
	if osts != fleetOSS*fleetOSTsPerOSS || mdts != fleetMDTs || len(truth.Jobs) < fleetJobs/2 || len(truth.UIDs) == 0 {
		t.Fatalf("the fleet's truth lists %d OSTs, %d MDTs, %d jobs, %d users", osts, mdts, len(truth.Jobs), len(truth.UIDs))
	}
	return truth
}

// fleetFS is the file system's name, the dashboards' $fs: what precedes
// -OST… in the targets' names.
func fleetFS(t *testing.T, truth fleetTruth) string {
	t.Helper()
	name := regexp.MustCompile(`^(.+)-(?:OST|MDT)[0-9a-f]+$`)
	fs := ""
	for target := range truth.Targets {
		m := name.FindStringSubmatch(target)
		if m == nil || (fs != "" && m[1] != fs) {
			t.Fatalf("the fleet's target %q is not <fs>-OSTxxxx of one file system", target)
		}
		fs = m[1]
	}
	return fs
}

// fleetDrillJob is the batch job moving the most bytes that both reads and
// writes (the dashboards' $jobid), with its uid from the MDS (every job
// opens files there).
func fleetDrillJob(t *testing.T, truth fleetTruth, mdsMetrics string) jobTruth {
	t.Helper()
	numeric := regexp.MustCompile(`^[0-9]+$`)
	var best string
	for id, r := range truth.Jobs {
		if numeric.MatchString(id) && r.Read > 0 && r.Write > 0 &&
			(best == "" || r.Read+r.Write > truth.Jobs[best].Read+truth.Jobs[best].Write) {
			best = id
		}
	}
	if best == "" {
		t.Fatal("the fleet has no batch job that reads and writes")
	}
	body, err := getText(mdsMetrics)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`lustre_job_stats_total\{[^}]*jobid="` + best + `"[^}]*\}`).FindString(body)
	uid := regexp.MustCompile(`uid="([0-9]+)"`).FindStringSubmatch(m)
	if uid == nil {
		t.Fatalf("the MDS exports no lustre_job_stats_total with the uid of job %s", best)
	}
	r := truth.Jobs[best]
	t.Logf("drill-down job: %s (uid %s): %.0f B/s written, %.0f B/s read", best, uid[1], r.Write, r.Read)
	return jobTruth{JobID: best, UID: uid[1], Read: r.Read, Write: r.Write}
}

// waitVMUp waits until VictoriaMetrics holds `up` of every target, all 1
// (its queries do not see the last 30 s: -search.latencyOffset).
func waitVMUp(t *testing.T, api promAPI, want []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		res, err := api.query(`up`, time.Time{})
		up := map[string]bool{}
		for _, s := range res {
			if s.value() == 1 {
				up[s.Metric["instance"]] = true
			}
		}
		missing := 0
		for _, a := range want {
			if !up[a] {
				missing++
			}
		}
		if err == nil && missing == 0 {
			t.Logf("VictoriaMetrics: up == 1 for all %d targets", len(want))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VictoriaMetrics: %d of %d targets not up after %v (%v): %v", missing, len(want), within, err, res)
		}
		time.Sleep(2 * time.Second)
	}
}

// waitFullWindow waits until every target's scrapes into Prometheus have
// been continuous (no failed scrape, no missed interval) over a whole
// rule window before the latest evaluation. rate() extrapolates a window
// whose first sample comes more than 1.1 intervals after its start by
// half an interval only, and reads it low by the rest of the gap (about
// 8 % low for 25 s missing; VictoriaMetrics' rate() does not extrapolate).
// It logs the breaks it found, gives up at deadline, and returns the
// first moment whose rule windows hold no break.
func waitFullWindow(t *testing.T, api promAPI, t0, deadline time.Time) time.Time {
	t.Helper()
	for {
		res, err := api.query(fmt.Sprintf("up[%ds]", int((fleetWindow+3*time.Minute).Seconds())), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		var since float64 // the start of the latest continuous run of every target
		var breaks []string
		for _, s := range res {
			start, prev := true, 0.0 // start: the next good scrape starts a run
			for _, v := range s.Values {
				ts, _ := strconv.ParseFloat(fmt.Sprint(v[0]), 64)
				at := fmt.Sprintf("%s at t0%+.0fs", s.Metric["instance"], ts-float64(t0.Unix()))
				switch {
				case fmt.Sprint(v[1]) != "1":
					breaks = append(breaks, at+": failed")
					start = true
				case !start && ts-prev > 1.5*fleetEvery.Seconds():
					breaks = append(breaks, fmt.Sprintf("%s: %.0f s after the previous scrape", at, ts-prev))
					start = true
				}
				if start && fmt.Sprint(v[1]) == "1" {
					since, start = max(since, ts), false
				}
				prev = ts
			}
		}
		ready := time.Unix(int64(since), 0).Add(fleetWindow + 2*fleetEvery)
		if len(res) > 0 && !time.Now().Before(ready) {
			t.Logf("Prometheus: every target scraped without a break since t0%+.0fs; breaks: %d %v", since-float64(t0.Unix()), len(breaks), breaks)
			return ready
		}
		if ready.After(deadline) {
			t.Logf("Prometheus: no break-free rule window by the deadline (breaks: %v): comparing anyway", breaks)
			return ready
		}
		time.Sleep(time.Until(ready))
	}
}

// checkShards checks, over the whole test, that every target was scraped
// by exactly one vmagent (their `vmagent` label tells which), that no
// other target was, and that each is up now.
func checkShards(t *testing.T, api promAPI, want []string, since time.Duration) {
	t.Helper()
	w := fmt.Sprintf("[%ds]", int(since.Seconds())+60)
	scrapes, err := api.query(`count_over_time(up`+w+`)`, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	good, err := api.query(`sum_over_time(up`+w+`)`, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	now, err := api.query(`up`, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]map[string]float64{} // instance → vmagent → scrapes
	for _, s := range scrapes {
		inst := s.Metric["instance"]
		if by[inst] == nil {
			by[inst] = map[string]float64{}
		}
		by[inst][s.Metric["vmagent"]] += s.value()
	}
	perAgent := map[string][]string{}
	for _, inst := range want {
		agents := by[inst]
		switch {
		case len(agents) == 0:
			t.Errorf("target %s: never scraped into VictoriaMetrics", inst)
		case len(agents) > 1:
			t.Errorf("target %s: scraped by %d vmagents %v (each target must be scraped once)", inst, len(agents), agents)
		}
		for a, n := range agents {
			if a == "" {
				t.Errorf("target %s: `up` without the vmagent label", inst)
			}
			perAgent[a] = append(perAgent[a], fmt.Sprintf("%s (%.0f scrapes)", inst, n))
		}
		delete(by, inst)
	}
	for inst := range by {
		t.Errorf("VictoriaMetrics has `up` of %s, which is not a target", inst)
	}
	for _, s := range now {
		if s.value() != 1 {
			t.Errorf("target %s (vmagent %s): up %v", s.Metric["instance"], s.Metric["vmagent"], s.value())
		}
	}
	nFailed := 0.0
	for _, s := range scrapes {
		nFailed += s.value()
	}
	for _, s := range good {
		nFailed -= s.value()
	}
	var agents []string
	for a := range perAgent {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		t.Logf("SHARDS: vmagent %s scraped %d targets: %s", a, len(perAgent[a]), strings.Join(perAgent[a], ", "))
	}
	t.Logf("SHARDS: failed scrapes into VictoriaMetrics during the test: %.0f", nFailed)
}

// fleetBackend is a store of the fleet's series and recorded rules.
type fleetBackend struct {
	name string
	api  promAPI
	// exprs are the recording rules' expressions, by name, when the
	// backend's recorded values are to be checked against the same
	// expression evaluated again at the evaluation's time (Prometheus).
	exprs map[string]string
	// inFlight is the most a recorded rate can read low when its
	// evaluation missed a scrape being ingested (Prometheus).
	inFlight float64
}

// prometheusBackend returns Prometheus as a fleetBackend: the rules'
// expressions from its API, and the bound of a missed scrape.
//
// Prometheus evaluates a rule at T on the samples committed when its query
// runs: a scrape that started before T and is still being ingested is not
// among them. rate() then finds the window's last sample more than 1.1
// intervals before its end and extrapolates half an interval only, so that
// the recorded rate reads low by (interval/2 + the scrape's duration and
// ingestion) over the window, for every evaluation of the group that falls
// in that server's scrapes (their phases are fixed). Prometheus 2.53's
// rule_query_offset and vmalert's -rule.evalDelay avoid it; Debian's 2.42
// has neither. So a recorded rate must equal its expression evaluated again
// at T on the complete data, or differ by no more than that bound (low by
// the extrapolation, or either way by a slope read over one scrape fewer);
// the complete data must equal the truth.
func prometheusBackend(t *testing.T, api promAPI) fleetBackend {
	t.Helper()
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name  string `json:"name"`
					Query string `json:"query"`
					Type  string `json:"type"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := getJSON(api.base+"/api/v1/rules", &rules); err != nil {
		t.Fatal(err)
	}
	b := fleetBackend{name: "Prometheus", api: api, exprs: map[string]string{}}
	for _, g := range rules.Data.Groups {
		for _, r := range g.Rules {
			if r.Type == "recording" {
				b.exprs[r.Name] = r.Query
			}
		}
	}
	res, err := api.query(fmt.Sprintf(`max(max_over_time(scrape_duration_seconds[%ds]))`, int(fleetWindow.Seconds())), time.Time{})
	if err != nil || len(res) != 1 {
		t.Fatalf("the longest scrape: %v (%d results)", err, len(res))
	}
	// Three seconds more for ingesting the scrape and the jitter of the
	// scrapes' timestamps (seen: 3.7 % low with a 6.3 s scrape, a bound
	// of 4.1 % with one second).
	b.inFlight = (fleetEvery.Seconds()/2 + res[0].value() + 3) / fleetWindow.Seconds()
	t.Logf("Prometheus: longest scrape of the window %.2f s: a rule that misses a scrape in flight reads at most %.2f%% low", res[0].value(), 100*b.inFlight)
	return b
}

// checkFleetTruth compares the recorded rates of the shipped rules, as one
// backend holds them now, with the fleet's truth: per job and per user
// (bytes read and written, where each of their series counted at least
// fleetMinEvents requests in the window, and the sums over all of them),
// per target (bytes read and written from the targets' own counters and
// from job_stats' totals, operations by type).
func checkFleetTruth(t *testing.T, b fleetBackend, truth fleetTruth) {
	t.Helper()
	c := &comparison{t: t, b: b}
	win := fmt.Sprintf("[%ds]", int(fleetWindow.Seconds()))
	for _, level := range []struct {
		label string
		truth map[string]fleetRates
	}{{"jobid", truth.Jobs}, {"uid", truth.UIDs}} {
		for _, dir := range []string{"read", "write"} {
			rule := fmt.Sprintf("%s:lustre_job_%s_bytes:rate5m", level.label, dir)
			got := c.recorded(rule, level.label)
			// Requests of the least busy series of each job (user).
			events := c.query(fmt.Sprintf("min by (%s) (increase(lustre_job_%s_samples_total%s))", level.label, dir, win), level.label)
			n := 0
			var sum recordedValue
			sumTruth := 0.0
			for id, r := range level.truth {
				want := r.Read
				if dir == "write" {
					want = r.Write
				}
				sumTruth += want
				if want <= 0 || events[id] < fleetMinEvents {
					continue
				}
				c.compare(fmt.Sprintf("%s{%s=%q}", rule, level.label, id), got[id], want)
				n++
			}
			for _, v := range got {
				sum.rec += v.rec
				sum.full += v.full
				sum.ok = true
			}
			c.compare("sum of "+rule, sum, sumTruth)
			t.Logf("TRUTH %s: %s: %d of %d compared (each of their series ≥ %.0f requests in %v); sum %.4g B/s, truth %.4g B/s",
				b.name, rule, n, len(level.truth), fleetMinEvents, fleetWindow, sum.rec, sumTruth)
			if n < len(level.truth)/10 {
				t.Errorf("%s: %s: only %d of %d compared: the comparison proves little", b.name, rule, n, len(level.truth))
			}
		}
	}

	// Per target: bytes from the targets' counters and from job_stats.
	for _, rule := range []string{"lustre_read_bytes", "lustre_write_bytes", "lustre_job_read_bytes", "lustre_job_write_bytes"} {
		rule = "component_target:" + rule + ":rate5m"
		got := c.recorded(rule, "target")
		for target, tg := range truth.Targets {
			want := tg.Read
			if strings.Contains(rule, "write") {
				want = tg.Write
			}
			if want > 0 {
				c.compare(fmt.Sprintf("%s{target=%q}", rule, target), got[target], want)
			}
		}
	}
	// Operations: reads and writes (RPCs) have rules of their own.
	ops := c.recorded(`component_target_operation:lustre_stats:rate5m`, "target", "operation")
	samples := map[string]map[string]recordedValue{
		"read":  c.recorded(`component_target:lustre_read_samples:rate5m`, "target"),
		"write": c.recorded(`component_target:lustre_write_samples:rate5m`, "target"),
	}
	nOps := 0
	for target, tg := range truth.Targets {
		for op, want := range tg.Ops {
			if want*fleetWindow.Seconds() < fleetMinEvents {
				continue
			}
			got, what := ops[target+"\x00"+op], fmt.Sprintf(`component_target_operation:lustre_stats:rate5m{target=%q, operation=%q}`, target, op)
			if s, ok := samples[op]; ok {
				got, what = s[target], fmt.Sprintf(`component_target:lustre_%s_samples:rate5m{target=%q}`, op, target)
			}
			c.compare(what, got, want)
			nOps++
		}
	}
	t.Logf("TRUTH %s: %d targets' bytes (own counters and job_stats) and %d operation rates compared", b.name, len(truth.Targets), nOps)
	c.report()
}

// recordedValue is a recorded rate and, where the backend is checked so,
// its rule's expression evaluated again at the same time.
type recordedValue struct {
	rec, full float64
	ok        bool
}

// comparison collects the comparisons of one backend with the truth.
type comparison struct {
	t         *testing.T
	b         fleetBackend
	n, bad    int
	worst     float64
	worstWhat string
	errs      []string
	// Prometheus: recorded rates equal to their expression evaluated
	// again, and those that missed a scrape in flight; the worst recorded
	// rate against the truth.
	same, low    int
	lowest       float64
	lowWhat      string
	worstRec     float64
	worstRecWhat string
}

// query runs an instant query and returns its values by the given labels
// (joined with NUL).
func (c *comparison) query(expr string, labels ...string) map[string]float64 {
	return c.queryAt(expr, time.Time{}, labels...)
}

func (c *comparison) queryAt(expr string, at time.Time, labels ...string) map[string]float64 {
	res, err := c.b.api.query(expr, at)
	if err != nil {
		c.t.Errorf("%s: %s: %v", c.b.name, expr, err)
	}
	out := map[string]float64{}
	for _, s := range res {
		out[seriesKey(s.Metric, labels)] += s.value()
	}
	if len(out) == 0 {
		c.t.Errorf("%s: %s returns nothing", c.b.name, expr)
	}
	return out
}

func seriesKey(m map[string]string, labels []string) string {
	var key []string
	for _, l := range labels {
		key = append(key, m[l])
	}
	return strings.Join(key, "\x00")
}

// recorded returns a recording rule's latest values by the given labels:
// with the backend's expressions, from the raw samples of its latest
// evaluation, each beside its expression evaluated again at that time.
func (c *comparison) recorded(rule string, labels ...string) map[string]recordedValue {
	out := map[string]recordedValue{}
	expr, again := c.b.exprs[rule]
	if !again {
		for k, v := range c.query(rule, labels...) {
			out[k] = recordedValue{rec: v, ok: true}
		}
		return out
	}
	// Two minutes: a group that takes longer than its interval (the
	// per-job rules on a busy machine) skips evaluations.
	res, err := c.b.api.query(rule+"[2m]", time.Time{})
	if err != nil {
		c.t.Errorf("%s: %s: %v", c.b.name, rule, err)
		return out
	}
	// The latest evaluation: every series' last sample at its time.
	var at float64
	for _, s := range res {
		if len(s.Values) > 0 {
			ts, _ := strconv.ParseFloat(fmt.Sprint(s.Values[len(s.Values)-1][0]), 64)
			at = max(at, ts)
		}
	}
	for _, s := range res {
		if len(s.Values) == 0 {
			continue
		}
		last := s.Values[len(s.Values)-1]
		ts, _ := strconv.ParseFloat(fmt.Sprint(last[0]), 64)
		v, _ := strconv.ParseFloat(fmt.Sprint(last[1]), 64)
		if ts == at {
			k := seriesKey(s.Metric, labels)
			r := out[k]
			r.rec, r.ok = r.rec+v, true
			out[k] = r
		}
	}
	if len(out) == 0 {
		c.t.Errorf("%s: %s has no samples", c.b.name, rule)
		return out
	}
	for k, v := range c.queryAt(expr, time.UnixMilli(int64(math.Round(at*1000))), labels...) {
		r := out[k]
		r.full = v
		out[k] = r
	}
	return out
}

// compare holds a recorded rate to the truth. With the expression
// evaluated again, that value must equal the truth, and the recorded one
// equal it or read low by at most a scrape in flight.
func (c *comparison) compare(what string, got recordedValue, want float64) {
	c.n++
	v := got.rec
	if c.b.exprs != nil {
		v = got.full
	}
	e := math.Abs(v-want) / want
	if !got.ok {
		e = 1
	}
	if e > c.worst || math.IsNaN(e) {
		c.worst, c.worstWhat = e, fmt.Sprintf("%s: %.6g, truth %.6g", what, v, want)
	}
	bad := !(e <= fleetTolerance)
	if bad {
		c.errs = append(c.errs, fmt.Sprintf("%s: %.6g, truth %.6g (%.2f%% off)", what, v, want, 100*e))
	}
	defer func() {
		if bad {
			c.bad++
		}
	}()
	if c.b.exprs == nil || !got.ok {
		return
	}
	if e := math.Abs(got.rec-want) / want; e > c.worstRec {
		c.worstRec, c.worstRecWhat = e, fmt.Sprintf("%s: %.6g, truth %.6g", what, got.rec, want)
	}
	low := (got.full - got.rec) / got.full
	switch {
	case math.Abs(low) <= 1e-9:
		c.same++
	case math.Abs(low) <= c.b.inFlight:
		// Low by the extrapolation a missing last sample costs, or
		// either way by a slope read over one scrape fewer.
		c.low++
		if math.Abs(low) > math.Abs(c.lowest) {
			c.lowest, c.lowWhat = low, fmt.Sprintf("%s: recorded %.6g, again %.6g", what, got.rec, got.full)
		}
	default:
		bad = true
		c.errs = append(c.errs, fmt.Sprintf("%s: recorded %.6g, its expression evaluated again at the same time %.6g (%.2f%% lower; a scrape in flight explains up to ±%.2f%%)",
			what, got.rec, got.full, 100*low, 100*c.b.inFlight))
	}
}

// report fails with the first disagreements (all of them would flood the
// log when a whole rule is wrong) and logs the worst.
func (c *comparison) report() {
	for i, e := range c.errs {
		if i == 20 {
			c.t.Errorf("%s: … and %d more", c.b.name, len(c.errs)-i)
			break
		}
		c.t.Errorf("%s: %s", c.b.name, e)
	}
	what := "recorded rates"
	if c.b.exprs != nil {
		what = "recorded rates' expressions evaluated again at their evaluation's time"
		c.t.Logf("TRUTH %s: %d recorded rates equal their expression evaluated again, %d missed a scrape in flight (%.3f%% low at most: %s); worst recorded rate against the truth %.3f%% (%s)",
			c.b.name, c.same, c.low, 100*c.lowest, c.lowWhat, 100*c.worstRec, c.worstRecWhat)
	}
	c.t.Logf("TRUTH %s: %d %s compared with the truth, %d beyond %.0f%%; worst error %.3f%% (%s)",
		c.b.name, c.n, what, c.bad, 100*fleetTolerance, 100*c.worst, c.worstWhat)
}

// logScrapeSizes logs the series of one scrape of each target, as
// Prometheus takes them (everything) and as the vmagents keep them (after
// metric_relabel_configs).
func logScrapeSizes(t *testing.T, prom, vm promAPI) {
	t.Helper()
	get := func(api promAPI, expr string) map[string]float64 {
		res, err := api.query(expr, time.Time{})
		if err != nil {
			t.Errorf("%s: %v", expr, err)
		}
		out := map[string]float64{}
		for _, s := range res {
			out[s.Metric["job"]+" "+s.Metric["instance"]] = s.value()
		}
		return out
	}
	scraped := get(prom, `scrape_samples_scraped`)
	kept := get(vm, `scrape_samples_post_metric_relabeling`)
	var keys []string
	for k := range scraped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	total, totalKept := 0.0, 0.0
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s %.0f (vmagent keeps %.0f)", k, scraped[k], kept[k]))
		total += scraped[k]
		totalKept += kept[k]
	}
	t.Logf("FIGURES: series per scrape: %s; in all %.0f per scrape round, %.0f after vmagent's relabelling", strings.Join(lines, "; "), total, totalKept)
}

// procUsage reads a process' resident memory (bytes) and CPU time
// (seconds) from /proc.
func procUsage(pid int) (rss, cpu float64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	if m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(status); m != nil {
		kb, _ := strconv.ParseFloat(string(m[1]), 64)
		rss = kb * 1024
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command's closing parenthesis: utime and stime
	// are the 12th and 13th, in clock ticks (USER_HZ, 100 on Linux).
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 13 {
		return rss, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return rss, (ut + st) / 100, nil
}

// vmErrors keeps the error lines of a VictoriaMetrics program's log.
func vmErrors(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "\terror\t") || strings.Contains(l, "\tfatal\t") || strings.Contains(l, "\tpanic\t") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return out
	}
	return strings.Join(keep, "\n")
}

// TestVMAgentConfig checks victoriametrics/vmagent.yml against
// prometheus/prometheus.yml: the same scrape jobs, intervals, timeouts,
// target lists and site, so that a site moving from one to the other
// changes nothing the rules and dashboards see; the per-job service times
// dropped at the agent, as prometheus.yml suggests; and no rule reading a
// metric the agent drops (vmalert would record nothing for it).
func TestVMAgentConfig(t *testing.T) {
	t.Parallel()
	type relabel struct {
		SourceLabels []string `yaml:"source_labels"`
		Regex        string   `yaml:"regex"`
		Action       string   `yaml:"action"`
	}
	type scrapeCfg struct {
		Global struct {
			ScrapeInterval string            `yaml:"scrape_interval"`
			ScrapeTimeout  string            `yaml:"scrape_timeout"`
			ExternalLabels map[string]string `yaml:"external_labels"`
		} `yaml:"global"`
		ScrapeConfigs []struct {
			JobName        string `yaml:"job_name"`
			ScrapeInterval string `yaml:"scrape_interval"`
			ScrapeTimeout  string `yaml:"scrape_timeout"`
			FileSD         []struct {
				Files []string `yaml:"files"`
			} `yaml:"file_sd_configs"`
			MetricRelabel []relabel `yaml:"metric_relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	load := func(file string) scrapeCfg {
		var c scrapeCfg
		if err := yaml.Unmarshal([]byte(readFile(t, file)), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return c
	}
	prom, agent := load("prometheus/prometheus.yml"), load("victoriametrics/vmagent.yml")
	if prom.Global.ScrapeInterval != agent.Global.ScrapeInterval || prom.Global.ScrapeTimeout != agent.Global.ScrapeTimeout ||
		fmt.Sprint(prom.Global.ExternalLabels) != fmt.Sprint(agent.Global.ExternalLabels) {
		t.Errorf("global: vmagent.yml %+v, prometheus.yml %+v", agent.Global, prom.Global)
	}
	if len(prom.ScrapeConfigs) != len(agent.ScrapeConfigs) {
		t.Fatalf("vmagent.yml has %d scrape jobs, prometheus.yml %d", len(agent.ScrapeConfigs), len(prom.ScrapeConfigs))
	}
	const dropped = "lustre_job_operation_seconds_total"
	var drops []*regexp.Regexp
	for i, a := range agent.ScrapeConfigs {
		p := prom.ScrapeConfigs[i]
		if a.JobName != p.JobName || a.ScrapeInterval != p.ScrapeInterval || a.ScrapeTimeout != p.ScrapeTimeout ||
			fmt.Sprint(a.FileSD) != fmt.Sprint(p.FileSD) {
			t.Errorf("scrape job %d: vmagent.yml %s every %s (timeout %s) from %v; prometheus.yml %s every %s (timeout %s) from %v",
				i, a.JobName, a.ScrapeInterval, a.ScrapeTimeout, a.FileSD, p.JobName, p.ScrapeInterval, p.ScrapeTimeout, p.FileSD)
		}
		dropsIt := false
		for _, r := range a.MetricRelabel {
			if r.Action != "drop" || !slices.Equal(r.SourceLabels, []string{"__name__"}) {
				t.Errorf("%s: a metric relabelling that is not a drop by name: %+v", a.JobName, r)
				continue
			}
			rx := regexp.MustCompile("^(?:" + r.Regex + ")$") // anchored, as Prometheus and vmagent read it
			drops = append(drops, rx)
			dropsIt = dropsIt || rx.MatchString(dropped)
		}
		if strings.HasPrefix(a.JobName, "lustre-") && !dropsIt {
			t.Errorf("%s: vmagent.yml keeps %s", a.JobName, dropped)
		}
	}
	if !strings.Contains(readFile(t, "prometheus/prometheus.yml"), "regex: "+dropped) {
		t.Errorf("prometheus.yml no longer suggests dropping %s: vmagent.yml follows it", dropped)
	}
	name := regexp.MustCompile(`\b(?:lustre|hpcio_exporter|darshan|dayu)_[a-z0-9_]*[a-z0-9]\b`)
	for _, f := range globFiles(t, "prometheus/rules/*.yml") {
		for _, m := range name.FindAllString(readFile(t, f), -1) {
			for _, rx := range drops {
				if rx.MatchString(m) {
					t.Errorf("%s reads %s, which vmagent.yml drops", filepath.Base(f), m)
				}
			}
		}
	}
	panels := map[string]bool{}
	for _, d := range loadDashboards(t) {
		for _, p := range d.allPanels() {
			for _, q := range p.Targets {
				for _, m := range name.FindAllString(q.Expr, -1) {
					for _, rx := range drops {
						if rx.MatchString(m) {
							panels[fmt.Sprintf("%s %q", d.file, p.Title)] = true
						}
					}
				}
			}
		}
	}
	t.Logf("panels without data behind vmagent.yml (they read a metric it drops): %s", strings.Join(slices.Sorted(maps.Keys(panels)), ", "))
}
