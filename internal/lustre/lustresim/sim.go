// Package lustresim simulates a Lustre server's job_stats: MDTs and OSTs,
// jobs arriving and leaving, counters advancing with time at known rates,
// entries cleaned up (and their counters restarted) when a job goes idle,
// and job_ids of every shape production servers print, in the proportions
// of docs/jobids.md. It is an lctl.Source, so --demo and
// the tests run the exporter's whole path; benchmarks use it to write the
// text of tens of thousands of jobs.
package lustresim

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// Config describes a simulated server.
type Config struct {
	Seed   uint64
	FSName string
	MDTs   int
	OSTs   int
	// Jobs is the number of jobs (batch jobs and processes outside jobs)
	// present at any time.
	Jobs int
	// Static keeps the same Jobs jobs forever, always active, instead of
	// letting them arrive and leave (benchmarks).
	Static bool
	// Cleanup is Lustre's job_cleanup_interval: an entry idle for longer
	// is dropped, and its counters restart when the job comes back.
	Cleanup time.Duration
	// TargetCleanup sets the job_cleanup_interval of single targets, by
	// name (it is a parameter of each target in Lustre). One shorter than
	// the scrape interval makes entries vanish between two scrapes, with
	// what they counted since the last one: jobstats coverage below 1.
	TargetCleanup map[string]time.Duration
	// Coverage keeps, per target, what its job_stats showed to whoever read
	// them and what the target counted meanwhile (Sim.Coverage): the truth
	// of the share of a target's traffic a reader of job_stats can see.
	Coverage bool
	// Dialect is the Lustre version whose output is imitated.
	Dialect Dialect
	// JobIDName is what get_param jobid_name prints.
	JobIDName string
	// Special adds the demo's fixed jobs: one whose ids churn and whose
	// counters restart, one storming the MDT (special.go).
	Special bool
	// WideStripe is the fraction of jobs whose files are striped over
	// every OST (lfs setstripe -c -1): the few big jobs a site's OSTs all
	// see, beside the many striped over 1, 2 or 4. At 0 nothing more is
	// drawn, so that a seed keeps giving the jobs it always gave.
	WideStripe float64
	// ClientMount mounts the file system on the server itself, as a
	// small site's combined server often has it (an admin's shell, a
	// changelog consumer): llite.<fsname>-<instance>.stats, with the
	// few metadata requests of such a mount. Without it, the llite
	// collector's pattern matches nothing and every run is partial.
	ClientMount bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Dialect selects an output format.
type Dialect int

const (
	// Lustre215 prints what 2.14 to 2.16 print: secs.nsecs times,
	// start_time and elapsed_time, usecs latencies, sumsq, histograms,
	// job_ids with a colon in double quotes.
	Lustre215 Dialect = iota
	// Lustre212 prints what 2.10 to 2.12 print: integer snapshot times,
	// "unit: reqs" counts, no quotes.
	Lustre212
)

// DemoConfig is the server --demo shows: 2 MDTs, 8 OSTs, a few hundred
// jobs, entries cleaned after two idle minutes, except on the last OST,
// where job_cleanup_interval was cut to one second: a checkpointing job
// writing there alone, in bursts (special.go), is mostly cleaned up between
// two scrapes, and that OST's jobstats coverage is well below 1.
func DemoConfig() Config {
	return Config{Seed: 1, FSName: "demo", MDTs: 2, OSTs: 8, Jobs: 300, Cleanup: 2 * time.Minute,
		TargetCleanup: map[string]time.Duration{"demo-OST0007": time.Second},
		JobIDName:     "%j:%u:%H", Special: true, Coverage: true, ClientMount: true}
}

// Sim is a simulated server.
type Sim struct {
	cfg    Config
	origin float64 // Unix seconds; job arrivals are laid out from here

	// cleanup is the job_cleanup_interval of each target in seconds, by
	// index; maxCleanup the longest.
	mdtCleanup, ostCleanup []float64
	maxCleanup             float64

	mu      sync.Mutex
	epochs  map[int64][]*Job
	special []*Job // the demo's fixed jobs (special.go)

	totals   totalsState   // the targets' own counters (totals.go)
	coverage coverageState // what readers of job_stats saw (coverage.go)
}

// New returns a simulated server.
func New(cfg Config) *Sim {
	if cfg.FSName == "" {
		cfg.FSName = "sim"
	}
	if cfg.Cleanup == 0 {
		cfg.Cleanup = 10 * time.Minute
	}
	if cfg.JobIDName == "" {
		cfg.JobIDName = "%j:%u:%H"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sim{cfg: cfg, origin: 1.7e9, epochs: map[int64][]*Job{}}
	s.mdtCleanup, s.ostCleanup = make([]float64, cfg.MDTs), make([]float64, cfg.OSTs)
	for i := range s.mdtCleanup {
		s.mdtCleanup[i] = s.cleanupOf(s.MDTName(i))
	}
	for i := range s.ostCleanup {
		s.ostCleanup[i] = s.cleanupOf(s.OSTName(i))
	}
	if cfg.Special {
		s.special = s.specialJobs()
	}
	return s
}

var (
	defaultOnce sync.Once
	defaultSim  *Sim
)

// Default returns the demo server, shared by the whole process.
func Default() *Sim {
	defaultOnce.Do(func() { defaultSim = New(DemoConfig()) })
	return defaultSim
}

// cleanupOf returns the job_cleanup_interval of a target, in seconds, and
// keeps the longest.
func (s *Sim) cleanupOf(target string) float64 {
	c := s.cfg.Cleanup
	if tc, ok := s.cfg.TargetCleanup[target]; ok && tc > 0 {
		c = tc
	}
	s.maxCleanup = max(s.maxCleanup, c.Seconds())
	return c.Seconds()
}

// cleanup returns the job_cleanup_interval of an entry's target, in
// seconds.
func (s *Sim) cleanup(e *entry) float64 {
	if e.mdt {
		if e.target < len(s.mdtCleanup) {
			return s.mdtCleanup[e.target]
		}
	} else if e.target < len(s.ostCleanup) {
		return s.ostCleanup[e.target]
	}
	return s.cfg.Cleanup.Seconds()
}

// Config returns the configuration.
func (s *Sim) Config() Config { return s.cfg }

// MDTName and OSTName name targets as Lustre does.
func (s *Sim) MDTName(i int) string { return fmt.Sprintf("%s-MDT%04x", s.cfg.FSName, i) }
func (s *Sim) OSTName(i int) string { return fmt.Sprintf("%s-OST%04x", s.cfg.FSName, i) }

// params lists every parameter the simulated server has, in lctl's order.
func (s *Sim) params() []string {
	p := []string{"jobid_name", "jobid_var"}
	for i := 0; i < s.cfg.MDTs; i++ {
		p = append(p, "mdt."+s.MDTName(i)+".job_stats")
	}
	for i := 0; i < s.cfg.OSTs; i++ {
		p = append(p, "obdfilter."+s.OSTName(i)+".job_stats")
	}
	p = append(p, s.familyParams()...) // families.go
	sort.Strings(p)
	return p
}

// GetParam implements lctl.Source: it prints the parameters matching
// patterns, in pattern order, and, like lctl, exits non-zero (Close) when
// a pattern matches nothing.
func (s *Sim) GetParam(ctx context.Context, patterns []string) (io.ReadCloser, error) {
	return s.getParams(ctx, patterns, s.params(), nil)
}

// getParams is GetParam on a server that has only params (in lctl's
// order): a fleet's servers each print their own part of the file
// system's parameters (fleet.go), and its RPC services count the traffic
// of its own targets (scope; nil: every target).
func (s *Sim) getParams(ctx context.Context, patterns, params []string, scope *targetScope) (io.ReadCloser, error) {
	now := s.cfg.Now()
	var selected []string
	var missing []string
	for _, pat := range patterns {
		found := false
		for _, p := range params {
			if lctl.MatchPattern(pat, p) {
				selected = append(selected, p)
				found = true
			}
		}
		if !found {
			missing = append(missing, pat)
		}
	}
	pr, pw := io.Pipe()
	out := &simOutput{r: pr}
	if len(missing) > 0 {
		msgs := make([]string, len(missing))
		for i, m := range missing {
			msgs[i] = fmt.Sprintf("error: get_param: param_path '%s': No such file or directory", strings.ReplaceAll(m, ".", "/"))
		}
		out.exit = &toolrun.ExitError{Code: 2, Stderr: strings.Join(msgs, "; ")}
	}
	go func() {
		w := newWriter(pw)
		w.scope = scope
		for _, p := range selected {
			if ctx.Err() != nil {
				break
			}
			s.writeParam(w, p, now)
		}
		err := w.flush()
		if err == nil {
			err = ctx.Err()
		}
		pw.CloseWithError(err)
	}()
	return out, nil
}

type simOutput struct {
	r    *io.PipeReader
	exit *toolrun.ExitError
}

func (o *simOutput) Read(p []byte) (int, error) { return o.r.Read(p) }

func (o *simOutput) Close() error {
	o.r.Close()
	if o.exit != nil {
		return o.exit
	}
	return nil
}

// WriteParams writes the get_param text of the parameters matching
// patterns at time now, as lctl would print it.
func (s *Sim) WriteParams(w io.Writer, now time.Time, patterns ...string) error {
	bw := newWriter(w)
	for _, pat := range patterns {
		for _, p := range s.params() {
			if lctl.MatchPattern(pat, p) {
				s.writeParam(bw, p, now)
			}
		}
	}
	return bw.flush()
}

func (s *Sim) writeParam(w *writer, param string, now time.Time) {
	switch {
	case param == "jobid_name":
		w.str("jobid_name=")
		w.str(s.cfg.JobIDName)
		w.nl()
	case param == "jobid_var":
		w.str("jobid_var=SLURM_JOB_ID\n")
	case strings.HasSuffix(param, ".job_stats"):
		w.str(param)
		w.str("=\njob_stats:\n")
		component, target, _ := lctl.JobStatsParam(param)
		idx := targetIndex(target)
		t := unix(now)
		read := s.beginRead(component, target)
		for _, j := range s.jobsAt(t) {
			for _, e := range j.entries {
				if e.mdt != (component == "mdt") || e.target != idx {
					continue
				}
				s.writeEntry(w, j, e, t, read)
			}
		}
		if read != nil {
			read.end(t)
		}
	default:
		s.writeFamilyParam(w, param, now) // families.go
	}
}

func targetIndex(target string) int {
	i := strings.LastIndexAny(target, "TT")
	var n int
	fmt.Sscanf(target[i+1:], "%x", &n)
	return n
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// activeTime is how long the job was doing I/O in [from, to).
func (j *Job) activeTime(from, to float64) float64 {
	from = math.Max(from, j.Arrive)
	to = math.Min(to, j.Leave)
	if to <= from {
		return 0
	}
	if j.Duty >= 1 {
		return to - from
	}
	return j.activeUpTo(to) - j.activeUpTo(from)
}

// activeUpTo is the active time in [Arrive, t).
func (j *Job) activeUpTo(t float64) float64 {
	d := t - j.Arrive
	if d <= 0 {
		return 0
	}
	on := j.Duty * j.Period
	cycles := math.Floor(d / j.Period)
	rest := d - cycles*j.Period
	return cycles*on + math.Min(rest, on)
}

// lastActive returns the last moment ≤ t the job was active, and whether
// it was active at t.
func (j *Job) lastActive(t float64) (float64, bool) {
	if t < j.Arrive {
		return 0, false
	}
	end := math.Min(t, j.Leave)
	if j.Duty >= 1 {
		return end, t < j.Leave
	}
	on := j.Duty * j.Period
	d := end - j.Arrive
	cycles := math.Floor(d / j.Period)
	rest := d - cycles*j.Period
	if rest < on {
		return end, t < j.Leave
	}
	return j.Arrive + cycles*j.Period + on, false
}

// lifetime returns the start of the entry's current lifetime at t, or false
// when Lustre holds no entry for the job at t: before its first I/O, or
// after it was idle for longer than the cleanup interval.
func (s *Sim) lifetime(j *Job, t, cleanup float64) (float64, bool) {
	last, _ := j.lastActive(t)
	if last == 0 || t-last > cleanup {
		return 0, false
	}
	gap := (1 - j.Duty) * j.Period
	if j.Duty >= 1 || gap <= cleanup {
		return j.Arrive, true
	}
	// Every idle gap outlives the cleanup: the entry was created at the
	// start of the latest active phase.
	cycles := math.Floor((last - j.Arrive) / j.Period)
	return j.Arrive + cycles*j.Period, true
}
