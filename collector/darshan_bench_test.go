package collector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/sidecar/logwatch"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// BenchmarkDarshanScrape10kJobs: one scrape (gather and write, text
// format) of the darshan collector holding 10,000 retained jobs of
// 4-rank logs (POSIX, STDIO and a POSIX heatmap: 69 series each), with
// and without 10 records per job.
//
//	go test ./collector -run XXX -bench DarshanScrape -cpu 2 -count 10
func BenchmarkDarshanScrape10kJobs(b *testing.B) {
	const jobs = 10000
	dir := b.TempDir()
	end := time.Now().Add(-time.Hour)
	for i := range jobs {
		data, err := darshantest.Job{JobID: int64(100000 + i), UID: int64(1000 + i%50), Exe: "/opt/app/bin/solver",
			End: end, Ranks: 4, Bytes: int64(1+i%100) << 16}.Log()
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprint(i%30), fmt.Sprintf("%d.darshan", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, records := range []bool{false, true} {
		b.Run(fmt.Sprintf("records=%v", records), func(b *testing.B) {
			saved := []any{darshanDirs, darshanRecords, darshanNoInotify, darshanRescan, darshanSidecarStarted, darshanMaxSeries}
			defer func() {
				darshanDirs, darshanRecords, darshanNoInotify = saved[0].([]string), saved[1].(bool), saved[2].(bool)
				darshanRescan, darshanSidecarStarted = saved[3].(time.Duration), saved[4].(func(*logwatch.Sidecar))
				darshanMaxSeries = saved[5].(int)
			}()
			var sc *logwatch.Sidecar
			darshanDirs, darshanRecords, darshanNoInotify, darshanRescan = []string{dir}, records, true, time.Hour
			// Every job, whatever they cost: with records they are over the
			// default --darshan.max-series.
			darshanMaxSeries = 0
			darshanSidecarStarted = func(s *logwatch.Sidecar) { sc = s }
			c, err := newDarshanCollector(Env{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.(io.Closer).Close()
			if err := sc.Sync(context.Background()); err != nil {
				b.Fatal(err)
			}
			if n := sc.Snapshot().RetainedJobs; n != jobs {
				b.Fatalf("%d jobs retained", n)
			}
			r := &Registry{collectors: map[string]Collector{"darshan": c}, logger: slog.New(slog.DiscardHandler), failing: map[string]string{}}
			format := expfmt.NewFormat(expfmt.TypeTextPlain)
			var size int64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s := r.NewScrape(context.Background())
				reg := prometheus.NewRegistry()
				reg.MustRegister(s)
				mfs, err := reg.Gather()
				if err != nil {
					b.Fatal(err)
				}
				cw := &darshanByteCounter{}
				if err := exposition.WriteResponse(cw, format, mfs, s.Streams()); err != nil {
					b.Fatal(err)
				}
				size = cw.n
			}
			b.ReportMetric(float64(size)/jobs, "B/job-in-response")
		})
	}
}

type darshanByteCounter struct{ n int64 }

func (w *darshanByteCounter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
