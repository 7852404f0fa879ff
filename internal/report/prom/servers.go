package prom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"

	"github.com/hpcio/hpcio_exporter/internal/report"
)

// Points is about how many points a chart of the window gets: the step of
// the range queries is the window over Points, in whole seconds.
const Points = 200

// The recording rules of deploy/prometheus/rules/hpcio-recording.rules.yml
// the servers' view reads when Prometheus has them loaded.
const (
	ruleReadRate     = "jobid:lustre_job_read_bytes:rate5m"
	ruleWriteRate    = "jobid:lustre_job_write_bytes:rate5m"
	ruleMDTRate      = "component_jobid:lustre_job_stats:rate5m"
	ruleShare        = "jobid_target:lustre_job_read_write_bytes:ratio_rate5m"
	ruleCoverageOST  = "component_target:lustre_jobstats_coverage_bytes:ratio_rate5m"
	ruleCoverageMDT  = "component_target:lustre_jobstats_coverage_operations:ratio_rate5m"
	alertCoverageLow = "LustreJobstatsCoverageLow"
)

// hotOST is ruleShare's bound on the OSTs: those moving more than 1 MiB/s
// (it also records only shares of at least a tenth).
const hotOST = "1048576"

// Servers returns the servers' view of job jobID over [from, to]; window
// says where the window comes from ("logs" or "flags"). The queries run
// concurrently, bounded by ctx (the command's --prometheus.timeout).
//
// An unreachable or wrong server is an error. A job Prometheus has no
// job_stats series of in the window is not: its Servers has Found false
// and its first note says so, with a hint (the job has series now, outside
// the window: give --from and --to), so that a report with logs still
// shows the application's view and one without can say why it has none.
func (c *Client) Servers(ctx context.Context, jobID string, from, to time.Time, window string) (*report.Servers, error) {
	if jobID == "" {
		return nil, errors.New("the servers' view needs a job id (--jobid)")
	}
	if !to.After(from) {
		return nil, fmt.Errorf("the window's end (%s) is not after its start (%s)", to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	}
	q := newQueries(jobID, from, to)
	srv := &report.Servers{Prometheus: c.URL, From: report.Time{T: from.UTC()}, To: report.Time{T: to.UTC()},
		Window: window, Step: q.step.Seconds(), Notes: []string{}, Rules: []string{},
		Rates: report.Series{Times: []float64{}, Values: map[string][]report.Value{}}, MDTRates: report.Series{Times: []float64{}, Values: map[string][]report.Value{}},
		MDTOperations: []report.Count{}, OSTs: []report.OST{}, MDTs: []report.MDT{}, Alerts: []report.Alert{}}

	// First, in parallel, whether the job is there and which rules are:
	// both decide the queries that follow.
	var found float64
	var rules map[string]bool
	var rulesErr error
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		v, err := c.Query(gctx, q.foundExpr(), to)
		if err == nil && len(v) == 1 {
			found = float64(v[0].Value)
		}
		return err
	})
	g.Go(func() error {
		rules, rulesErr = c.ruleNames(gctx)
		if rulesErr != nil && isReach(rulesErr) {
			return rulesErr
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if found == 0 {
		hint := "is the job id right, and did Prometheus scrape its Lustre servers then?"
		if v, err := c.Query(ctx, q.foundExpr(), time.Now()); err == nil && len(v) == 1 && v[0].Value > 0 {
			hint = "it has some now: give the window with --from and --to"
		}
		srv.Notes = append(srv.Notes, fmt.Sprintf("Prometheus has no job_stats series of job %s between %s and %s (%s)", jobID,
			from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), hint))
		return srv, nil
	}
	srv.Found = true
	if rulesErr != nil {
		srv.Notes = append(srv.Notes, fmt.Sprintf("the rules API did not answer (%v): every number is computed from the raw series", rulesErr))
	}
	use := func(rule string) bool {
		if rules[rule] {
			if !slices.Contains(srv.Rules, rule) {
				srv.Rules = append(srv.Rules, rule)
			}
			return true
		}
		if rulesErr == nil {
			srv.Notes = append(srv.Notes, "recording rule "+rule+" is not loaded: computed from the raw series")
		}
		return false
	}

	var r results
	g, gctx = errgroup.WithContext(ctx)
	rng := func(dst *model.Matrix, expr string) {
		g.Go(func() error {
			m, err := c.QueryRange(gctx, expr, from, to, q.step)
			*dst = m
			return err
		})
	}
	inst := func(dst *model.Vector, expr string) {
		g.Go(func() error {
			v, err := c.Query(gctx, expr, to)
			*dst = v
			return err
		})
	}
	if use(ruleReadRate) {
		rng(&r.readRate, q.recorded(ruleReadRate+`{`+q.job+`}`))
	} else {
		rng(&r.readRate, `sum(rate(lustre_job_read_bytes_total{`+q.job+`}[`+q.rateWin+`]))`)
	}
	if use(ruleWriteRate) {
		rng(&r.writeRate, q.recorded(ruleWriteRate+`{`+q.job+`}`))
	} else {
		rng(&r.writeRate, `sum(rate(lustre_job_write_bytes_total{`+q.job+`}[`+q.rateWin+`]))`)
	}
	// By operation: no rule keeps the MDT operations by type.
	rng(&r.mdtRate, `sum by (operation) (rate(lustre_job_stats_total{component="mdt",operation!~"read|write",`+q.job+`}[`+q.rateWin+`]))`)
	rng(&r.alerts, `max_over_time(ALERTS{alertstate="firing",`+q.job+`}[`+q.stepDur+`])`)
	rng(&r.coverageAlerts, `max_over_time(ALERTS{alertstate="firing",alertname="`+alertCoverageLow+`"}[`+q.stepDur+`])`)
	for i, m := range []string{"lustre_job_read_bytes_total", "lustre_job_write_bytes_total", "lustre_job_read_samples_total", "lustre_job_write_samples_total"} {
		inst(&r.ost[i], `sum by (target) (`+q.delta(m+`{component="ost",`+q.job+`}`)+`)`)
	}
	inst(&r.mdtOps, `sum by (target, operation) (`+q.delta(`lustre_job_stats_total{component="mdt",`+q.job+`}`)+`)`)
	inst(&r.ostBytes, q.readWrite("lustre_read_bytes_total", "lustre_write_bytes_total"))
	inst(&r.ostCoverage, `(`+q.readWrite("lustre_jobstats_read_bytes_total", "lustre_jobstats_write_bytes_total")+`)
  / ((`+q.readWrite("lustre_read_bytes_total", "lustre_write_bytes_total")+`) > 0)`)
	inst(&r.mdtCoverage, `sum by (target) (increase(lustre_jobstats_stats_total{component="mdt"}[`+q.win+`])
    and on (instance, component, target, operation) last_over_time(lustre_stats_total[`+q.win+`]))
  / sum by (target) (increase(lustre_stats_total{component="mdt"}[`+q.win+`])
    and on (instance, component, target, operation) last_over_time(lustre_jobstats_stats_total[`+q.win+`]))`)
	shareRule := use(ruleShare)
	if shareRule {
		inst(&r.peakShare, `max by (target) (max_over_time(`+ruleShare+`{`+q.job+`}[`+q.win+`]))`)
	} else {
		inst(&r.peakShare, `max by (target) (max_over_time((`+q.shareExpr()+`)[`+q.win+`:`+q.stepDur+`]))`)
	}
	if use(ruleCoverageOST) {
		inst(&r.minCoverageOST, `min by (target) (min_over_time(`+ruleCoverageOST+`{component="ost"}[`+q.win+`]))`)
	} else {
		inst(&r.minCoverageOST, `min by (target) (min_over_time((`+coverageOSTExpr+`)[`+q.win+`:`+q.stepDur+`]))`)
	}
	if use(ruleCoverageMDT) {
		inst(&r.minCoverageMDT, `min by (target) (min_over_time(`+ruleCoverageMDT+`{component="mdt"}[`+q.win+`]))`)
	} else {
		inst(&r.minCoverageMDT, `min by (target) (min_over_time((`+coverageMDTExpr+`)[`+q.win+`:`+q.stepDur+`]))`)
	}
	if use(ruleMDTRate) {
		inst(&r.peakMDT, `max(max_over_time(`+ruleMDTRate+`{component="mdt",`+q.job+`}[`+q.win+`]))`)
	} else {
		inst(&r.peakMDT, `max_over_time(sum(rate(lustre_job_stats_total{component="mdt",operation!~"read|write",`+q.job+`}[5m]))[`+q.win+`:`+q.stepDur+`])`)
	}
	if rulesErr == nil && !rules[alertCoverageLow] {
		srv.Notes = append(srv.Notes, "alerting rule "+alertCoverageLow+" is not loaded: coverage is judged from the numbers only")
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r.fill(srv, q, shareRule)
	return srv, nil
}

// results are the answers of Servers' queries.
type results struct {
	readRate, writeRate, mdtRate, alerts, coverageAlerts model.Matrix
	// ost: bytes read, written, read RPCs, write RPCs of the job per OST.
	ost                                    [4]model.Vector
	mdtOps, ostBytes, ostCoverage          model.Vector
	mdtCoverage, peakShare, minCoverageOST model.Vector
	minCoverageMDT, peakMDT                model.Vector
}

// queries holds what every query of one job and window shares.
type queries struct {
	job      string // the jobid matcher
	from, to time.Time
	step     time.Duration
	// win is the window as a PromQL duration, stepDur the step, rateWin
	// the range of rate() in range queries: 5m as deploy's rules, or the
	// step when it is longer, so that no traffic falls between points.
	win, stepDur, rateWin string
}

func newQueries(jobID string, from, to time.Time) queries {
	d := to.Sub(from)
	step := time.Duration(math.Ceil(d.Seconds()/Points)) * time.Second
	if step < time.Second {
		step = time.Second
	}
	rw := 5 * time.Minute
	if step > rw {
		rw = step
	}
	return queries{job: `jobid=` + strconv.Quote(jobID), from: from, to: to, step: step,
		win: dur(d), stepDur: dur(step), rateWin: dur(rw)}
}

// dur writes a duration as PromQL does, in whole seconds (at least 1).
func dur(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10) + "s"
}

// recorded is a recorded 5-minute rate on the points of a range query:
// as it is when the step is 5 minutes or less, averaged over the step
// when it is longer, so that no traffic between two points is left out.
func (q queries) recorded(sel string) string {
	if q.step <= 5*time.Minute {
		return sel
	}
	return `avg_over_time(` + sel + `[` + q.stepDur + `])`
}

// foundExpr counts the job's job_stats series in the window (at the
// query's time).
func (q queries) foundExpr() string {
	var parts []string
	for _, m := range []string{"lustre_job_read_bytes_total", "lustre_job_write_bytes_total", "lustre_job_stats_total"} {
		parts = append(parts, `count(last_over_time(`+m+`{`+q.job+`}[`+q.win+`]))`)
	}
	return strings.Join(parts, " or ")
}

// readWrite is the OSTs' increase of counter r plus that of w over the
// window, per target: "A + B or A or B", for targets that only read or
// only write.
func (q queries) readWrite(r, w string) string {
	inc := func(m string) string {
		return `sum by (target) (increase(` + m + `{component="ost"}[` + q.win + `]))`
	}
	return inc(r) + ` + ` + inc(w) + ` or ` + inc(r) + ` or ` + inc(w)
}

// delta is what counter sel counted in the window, per series:
// increase(), as deploy's rules count, so that the numbers hold what
// happened in the window and not the counts of the job (as old as its
// job_stats entry) before it. A series that starts within the window
// loses its first sample's counts: at most a scrape interval of the job's
// start.
func (q queries) delta(sel string) string {
	return `increase(` + sel + `[` + q.win + `])`
}

// shareExpr is ruleShare's expression for the job, without its `>= 0.1`
// (the raw series give every share).
func (q queries) shareExpr() string {
	sel := `{component="ost",` + q.job + `}`
	job := func(m string) string { return `sum by (target) (rate(` + m + sel + `[5m]))` }
	ost := func(m string) string { return `sum by (target) (rate(` + m + `{component="ost"}[5m]))` }
	return `(` + job("lustre_job_read_bytes_total") + ` + ` + job("lustre_job_write_bytes_total") +
		` or ` + job("lustre_job_read_bytes_total") + ` or ` + job("lustre_job_write_bytes_total") + `)
  / on (target) ((` + ost("lustre_read_bytes_total") + ` + ` + ost("lustre_write_bytes_total") +
		` or ` + ost("lustre_read_bytes_total") + ` or ` + ost("lustre_write_bytes_total") + `) > ` + hotOST + `)`
}

// The coverage rules' expressions, for a Prometheus without them.
const coverageOSTExpr = `(sum by (component, target) (rate(lustre_jobstats_read_bytes_total{component="ost"}[5m])) + sum by (component, target) (rate(lustre_jobstats_write_bytes_total{component="ost"}[5m]))
    or sum by (component, target) (rate(lustre_jobstats_read_bytes_total{component="ost"}[5m]))
    or sum by (component, target) (rate(lustre_jobstats_write_bytes_total{component="ost"}[5m])))
  / ((sum by (component, target) (rate(lustre_read_bytes_total{component="ost"}[5m])) + sum by (component, target) (rate(lustre_write_bytes_total{component="ost"}[5m]))
    or sum by (component, target) (rate(lustre_read_bytes_total{component="ost"}[5m]))
    or sum by (component, target) (rate(lustre_write_bytes_total{component="ost"}[5m]))) > 0)`

const coverageMDTExpr = `sum by (component, target) (rate(lustre_jobstats_stats_total{component="mdt"}[5m]) and on (instance, component, target, operation) lustre_stats_total)
  / (sum by (component, target) (rate(lustre_stats_total{component="mdt"}[5m]) and on (instance, component, target, operation) lustre_jobstats_stats_total) > 0)`

// fill turns the answers into the servers' view.
func (r *results) fill(srv *report.Servers, q queries, shareRule bool) {
	// Rates over time, on the points of the range queries.
	for t := q.from; !t.After(q.to); t = t.Add(q.step) {
		ts := float64(t.UnixMilli()) / 1000
		srv.Rates.Times = append(srv.Rates.Times, ts)
		srv.MDTRates.Times = append(srv.MDTRates.Times, ts)
	}
	srv.Rates.Values["read"] = onPoints(q, srv.Rates.Times, r.readRate)
	srv.Rates.Values["write"] = onPoints(q, srv.Rates.Times, r.writeRate)
	for _, s := range r.mdtRate {
		srv.MDTRates.Values[string(s.Metric["operation"])] = onPoints(q, srv.MDTRates.Times, model.Matrix{s})
	}

	// Per OST.
	osts := map[string]*report.OST{}
	ost := func(target string) *report.OST {
		o := osts[target]
		if o == nil {
			o = &report.OST{Target: target}
			osts[target] = o
		}
		return o
	}
	var totals [4]float64
	var have [4]bool
	for i, v := range r.ost {
		for _, s := range v {
			o := ost(string(s.Metric["target"]))
			x := report.Num(float64(s.Value))
			switch i {
			case 0:
				o.ReadBytes = x
			case 1:
				o.WriteBytes = x
			case 2:
				o.ReadRPCs = x
			case 3:
				o.WriteRPCs = x
			}
			totals[i] += float64(s.Value)
			have[i] = true
		}
	}
	ostBytes := byTarget(r.ostBytes)
	ostCov := byTarget(r.ostCoverage)
	peak := byTarget(r.peakShare)
	minCov := byTarget(r.minCoverageOST)
	for target, o := range osts {
		// Series absent on one side: the job did none of it there.
		for _, p := range []*report.Value{&o.ReadBytes, &o.WriteBytes, &o.ReadRPCs, &o.WriteRPCs} {
			if !p.OK {
				*p = report.Num(0)
			}
		}
		o.ReadPerRPC = ratio(o.ReadBytes.V, o.ReadRPCs.V)
		o.WritePerRPC = ratio(o.WriteBytes.V, o.WriteRPCs.V)
		if all, ok := ostBytes[target]; ok && all > 0 {
			o.Share = report.Num(math.Min(1, (o.ReadBytes.V+o.WriteBytes.V)/all))
		} else {
			o.Share = report.Value{NA: "the OST's own counters moved nothing in the window"}
		}
		if v, ok := peak[target]; ok {
			o.PeakShare = report.Num(v)
		} else if shareRule {
			o.PeakShare = report.Value{NA: "not recorded: under a tenth of the OST's bytes, or the OST under 1 MiB/s, every 5 minutes"}
		} else {
			o.PeakShare = report.Value{NA: "the OST never moved more than 1 MiB/s"}
		}
		o.Coverage = present(ostCov, target)
		o.MinCoverage = present(minCov, target)
	}
	for _, o := range osts {
		srv.OSTs = append(srv.OSTs, *o)
	}
	sort.Slice(srv.OSTs, func(i, j int) bool {
		a, b := srv.OSTs[i], srv.OSTs[j]
		if x, y := a.ReadBytes.V+a.WriteBytes.V, b.ReadBytes.V+b.WriteBytes.V; x != y {
			return x > y
		}
		return a.Target < b.Target
	})
	srv.ReadBytes, srv.WriteBytes = total(totals[0], have[0], len(osts)), total(totals[1], have[1], len(osts))
	srv.ReadRPCs, srv.WriteRPCs = total(totals[2], have[2], len(osts)), total(totals[3], have[3], len(osts))
	if srv.ReadRPCs.OK {
		srv.ReadPerRPC = ratio(srv.ReadBytes.V, srv.ReadRPCs.V)
	}
	if srv.WriteRPCs.OK {
		srv.WritePerRPC = ratio(srv.WriteBytes.V, srv.WriteRPCs.V)
	}
	if len(osts) == 0 {
		srv.Notes = append(srv.Notes, "the job has no OST series in the window: no bytes, RPCs or shares")
	}

	// MDT operations, by target and by type.
	mdts := map[string]float64{}
	byOp := map[string]float64{}
	var ops float64
	for _, s := range r.mdtOps {
		op := string(s.Metric["operation"])
		if op == "read" || op == "write" {
			continue // the RPCs of the samples counters
		}
		mdts[string(s.Metric["target"])] += float64(s.Value)
		byOp[op] += float64(s.Value)
		ops += float64(s.Value)
	}
	mdtCov, mdtMin := byTarget(r.mdtCoverage), byTarget(r.minCoverageMDT)
	for target, n := range mdts {
		srv.MDTs = append(srv.MDTs, report.MDT{Target: target, Operations: report.Num(n),
			Coverage: present(mdtCov, target), MinCoverage: present(mdtMin, target)})
	}
	sort.Slice(srv.MDTs, func(i, j int) bool { return srv.MDTs[i].Target < srv.MDTs[j].Target })
	for op, n := range byOp {
		srv.MDTOperations = append(srv.MDTOperations, report.Count{Name: op, Count: int64(math.Round(n))})
	}
	sort.Slice(srv.MDTOperations, func(i, j int) bool {
		a, b := srv.MDTOperations[i], srv.MDTOperations[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Name < b.Name
	})
	if len(mdts) > 0 {
		srv.MDTOps = report.Num(ops)
	} else {
		srv.MDTOps = report.Num(0)
		srv.Notes = append(srv.Notes, "the job has no MDT series in the window: no metadata operations")
	}
	if len(r.peakMDT) == 1 {
		srv.PeakMDTRate = report.Num(float64(r.peakMDT[0].Value))
	} else {
		srv.PeakMDTRate = report.Num(0)
	}

	// Alerts: the job's, and coverage alerts on its targets.
	targets := map[string]bool{}
	for t := range osts {
		targets[t] = true
	}
	for t := range mdts {
		targets[t] = true
	}
	for _, s := range r.alerts {
		srv.Alerts = append(srv.Alerts, alertOf(s))
	}
	for _, s := range r.coverageAlerts {
		if targets[string(s.Metric["target"])] {
			srv.Alerts = append(srv.Alerts, alertOf(s))
			srv.CoverageLow = true
		}
	}
	sort.Slice(srv.Alerts, func(i, j int) bool {
		a, b := srv.Alerts[i], srv.Alerts[j]
		if !a.First.T.Equal(b.First.T) {
			return a.First.T.Before(b.First.T)
		}
		return a.Name < b.Name
	})
	// Coverage over the window below the alert's threshold on one of the
	// job's targets: the per-job numbers are low by as much.
	for _, o := range srv.OSTs {
		if o.Coverage.OK && o.Coverage.V < 0.9 {
			srv.CoverageLow = true
		}
	}
	for _, m := range srv.MDTs {
		if m.Coverage.OK && m.Coverage.V < 0.9 {
			srv.CoverageLow = true
		}
	}
	if srv.CoverageLow {
		srv.Notes = append(srv.Notes, "job_stats missed more than a tenth of the traffic of one of the job's targets in the window: its per-job numbers are low by as much")
	}
}

// onPoints puts a range query's answer (one series, or their sum) on the
// points times; a point without a sample is null.
func onPoints(q queries, times []float64, m model.Matrix) []report.Value {
	out := make([]report.Value, len(times))
	for i := range out {
		out[i] = report.Value{NA: "no sample"}
	}
	idx := func(t model.Time) int {
		i := int(math.Round(float64(t.Time().Sub(q.from)) / float64(q.step)))
		if i < 0 || i >= len(times) {
			return -1
		}
		return i
	}
	for _, s := range m {
		for _, p := range s.Values {
			if i := idx(p.Timestamp); i >= 0 && !math.IsNaN(float64(p.Value)) {
				if out[i].OK {
					out[i].V += float64(p.Value)
				} else {
					out[i] = report.Num(float64(p.Value))
				}
			}
		}
	}
	return out
}

func alertOf(s *model.SampleStream) report.Alert {
	a := report.Alert{Name: string(s.Metric["alertname"]), Labels: map[string]string{}}
	for k, v := range s.Metric {
		if k != "alertname" && k != model.MetricNameLabel && k != "alertstate" {
			a.Labels[string(k)] = string(v)
		}
	}
	if n := len(s.Values); n > 0 {
		a.First = report.Time{T: s.Values[0].Timestamp.Time().UTC()}
		a.Last = report.Time{T: s.Values[n-1].Timestamp.Time().UTC()}
	}
	return a
}

func byTarget(v model.Vector) map[string]float64 {
	out := map[string]float64{}
	for _, s := range v {
		if f := float64(s.Value); !math.IsNaN(f) && !math.IsInf(f, 0) {
			out[string(s.Metric["target"])] = f
		}
	}
	return out
}

func present(m map[string]float64, target string) report.Value {
	if v, ok := m[target]; ok {
		return report.Num(v)
	}
	return report.Value{NA: "the target's counters moved nothing in the window"}
}

func ratio(a, b float64) report.Value {
	if b <= 0 {
		return report.Value{NA: "no RPC"}
	}
	return report.Num(a / b)
}

func total(v float64, have bool, osts int) report.Value {
	if !have && osts == 0 {
		return report.Value{NA: "no OST series"}
	}
	return report.Num(v)
}

// ruleNames returns the names of the recording and alerting rules the
// server has loaded.
func (c *Client) ruleNames(ctx context.Context) (map[string]bool, error) {
	u := c.api.URL("/api/v1/rules", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, body, err := c.api.Do(ctx, req)
	if err != nil {
		return nil, c.reachErr(err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Groups []struct {
				Rules []struct {
					Name string `json:"name"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("HTTP %s %s", resp.Status, strings.TrimSpace(r.Error))
	}
	names := map[string]bool{}
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			names[rule.Name] = true
		}
	}
	return names, nil
}

// isReach tells an unreachable server (or the end of ctx) from a server
// that answered with an error.
func isReach(err error) bool {
	var ue *UnreachableError
	return errors.As(err, &ue) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
