package collector

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// sumSeries adds up the values of a family's series that carry label.
func sumSeries(t *testing.T, text, family, label string) float64 {
	t.Helper()
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, family+"{") || !strings.Contains(line, label) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}

// The simulated server's churn job writes 64 MiB/s without pause while its
// raw job_ids take turns, vanish after the cleanup interval and come back
// from zero. Scraped every 15 s for 25 minutes, its exported bytes never
// go down, and every interval's increase is the true one: no false spike
// when an entry restarts, no loss when the ids change.
func TestChurnJobThroughSimulator(t *testing.T) {
	onlyCollectors(t, "jobstats")
	clk := &clock{time.Unix(1_700_100_000, 0)}
	cfg := lustresim.DemoConfig()
	cfg.Jobs = 10
	cfg.Now = clk.now
	sim := lustresim.New(cfg)
	r, err := NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: sim, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	var truth float64
	for _, jt := range sim.Truth(clk.t) {
		if jt.JobID == lustresim.ChurnJobID {
			truth = jt.WriteBytesPerSecond
		}
	}
	if truth != 64<<20 {
		t.Fatalf("simulator truth %v B/s, want 64 MiB/s", truth)
	}
	const step = 15 * time.Second
	label := `jobid="` + lustresim.ChurnJobID + `"`
	prev := -1.0
	restarts := 0
	truncatedShown := 0
	for i := 0; i < 100; i++ {
		var raw strings.Builder
		sim.WriteParams(&raw, clk.t, "obdfilter.*.job_stats")
		if strings.Contains(raw.String(), `"`+lustresim.ChurnJobID+`:31337"`) {
			truncatedShown++
		}
		text := scrapeText(t, r, expfmt.FmtText)
		got := sumSeries(t, text, "lustre_job_write_bytes_total", label)
		if prev >= 0 {
			inc := got - prev
			want := truth * step.Seconds()
			// Each counter moves in whole 1 MiB requests.
			if inc < 0 {
				t.Fatalf("scrape %d: the churn job's bytes went down by %v", i, -inc)
			}
			if math.Abs(inc-want) > 4<<20 {
				t.Fatalf("scrape %d: increase %v B in %v, want %v ± 4 MiB", i, inc, step, want)
			}
		}
		prev = got
		if strings.Contains(text, `lustre_jobid_entries_total{component="ost",outcome="repaired_truncated"`) {
			restarts++
		}
		clk.t = clk.t.Add(step)
	}
	// The ids did churn: the truncated id was printed in some outputs and
	// not in others.
	if truncatedShown == 0 || truncatedShown == 100 || restarts == 0 {
		t.Errorf("truncated id printed in %d of 100 outputs: no churn", truncatedShown)
	}
}

// Scrapes streaming the per-job families while other scrapes make new
// runs (go test -race): the families read published views only.
func TestScrapesDuringRuns(t *testing.T) {
	onlyCollectors(t, "jobstats", "memory", "ost_stats", "brw_stats")
	cfg := lustresim.DemoConfig()
	cfg.Jobs = 40
	r := newTestRegistry(t, lustresim.New(cfg))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				s := r.NewScrape(context.Background())
				reg := prometheus.NewRegistry()
				reg.MustRegister(s)
				mfs, err := reg.Gather()
				if err != nil {
					t.Error(err)
					return
				}
				var buf bytes.Buffer
				if err := exposition.WriteResponse(&buf, expfmt.FmtText, mfs, s.Streams()); err != nil {
					t.Error(err)
					return
				}
				s.Close()
				if !strings.Contains(buf.String(), "lustre_job_write_bytes_total{") {
					t.Error("a scrape without per-job series")
					return
				}
			}
		}()
	}
	wg.Wait()
}
