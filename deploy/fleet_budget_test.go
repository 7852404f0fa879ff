package deploy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// The cardinality budget of a site (docs/scale-out.md): for simulated
// sites of increasing size and each recommended profile, what the servers
// expose, what VictoriaMetrics then holds and ingests, and its memory, and
// the formula of docs/scale-out.md checked against it. It takes about a quarter of an
// hour and gigabytes of memory at its largest size, so it runs only when
// asked:
//
//	HPCIO_FLEET_BUDGET=1 go test ./deploy/ -run TestFleetBudget -v -timeout 60m
const budgetEnv = "HPCIO_FLEET_BUDGET"

// budgetSite is one simulated site of the table.
type budgetSite struct{ oss, ostsPerOSS, jobs int }

func (s budgetSite) osts() int { return s.oss * s.ostsPerOSS }

// budgetProfile is one way to run the exporter and the agent.
type budgetProfile struct {
	name string
	// exporter flags beyond the unit's.
	flags []string
	// agent rewrites the shipped vmagent.yml (nil: as shipped).
	agent func(cfg string) string
	// streamAggr is vmagent's -streamAggr.config, when set.
	streamAggr string
}

var budgetSites = []budgetSite{{2, 2, 1000}, {8, 2, 5000}, {16, 4, 20000}}

// keepEverything removes the shipped config's metric_relabel_configs: the
// raw profile stores every series the exporter exposes.
func keepEverything(cfg string) string {
	return regexp.MustCompile(`(?m)^    metric_relabel_configs:\n(?:      .*\n)+`).ReplaceAllString(cfg, "")
}

var budgetProfiles = []budgetProfile{
	{name: "raw: every per-job series of every target", agent: keepEverything},
	{name: "vmagent.yml as shipped (per-job service times dropped)"},
	{name: "--lustre.jobstats.max-series=200 (per target; the rest in _other)", flags: []string{"--lustre.jobstats.max-series=200"}},
	{name: "per-job series summed by vmagent per job and per user, raw dropped", streamAggr: budgetStreamAggr},
}

// budgetStreamAggr sums the per-job counters over targets and nodes at the
// agent, per job and per user, as the recording rules do, and stores those
// sums instead: what is lost is which job loads which target. (The shipped
// vmagent.yml has dropped the per-job service times before.)
const budgetStreamAggr = `- match: '{__name__=~"lustre_job_(read|write)_(bytes|samples)_total"}'
  interval: 1m
  by: [jobid]
  outputs: [total]
- match: '{__name__=~"lustre_job_(read|write)_(bytes|samples)_total"}'
  interval: 1m
  by: [uid]
  outputs: [total]
- match: '{__name__="lustre_job_stats_total"}'
  interval: 1m
  by: [component, jobid, operation]
  outputs: [total]
- match: '{__name__="lustre_job_stats_total"}'
  interval: 1m
  by: [component, uid, operation]
  outputs: [total]
`

// budgetRow is one measurement.
type budgetRow struct {
	site                      budgetSite
	profile                   string
	exposed, perJob, pairs    float64
	stored, rowsPerSec, vmRSS float64
}

func TestFleetBudget(t *testing.T) {
	if os.Getenv(budgetEnv) == "" {
		t.Skipf("the budget measurement runs with %s=1 (about a quarter of an hour)", budgetEnv)
	}
	vm := victoriaMetrics.binaries(t)
	bin := exporterBinary(t)
	var rows []budgetRow
	for _, site := range budgetSites {
		for _, p := range budgetProfiles {
			if p.streamAggr != "" && site != budgetSites[len(budgetSites)-1] && site != budgetSites[0] {
				continue // the aggregated profile at the ends of the table
			}
			r := measureBudget(t, vm, bin, site, p)
			if r.exposed == 0 {
				continue // not run (-run) or failed
			}
			t.Logf("BUDGET: %d OSTs (%d servers), %d jobs, %s: exposed %.0f (per-job %.0f, identity–target pairs %.0f), stored %.0f series, %.0f rows/s, VictoriaMetrics %.0f MiB",
				site.osts(), site.oss+1, site.jobs, p.name, r.exposed, r.perJob, r.pairs, r.stored, r.rowsPerSec, r.vmRSS/(1<<20))
			rows = append(rows, r)
		}
	}
	// The formula of docs/scale-out.md: per server, per OST, per MDT, per pair.
	for _, r := range rows {
		if !strings.HasPrefix(r.profile, "raw") || r.exposed == 0 {
			continue
		}
		predicted := budgetFormula(r.site.oss+1, r.site.osts(), 1, r.pairs)
		if d := math.Abs(r.exposed/predicted - 1); d > 0.10 {
			t.Errorf("%d OSTs, %d jobs: %.0f series exposed, the formula says %.0f (%.0f %% off)", r.site.osts(), r.site.jobs, r.exposed, predicted, 100*d)
		}
		pairs := budgetPairs(r.site.jobs, r.site.osts())
		if d := math.Abs(r.pairs/pairs - 1); d > 0.10 {
			t.Errorf("%d OSTs, %d jobs: %.0f identity–target pairs, the formula says %.0f", r.site.osts(), r.site.jobs, r.pairs, pairs)
		}
	}
}

// budgetFormula is docs/scale-out.md's estimate of the series a site's exporters
// expose: about 310 per server (LNet, services, memory, the exporter's
// own), 480 per OST and 660 per MDT (target statistics and the rate
// density), and 11.4 per identity–target pair (the per-job counters that
// moved).
func budgetFormula(servers, osts, mdts int, pairs float64) float64 {
	return 310*float64(servers) + 480*float64(osts) + 660*float64(mdts) + 11.4*pairs
}

// budgetPairs estimates identity–target pairs: each job on its MDT and on
// its stripe count of OSTs (1, 2 or 4, 2.33 on average), 1 % on every OST.
func budgetPairs(jobs, osts int) float64 {
	return float64(jobs) * (1 + min(2.33, float64(osts)) + 0.01*float64(osts))
}

// measureBudget runs one site with one profile: the fleet, VictoriaMetrics
// and one vmagent scraping every 15 s, and reads, after four scrapes, what
// the servers exposed and what VictoriaMetrics holds.
func measureBudget(t *testing.T, vm, bin string, site budgetSite, p budgetProfile) budgetRow {
	const every = 15 * time.Second
	row := budgetRow{site: site, profile: p.name}
	t.Run(fmt.Sprintf("osts=%d,jobs=%d,%s", site.osts(), site.jobs, strings.Fields(p.name)[0]), func(t *testing.T) {
		dir := t.TempDir()
		servers := 1 + site.oss
		fleetAddr := exportertest.FreeAddresses(t, 1+servers)
		args := append(unitArgs(t, "systemd/hpcio-exporter.service", map[string]string{"--web.listen-address": fleetAddr}, "--web.config.file"),
			"--demo", fmt.Sprintf("--demo.fleet.oss=%d", site.oss), fmt.Sprintf("--demo.fleet.osts-per-oss=%d", site.ostsPerOSS),
			fmt.Sprintf("--demo.fleet.jobs=%d", site.jobs))
		fleet := startNiced(t, "fleet", bin, append(args, p.flags...)...)
		waitHTTP(t, fleet, "http://"+fleetAddr+"/demo/fleet", 120*time.Second)
		var groups, mds, oss []targetGroup
		if err := getJSON("http://"+fleetAddr+"/demo/fleet", &groups); err != nil || len(groups) != servers {
			t.Fatalf("/demo/fleet: %d groups (%v), want %d", len(groups), err, servers)
		}
		for _, g := range groups {
			if g.Labels["role"] == "mds" {
				mds = append(mds, g)
			} else {
				oss = append(oss, g)
			}
		}

		vmAddr := freePort(t)
		vmProc := startNiced(t, "victoria-metrics", filepath.Join(vm, "victoria-metrics"), "-httpListenAddr="+vmAddr,
			"-storageDataPath="+filepath.Join(dir, "vm-data"), "-retentionPeriod=1d")
		waitHTTP(t, vmProc, "http://"+vmAddr+"/health", 60*time.Second)
		vmURL := "http://" + vmAddr

		cfg := setIntervals(t, "victoriametrics/vmagent.yml", every)
		if p.agent != nil {
			cfg = p.agent(cfg)
		}
		writeFile(t, filepath.Join(dir, "vmagent.yml"), cfg)
		writeTargets(t, dir, map[string][]targetGroup{"lustre-mds.yml": mds, "lustre-oss.yml": oss, "hpcio-sidecar.yml": nil, "alertmanager.yml": nil})
		agentArgs := []string{"-httpListenAddr=" + freePort(t), "-promscrape.config=" + filepath.Join(dir, "vmagent.yml"),
			"-remoteWrite.url=" + vmURL + "/api/v1/write", "-remoteWrite.tmpDataPath=" + filepath.Join(dir, "vmagent-data")}
		if p.streamAggr != "" {
			writeFile(t, filepath.Join(dir, "aggr.yml"), p.streamAggr)
			agentArgs = append(agentArgs, "-streamAggr.config="+filepath.Join(dir, "aggr.yml"))
		}
		startNiced(t, "vmagent", filepath.Join(vm, "vmagent"), agentArgs...)

		// The servers' own view: one scrape of each, after a first one
		// (the rate density appears from the second run).
		var all []string
		for _, g := range append(mds, oss...) {
			all = append(all, g.Targets...)
		}
		for _, a := range all {
			getText("http://" + a + "/metrics")
		}
		time.Sleep(2 * time.Second)
		for _, a := range all {
			body, err := getText("http://" + a + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			exposed, perJob, pairs := countExposed(body)
			row.exposed += exposed
			row.perJob += perJob
			row.pairs += pairs
		}

		// Four scrapes into VictoriaMetrics, then its rows over the last
		// two and the series it holds.
		// Stream aggregation writes once a minute: its rows are read over
		// two whole minutes, once it has written.
		window := 2 * every
		if p.streamAggr != "" {
			window = 2 * time.Minute
			time.Sleep(time.Minute)
		}
		time.Sleep(2 * every)
		rows0, _, _ := scrapeValue(vmURL+"/metrics", "vm_rows_inserted_total")
		t0 := time.Now()
		time.Sleep(window)
		rows1, _, _ := scrapeValue(vmURL+"/metrics", "vm_rows_inserted_total")
		row.rowsPerSec = (rows1 - rows0) / time.Since(t0).Seconds()
		var tsdb struct {
			Data struct {
				TotalSeries float64 `json:"totalSeries"`
			} `json:"data"`
		}
		if err := getJSON(vmURL+"/api/v1/status/tsdb", &tsdb); err != nil {
			t.Fatal(err)
		}
		row.stored = tsdb.Data.TotalSeries
		row.vmRSS, _, _ = procUsage(vmProc.Cmd.Process.Pid)
	})
	return row
}

// countExposed counts a /metrics page's samples, the per-job ones among
// them, and the identity–target pairs they belong to.
func countExposed(body string) (exposed, perJob, pairs float64) {
	perJobName := regexp.MustCompile(`^lustre_job_(read|write|stats|operation)`)
	operation := regexp.MustCompile(`,?operation="[^"]*"`)
	seen := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		exposed++
		if !perJobName.MatchString(line) {
			continue
		}
		perJob++
		labels := line[strings.IndexByte(line, '{')+1 : strings.LastIndexByte(line, '}')]
		seen[operation.ReplaceAllString(labels, "")] = true
	}
	return exposed, perJob, float64(len(seen))
}
