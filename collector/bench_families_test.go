package collector

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// countingWriter counts the bytes of a response.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// benchmarkServerScrape measures whole scrapes of a big server, as the
// handler makes them: one lctl run parsed by every enabled collector, the
// gathering, and the response written in the text format. The server is
// the simulator's: 16 OSTs, 2 MDTs, 10,000 jobs, every family; its output
// alternates between two moments 30 s apart, as between two scrapes.
func benchmarkServerScrape(b *testing.B, collectors []string) {
	saved := map[string]bool{}
	for n, r := range registrations {
		saved[n] = *r.enabled
		*r.enabled = false
	}
	defer func() {
		for n, on := range saved {
			*registrations[n].enabled = on
		}
	}()
	for _, n := range collectors {
		*registrations[n].enabled = true
	}
	src := &alternatingSource{}
	r, err := NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: src})
	if err != nil {
		b.Fatal(err)
	}
	sim := lustresim.New(lustresim.Config{Seed: 7, FSName: "bench", OSTs: 16, MDTs: 2, Jobs: 10000, Static: true})
	for _, offset := range []time.Duration{0, 30 * time.Second} {
		var buf bytes.Buffer
		if err := sim.WriteEachParam(&buf, lustresim.BenchTime.Add(offset), r.lustre.Patterns()...); err != nil {
			b.Fatal(err)
		}
		src.texts = append(src.texts, buf.Bytes())
	}
	scrape := func() int64 {
		s := r.NewScrape(context.Background())
		defer s.Close() // as the handler does: the run's arena is reused
		reg := prometheus.NewRegistry()
		reg.MustRegister(s)
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		var out countingWriter
		if err := exposition.WriteResponse(&out, expfmt.FmtText, mfs, s.Streams()); err != nil {
			b.Fatal(err)
		}
		return out.n
	}
	scrape() // the first run sees every job and series for the first time
	size := scrape()
	b.ReportAllocs()
	for b.Loop() {
		scrape()
	}
	// After the loop: b.Loop's first call resets the reported metrics.
	b.ReportMetric(float64(size), "response-bytes")
	b.ReportMetric(float64(len(src.texts[0])), "lctl-bytes")
}

// BenchmarkServerScrape: the jobstats collector and every family collector
// (quota and export_stats included), the families alone, those on by
// default alone (no quota, no per-client export stats), and jobstats alone.
func BenchmarkServerScrape(b *testing.B) {
	families := []string{"brw_stats", "capacity", "changelog", "export_stats", "exports", "health", "ldlm", "llite",
		"mdt_stats", "memory", "osd_stats", "osp", "ost_stats", "quota", "recovery", "service_stats", "version"}
	b.Run("all", func(b *testing.B) { benchmarkServerScrape(b, append([]string{"jobstats"}, families...)) })
	b.Run("families", func(b *testing.B) { benchmarkServerScrape(b, families) })
	var defaults []string
	for _, n := range families {
		if registrations[n].defaultEnabled {
			defaults = append(defaults, n)
		}
	}
	b.Run("families-default", func(b *testing.B) { benchmarkServerScrape(b, defaults) })
	b.Run("jobstats", func(b *testing.B) { benchmarkServerScrape(b, []string{"jobstats"}) })
}
