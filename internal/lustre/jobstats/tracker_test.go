package jobstats

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// run feeds one lctl output to the tracker as the Lustre source does.
func run(t testing.TB, tr *Tracker, now time.Time, text string) *View {
	t.Helper()
	tr.BeginRun(now)
	err := lctl.Scan(strings.NewReader(text), "", func(param string) lctl.SectionParser {
		if h := tr.Target(param); h != nil {
			return lctl.NewJobStatsParser(h)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr.EndRun(nil, nil)
}

func entry(id string, start float64, write uint64) string {
	return fmt.Sprintf("- job_id:          \"%s\"\n  snapshot_time:   %.9f secs.nsecs\n  start_time:      %.9f secs.nsecs\n"+
		"  write_bytes:     { samples: %d, unit: bytes, min: 1, max: 1, sum: %d, sumsq: 0, hist: {  } }\n"+
		"  getattr:         { samples: %d, unit: usecs, min: 1, max: 1, sum: 7, sumsq: 0 }\n", id, start+100, start, write/4096+1, write, write%5)
}

func ostText(name string, entries ...string) string {
	return "obdfilter." + name + ".job_stats=\njob_stats:\n" + strings.Join(entries, "")
}

// values reads everything a View says, by target and identity.
func values(v *View) map[string]uint64 {
	out := map[string]uint64{}
	for _, t := range v.Targets {
		out[t.Target+" active"] = uint64(t.Active)
		for i := range t.Rows {
			vals := t.Values(i)
			for slot := range 2 * len(t.Ops) {
				if v, ok := vals.Get(slot); ok {
					out[fmt.Sprintf("%s %v %d", t.Target, *t.Rows[i].Key, slot)] = v
				}
			}
		}
	}
	return out
}

func newTracker(t testing.TB, cfg Config) *Tracker {
	t.Helper()
	if cfg.TTL == 0 {
		cfg.TTL = 15 * time.Minute
	}
	if cfg.Labels == nil {
		cfg.Labels = []string{"jobid", "uid", "node"}
	}
	cfg.DensityBase = 10
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A published View never changes: the runs after it leave it as it was.
func TestViewsAreImmutable(t *testing.T) {
	tr := newTracker(t, Config{})
	t0 := time.Unix(1_700_000_000, 0)
	v1 := run(t, tr, t0, ostText("fs-OST0000", entry("1:1:a", 10, 4096), entry("2:1:a", 10, 8192)))
	before := values(v1)
	if len(before) < 3 {
		t.Fatalf("first view: %v", before)
	}
	// Counters advance, one id resets, one is new, one is cleaned up.
	v2 := run(t, tr, t0.Add(30*time.Second), ostText("fs-OST0000", entry("1:1:a", 10, 40960), entry("3:1:a", 10, 4096)))
	run(t, tr, t0.Add(60*time.Second), ostText("fs-OST0000", entry("1:1:a", 500, 4096)))
	if after := values(v1); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("view of run 1 changed:\nbefore %v\nafter  %v", before, after)
	}
	if got := values(v2); fmt.Sprint(got) == fmt.Sprint(before) {
		t.Error("view of run 2 says what run 1 said")
	}
}

// A target absent for longer than the TTL (failed over to the partner
// server) is forgotten with its identities, and read afresh when it comes
// back; it used to make the run panic.
func TestTargetForgottenAndBack(t *testing.T) {
	tr := newTracker(t, Config{TTL: time.Minute})
	t0 := time.Unix(1_700_000_000, 0)
	other := ostText("fs-OST0001", entry("9:1:b", 10, 4096))
	run(t, tr, t0, ostText("fs-OST0000", entry("1:1:a", 10, 4096))+other)
	var v *View
	for i := 1; i <= 4; i++ {
		v = run(t, tr, t0.Add(time.Duration(i)*30*time.Second), other)
	}
	if len(v.Targets[0].Rows) != 0 || v.Targets[0].RawSeries != 0 {
		t.Errorf("forgotten target still has %d rows, %d raw series", len(v.Targets[0].Rows), v.Targets[0].RawSeries)
	}
	if v.Targets[0].Outcomes == [len(v.Targets[0].Outcomes)]uint64{} {
		t.Error("the forgotten target's entry counters were reset")
	}
	v = run(t, tr, t0.Add(150*time.Second), ostText("fs-OST0000", entry("1:1:a", 10, 12288))+other)
	tv := v.Targets[0]
	if len(tv.Rows) != 1 {
		t.Fatalf("target back: %d rows", len(tv.Rows))
	}
	vals := tv.Values(0)
	write, _ := vals.Get(tv.Ops[0].Sum)
	if tv.Ops[0].Name != "write_bytes" || write != 12288 {
		t.Errorf("target back: %s = %d, want write_bytes = 12288", tv.Ops[0].Name, write)
	}
}

// Scrapes read Views while runs make new ones (go test -race).
func TestViewsReadDuringRuns(t *testing.T) {
	tr := newTracker(t, Config{MaxSeries: 5})
	t0 := time.Unix(1_700_000_000, 0)
	text := func(i int) string {
		var e []string
		for j := range 20 {
			e = append(e, entry(fmt.Sprintf("%d:1:n%d", j, j%3), 10, uint64((i+1)*(j+1)*4096)))
		}
		return ostText("fs-OST0000", e...) + ostText("fs-OST0001", e[:7]...)
	}
	var latest atomic.Pointer[View]
	latest.Store(run(t, tr, t0, text(0)))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					values(latest.Load())
				}
			}
		}()
	}
	for i := 1; i < 50; i++ {
		latest.Store(run(t, tr, t0.Add(time.Duration(i)*30*time.Second), text(i)))
	}
	close(stop)
	wg.Wait()
}

// Totals are read back as written, past 64 slots (an MDT of a newer
// Lustre with many operations) and with zeros kept or left out.
func TestValuesManySlots(t *testing.T) {
	for _, emitZero := range []bool{false, true} {
		tr := newTracker(t, Config{EmitZero: emitZero})
		var b strings.Builder
		want := map[string][2]uint64{} // op → samples, sum
		for j := range 3 {
			fmt.Fprintf(&b, "- job_id: %d:1:n\n", j)
			for k := range 70 {
				samples, sum := uint64((j*k)%5), uint64(j*k*k*1000003)
				if j == 2 {
					want[fmt.Sprintf("zzop%d", k)] = [2]uint64{samples, sum}
				}
				fmt.Fprintf(&b, "  zzop%d: { samples: %d, unit: usecs, min: 1, max: 1, sum: %d }\n", k, samples, sum)
			}
		}
		v := run(t, tr, time.Unix(1_700_000_000, 0), "mdt.fs-MDT0000.job_stats=\njob_stats:\n"+b.String())
		tv := v.Targets[0]
		if len(tv.Rows) != 3 || tv.words != 3 {
			t.Fatalf("%d rows, %d mask words", len(tv.Rows), tv.words)
		}
		vals := tv.Values(2)
		for _, op := range tv.Ops {
			w := want[op.Name]
			for k, slot := range []int{op.Samples, op.Sum} {
				got, ok := vals.Get(slot)
				if ok != (w[k] != 0 || emitZero) || got != w[k] {
					t.Errorf("emit zero %v: %s slot %d = %d, %v; want %d", emitZero, op.Name, slot, got, ok, w[k])
				}
			}
		}
	}
}

// A server scraped steadily reuses two arenas however its totals grow:
// an arena recycled when it had become too small used to stay among the
// spares and keep out the ones that fit, so every run made a new one.
func TestArenasReusedAsTotalsGrow(t *testing.T) {
	tr := newTracker(t, Config{})
	t0 := time.Unix(1_700_000_000, 0)
	rows := map[*Row]bool{} // the arrays of rows made
	var prev *View
	for i := range 60 {
		// Totals grow by a factor of 4 a run: their varints lengthen
		// past any headroom an arena was made with.
		var e []string
		for j := range 50 {
			e = append(e, entry(fmt.Sprintf("%d:1:n", j), 10, uint64(4096)<<(2*i%58)+uint64(j)))
		}
		v := run(t, tr, t0.Add(time.Duration(i)*30*time.Second), ostText("fs-OST0000", e...))
		rows[unsafe.SliceData(v.arena.rows)] = true
		tr.Recycle(prev) // the scrape of the run before is done
		prev = v
	}
	// The job count is steady: two arrays of rows do (the published
	// View's, the one being written); a stuck spare made one per run.
	if len(rows) > 2 {
		t.Errorf("%d arrays of rows made in 60 runs", len(rows))
	}
}

// An id counted under "_untrusted" for lack of context goes on under its
// job once a well-formed id of the job tells what it is, from the output
// that tells it on; what it counted before stays under "_untrusted", so
// that every byte counts once.
func TestUntrustedRepairedLater(t *testing.T) {
	tr := newTracker(t, Config{UntrustedBucket: true, JobIDName: "%j:%u:%H"})
	t0 := time.Unix(1_700_000_000, 0)
	write := func(v *View, job string) uint64 {
		tv := v.Targets[0]
		for i := range tv.Rows {
			if tv.Rows[i].Key[0] == job {
				vals := tv.Values(i)
				x, _ := vals.Get(tv.Ops[0].Sum)
				return x
			}
		}
		return 0
	}
	// "4711" alone may be a job field cut short: discarded.
	v := run(t, tr, t0, ostText("fs-OST0000", entry("4711", 10, 4096)))
	if got := write(v, UntrustedJob); got != 4096 {
		t.Fatalf("run 1: _untrusted wrote %d, want 4096", got)
	}
	// Job 4711 shows up well-formed, after the short id in the output: the
	// short id is its, and so is its increment of this output (held until
	// the output was read).
	v = run(t, tr, t0.Add(30*time.Second), ostText("fs-OST0000", entry("4711", 10, 3*4096), entry("4711:1:n1", 10, 8192)))
	if got := write(v, UntrustedJob); got != 4096 {
		t.Errorf("run 2: _untrusted wrote %d, want the 4096 of before", got)
	}
	if got, want := write(v, "4711"), uint64(8192+2*4096); got != want {
		t.Errorf("run 2: job 4711 wrote %d, want %d (the well-formed id's, and the short id's increment)", got, want)
	}
	v = run(t, tr, t0.Add(60*time.Second), ostText("fs-OST0000", entry("4711", 10, 5*4096), entry("4711:1:n1", 10, 8192)))
	if got, want := write(v, "4711"), uint64(8192+4*4096); got != want {
		t.Errorf("run 3: job 4711 wrote %d, want %d (the short id's increment added)", got, want)
	}
	if got := write(v, UntrustedJob); got != 4096 {
		t.Errorf("run 3: _untrusted wrote %d, want the 4096 of before", got)
	}
}

// A job that starts after the tracker first read its target counts from
// its start_time; one already there counts from that first read (its
// snapshot_time), so that a tracker made anew (an exporter restart) gives
// the counters it starts lower a new created timestamp.
func TestCreatedTimestamps(t *testing.T) {
	created := func(v *View, job string) float64 {
		for _, tv := range v.Targets {
			for i := range tv.Rows {
				if tv.Rows[i].Key[0] == job {
					return tv.Rows[i].Created
				}
			}
		}
		return -1
	}
	t0 := time.Unix(1_700_000_000, 0)
	tr := newTracker(t, Config{})
	// entry's snapshot_time is its start + 100.
	v := run(t, tr, t0, ostText("fs-OST0000", entry("1:1:a", 1000, 4096)))
	if got := created(v, "1"); got != 1100 {
		t.Errorf("a job there at the first read: created %v, want its snapshot_time 1100", got)
	}
	v = run(t, tr, t0.Add(30*time.Second), ostText("fs-OST0000", entry("1:1:a", 1000, 8192), entry("2:1:a", 1120, 4096)))
	if got := created(v, "2"); got != 1120 {
		t.Errorf("a job started after the first read: created %v, want its start_time 1120", got)
	}
	// A restart: the new tracker's first read is later.
	tr = newTracker(t, Config{})
	v = run(t, tr, t0.Add(60*time.Second), ostText("fs-OST0000", entry("1:1:a", 1000, 8192), entry("2:1:a", 1120, 4096)))
	if a, b := created(v, "1"), created(v, "2"); a != 1220 || b != 1220 {
		t.Errorf("after a restart: created %v and %v, want the new first read's 1220", a, b)
	}
}

// Get steps over the totals it is not asked for eight bytes at a time:
// against a plain decode, for totals of every width (1 to 10 bytes), masks
// over several words, and any increasing choice of slots, the row's last
// total at the data's very end included.
func TestValuesGetSkipsAnyTotals(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		slots := 1 + r.IntN(150)
		v, want := randomRow(r, slots)
		for s := 0; s < slots; s += 1 + r.IntN(6) {
			got, ok := v.Get(s)
			w, stored := want[s]
			if ok != stored || got != w {
				t.Fatalf("slot %d of %d: got %d, %v; want %d, %v", s, slots, got, ok, w, stored)
			}
		}
	}
}

// Next returns the stored totals of the slots asked for, in order, and
// nothing else: against the same rows as Get's test, with random column
// masks.
func TestValuesNextStoredColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		slots := 1 + r.IntN(150)
		v, totals := randomRow(r, slots)
		words := (slots + 63) / 64
		cols := make([]uint64, words+r.IntN(2)-r.IntN(2)*(words/2))
		for s := range min(slots, len(cols)*64) {
			if r.IntN(2) == 0 {
				cols[s>>6] |= 1 << uint(s&63)
			}
		}
		want := storedIn(totals, cols, 0, slots)
		getAt := -1 // a Get of a later slot between two Nexts, half the time
		if len(want) > 0 && r.IntN(2) == 0 {
			getAt = len(want) / 2
		}
		for k := 0; k < len(want); k++ {
			s := want[k]
			slot, total, ok := v.Next(cols)
			if !ok || slot != s || total != totals[s] {
				t.Fatalf("got slot %d total %d ok %v; want slot %d total %d", slot, total, ok, s, totals[s])
			}
			if k == getAt && s+1 < slots {
				g := s + 1 + r.IntN(slots-s-1)
				got, stored := v.Get(g)
				if w, ok := totals[g]; got != w || stored != ok {
					t.Fatalf("Get(%d) after Next: got %d, %v; want %d, %v", g, got, stored, w, ok)
				}
				want = append(want[:k+1], storedIn(totals, cols, g+1, slots)...)
			}
		}
		if slot, _, ok := v.Next(cols); ok {
			t.Fatalf("slot %d after the last one asked for", slot)
		}
		if _, _, ok := v.Next(cols); ok {
			t.Fatal("Next again after the end")
		}
	}
}

// randomRow returns a row of slots, two in three of them stored, with
// totals of every width (1 to 10 bytes), and its totals by slot.
func randomRow(r *rand.Rand, slots int) (Values, map[int]uint64) {
	mask := make([]uint64, (slots+63)/64)
	totals := make(map[int]uint64)
	var data []byte
	for s := range slots {
		if r.IntN(3) == 0 {
			continue
		}
		mask[s>>6] |= 1 << uint(s&63)
		x := r.Uint64() >> r.UintN(64)
		totals[s] = x
		data = binary.AppendUvarint(data, x)
	}
	return Values{mask: mask, data: data}, totals
}

// storedIn returns the stored slots from first to slots that cols asks for.
func storedIn(totals map[int]uint64, cols []uint64, first, slots int) []int {
	var w []int
	for s := first; s < slots; s++ {
		if _, ok := totals[s]; ok && s>>6 < len(cols) && cols[s>>6]&(1<<uint(s&63)) != 0 {
			w = append(w, s)
		}
	}
	return w
}

// A View's totals are written into the room the last one took; totals that
// outgrow it in the middle of a run (every value from one byte to nine)
// are all read back, in every target, the earlier ones too.
func TestTotalsOutgrowTheArena(t *testing.T) {
	tr := newTracker(t, Config{})
	output := func(scale uint64) (string, map[string]uint64) {
		var b strings.Builder
		want := map[string]uint64{}
		for _, target := range []string{"fs-OST0000", "fs-OST0001", "fs-OST0002"} {
			fmt.Fprintf(&b, "obdfilter.%s.job_stats=\njob_stats:\n", target)
			for j := range 200 {
				sum := scale * uint64(j+1)
				fmt.Fprintf(&b, "- job_id: %d:1:n\n  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: %d }\n", j, sum)
				want[fmt.Sprintf("%s/%d", target, j)] = sum
			}
		}
		return b.String(), want
	}
	now := time.Unix(1_700_000_000, 0)
	var prev *View
	for i, scale := range []uint64{1, 1 << 20, 1 << 50} {
		text, want := output(scale)
		v := run(t, tr, now.Add(time.Duration(i)*time.Minute), text)
		if len(v.Targets) != 3 {
			t.Fatalf("run %d: %d targets", i, len(v.Targets))
		}
		for _, tv := range v.Targets {
			if len(tv.Rows) != 200 {
				t.Fatalf("run %d: %s has %d rows", i, tv.Target, len(tv.Rows))
			}
			slot := -1
			for _, op := range tv.Ops {
				if op.Name == "write_bytes" {
					slot = op.Sum
				}
			}
			for r := range tv.Rows {
				vals := tv.Values(r)
				got, _ := vals.Get(slot)
				key := tv.Target + "/" + tv.Rows[r].Key[0]
				if got != want[key] {
					t.Fatalf("run %d: %s write_bytes %d, want %d", i, key, got, want[key])
				}
			}
		}
		tr.Recycle(prev)
		prev = v
	}
}

// Job ids made up faster than the TTL forgets them: each run prints three
// ids never seen before, within a budget of four entries. The identities
// kept without raw series stay within the budget (the oldest forgotten
// first, counted in Evicted), "_other" is never forgotten, and what the
// target counted stays exact. Without the bound, a run every 15 s kept
// every id of the last 15 minutes: 60 runs' worth.
func TestIdleIdentitiesBounded(t *testing.T) {
	tr := newTracker(t, Config{MaxEntries: 4, MaxSeries: 2, UntrustedBucket: true})
	now := time.Unix(1_700_000_000, 0)
	var v *View
	for r := range 10 {
		now = now.Add(15 * time.Second)
		var es []string
		for i := range 3 {
			es = append(es, entry(fmt.Sprintf("%d:1000:n1", 100*r+i), 1_699_999_000, 4096))
		}
		v = run(t, tr, now, ostText("fs-OST0000", es...))
		tv := v.Targets[0]
		// The run's 3, at most 4 without series, and _other.
		if tv.Identities > 3+4+1 {
			t.Fatalf("run %d: %d identities kept", r, tv.Identities)
		}
		if got := tv.Counted[0] + tv.Counted[1]; got == 0 {
			t.Fatalf("run %d: nothing counted", r)
		}
	}
	tv := v.Targets[0]
	// 30 identities were made: 3 have series, 4 are kept without, and
	// _other; 23 were forgotten before the TTL.
	if tv.Evicted != 23 {
		t.Errorf("evicted %d, want 23", tv.Evicted)
	}
	var bytes uint64
	for _, op := range tv.Ops {
		if op.Name == "write_bytes" {
			bytes = tv.Counted[op.Sum]
		}
	}
	if bytes != 30*4096 {
		t.Errorf("counted %d bytes, want %d", bytes, 30*4096)
	}
}
