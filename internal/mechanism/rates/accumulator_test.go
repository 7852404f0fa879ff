package rates

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// rawEntry models one Lustre job_stats entry across its lifetimes: it
// counts up while it exists, vanishes when Lustre cleans it up, and starts
// again from zero when the job comes back.
type rawEntry struct {
	key      string
	identity int
	live     bool
	value    uint64
	start    float64
	// lastSeen is the value at its last observation in this lifetime;
	// banked sums the last observed values of its finished lifetimes.
	lastSeen uint64
	banked   uint64
	// waitComplete: cleaned up while the output was cut short. Without a
	// start time the restart is invisible until a complete output shows
	// the entry gone, so the model keeps it gone until then.
	waitComplete bool
}

// truth is what was really counted and observed: for every lifetime of
// every entry, its value when last read.
func (e *rawEntry) truth() uint64 { return e.banked + e.lastSeen }

// TestMonotonicAndExact is the property of the accumulator: for random raw
// series that reset, vanish and reappear, with several raw series per
// identity and output cut short now and then, every total is monotonic and
// equals the sum of the true increments.
func TestMonotonicAndExact(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		for _, withStart := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed%d/start=%v", seed, withStart), func(t *testing.T) {
				checkProperty(t, seed, withStart, false)
			})
		}
	}
}

// TestMonotonicAndExactWithFailedRuns is the same property when runs cut
// short may also fail (killed, over their budget): a failed run forgets
// the raw series it met first (ForgetBorn), whose whole value then counts
// when a later run meets them, and whose value is lost only if the entry
// goes before any run counts it, as if no run had seen it.
func TestMonotonicAndExactWithFailedRuns(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		for _, withStart := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed%d/start=%v", seed, withStart), func(t *testing.T) {
				checkProperty(t, seed, withStart, true)
			})
		}
	}
}

func checkProperty(t *testing.T, seed uint64, withStart, failures bool) {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	nIDs := 1 + rng.IntN(5)
	nRaw := nIDs + rng.IntN(12)
	entries := make([]*rawEntry, nRaw)
	for i := range entries {
		entries[i] = &rawEntry{key: fmt.Sprintf("raw%d", i), identity: rng.IntN(nIDs)}
	}
	acc := New[int, struct{}](time.Hour)
	now := time.Unix(1_700_000_000, 0)
	prevTotals := map[int]uint64{}
	clock := 0.0
	// evictedTruth is what the identities EvictIdle forgot had counted.
	var evictedTruth uint64

	for step := 0; step < 60; step++ {
		clock += 10
		now = now.Add(10 * time.Second)
		// One lctl run, sometimes cut short: the entries after the cut are
		// not printed although they still exist.
		complete := rng.IntN(6) != 0
		cut := len(entries)
		if !complete {
			cut = rng.IntN(len(entries) + 1)
		}
		failed := failures && !complete && rng.IntN(2) == 0
		// The source evolves.
		for _, e := range entries {
			switch {
			case !e.live && e.waitComplete:
			case !e.live && rng.IntN(3) == 0: // (re)appears from zero
				e.live, e.value, e.lastSeen = true, 0, 0
				e.start = clock
			case e.live && rng.IntN(8) == 0: // cleaned up
				e.live = false
				e.banked += e.lastSeen
				e.lastSeen = 0
				e.waitComplete = !complete && !withStart
			case e.live && withStart && rng.IntN(10) == 0: // cleared in place: a new start time
				e.banked += e.lastSeen
				e.value, e.lastSeen = 0, 0
				e.start = clock
			}
			if e.live && rng.IntN(4) != 0 {
				e.value += uint64(rng.IntN(1000))
			}
		}
		acc.BeginRun(now)
		g := acc.Group("OST0000")
		slot := g.Slot("write_bytes.sum")
		for _, e := range entries[:cut] {
			if !e.live {
				continue
			}
			start := 0.0
			if withStart {
				start = e.start
			}
			s, first := g.Observe([]byte(e.key), start)
			g.Set(s, slot, e.value)
			if !(failed && first) {
				// A series the failed run met first is forgotten: the
				// model's entry was not seen by it.
				e.lastSeen = e.value
			}
		}
		g.EndSection(complete)
		if failed {
			acc.ForgetBorn()
		}
		if complete {
			for _, e := range entries {
				e.waitComplete = false
			}
		}
		for _, s := range g.Pending() {
			var id int
			fmt.Sscanf(s.Key, "raw%d", &id)
			g.Resolve(s, entries[id].identity, true)
		}
		acc.EndRun()
		checkSeriesCounts(t, g)
		all := evictedTruth
		for _, e := range entries {
			all += e.truth()
		}
		if got := g.Counted()[slot]; got != all {
			t.Fatalf("step %d: the group counted %d, want %d", step, got, all)
		}
		if failures && rng.IntN(4) == 0 {
			// Identities without raw series forgotten before their TTL:
			// the group's count stays exact; the model's identities
			// start over with what their entries count from now on.
			evicted := acc.EvictIdle(rng.IntN(2), func(*Identity[int]) bool { return true })
			if evicted[g.Name] > 0 {
				kept := map[int]bool{}
				for _, id := range g.Identities() {
					kept[id.Key] = true
				}
				for _, e := range entries {
					if !kept[e.identity] {
						evictedTruth += e.truth()
						e.banked, e.lastSeen = 0, 0
						prevTotals[e.identity] = 0
					}
				}
			}
		}

		want := map[int]uint64{}
		for _, e := range entries {
			want[e.identity] += e.truth()
		}
		for _, id := range g.Identities() {
			got := id.Total(slot)
			if got < prevTotals[id.Key] {
				t.Fatalf("step %d: identity %d went down from %d to %d", step, id.Key, prevTotals[id.Key], got)
			}
			prevTotals[id.Key] = got
			if got != want[id.Key] {
				t.Fatalf("step %d: identity %d total %d, want %d (complete=%v)", step, id.Key, got, want[id.Key], complete)
			}
		}
	}
}

func TestResetRule(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	now := time.Unix(0, 0)
	observe := func(v uint64, start float64) uint64 {
		now = now.Add(time.Minute)
		acc.BeginRun(now)
		g := acc.Group("g")
		s, _ := g.Observe([]byte("job"), start)
		g.Set(s, g.Slot("x"), v)
		for _, p := range g.Pending() {
			g.Resolve(p, "id", true)
		}
		g.EndSection(true)
		acc.EndRun()
		return g.Identities()[0].Total(0)
	}
	steps := []struct {
		v     uint64
		start float64
		want  uint64
	}{
		{100, 0, 100},   // first sight: the whole value
		{150, 0, 150},   // δ = 50
		{30, 0, 180},    // v < v′: restarted, δ = 30
		{30, 0, 180},    // δ = 0
		{500, 9, 650},   // start time appears: not a restart by itself, δ = 470
		{600, 10, 1250}, // start time changed: restarted although v ≥ v′, δ = 600
	}
	for i, st := range steps {
		if got := observe(st.v, st.start); got != st.want {
			t.Fatalf("step %d: total %d, want %d", i, got, st.want)
		}
	}
}

func TestEviction(t *testing.T) {
	acc := New[string, struct{}](15 * time.Minute)
	now := time.Unix(0, 0)
	run := func(keys ...string) *Group[string, struct{}] {
		acc.BeginRun(now)
		g := acc.Group("g")
		for _, k := range keys {
			s, _ := g.Observe([]byte(k), 0)
			g.Set(s, g.Slot("x"), 1)
		}
		g.EndSection(true)
		for _, p := range g.Pending() {
			g.Resolve(p, p.Key, true)
		}
		acc.EndRun()
		return g
	}
	run("a", "b")
	now = now.Add(10 * time.Minute)
	g := run("a")
	if n := len(g.Identities()); n != 2 {
		t.Fatalf("after 10m: %d identities, want 2 (b is still within the TTL)", n)
	}
	now = now.Add(10 * time.Minute)
	g = run("a")
	if n := len(g.Identities()); n != 1 || g.Identities()[0].Key != "a" {
		t.Fatalf("after 20m: identities %v, want only a", g.Identities())
	}
}

// A series left unattached (a discarded id) and attached in a later run
// brings everything it counted so far, once.
func TestLateResolve(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	now := time.Unix(0, 0)
	var g *Group[string, struct{}]
	for i, v := range []uint64{10, 25, 40} {
		now = now.Add(time.Minute)
		acc.BeginRun(now)
		g = acc.Group("g")
		s, _ := g.Observe([]byte("broken"), 0)
		g.Set(s, g.Slot("x"), v)
		g.EndSection(true)
		for _, p := range g.Pending() {
			g.Resolve(p, "job", i == 1) // repairable from the second run on
		}
		acc.EndRun()
	}
	if got := g.Identities()[0].Total(0); got != 40 {
		t.Fatalf("total %d, want 40", got)
	}
}

// A key observed twice in one run is the same series, printed twice.
func TestDuplicateInOneRun(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	acc.BeginRun(time.Unix(0, 0))
	g := acc.Group("g")
	s, first := g.Observe([]byte("a"), 0)
	if s == nil || !first || s.Entries() != 1 {
		t.Fatal("first observation refused")
	}
	if again, first := g.Observe([]byte("a"), 0); again != s || first || s.Entries() != 2 {
		t.Fatalf("second observation: %p (first %v, %d entries), want %p", again, first, s.Entries(), s)
	}
}

// Observe guesses each series from the order of the last run: whatever the
// order, repeats, disappearances and returns, it returns the series the
// group holds for the key (a new one exactly when it holds none), never a
// forgotten one.
func TestObserveGuessesOrder(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*31))
		acc := New[int, struct{}](time.Hour)
		now := time.Unix(1_700_000_000, 0)
		keys := make([]string, 40)
		for i := range keys {
			keys[i] = fmt.Sprint("job", i)
		}
		order := append([]string(nil), keys[:20]...)
		guessed := 0
		for step := range 40 {
			now = now.Add(10 * time.Second)
			acc.BeginRun(now)
			g := acc.Group("OST0000")
			// The order drifts: a swap, a key gone, one new, one printed
			// twice, now and then all shuffled.
			switch rng.IntN(5) {
			case 0:
				if len(order) > 1 {
					i, j := rng.IntN(len(order)), rng.IntN(len(order))
					order[i], order[j] = order[j], order[i]
				}
			case 1:
				if len(order) > 0 {
					i := rng.IntN(len(order))
					order = append(order[:i], order[i+1:]...)
				}
			case 2:
				order = append(order, keys[rng.IntN(len(keys))])
			case 3:
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			printed := order
			if rng.IntN(4) == 0 && len(order) > 0 {
				printed = append(append([]string(nil), order...), order[rng.IntN(len(order))])
			}
			for _, key := range printed {
				before, held := g.series[key]
				guess := g.head
				if g.prev != nil && g.prevRun == acc.Run() {
					guess = g.prev.next
				}
				s, first := g.Observe([]byte(key), 0)
				if s != g.series[key] || s.Key != key || s.run == 0 {
					t.Fatalf("seed %d step %d: %q observed as a series the group does not hold for it", seed, step, key)
				}
				if first == held || (held && s != before) {
					t.Fatalf("seed %d step %d: %q first=%v, held before %v", seed, step, key, first, held)
				}
				if s == guess {
					guessed++
				}
			}
			complete := rng.IntN(5) != 0
			held := len(g.series)
			g.EndSection(complete)
			// A complete output leaves the series printed in it, and
			// only those (EndSection looks only when some are missing).
			inRun := map[string]bool{}
			for _, key := range printed {
				inRun[key] = true
			}
			if complete && len(g.series) != len(inRun) || !complete && len(g.series) != held {
				t.Fatalf("seed %d step %d: %d series held after the section (complete=%v), %d printed", seed, step, len(g.series), complete, len(inRun))
			}
			for key := range inRun {
				if g.series[key] == nil {
					t.Fatalf("seed %d step %d: %q printed but forgotten", seed, step, key)
				}
			}
			for _, s := range g.Pending() {
				g.Resolve(s, 0, true)
			}
			acc.EndRun()
		}
		if guessed == 0 {
			t.Fatalf("seed %d: no series was found by its place", seed)
		}
	}
}

// checkSeriesCounts holds each identity's count of raw series to the
// series attached to it.
func checkSeriesCounts[K comparable, M any](t *testing.T, g *Group[K, M]) {
	t.Helper()
	want := map[*Identity[K]]int32{}
	g.EachSeries(func(s *Series[K, M]) {
		if s.id != nil {
			want[s.id]++
		}
	})
	for _, id := range g.Identities() {
		if id.series != want[id] {
			t.Fatalf("identity %v counts %d raw series, has %d", id.Key, id.series, want[id])
		}
	}
}

// EvictIdle forgets the identities without raw series that were seen
// longest ago, beyond the number kept, never one with a series or one the
// caller keeps; what they counted stays in Counted.
func TestEvictIdle(t *testing.T) {
	acc := New[string, struct{}](time.Hour)
	now := time.Unix(0, 0)
	g := acc.Group("g")
	run := func(keys ...string) {
		now = now.Add(time.Minute)
		acc.BeginRun(now)
		g = acc.Group("g")
		for _, k := range keys {
			s, _ := g.Observe([]byte(k), 0)
			g.Set(s, g.Slot("x"), 10)
		}
		g.EndSection(true)
		for _, p := range g.Pending() {
			g.Resolve(p, p.Key, true)
		}
		acc.EndRun()
	}
	run("a", "b", "c")
	run("d", "e")
	g.Fold("_other", nil) // no series, ever: kept by the caller
	run("f")
	keys := func() (out []string) {
		for _, id := range g.Identities() {
			out = append(out, id.Key)
		}
		return out
	}
	if got := fmt.Sprint(keys()); got != "[a b c d e _other f]" {
		t.Fatalf("identities %s", got)
	}
	evicted := acc.EvictIdle(2, func(id *Identity[string]) bool { return id.Key != "_other" })
	if evicted["g"] != 3 {
		t.Errorf("evicted %v, want 3 of g", evicted)
	}
	if got := fmt.Sprint(keys()); got != "[d e _other f]" {
		t.Errorf("after eviction: %s, want the two seen last, _other and f (it has a series)", got)
	}
	if got := g.Counted()[0]; got != 60 {
		t.Errorf("counted %d, want 60", got)
	}
	if evicted := acc.EvictIdle(2, func(id *Identity[string]) bool { return id.Key != "_other" }); evicted != nil {
		t.Errorf("within the bound, evicted %v", evicted)
	}
	checkSeriesCounts(t, g)
}
