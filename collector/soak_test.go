package collector

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// The soak: a simulated server scraped every 30 s for hours of its time
// (-soak.hours; 2 in a plain go test, 24 for the full run:
// go test ./collector -run TestSoak -soak.hours=24 -v), with jobs coming
// and going by the thousand, idle entries cleaned up and restarted, broken
// job_ids, lctl failing or hanging past its timeout, and the exporter
// restarted every few hours. At every scrape it checks, against the
// job_stats the simulator printed:
//
//   - no per-job counter goes down within its lifetime (its created
//     timestamp);
//   - per target and counter, the series grew by exactly the increments of
//     the job_stats (the δ rule, with start_time telling restarts): every
//     increment exported once, none twice;
//   - per target, the per-target totals of the per-job series
//     (lustre_jobstats_*_total) grew by what the simulator's job_stats
//     showed since the last read, and the target's own counters
//     (lustre_*_bytes_total, lustre_stats_total) by what it counted: one
//     OST cleans up its entries after 10 s, less than the scrape interval,
//     so that part of its traffic is cleaned up between two scrapes, and
//     its jobstats coverage is below 1 while the others' is 1;
//   - memory stays bounded: the heap after the last scrape is within a
//     factor of the heap after the first hour.
var soakHours = flag.Float64("soak.hours", 2, "simulated hours of TestSoak")

// soakSource prints the simulator's job_stats at the soak's clock, fails,
// or hangs until the run's deadline, as told.
type soakSource struct {
	sim *lustresim.Sim

	mu        sync.Mutex
	now       time.Time
	nowNanos  atomic.Int64 // now, for the exporter's clock (GetParam may hold mu)
	mode      string       // "", "fail" or "hang"
	delivered []byte       // the text of the last successful call
	calls     int
}

// clock returns the simulated time of the current scrape.
func (s *soakSource) clock() time.Time { return time.Unix(0, s.nowNanos.Load()) }

func (s *soakSource) GetParam(ctx context.Context, patterns []string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.delivered = nil
	switch s.mode {
	case "fail":
		return nil, errors.New("lctl: simulated failure")
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var buf bytes.Buffer
	if err := s.sim.WriteParams(&buf, s.now, patterns...); err != nil {
		return nil, err
	}
	s.delivered = buf.Bytes()
	return io.NopCloser(bytes.NewReader(s.delivered)), nil
}

// soakTruth applies the δ rule to the job_stats the exporter was given.
type soakTruth struct {
	prev map[string]map[string]*lctl.JobStat // target → job_id → last entry
	ids  map[string]bool                     // every raw id ever printed
}

// increments returns the increments of text's entries over the last
// text's, by "family target [operation]" in the exporter's units.
func (s *soakTruth) increments(t *testing.T, text []byte) map[string]uint64 {
	t.Helper()
	inc := map[string]uint64{}
	err := lctl.Scan(bytes.NewReader(text), "", func(param string) lctl.SectionParser {
		_, target, ok := lctl.JobStatsParam(param)
		if !ok {
			return nil
		}
		return lctl.NewJobStatsParser(&soakHandler{s: s, target: target, inc: inc, now: map[string]*lctl.JobStat{}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return inc
}

type soakHandler struct {
	s      *soakTruth
	target string
	inc    map[string]uint64
	now    map[string]*lctl.JobStat
}

func (h *soakHandler) Job(js *lctl.JobStat) {
	c := *js
	c.Ops = append([]lctl.OpStat(nil), js.Ops...)
	id := string(js.JobID)
	h.now[id] = &c
	h.s.ids[id] = true
	p := h.s.prev[h.target][id]
	if p != nil && p.StartTime != c.StartTime {
		p = nil // restarted
	}
	for _, op := range c.Ops {
		var last lctl.OpStat
		if p != nil {
			for _, o := range p.Ops {
				if o.Op == op.Op {
					last = o
				}
			}
		}
		delta := func(v, w uint64) uint64 {
			if v >= w {
				return v - w
			}
			return v
		}
		samples, sum := delta(op.Samples, last.Samples), delta(op.Sum, last.Sum)
		switch op.Op {
		case "read_bytes", "write_bytes":
			dir := strings.TrimSuffix(op.Op, "_bytes")
			h.inc[fmt.Sprintf("lustre_job_%s_samples %s", dir, h.target)] += samples
			if op.HasSum {
				h.inc[fmt.Sprintf("lustre_job_%s_bytes %s", dir, h.target)] += sum
			}
		default:
			h.inc[fmt.Sprintf("lustre_job_stats %s %s", h.target, op.Op)] += samples
		}
		if op.Unit == lctl.UnitUsecs && op.HasSum {
			h.inc[fmt.Sprintf("lustre_job_operation_seconds %s %s", h.target, op.Op)] += sum
		}
	}
}

func (h *soakHandler) End(complete bool, _ lctl.SectionStats) {
	if !complete {
		panic("the simulator's output is always whole")
	}
	h.s.prev[h.target] = h.now // an entry not printed is gone at the source
}

// soakSeries is what the soak remembers of an exported series lifetime.
type soakSeries struct {
	value uint64 // in the family's integer unit (microseconds for seconds)
	seen  int    // the scrape it was last exported in
}

// perJobSample reads a line of a per-job family in OpenMetrics: the
// family, "total" or "created", the labels and the value.
func perJobSample(line string) (family, kind, labels, value string, ok bool) {
	if !strings.HasPrefix(line, "lustre_job_") {
		return
	}
	brace := strings.IndexByte(line, '{')
	end := strings.LastIndex(line, "} ")
	if brace < 0 || end < brace {
		return
	}
	name := line[:brace]
	switch {
	case strings.HasSuffix(name, "_total"):
		family, kind = strings.TrimSuffix(name, "_total"), "total"
	case strings.HasSuffix(name, "_created"):
		family, kind = strings.TrimSuffix(name, "_created"), "created"
	default:
		return
	}
	switch family {
	case "lustre_job_read_bytes", "lustre_job_write_bytes", "lustre_job_read_samples", "lustre_job_write_samples",
		"lustre_job_stats", "lustre_job_operation_seconds":
	default:
		return
	}
	return family, kind, line[brace+1 : end], line[end+2:], true
}

// labelValue returns the value of label name in labels (name="value",…),
// for values without quotes in them.
func labelValue(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 || (i > 0 && labels[i-1] != ',') {
		return ""
	}
	rest := labels[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the soak drives simulated hours through the exporter (a minute or more)")
	}
	hours := *soakHours
	steps := int(hours * 120)
	restartEvery := 6 * 120 // scrapes: 6 simulated hours
	if hours < 12 {
		restartEvery = 120 // an hour: the short soak restarts once
	}
	onlyCollectors(t, "jobstats", "ost_stats", "mdt_stats")
	setFlag(t, &lctlTimeout, 100*time.Millisecond)
	setFlag(t, &lctlTimeoutOffset, 10*time.Millisecond)

	const shortCleanup = "soak-OST0001"
	sim := lustresim.New(lustresim.Config{Seed: 11, FSName: "soak", MDTs: 1, OSTs: 2, Jobs: 400,
		Cleanup: 90 * time.Second, TargetCleanup: map[string]time.Duration{shortCleanup: 10 * time.Second},
		JobIDName: "%j:%u:%H", Special: true, Coverage: true})
	rng := rand.New(rand.NewPCG(11, 12))
	t0 := time.Unix(1_760_000_000, 0)

	var (
		src       *soakSource
		r         *Registry
		truth     *soakTruth
		lifetimes = map[string]*soakSeries{} // family+labels+created → last value
		restarts  int
		failures  int
		hangs     int
		checked   int
		newSeries int // series lifetimes
		jobsSeen  int // distinct raw ids, summed over the exporter's lives
		heapHour  uint64
		heapPeak  uint64
		heapLast  uint64
		// Per target: the exporter's per-target totals and counters and
		// the simulator's read at the last successful scrape of this
		// exporter's life, and what the soak saw and counted in all.
		lastTotals map[string]targetTraffic
		lastReads  map[string]lustresim.CoverageRead
		seenAll    = map[string]uint64{}
		countedAll = map[string]uint64{}
	)
	start := func() {
		if truth != nil {
			jobsSeen += len(truth.ids)
		}
		src = &soakSource{sim: sim}
		var err error
		// The exporter's clock is the simulated server's: its TTL, created
		// timestamps and intervals run in simulated time, as they would
		// on a server (with the wall clock, 15 minutes would never pass).
		r, err = NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: src, Lnetctl: testLnetctl, Now: src.clock})
		if err != nil {
			t.Fatal(err)
		}
		truth = &soakTruth{prev: map[string]map[string]*lctl.JobStat{}, ids: map[string]bool{}}
		lastTotals, lastReads = nil, nil
	}
	start()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	hourStart := time.Now()
	for step := range steps {
		if step > 0 && step%restartEvery == 0 {
			start() // the exporter restarts: a new tracker, nothing kept
			restarts++
		}
		now := t0.Add(time.Duration(step) * 30 * time.Second)
		src.mu.Lock()
		src.now, src.mode = now, ""
		src.nowNanos.Store(now.UnixNano())
		switch x := rng.IntN(100); {
		case x < 2:
			src.mode = "fail"
			failures++
		case x < 3:
			src.mode = "hang"
			hangs++
		}
		src.mu.Unlock()

		s := r.NewScrape(context.Background())
		reg := prometheus.NewRegistry()
		reg.MustRegister(s)
		mfs, _ := reg.Gather() // a failed run fails the collector, not the test
		var out bytes.Buffer
		if err := exposition.WriteResponse(&out, expfmt.FmtOpenMetrics_1_0_0, mfs, s.Streams(), exposition.WithCreatedSamples()); err != nil {
			t.Fatal(err)
		}
		s.Close()

		src.mu.Lock()
		delivered := src.delivered
		src.mu.Unlock()
		want := map[string]uint64{}
		if delivered != nil {
			want = truth.increments(t, delivered)
		}

		// The exported series, by lifetime.
		type sample struct {
			value   uint64
			created string
		}
		now2 := map[string]*sample{}
		for _, line := range strings.Split(out.String(), "\n") {
			family, kind, labels, value, ok := perJobSample(line)
			if !ok {
				continue
			}
			key := family + "{" + labels + "}"
			sm := now2[key]
			if sm == nil {
				sm = &sample{}
				now2[key] = sm
			}
			if kind == "created" {
				sm.created = value
				continue
			}
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if family == "lustre_job_operation_seconds" {
				v *= 1e6
			}
			sm.value = uint64(math.Round(v))
		}
		got := map[string]uint64{}
		for key, sm := range now2 {
			life := key + " " + sm.created
			family, labels, _ := strings.Cut(key, "{")
			k := family + " " + labelValue(labels, "target")
			if op := labelValue(labels, "operation"); op != "" {
				k += " " + op
			}
			last := lifetimes[life]
			if last == nil {
				last = &soakSeries{}
				lifetimes[life] = last
				newSeries++
			}
			if sm.value < last.value {
				t.Fatalf("scrape %d (%s): %s went down within its lifetime (created %s), from %d to %d",
					step, now.UTC().Format(time.TimeOnly), key, sm.created, last.value, sm.value)
			}
			got[k] += sm.value - last.value
			last.value, last.seen = sm.value, step
		}
		for k, w := range want {
			if got[k] != w {
				t.Fatalf("scrape %d: %s: the series grew by %d, job_stats by %d", step, k, got[k], w)
			}
		}
		for k, g := range got {
			if want[k] != g {
				t.Fatalf("scrape %d: %s: the series grew by %d, job_stats by %d", step, k, g, want[k])
			}
		}
		if delivered != nil {
			totals := perTargetTraffic(t, out.String())
			reads := map[string]lustresim.CoverageRead{}
			for target, rs := range sim.Coverage() {
				if r := rs[len(rs)-1]; r.Time == float64(now.Unix()) {
					reads[target] = r
				}
			}
			if len(reads) != 3 || len(totals) != 3 {
				t.Fatalf("scrape %d: %d targets read by the simulator, %d exported; want 3", step, len(reads), len(totals))
			}
			for target, r := range reads {
				if lastTotals == nil {
					break // the exporter's first scrape: its totals start here
				}
				got, prev, last := totals[target], lastTotals[target], lastReads[target]
				seen, counted := r.Seen.Bytes-last.Seen.Bytes, r.Counted.Bytes-last.Counted.Bytes
				gotSeen, gotCounted := got.jobBytes-prev.jobBytes, got.bytes-prev.bytes
				if strings.Contains(target, "-MDT") {
					seen, counted = r.Seen.Ops-last.Seen.Ops, r.Counted.Ops-last.Counted.Ops
					gotSeen, gotCounted = got.jobOps-prev.jobOps, got.ops-prev.ops
				}
				if gotSeen != float64(seen) {
					t.Fatalf("scrape %d: %s: lustre_jobstats totals grew by %.0f, the simulator's job_stats showed %d", step, target, gotSeen, seen)
				}
				// The targets' counters are exposed as float64: beyond 2^53
				// (weeks of bytes), exact to a few units in the last place.
				if math.Abs(gotCounted-float64(counted)) > 4*float64(r.Counted.Bytes+r.Counted.Ops)/(1<<53) {
					t.Fatalf("scrape %d: %s: the target's counters grew by %.0f, the simulator counted %d", step, target, gotCounted, counted)
				}
				seenAll[target] += seen
				countedAll[target] += counted
			}
			// After a failed run, the next increase spans both intervals,
			// as the simulator's next read does.
			lastTotals, lastReads = totals, reads
		}
		checked++
		// Lifetimes not exported for an hour are done with: the TTL
		// (15 minutes) has forgotten their identities, which come back
		// with a new created timestamp. The soak's own state stays
		// bounded, so that the heap measures the exporter's.
		if step%120 == 0 {
			for life, ls := range lifetimes {
				if step-ls.seen > 120 {
					delete(lifetimes, life)
				}
			}
		}
		if testing.Verbose() && step%120 == 119 {
			t.Logf("soak: hour %d took %v; %d series lifetimes kept", step/120+1, time.Since(hourStart).Round(time.Millisecond), len(lifetimes))
			hourStart = time.Now()
		}
		if step == 119 || step == steps-1 || (step > 0 && step%360 == 0) {
			h := heap()
			heapPeak = max(heapPeak, h)
			if step == 119 {
				heapHour = h
			}
			if step == steps-1 {
				heapLast = h
			}
			if step == steps-1 && heapHour > 0 && h > 3*heapHour {
				t.Errorf("heap after the last scrape %d MB, more than 3× the %d MB after the first hour", h>>20, heapHour>>20)
			}
		}
	}
	jobsSeen += len(truth.ids)
	var coverage []string
	for _, target := range []string{"soak-MDT0000", "soak-OST0000", shortCleanup} {
		c := float64(seenAll[target]) / float64(countedAll[target])
		coverage = append(coverage, fmt.Sprintf("%s %.4f", target, c))
		switch {
		case countedAll[target] == 0:
			t.Errorf("%s counted nothing", target)
		case target == shortCleanup && c > 0.99:
			t.Errorf("%s (job_cleanup_interval 10 s, scrapes every 30 s): coverage %.4f, want some traffic cleaned up between scrapes", target, c)
		case target != shortCleanup && (c < 0.9999 || c > 1.0001):
			t.Errorf("%s (job_cleanup_interval 90 s, scrapes every 30 s): coverage %.6f, want 1", target, c)
		}
	}
	t.Logf("soak: jobstats coverage (what job_stats showed the exporter over what the targets counted): %s", strings.Join(coverage, ", "))
	t.Logf("soak: %g simulated hours, %d scrapes checked exactly (%d lctl failures, %d lctl hangs killed at the timeout, %d exporter restarts); %d raw job_ids (counted anew after each restart) and %d per-job series lifetimes; OSTs moved %.1f TB between scrapes, %.1f TB of it seen in job_stats; heap after the first hour %.1f MB, peak %.1f MB, after the last scrape %.1f MB",
		hours, checked, failures, hangs, restarts, jobsSeen, newSeries, float64(countedAll["soak-OST0000"]+countedAll[shortCleanup])/1e12,
		float64(seenAll["soak-OST0000"]+seenAll[shortCleanup])/1e12, float64(heapHour)/1e6, float64(heapPeak)/1e6, float64(heapLast)/1e6)
}

// targetTraffic is what one scrape exports of a target's traffic: the
// per-target totals of its per-job series (bytes read and written, other
// operations) and the target's own counters.
type targetTraffic struct {
	jobBytes, jobOps float64
	bytes, ops       float64
}

// perTargetTraffic reads the per-target families of a scrape in
// OpenMetrics, by target.
func perTargetTraffic(t *testing.T, text string) map[string]targetTraffic {
	t.Helper()
	out := map[string]targetTraffic{}
	for _, line := range strings.Split(text, "\n") {
		brace := strings.IndexByte(line, '{')
		end := strings.LastIndex(line, "} ")
		if brace < 0 || end < brace {
			continue
		}
		name, labels := line[:brace], line[brace+1:end]
		target := labelValue(labels, "target")
		op := labelValue(labels, "operation")
		v, err := strconv.ParseFloat(line[end+2:], 64)
		if err != nil || target == "" {
			continue
		}
		tt := out[target]
		switch {
		case name == "lustre_jobstats_read_bytes_total" || name == "lustre_jobstats_write_bytes_total":
			tt.jobBytes += v
		case name == "lustre_jobstats_stats_total":
			tt.jobOps += v
		case name == "lustre_read_bytes_total" || name == "lustre_write_bytes_total":
			tt.bytes += v
		case name == "lustre_stats_total" && labelValue(labels, "component") == "mdt" && op != "":
			tt.ops += v
		default:
			continue
		}
		out[target] = tt
	}
	return out
}
