package logwatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// Benchmarks of the sidecar (no timed assertions; compare runs with
// benchstat):
//
//	go test ./internal/sidecar/logwatch -run XXX -bench . -cpu 2 -count 10 | tee new.txt
//
// Ingest* report logs/s and the CPU time per operation (cpu-ms/op, what
// other work on a shared machine changes least): a fresh sidecar with 2
// workers finds, reads and stores every log of a directory, as after a
// restart.

// ingestDir runs a fresh sidecar over dir per iteration.
func ingestDir(b *testing.B, dir string, logs int, maxRecords int, ins *insights.Config) {
	b.ReportAllocs()
	b.ResetTimer()
	report, n := cpuclock.Start(b), 0
	for b.Loop() {
		n++
		ingestOnce(b, dir, logs, maxRecords, ins)
	}
	report(n)
	b.ReportMetric(float64(logs)*float64(b.N)/b.Elapsed().Seconds(), "logs/s")
}

// ingestOnce runs a fresh sidecar over dir, until it has read its logs.
func ingestOnce(b *testing.B, dir string, logs int, maxRecords int, ins *insights.Config) {
	s, err := Start(Config{Dirs: []string{dir}, Workers: 2, NoInotify: true, RescanInterval: time.Hour,
		Retention: 100000 * time.Hour, MaxRecords: maxRecords, ExeLabel: true, Insights: ins})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Sync(context.Background()); err != nil {
		b.Fatal(err)
	}
	if snap := s.Snapshot(); snap.Processed != uint64(logs) {
		b.Fatalf("processed %d of %d", snap.Processed, logs)
	}
	s.Close()
}

// ingestRatio ingests dir without and with insights in turn (each first
// every other iteration), and reports the CPU time of each per iteration
// and their ratio, insights-ratio: what other work on the machine costs
// falls on both alike, where two benchmarks run one after the other see
// it change (between runs of BenchmarkIngestSmall, its two parts' ratio
// went from 0.9 to 1.4).
func ingestRatio(b *testing.B, dir string, logs int) {
	cfg := insights.DefaultConfig()
	var off, on time.Duration
	n := 0
	for b.Loop() {
		for k := range 2 {
			with := (k+n)%2 == 1
			start := cpuclock.Used()
			if with {
				ingestOnce(b, dir, logs, 0, &cfg)
				on += cpuclock.Used() - start
			} else {
				ingestOnce(b, dir, logs, 0, nil)
				off += cpuclock.Used() - start
			}
		}
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	b.ReportMetric(ms(off), "cpu-ms-without/op")
	b.ReportMetric(ms(on), "cpu-ms-with/op")
	b.ReportMetric(float64(on)/float64(off), "insights-ratio")
}

// BenchmarkIngestCorpus reads the corpus' generated/ and release/ logs
// (38 logs, 0.8 to 470 KB), each copied 5 times.
func BenchmarkIngestCorpus(b *testing.B) {
	dir, n := corpusCopies(b)
	// The cost of the insights: the same logs without and with them.
	cfg := insights.DefaultConfig()
	b.Run("insights=false", func(b *testing.B) { ingestDir(b, dir, n, 0, nil) })
	b.Run("insights=true", func(b *testing.B) { ingestDir(b, dir, n, 0, &cfg) })
}

// corpusCopies writes 5 copies of the corpus' generated/ and release/ logs
// under a temporary directory, and returns it with the number of logs.
func corpusCopies(b *testing.B) (string, int) {
	src := corpus.Dir(b, "darshan")
	dir := b.TempDir()
	n := 0
	for _, sub := range []string{"generated", "release"} {
		paths, _ := filepath.Glob(filepath.Join(src, sub, "*.darshan"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			for k := range 5 {
				writeFile(b, filepath.Join(dir, fmt.Sprint(k), sub, filepath.Base(p)), data)
				n++
			}
		}
	}
	return dir, n
}

// BenchmarkIngestInsightsRatio is the cost of the insights in the ingests
// of BenchmarkIngestCorpus and BenchmarkIngestSmall, measured in turn
// (ingestRatio): insights-ratio is the CPU time with them over the CPU
// time without.
func BenchmarkIngestInsightsRatio(b *testing.B) {
	b.Run("corpus", func(b *testing.B) {
		dir, n := corpusCopies(b)
		ingestRatio(b, dir, n)
	})
	b.Run("small", func(b *testing.B) {
		dir := b.TempDir()
		writeJobs(b, dir, 200, 4)
		ingestRatio(b, dir, 200)
	})
	// small in a process whose heap holds 64 MiB more, as that of a
	// sidecar retaining some ten thousand jobs (4 KB each,
	// RetainedJobMemory): the collector runs less often than at Go's 4 MB
	// floor, where each ingest of 200 logs brings one or two collections.
	b.Run("small-64MiB-heap", func(b *testing.B) {
		heap := make([]byte, 64<<20)
		dir := b.TempDir()
		writeJobs(b, dir, 200, 4)
		ingestRatio(b, dir, 200)
		runtime.KeepAlive(heap)
	})
}

func writeJobs(b *testing.B, dir string, n, ranks int) {
	end := time.Now().Add(-time.Hour)
	for i := range n {
		data, err := darshantest.Job{JobID: int64(1000 + i), UID: 1000, Exe: "/opt/app/bin/solver -x", End: end, Ranks: ranks, Bytes: 1 << 20}.Log()
		if err != nil {
			b.Fatal(err)
		}
		writeFile(b, filepath.Join(dir, fmt.Sprint(i%7), fmt.Sprintf("u_solver_id%d-1_1-1-1-1_1.darshan", 1000+i)), data)
	}
}

// BenchmarkIngestSmall reads 200 generated 4-rank logs (no corpus needed).
func BenchmarkIngestSmall(b *testing.B) {
	dir := b.TempDir()
	writeJobs(b, dir, 200, 4)
	cfg := insights.DefaultConfig()
	b.Run("insights=false", func(b *testing.B) { ingestDir(b, dir, 200, 0, nil) })
	b.Run("insights=true", func(b *testing.B) { ingestDir(b, dir, 200, 0, &cfg) })
}

// BenchmarkIngest1000Ranks reads 20 logs of 1,000-rank jobs: 1,001 POSIX
// records and 1,000 HEATMAP records each (about 60 KB).
func BenchmarkIngest1000Ranks(b *testing.B) {
	dir := b.TempDir()
	writeJobs(b, dir, 20, 1000)
	b.Run("records=0", func(b *testing.B) { ingestDir(b, dir, 20, 0, nil) })
	b.Run("records=10", func(b *testing.B) { ingestDir(b, dir, 20, 10, nil) })
}

// BenchmarkRetainedJobMemory reports the heap a retained job costs: the
// store holds the summary of each log and the view exported, for jobs
// made of the corpus' generated/ and release/ logs (cycled, each job
// another identity) or, without the corpus, of 4-rank generated logs.
func BenchmarkRetainedJobMemory(b *testing.B) {
	var logs []*darshan.Log
	if root := corpus.Root(); root != "" {
		for _, sub := range []string{"generated", "release"} {
			paths, _ := filepath.Glob(filepath.Join(root, "corpus", "darshan", sub, "*.darshan"))
			for _, p := range paths {
				if l, err := darshan.Open(p); err == nil {
					logs = append(logs, l)
				}
			}
		}
	}
	if len(logs) == 0 {
		b.Log("corpus absent: generated 4-rank logs")
		dir := b.TempDir()
		writeJobs(b, dir, 1, 4)
		paths, _ := filepath.Glob(filepath.Join(dir, "*", "*.darshan"))
		l, err := darshan.Open(paths[0])
		if err != nil {
			b.Fatal(err)
		}
		logs = append(logs, l)
	}
	cfg := insights.DefaultConfig()
	for _, c := range []struct {
		records int
		cfg     *insights.Config
	}{{0, nil}, {10, nil}, {0, &cfg}} {
		b.Run(fmt.Sprintf("records=%d/insights=%v", c.records, c.cfg != nil), func(b *testing.B) {
			records := c.records
			const jobs = 10000
			var perJob float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				st := newStore(Config{Retention: 100000 * time.Hour, MaxRecords: records, Insights: c.cfg})
				now := time.Now()
				for i := range jobs {
					l := logs[i%len(logs)]
					sum := signals.Summarize(l, records)
					var totals insights.Packed
					if c.cfg != nil {
						t, err := insights.FromLog(l)
						if err != nil {
							b.Fatal(err)
						}
						t.ForgetNames() // as the sidecar keeps them
						totals = t.AppendPacked(nil)
					}
					st.add(fmt.Sprintf("/d/%d.darshan", i), Identity{JobID: fmt.Sprint(i), UID: "1000", Exe: "app"}, sum, totals, fmt.Sprint(i), now, now)
				}
				st.views()
				runtime.GC()
				runtime.ReadMemStats(&after)
				perJob = float64(after.HeapAlloc-before.HeapAlloc) / jobs
				runtime.KeepAlive(st)
			}
			b.ReportMetric(perJob, "B/job")
		})
	}
}
