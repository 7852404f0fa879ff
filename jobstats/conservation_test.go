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
// start_time and v ≥ v′, else v (at first sight, the whole value).

// simJob is one raw job_stats entry of the property test's server.
type simJob struct {
	id    string
	start float64
	vals  [len(simOps)][2]uint64 // samples, sum
}

// simOps are the operations the property test's server prints: bytes,
// usecs, and one without a sum.
var simOps = [...]struct{ name, unit string }{
	{"read_bytes", "bytes"}, {"write_bytes", "bytes"}, {"getattr", "usecs"}, {"punch", "reqs"},
}

func (j *simJob) text(now float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- job_id:          \"%s\"\n  snapshot_time:   %.9f secs.nsecs\n  start_time:      %.9f secs.nsecs\n", j.id, now, j.start)
	for i, op := range simOps {
		if op.unit == "reqs" {
			fmt.Fprintf(&b, "  %-16s { samples: %d, unit: reqs }\n", op.name+":", j.vals[i][0])
			continue
		}
		fmt.Fprintf(&b, "  %-16s { samples: %d, unit: %s, min: 1, max: 1, sum: %d, sumsq: 0 }\n", op.name+":", j.vals[i][0], op.unit, j.vals[i][1])
	}
	return b.String()
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
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { conservationHistory(t, seed) })
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

	live := map[string]map[string]*simJob{} // by target, by job_id
	for _, tg := range targets {
		live[tg] = map[string]*simJob{}
	}
	prev := map[string]map[string]*simJob{} // last run's entries, as printed
	last := map[convKey]uint64{}            // by series, its value when last exported
	// lastPrinted is when each target's job_stats were last in an output.
	// A target absent for longer than the TTL (failed over to its partner
	// server) is forgotten by the exporter: when it is back, its entries
	// are at first sight again, and count whole, for the δ rule as for
	// the exporter.
	lastPrinted := map[string]time.Time{}
	t0 := time.Unix(1_700_000_000, 0)
	next := 1000

	for run := range 60 {
		now := t0.Add(time.Duration(run) * 30 * time.Second)
		nowS := float64(now.Unix())
		truth := map[[2]string]uint64{} // target, slot → increments this run
		var out strings.Builder
		printed := map[string]map[string]*simJob{}
		for _, tg := range targets {
			jobs := live[tg]
			// Churn: jobs arrive, and entries are cleaned up.
			for range r.IntN(6) {
				n := next + r.IntN(40)
				id := brokenID(r, n, r.IntN(4), hosts[r.IntN(len(hosts))])
				if _, ok := jobs[id]; !ok {
					jobs[id] = &simJob{id: id, start: nowS - float64(r.IntN(30))}
				}
			}
			next += r.IntN(5)
			if r.IntN(15) == 0 {
				// Not printed this time (failed over, a cut output):
				// nothing is known of its jobs, which keep their values.
				printed[tg] = prev[tg]
				continue
			}
			if at, ok := lastPrinted[tg]; ok && now.Add(-30*time.Second).Sub(at) > cfg.TTL {
				prev[tg] = nil
			}
			lastPrinted[tg] = now
			printed[tg] = map[string]*simJob{}
			component := "obdfilter"
			if strings.Contains(tg, "MDT") {
				component = "mdt"
			}
			fmt.Fprintf(&out, "%s.%s.job_stats=\njob_stats:\n", component, tg)
			// In a fixed order, so that a seed replays the same history.
			for _, id := range slices.Sorted(maps.Keys(jobs)) {
				j := jobs[id]
				switch x := r.IntN(40); {
				case x == 0:
					delete(jobs, id) // cleaned up: gone from the output
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
				out.WriteString(j.text(nowS))
				c := *j
				printed[tg][id] = &c
				// The truth, by the δ rule (with start_time telling a
				// restart, as Lustre prints it).
				p := prev[tg][id]
				for i, op := range simOps {
					for k, name := range []string{" samples", " sum"} {
						if k == 1 && op.unit == "reqs" {
							continue
						}
						v := c.vals[i][k]
						d := v
						if p != nil && p.start == c.start && v >= p.vals[i][k] {
							d = v - p.vals[i][k]
						}
						truth[[2]string{tg, op.name + name}] += d
					}
				}
			}
		}
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
