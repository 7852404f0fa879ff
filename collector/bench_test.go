package collector

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// alternatingSource prints its texts in turn, as a server's output changes
// between scrapes.
type alternatingSource struct {
	texts [][]byte
	n     atomic.Int64
}

func (s *alternatingSource) GetParam(context.Context, []string) (io.ReadCloser, error) {
	i := s.n.Add(1)
	return io.NopCloser(bytes.NewReader(s.texts[int(i)%len(s.texts)])), nil
}

// benchmarkRun measures one lctl run of the jobstats collector on one OST
// with n jobs: parsing, job_id normalization and accumulation, in steady
// state (the ids are known from earlier runs, the counters advanced).
func benchmarkRun(b *testing.B, n int, cold bool) {
	texts := [][]byte{lustresim.JobStatsText(n, 0), lustresim.JobStatsText(n, 30*time.Second)}
	src := &alternatingSource{texts: texts}
	newRegistry := func() *lustre.Source {
		r, err := NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: src})
		if err != nil {
			b.Fatal(err)
		}
		return r.lustre
	}
	// A run, and the scrape that reads its snapshot, done with it.
	run := func(src *lustre.Source) {
		snap, err := src.Snapshot(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		src.Release(snap)
	}
	src2 := newRegistry()
	run(src2)
	b.SetBytes(int64(len(texts[0])))
	b.ReportAllocs()
	for b.Loop() {
		if cold {
			b.StopTimer()
			src2 = newRegistry()
			b.StartTimer()
		}
		run(src2)
	}
}

func BenchmarkJobstatsRun(b *testing.B) {
	saved := *registrations["jobstats"].enabled
	defer func() { *registrations["jobstats"].enabled = saved }()
	for n, r := range registrations {
		if n != "jobstats" {
			defer func(v bool) { *r.enabled = v }(*r.enabled)
			*r.enabled = false
		}
	}
	*registrations["jobstats"].enabled = true
	b.Run("jobs=10000", func(b *testing.B) { benchmarkRun(b, 10000, false) })
	b.Run("jobs=10000/cold", func(b *testing.B) { benchmarkRun(b, 10000, true) })
	b.Run("jobs=100000", func(b *testing.B) { benchmarkRun(b, 100000, false) })
}

// BenchmarkJobFamiliesEncode writes the per-job families of one OST's view
// of n jobs, as the HTTP handler streams them (text, on every core): the
// encoding alone, without the run that made the view.
func BenchmarkJobFamiliesEncode(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			texts := [][]byte{lustresim.JobStatsText(n, 0), lustresim.JobStatsText(n, 30*time.Second)}
			r, err := NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: &alternatingSource{texts: texts}})
			if err != nil {
				b.Fatal(err)
			}
			var snap *lustre.Snapshot
			for range 2 { // the second run has increments
				if snap != nil {
					r.lustre.Release(snap)
				}
				if snap, err = r.lustre.Snapshot(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			defer r.lustre.Release(snap)
			var size countingWriter
			b.ReportAllocs()
			cpu := cpuclock.Start(b)
			for b.Loop() {
				size.n = 0
				if err := exposition.WriteResponse(&size, expfmt.NewFormat(expfmt.TypeTextPlain), nil, lustreJobFamilies(snap.Jobs)); err != nil {
					b.Fatal(err)
				}
			}
			cpu(b.N)
			b.SetBytes(size.n)
		})
	}
}
