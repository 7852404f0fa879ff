package lustresim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
)

// getParam runs a server's lctl and returns the parameters it printed, in
// order, each routed to parser when parser returns one, and how it exited.
func getParam(t *testing.T, src lctl.Source, patterns []string, parser func(param string) lctl.SectionParser) ([]string, error) {
	t.Helper()
	out, err := src.GetParam(context.Background(), patterns)
	if err != nil {
		t.Fatal(err)
	}
	var printed []string
	err = lctl.Scan(out, "", func(param string) lctl.SectionParser {
		printed = append(printed, param)
		if parser == nil {
			return nil
		}
		return parser(param)
	})
	if err != nil {
		t.Fatal(err)
	}
	return printed, out.Close()
}

var targetName = regexp.MustCompile(`site-(MDT|OST)([0-9a-f]{4})`)

// expectedServers says, from a parameter's name alone, which servers of a
// site of one MDS and oss OSS of perOSS OSTs each print it.
func expectedServers(param string, oss, perOSS int) []string {
	all := []string{"mds0"}
	var osses []string
	for i := range oss {
		osses = append(osses, fmt.Sprintf("oss%02d", i))
	}
	all = append(all, osses...)
	switch {
	case strings.HasPrefix(param, "osp."), strings.HasPrefix(param, "mgs."), strings.HasPrefix(param, "mds."),
		strings.HasPrefix(param, "qmt."), strings.Contains(param, ".MGS."):
		return []string{"mds0"}
	case strings.HasPrefix(param, "ost.OSS."):
		return osses
	}
	m := targetName.FindStringSubmatch(param)
	if m == nil {
		return all
	}
	if m[1] == "MDT" {
		return []string{"mds0"}
	}
	var idx int
	fmt.Sscanf(m[2], "%x", &idx)
	return []string{fmt.Sprintf("oss%02d", idx/perOSS)}
}

// Each server holds its own targets, and prints their parameters and the
// ones every server of its kind has, never another server's.
func TestFleetServers(t *testing.T) {
	const oss, perOSS = 3, 2
	f := NewFleet(FleetConfig{Seed: 2, OSS: oss, OSTsPerOSS: perOSS, MDTs: 2, Jobs: 200})
	servers := f.Servers()
	want := []struct {
		name, role string
		targets    []string
	}{
		{"mds0", "mds", []string{"site-MDT0000", "site-MDT0001"}},
		{"oss00", "oss", []string{"site-OST0000", "site-OST0001"}},
		{"oss01", "oss", []string{"site-OST0002", "site-OST0003"}},
		{"oss02", "oss", []string{"site-OST0004", "site-OST0005"}},
	}
	if len(servers) != len(want) {
		t.Fatalf("%d servers, want %d", len(servers), len(want))
	}
	for i, w := range want {
		if s := servers[i]; s.Name != w.name || s.Role != w.role || !slices.Equal(s.Targets, w.targets) {
			t.Errorf("server %d: %s %s %v, want %s %s %v", i, s.Name, s.Role, s.Targets, w.name, w.role, w.targets)
		}
	}

	// Every parameter of the file system, asked for by name on every
	// server: each prints its own and fails for the others, as lctl does.
	params := f.sim.params()
	printedBy := map[string][]string{}
	for _, srv := range servers {
		printed, err := getParam(t, srv.Source, params, nil)
		var exit *toolrun.ExitError
		if !asExit(err, &exit) || exit.Code != 2 {
			t.Errorf("%s: close %v, want exit status 2 for the parameters it does not have", srv.Name, err)
		}
		for _, p := range printed {
			printedBy[p] = append(printedBy[p], srv.Name)
		}
	}
	for _, p := range params {
		if want := expectedServers(p, oss, perOSS); !slices.Equal(printedBy[p], want) {
			t.Errorf("%s printed by %v, want %v", p, printedBy[p], want)
		}
	}
	if len(printedBy) != len(params) {
		t.Errorf("%d parameters printed, the file system has %d", len(printedBy), len(params))
	}
}

// A server's lctl fails a pattern that matches none of its parameters,
// even when another server has them, and prints the rest.
func TestFleetGetParamPerServer(t *testing.T) {
	f := NewFleet(FleetConfig{OSS: 2, OSTsPerOSS: 2, Jobs: 50})
	servers := f.Servers()
	printed, err := getParam(t, servers[2].Source, []string{"jobid_name", "obdfilter.*.job_stats", "mdt.*.job_stats", "obdfilter.site-OST0000.stats"}, nil)
	if want := []string{"jobid_name", "obdfilter.site-OST0002.job_stats", "obdfilter.site-OST0003.job_stats"}; !slices.Equal(printed, want) {
		t.Errorf("oss01 printed %v, want %v", printed, want)
	}
	var exit *toolrun.ExitError
	if !asExit(err, &exit) || exit.Code != 2 || !strings.Contains(exit.Stderr, "'mdt/*/job_stats'") || !strings.Contains(exit.Stderr, "'obdfilter/site-OST0000/stats'") {
		t.Errorf("oss01: close %v, want exit status 2 for mdt.* and OST0000", err)
	}
	printed, err = getParam(t, servers[0].Source, []string{"mdt.*.job_stats", "jobid_var"}, nil)
	if err != nil || !slices.Equal(printed, []string{"mdt.site-MDT0000.job_stats", "jobid_var"}) {
		t.Errorf("mds0 printed %v, close %v", printed, err)
	}
}

// counter is one operation's counters in one entry.
type counter struct{ samples, sum uint64 }

// siteStats are the job_stats of every server at one time: per target,
// raw job_id and operation.
type siteStats struct {
	server  map[string]string // target → the server that printed it
	entries map[[2]string]map[string]counter
	t       *testing.T
	target  string
}

func (s *siteStats) Job(js *lctl.JobStat) {
	key := [2]string{s.target, string(js.JobID)}
	if _, dup := s.entries[key]; dup {
		s.t.Errorf("%s: job_id %q printed twice", s.target, js.JobID)
	}
	ops := map[string]counter{}
	for _, o := range js.Ops {
		ops[o.Op] = counter{o.Samples, o.Sum}
	}
	s.entries[key] = ops
}

func (s *siteStats) End(complete bool, _ lctl.SectionStats) {
	if !complete {
		s.t.Errorf("%s: job_stats cut short", s.target)
	}
}

// readSite reads every server's job_stats.
func readSite(t *testing.T, f *Fleet) *siteStats {
	t.Helper()
	s := &siteStats{server: map[string]string{}, entries: map[[2]string]map[string]counter{}, t: t}
	for _, srv := range f.Servers() {
		_, err := getParam(t, srv.Source, []string{"*.*.job_stats"}, func(param string) lctl.SectionParser {
			_, target, ok := lctl.JobStatsParam(param)
			if !ok {
				t.Fatalf("%s printed %s", srv.Name, param)
			}
			if other, dup := s.server[target]; dup {
				t.Errorf("%s printed by %s and %s", target, other, srv.Name)
			}
			s.server[target], s.target = srv.Name, target
			return lctl.NewJobStatsParser(s)
		})
		if err != nil {
			t.Errorf("%s: %v", srv.Name, err)
		}
	}
	return s
}

// tally sums the increments of counters and the most their integer
// rounding can make them differ from rate × time: one sample per entry,
// or the bytes of one sample.
type tally struct{ inc, slack map[string]float64 }

func (ta *tally) add(key string, inc, slack float64) {
	if ta.inc == nil {
		ta.inc, ta.slack = map[string]float64{}, map[string]float64{}
	}
	ta.inc[key] += inc
	ta.slack[key] += slack
}

// addEntry adds an entry's increments between two reads: bytes under
// read_bytes and write_bytes, other operations under prefix+name.
func (ta *tally) addEntry(prefix string, before, after map[string]counter) {
	for name, c := range after {
		d := c.samples - before[name].samples
		switch {
		case name == "read_bytes" || name == "write_bytes":
			per := 0.0
			if c.samples > 0 {
				per = float64(c.sum / c.samples)
			}
			ta.add(name, float64(c.sum-before[name].sum), per)
		default:
			ta.add(prefix+name, float64(d), 1)
		}
	}
}

// check compares the increments over dt with the true rates.
func (ta *tally) check(t *testing.T, what string, truth map[string]float64, dt float64) {
	t.Helper()
	keys := map[string]bool{}
	for k := range ta.inc {
		keys[k] = true
	}
	for k := range truth {
		keys[k] = true
	}
	for k := range keys {
		got, want := ta.inc[k]/dt, truth[k]
		if math.Abs(got-want) > ta.slack[k]/dt+1e-9*want {
			t.Errorf("%s %s: %.6g/s in job_stats, truth %.6g/s (rounding allows %.3g)", what, k, got, want, ta.slack[k]/dt)
		}
	}
}

func ratesTruth(r *FleetRates) map[string]float64 {
	if r == nil {
		return nil
	}
	m := map[string]float64{"read_bytes": r.ReadBytesPerSecond, "write_bytes": r.WriteBytesPerSecond}
	for component, ops := range r.OperationsPerSecond {
		for name, v := range ops {
			m[component+"."+name] = v
		}
	}
	return m
}

func targetTruth(r *FleetTargetTruth) map[string]float64 {
	if r == nil {
		return nil
	}
	m := map[string]float64{"read_bytes": r.ReadBytesPerSecond, "write_bytes": r.WriteBytesPerSecond}
	for name, v := range r.OperationsPerSecond {
		m[r.Component+"."+name] = v
	}
	return m
}

// jobOf reads the jobid and uid in a raw job_id of jobid_name %j:%u:%H,
// or exe.uid for processes on login nodes.
func jobOf(raw string) (jobid, uid string) {
	if parts := strings.Split(raw, ":"); len(parts) == 3 {
		jobid = parts[0]
		if jobid == "" {
			jobid = "_nojob"
		}
		return jobid, parts[1]
	}
	if i := strings.LastIndexByte(raw, '.'); i > 0 {
		return "_nojob", raw[i+1:]
	}
	return "", ""
}

// The job_stats of every server, read a day apart, grow by what the
// truth says, per target, per job and per user: a job's traffic summed
// over the targets of every server is the job's truth.
func TestFleetTruthFromJobStats(t *testing.T) {
	now := time.Unix(1.8e9, 0)
	f := NewFleet(FleetConfig{Seed: 4, OSS: 3, OSTsPerOSS: 3, MDTs: 2, Jobs: 600, HotJobs: 0.05, Now: func() time.Time { return now }})
	truth := f.Truth()
	before := readSite(t, f)
	const dt = 86400.0
	now = now.Add(dt * time.Second)
	after := readSite(t, f)

	if len(after.server) != len(truth.Targets) || len(after.server) != 2+3*3 {
		t.Errorf("%d targets in job_stats, %d in the truth, want 11", len(after.server), len(truth.Targets))
	}
	for target, srv := range after.server {
		tt := truth.Targets[target]
		if tt == nil || tt.Server != srv || tt.Component != lctl.TargetComponent(target) {
			t.Errorf("%s on %s: truth %+v", target, srv, tt)
		}
	}
	if len(after.entries) != len(before.entries) {
		t.Fatalf("%d entries, then %d: static jobs keep theirs", len(before.entries), len(after.entries))
	}
	targets, jobs, uids := map[string]*tally{}, map[string]*tally{}, map[string]*tally{}
	get := func(m map[string]*tally, k string) *tally {
		if m[k] == nil {
			m[k] = &tally{}
		}
		return m[k]
	}
	for key, ops := range after.entries {
		target, raw := key[0], key[1]
		component := lctl.TargetComponent(target) + "."
		jobid, uid := jobOf(raw)
		if jobid == "" {
			t.Fatalf("%s: unexpected job_id %q", target, raw)
		}
		for _, ta := range []*tally{get(targets, target), get(jobs, jobid), get(uids, uid)} {
			ta.addEntry(component, before.entries[key], ops)
		}
	}
	compare := func(what string, tallies map[string]*tally, truthOf func(string) map[string]float64, n int) {
		if len(tallies) != n {
			t.Errorf("%d %ss in job_stats, %d in the truth", len(tallies), what, n)
		}
		for k, ta := range tallies {
			want := truthOf(k)
			if want == nil {
				t.Errorf("%s %s is not in the truth", what, k)
				continue
			}
			ta.check(t, what+" "+k, want, dt)
		}
	}
	compare("target", targets, func(k string) map[string]float64 { return targetTruth(truth.Targets[k]) }, len(truth.Targets))
	compare("job", jobs, func(k string) map[string]float64 { return ratesTruth(truth.Jobs[k]) }, len(truth.Jobs))
	compare("uid", uids, func(k string) map[string]float64 { return ratesTruth(truth.UIDs[k]) }, len(truth.UIDs))
	checkTruthSums(t, truth)
}

// The truth adds up: the site's bytes are the same summed over targets,
// jobs or users.
func checkTruthSums(t *testing.T, truth FleetTruth) {
	t.Helper()
	var sums [3][2]float64
	for _, r := range truth.Targets {
		sums[0][0] += r.ReadBytesPerSecond
		sums[0][1] += r.WriteBytesPerSecond
	}
	for i, m := range []map[string]*FleetRates{truth.Jobs, truth.UIDs} {
		for _, r := range m {
			sums[i+1][0] += r.ReadBytesPerSecond
			sums[i+1][1] += r.WriteBytesPerSecond
		}
	}
	for i := 1; i < 3; i++ {
		for k := range 2 {
			if math.Abs(sums[i][k]-sums[0][k]) > 1e-9*sums[0][k] {
				t.Errorf("site total %d: %v summed over targets, jobs, users", k, sums)
			}
		}
	}
	if sums[0][1] == 0 {
		t.Error("the site writes nothing")
	}
}

// A hot job's files are striped over every OST: about HotJobs of the
// jobs are on all of them, and none without hot jobs (ordinary jobs
// stripe over at most 4).
func TestFleetHotJobs(t *testing.T) {
	for _, c := range []struct {
		hot      float64
		min, max int
	}{{0.05, 15, 50}, {-1, 0, 0}} {
		f := NewFleet(FleetConfig{Seed: 9, OSS: 3, OSTsPerOSS: 3, Jobs: 600, HotJobs: c.hot})
		osts := map[string]int{}
		for key := range readSite(t, f).entries {
			if strings.Contains(key[0], "-OST") {
				osts[key[1]]++
			}
		}
		everywhere := 0
		for _, n := range osts {
			if n == 9 {
				everywhere++
			}
		}
		if everywhere < c.min || everywhere > c.max {
			t.Errorf("hot jobs %g: %d of %d jobs on every OST, want %d to %d", c.hot, everywhere, len(osts), c.min, c.max)
		}
	}
	if got := NewFleet(FleetConfig{}).sim.cfg.WideStripe; got != 0.01 {
		t.Errorf("default hot jobs %g, want 0.01", got)
	}
}

// Truth does not change with time: the fleet's jobs are static.
func TestFleetTruthStatic(t *testing.T) {
	now := time.Unix(1.8e9, 0)
	f := NewFleet(FleetConfig{Seed: 1, OSS: 2, Jobs: 100, Now: func() time.Time { return now }})
	a, _ := json.Marshal(f.Truth())
	now = now.Add(time.Hour)
	if b, _ := json.Marshal(f.Truth()); !bytes.Equal(a, b) {
		t.Error("truth changed in an hour")
	}
}

// Each OSS's RPC services (ost.OSS.*) and LDLM services count the traffic
// of its own targets: summed over the OSS, the RPCs are the site's, not
// the site's once per server.
func TestFleetServicesPerServer(t *testing.T) {
	now := time.Unix(1.8e9, 0)
	f := NewFleet(FleetConfig{OSS: 3, OSTsPerOSS: 2, Jobs: 300, Now: func() time.Time { return now }})
	rpcs := func(text string, name string) uint64 {
		m := regexp.MustCompile(`(?m)^` + name + `\s+(\d+) samples`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %s line in\n%s", name, text)
		}
		var n uint64
		fmt.Sscan(m[1], &n)
		return n
	}
	var site bytes.Buffer
	if err := f.sim.WriteParams(&site, now, "ost.OSS.ost_io.stats"); err != nil {
		t.Fatal(err)
	}
	want := rpcs(site.String(), "ost_write")
	var sum, largest uint64
	for _, srv := range f.Servers()[1:] {
		rc, err := srv.Source.GetParam(context.Background(), []string{"ost.OSS.ost_io.stats"})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		n := rpcs(b.String(), "ost_write")
		sum += n
		largest = max(largest, n)
	}
	// Each server's count is floored on its own: at most one apart per server.
	if d := int64(sum) - int64(want); d > 0 || d < -3 {
		t.Errorf("ost_write over the OSS: %d, the site's: %d", sum, want)
	}
	if largest == want {
		t.Errorf("one OSS counts the whole site's ost_write (%d)", want)
	}
}

// jobStatsText writes down every entry a server's job_stats hand a
// handler, in order.
type jobStatsText struct{ out strings.Builder }

func (h *jobStatsText) Job(js *lctl.JobStat) {
	fmt.Fprintf(&h.out, "%q %v %v %d", js.JobID, js.SnapshotTime, js.StartTime, js.Malformed)
	for _, o := range js.Ops {
		fmt.Fprintf(&h.out, " %s=%d/%d", o.Op, o.Samples, o.Sum)
	}
	h.out.WriteByte('\n')
}

func (h *jobStatsText) End(complete bool, st lctl.SectionStats) {
	fmt.Fprintf(&h.out, "end %v %+v\n", complete, st)
}

// readJobStats reads a server's job_stats with the sequential parser or,
// concurrent, the one the exporter runs.
func readJobStats(src lctl.Source, concurrent bool) (string, error) {
	out, err := src.GetParam(context.Background(), []string{"*.*.job_stats"})
	if err != nil {
		return "", err
	}
	var h jobStatsText
	err = lctl.Scan(out, "", func(param string) lctl.SectionParser {
		fmt.Fprintf(&h.out, "param %s\n", param)
		if concurrent {
			return lctl.NewConcurrentJobStatsParser(&h)
		}
		return lctl.NewJobStatsParser(&h)
	})
	return h.out.String(), errors.Join(err, out.Close())
}

// A fleet's servers read at once, in one process, as the demo's fleet
// and deploy's TestFleet do, each read exactly what it printed: Scan's
// read buffers, shared by the Scans, once carried one server's output into
// another's numbers (counters up to 10⁵ times the truth in TestFleet).
// The clock stands still, so that every read prints the same text.
func TestFleetReadAtOnce(t *testing.T) {
	now := time.Unix(1.8e9, 0)
	f := NewFleet(FleetConfig{Seed: 7, OSS: 8, OSTsPerOSS: 2, Jobs: 5000, Now: func() time.Time { return now }})
	servers := f.Servers()
	want := make([]string, len(servers))
	for i, srv := range servers {
		text, err := readJobStats(srv.Source, false)
		if err != nil {
			t.Fatalf("%s: %v", srv.Name, err)
		}
		want[i] = text
	}
	for round := range 5 {
		got := make([]string, len(servers))
		errs := make([]error, len(servers))
		var wg sync.WaitGroup
		for i, srv := range servers {
			wg.Go(func() { got[i], errs[i] = readJobStats(srv.Source, true) })
		}
		wg.Wait()
		for i, srv := range servers {
			if errs[i] != nil {
				t.Errorf("round %d, %s: %v", round, srv.Name, errs[i])
			} else if got[i] != want[i] {
				t.Errorf("round %d, %s read at once with the others: not what it printed\n%s", round, srv.Name, golden.FirstDifference(want[i], got[i]))
			}
		}
	}
}
