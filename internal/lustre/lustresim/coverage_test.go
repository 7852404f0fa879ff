package lustresim

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// readAll prints every job_stats and target stats parameter at t, as one
// lctl run of the exporter would, and returns the target stats' samples
// and sums by "param name".
func readAll(t *testing.T, s *Sim, at time.Time) (samples map[string]uint64, sums map[string]int64) {
	t.Helper()
	var buf bytes.Buffer
	if err := s.WriteParams(&buf, at, "obdfilter.*.job_stats", "mdt.*.job_stats", "obdfilter.*.stats", "mdt.*.md_stats"); err != nil {
		t.Fatal(err)
	}
	samples, sums = map[string]uint64{}, map[string]int64{}
	err := lctl.Scan(&buf, "", func(param string) lctl.SectionParser {
		if strings.HasSuffix(param, ".job_stats") {
			return nil
		}
		return lctl.NewStatsParser(func(sec *lctl.StatsSection, _ bool) {
			for _, st := range sec.Stats {
				samples[param+" "+st.Name] = st.Samples
				sums[param+" "+st.Name] = st.Sum
			}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return samples, sums
}

// A target's own counters grow by what its jobs did, whether or not
// job_stats showed it: where job_cleanup_interval outlasts the time
// between reads, every increment of the targets' stats was seen in
// job_stats too (coverage 1, to the rounding of each entry's counts);
// where it is shorter (the demo's last OST, cleaned after 1 s, read every
// 5 s), bursts vanish between reads and coverage falls. The counters the
// stats print are the ones Coverage reports, and never go down, also
// while epochs of jobs leave the live window for the summed past.
func TestCoverageTruth(t *testing.T) {
	cfg := DemoConfig()
	s := New(cfg)
	t0 := time.Unix(1_800_000_000, 0)
	var prev map[string]uint64
	var sums map[string]int64
	const step = 5 * time.Second
	span := 20 * time.Minute // epochs of jobs leave the live window, summed since
	if testing.Short() {
		span = 8 * time.Minute
	}
	steps := int(span / step)
	for i := 0; i <= steps; i++ {
		at := t0.Add(time.Duration(i) * step)
		var v map[string]uint64
		v, sums = readAll(t, s, at)
		for key, n := range prev {
			if v[key] < n {
				t.Fatalf("%v: %s went from %d to %d", at, key, n, v[key])
			}
		}
		prev = v
	}
	end := t0.Add(time.Duration(steps) * step)
	reads := s.Coverage()
	if len(reads) != cfg.MDTs+cfg.OSTs {
		t.Fatalf("coverage of %d targets, want %d", len(reads), cfg.MDTs+cfg.OSTs)
	}
	// The last read's counters are the ones the stats printed.
	ost := s.OSTName(cfg.OSTs - 1)
	lastRead := reads[ost][len(reads[ost])-1]
	if got := uint64(sums["obdfilter."+ost+".stats write_bytes"] + sums["obdfilter."+ost+".stats read_bytes"]); got != lastRead.Counted.Bytes {
		t.Errorf("%s: stats print %d bytes, coverage counted %d", ost, got, lastRead.Counted.Bytes)
	}
	share := Coverages(reads, float64(t0.Add(5*time.Minute).Unix()), float64(end.Unix()))
	for name, c := range share {
		t.Logf("%s: coverage %.4f", name, c)
		if name == ost {
			if c > 0.6 || c < 0.1 {
				t.Errorf("%s (cleanup 1 s, read every 5 s): coverage %.4f, want well below 1", name, c)
			}
			continue
		}
		if c < 0.999 || c > 1.0001 {
			t.Errorf("%s (cleanup 2 min, read every 5 s): coverage %.6f, want 1", name, c)
		}
	}
	if len(share) != cfg.MDTs+cfg.OSTs {
		t.Errorf("coverage of %d targets, want %d", len(share), cfg.MDTs+cfg.OSTs)
	}
}

// Without a reader nothing is seen, and a simulator without Coverage keeps
// nothing.
func TestCoverageOff(t *testing.T) {
	cfg := DemoConfig()
	cfg.Coverage = false
	s := New(cfg)
	var buf bytes.Buffer
	s.WriteParams(&buf, time.Unix(1_800_000_000, 0), "obdfilter.*.job_stats")
	if n := len(s.Coverage()); n != 0 {
		t.Errorf("coverage of %d targets kept when off", n)
	}
	if !strings.Contains(buf.String(), "job_id") {
		t.Error("no entries printed")
	}
}

// Scrapes read job_stats and stats concurrently while the demo's
// /demo/coverage reads the truth (go test -race).
func TestCoverageConcurrentReads(t *testing.T) {
	cfg := DemoConfig()
	cfg.Jobs = 40
	at := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	cfg.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Second)
		return at
	}
	s := New(cfg)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				out, err := s.GetParam(context.Background(), []string{"obdfilter.*.job_stats", "mdt.*.job_stats", "obdfilter.*.stats", "mdt.*.md_stats"})
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, out)
				out.Close()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			Coverages(s.Coverage(), 0, 2e9)
		}
	}()
	wg.Wait()
	if n := len(s.Coverage()); n != cfg.MDTs+cfg.OSTs {
		t.Errorf("coverage of %d targets", n)
	}
}
