package jobstats

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// Conservation: whatever the job_ids, resets, churn, series cap, label
// projection and TTL, the per-job series of a target account for every
// increment its job_stats counted, once. After each run, the increase of
// the sum over the exported series (a series new to the View counts from
// zero, as Prometheus' increase() of a new series would with its created
// timestamp; a series gone counts nothing) equals, per target and counter,
// the sum of the raw increments by the δ rule of seeds/rates-theory.md:
// v − v′ when the job_id was printed at the run before with the same
// start_time and v ≥ v′, else v (at first sight, the whole value). A
// job_id printed more than once for a target (a damaged output, in any
// order) counts the sum of its entries by the rule of internal/mechanism/rates/dups.go, which
// never counts more than the entries' own increments and equals them while
// every entry grows.

// simJob is one raw job_stats entry of the property test's server.
type simJob struct {
	id    string
	start float64
	vals  [len(simOps)][2]uint64 // samples, sum
	// print is how the id is printed: quoted, bare or with a trailing
	// blank, which the parser reads alike.
	print int
}

// keyState is what the rule of internal/mechanism/rates/dups.go keeps of one job_id of a
// target: the sum of its entries in its last output, their start times and
// how many there were.
type keyState struct {
	sums    [len(simOps)][2]uint64
	lo, hi  float64
	entries int
}

// dupStats tells what the property test's histories exercised.
var dupStats struct {
	dupRuns, swaps, dupExact, dupShort, cutFirst int
}

// simOps are the operations the property test's server prints: bytes,
// usecs, and one without a sum.
var simOps = [...]struct{ name, unit string }{
	{"read_bytes", "bytes"}, {"write_bytes", "bytes"}, {"getattr", "usecs"}, {"punch", "reqs"},
}

func (j *simJob) text(now float64, withStart bool) string {
	var b strings.Builder
	id := fmt.Sprintf("\"%s\"", j.id)
	if bare(j.id) {
		id = []string{id, j.id, j.id + " "}[j.print]
	}
	fmt.Fprintf(&b, "- job_id:          %s\n  snapshot_time:   %.9f secs.nsecs\n", id, now)
	if withStart {
		fmt.Fprintf(&b, "  start_time:      %.9f secs.nsecs\n", j.start)
	}
	for i, op := range simOps {
		if op.unit == "reqs" {
			fmt.Fprintf(&b, "  %-16s { samples: %d, unit: reqs }\n", op.name+":", j.vals[i][0])
			continue
		}
		fmt.Fprintf(&b, "  %-16s { samples: %d, unit: %s, min: 1, max: 1, sum: %d, sumsq: 0 }\n", op.name+":", j.vals[i][0], op.unit, j.vals[i][1])
	}
	return b.String()
}

// bare tells an id that reads the same unquoted.
func bare(id string) bool {
	if id == "" {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == ':' || c == '.') {
			return false
		}
	}
	return true
}

// brokenID returns a job_id of one of the shapes seeds/lustre-jobstats-
// methods.md lists, for job n of user uid on host: well-formed most of the
// time, else truncated, fqdn, overwritten, extended or garbage.
func brokenID(r *rand.Rand, n, uid int, host string) string {
	good := fmt.Sprintf("%d:%d:%s", n, uid, host)
	switch r.IntN(12) {
	case 0:
		return good[:1+r.IntN(len(good)-1)] // truncated anywhere
	case 1:
		return good + ".cluster.example.org" // fqdn
	case 2:
		b := []byte(good)
		b[r.IntN(len(b))] = ':' // a character overwritten by a separator
		return string(b)
	case 3:
		return fmt.Sprintf("%d%d", n, r.IntN(10)) // a job field one longer
	case 4:
		return fmt.Sprintf("%s.%d", []string{"bash", "cp", "lfs"}[r.IntN(3)], uid) // outside a job
	case 5:
		return []string{"", "\x01bad", "job:\xff:x", "a:b:c:d:e", ":::"}[r.IntN(5)]
	}
	return good
}

type convKey struct {
	target string
	key    *Key   // the identity: a new one is a new series
	slot   string // op name + " samples" / " sum"
}

func TestConservationProperty(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 8
	}
	dupStats = struct{ dupRuns, swaps, dupExact, dupShort, cutFirst int }{}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { conservationHistory(t, seed) })
	}
	// The histories held what they are meant to check.
	t.Logf("%+v", dupStats)
	if dupStats.swaps == 0 || dupStats.dupExact == 0 || dupStats.dupShort == 0 || dupStats.cutFirst == 0 {
		t.Errorf("histories without duplicates swapped, exact or short, or cut ids before their whole ids: %+v", dupStats)
	}
}

func conservationHistory(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	cfg := Config{JobIDName: "%j:%u:%H", TTL: time.Duration(2+r.IntN(6)) * 30 * time.Second, UntrustedBucket: true}
	switch r.IntN(3) {
	case 1:
		cfg.MaxSeries = 1 + r.IntN(8)
	case 2:
		cfg.MaxSeries = 20
	}
	cfg.Labels = [][]string{{"jobid", "uid", "node"}, {"jobid"}, {"uid"}, {"jobid", "uid", "gid", "node", "exe"}}[r.IntN(4)]
	if r.IntN(4) == 0 {
		cfg.Exclude = map[string]string{"uid": "1"}
	}
	tr := newTracker(t, cfg)
	targets := []string{"fs-OST0000", "fs-OST0001", "fs-MDT0000"}
	hosts := []string{"n1", "n2", "n3"}

	// Some servers print no start_time (Lustre ≤ 2.12): restarts show
	// only in the values, and duplicate entries cannot be told apart.
	withStart := r.IntN(4) != 0

	// live are the entries of each target by a name of their own: a job_id
	// may have two entries (a damaged output, or an id reused).
	live := map[string]map[string]*simJob{}
	for _, tg := range targets {
		live[tg] = map[string]*simJob{}
	}
	prev := map[string]map[string]*simJob{}      // last output's entries, as printed
	prevKeys := map[string]map[string]keyState{} // last output's job_ids, by the rule
	prevOrder := map[string][]string{}           // last output's entries of duplicated ids, in order
	last := map[convKey]uint64{}                 // by series, its value when last exported
	// lastPrinted is when each target's job_stats were last in an output.
	// A target absent for longer than the TTL (failed over to its partner
	// server) is forgotten by the exporter: when it is back, its entries
	// are at first sight again, and count whole, for the δ rule as for
	// the exporter.
	lastPrinted := map[string]time.Time{}
	// wholeLater are the well-formed ids of jobs whose cut id ("1234")
	// came first, by the run they appear in.
	type later struct {
		tg, id string
		at     int
	}
	var wholeLater []later
	cutSince := map[string]int{} // target+cut id → the run it was first printed in
	t0 := time.Unix(1_700_000_000, 0)
	next := 1000
	seq := 0
	add := func(jobs map[string]*simJob, id string, start float64) {
		seq++
		jobs[fmt.Sprintf("%s#%d", id, seq)] = &simJob{id: id, start: start, print: r.IntN(3)}
	}

	for run := range 60 {
		now := t0.Add(time.Duration(run) * 30 * time.Second)
		nowS := float64(now.Unix())
		truth := map[[2]string]uint64{} // target, slot → increments this run
		var out strings.Builder
		printed := map[string]map[string]*simJob{}
		printedKeys := map[string]map[string]keyState{}
		for _, tg := range targets {
			jobs := live[tg]
			// Churn: jobs arrive, and entries are cleaned up.
			for range r.IntN(6) {
				n := next + r.IntN(40)
				uid, host := r.IntN(4), hosts[r.IntN(len(hosts))]
				switch x := r.IntN(10); {
				case x == 0:
					// A cut id first, its whole id a run or two later.
					add(jobs, fmt.Sprint(n), nowS-float64(r.IntN(30)))
					wholeLater = append(wholeLater, later{tg, fmt.Sprintf("%d:%d:%s", n, uid, host), run + 1 + r.IntN(2)})
				case x == 1 && len(jobs) > 0:
					// A second entry of an id already there.
					names := slices.Sorted(maps.Keys(jobs))
					j := jobs[names[r.IntN(len(names))]]
					add(jobs, j.id, []float64{j.start, nowS - float64(r.IntN(30))}[r.IntN(2)])
				default:
					id := brokenID(r, n, uid, host)
					add(jobs, id, nowS-float64(r.IntN(30)))
					if r.IntN(8) == 0 {
						add(jobs, id, nowS-float64(r.IntN(30))) // born twice
					}
				}
			}
			for i := 0; i < len(wholeLater); i++ {
				if w := wholeLater[i]; w.tg == tg && w.at == run {
					add(jobs, w.id, nowS)
					wholeLater = slices.Delete(wholeLater, i, i+1)
					i--
				}
			}
			next += r.IntN(5)
			if r.IntN(15) == 0 {
				// Not printed this time (failed over, a cut output):
				// nothing is known of its jobs, which keep their values.
				printed[tg], printedKeys[tg] = prev[tg], prevKeys[tg]
				continue
			}
			if at, ok := lastPrinted[tg]; ok && now.Add(-30*time.Second).Sub(at) > cfg.TTL {
				prev[tg], prevKeys[tg] = nil, nil
			}
			lastPrinted[tg] = now
			printed[tg] = map[string]*simJob{}
			printedKeys[tg] = map[string]keyState{}
			component := "obdfilter"
			if strings.Contains(tg, "MDT") {
				component = "mdt"
			}
			fmt.Fprintf(&out, "%s.%s.job_stats=\njob_stats:\n", component, tg)
			// In an order a seed replays, shuffled: Lustre lists its
			// entries in no order, and duplicates swap.
			names := slices.Sorted(maps.Keys(jobs))
			r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			byID := map[string][]string{} // entries printed, by job_id
			for _, name := range names {
				j := jobs[name]
				switch x := r.IntN(40); {
				case x == 0:
					delete(jobs, name) // cleaned up: gone from the output
					continue
				case x == 1:
					// Restarted: a new start time, counters from zero.
					j.start = nowS
					j.vals = [len(simOps)][2]uint64{}
				case x == 2:
					// Counters restart, start time unchanged.
					for i := range j.vals {
						j.vals[i][0] /= 3
						j.vals[i][1] /= 3
					}
				}
				for i := range j.vals {
					if r.IntN(3) > 0 {
						n := uint64(r.IntN(50))
						j.vals[i][0] += n
						if simOps[i].unit != "reqs" {
							j.vals[i][1] += n * uint64(1+r.IntN(1<<20))
						}
					}
				}
				out.WriteString(j.text(nowS, withStart))
				c := *j
				if !withStart {
					c.start = 0
				}
				printed[tg][name] = &c
				byID[j.id] = append(byID[j.id], name)
			}
			for id, entries := range byID {
				if len(entries) > 1 {
					dupStats.dupRuns++
					if p := prevOrder[tg+"\x00"+id]; len(p) == len(entries) && !slices.Equal(p, entries) {
						dupStats.swaps++
					}
					prevOrder[tg+"\x00"+id] = entries
				}
				if !strings.Contains(id, ":") && id != "" {
					if _, ok := cutSince[tg+"\x00"+id]; !ok {
						cutSince[tg+"\x00"+id] = run
					}
				} else if i := strings.IndexByte(id, ':'); i > 0 {
					if at, ok := cutSince[tg+"\x00"+id[:i]]; ok && at < run && byID[id[:i]] != nil {
						dupStats.cutFirst++ // both printed, the cut id since an earlier output
					}
				}
				// The truth: each entry by the δ rule (with start_time
				// telling a restart, as Lustre prints it), and the job_id
				// by the rule of its entries' sum.
				var perEntry [len(simOps)][2]uint64
				for _, name := range entries {
					c, p := printed[tg][name], prev[tg][name]
					for i := range simOps {
						for k := range 2 {
							v := c.vals[i][k]
							if p != nil && p.start == c.start && v >= p.vals[i][k] {
								v -= p.vals[i][k]
							}
							perEntry[i][k] += v
						}
					}
				}
				d, st := sumRule(prevKeys[tg], id, entries, printed[tg])
				printedKeys[tg][id] = st
				exact := true
				for i, op := range simOps {
					for k, name := range []string{" samples", " sum"} {
						if k == 1 && op.unit == "reqs" {
							continue
						}
						if d[i][k] > perEntry[i][k] {
							t.Fatalf("run %d: %s %q %s: the rule counts %d, more than its %d entries' %d",
								run, tg, id, op.name+name, d[i][k], len(entries), perEntry[i][k])
						}
						exact = exact && d[i][k] == perEntry[i][k]
						truth[[2]string{tg, op.name + name}] += d[i][k]
					}
				}
				if len(entries) > 1 && exact {
					dupStats.dupExact++
				} else if !exact {
					dupStats.dupShort++
				}
			}
		}
		prevKeys = printedKeys
		prev = printed
		view := run2(t, tr, now, out.String())

		// What the View says, and its increase over what each series said
		// last. A series is an identity of the tracker (its Key pointer):
		// one hidden by the cap and shown again goes on from its last
		// value; one forgotten after the TTL and made anew starts over.
		got := map[[2]string]uint64{}
		for _, tv := range view.Targets {
			param := tv.Target
			for i := range tv.Rows {
				vals := tv.Values(i)
				for _, op := range tv.Ops {
					for k, slot := range []int{op.Samples, op.Sum} {
						if slot < 0 {
							continue
						}
						v, _ := vals.Get(slot)
						ck := convKey{param, tv.Rows[i].Key, op.Name + []string{" samples", " sum"}[k]}
						if v < last[ck] {
							t.Fatalf("run %d: %s %v %s went down from %d to %d", run, param, *ck.key, ck.slot, last[ck], v)
						}
						got[[2]string{param, ck.slot}] += v - last[ck]
						last[ck] = v
					}
				}
			}
		}
		for k, want := range truth {
			if got[k] != want {
				t.Fatalf("run %d (%+v): %s %s: the series grew by %d, job_stats counted %d", run, cfg, k[0], k[1], got[k], want)
			}
		}
		for k, g := range got {
			if truth[k] != g {
				t.Fatalf("run %d: %s %s: the series grew by %d, job_stats counted %d", run, k[0], k[1], g, truth[k])
			}
		}
	}
}

// sumRule applies the rule of internal/mechanism/rates/dups.go to the entries of job_id id
// printed in one output, against its state in the last output (absent: at
// first sight), and returns the increments and the new state.
func sumRule(last map[string]keyState, id string, entries []string, printed map[string]*simJob) ([len(simOps)][2]uint64, keyState) {
	var st keyState
	for n, name := range entries {
		j := printed[name]
		for i := range simOps {
			st.sums[i][0] += j.vals[i][0]
			st.sums[i][1] += j.vals[i][1]
		}
		if n == 0 || j.start < st.lo {
			st.lo = j.start
		}
		st.hi = max(st.hi, j.start)
	}
	st.entries = len(entries)
	var d [len(simOps)][2]uint64
	p, seen := last[id]
	restart := seen && p.lo != 0
	for _, name := range entries {
		s := printed[name].start
		restart = restart && s != 0 && (s < p.lo || s > p.hi)
	}
	for i := range simOps {
		for k := range 2 {
			v, was := st.sums[i][k], p.sums[i][k]
			switch {
			case !seen || restart:
				d[i][k] = v
			case v >= was:
				d[i][k] = v - was
			case st.entries > 1 || p.entries > 1:
				d[i][k] = 0
			default:
				d[i][k] = v
			}
		}
	}
	return d, st
}

// run2 feeds one run's output to the tracker, as run does, but lets an
// output without any section through.
func run2(t *testing.T, tr *Tracker, now time.Time, text string) *View {
	t.Helper()
	if text == "" {
		tr.BeginRun(now)
		return tr.EndRun(nil, nil)
	}
	return run(t, tr, now, text)
}
