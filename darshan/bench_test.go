package darshan_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/internal/synth"
	"github.com/hpcio/hpcio_exporter/internal/corpus"
)

// Benchmarks of reading every record of the largest corpus logs and of a
// synthetic log of 100,000 records and 1,000 ranks. darshan-parser 3.5.0
// takes 62 ms (jeanbez) and 155 ms (e3sm) to dump these logs (issue 4);
// BenchmarkDarshanParser runs it in the same session, for ratios on a
// shared, noisy machine.

const (
	jeanbez = "apps/jeanbez_8_benchmark_parallel_id45195555_8-6-50011-11681279140261054765_1628283217.darshan"
	e3sm    = "apps/e3sm_io_heatmap_only.darshan"
)

var synthetic = sync.OnceValues(func() ([]byte, error) { return synth.Large(100000, 1000) })

// benchLog returns a benchmark log, in memory: "synthetic-100k" made by the
// Writer, or a corpus log (the benchmark is skipped without the corpus).
func benchLog(b *testing.B, name string) []byte {
	if name == "synthetic-100k" {
		data, err := synthetic()
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	rel := map[string]string{"jeanbez": jeanbez, "e3sm": e3sm}[name]
	data, err := os.ReadFile(filepath.Join(corpus.Dir(b, "darshan"), rel))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// cpuTime returns the user+system CPU time the process has used. The
// benchmarks report it per operation besides wall time: the test machines
// are shared, and CPU time is what contention changes least.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs op b.N times and reports CPU ms per op.
func loop(b *testing.B, op func()) {
	b.ReportAllocs()
	start := cpuTime()
	n := 0
	for b.Loop() {
		op()
		n++
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
}

// readAll opens the log and decodes every record of every module.
func readAll(b *testing.B, data []byte) int {
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, m := range l.Modules() {
		rd := l.Records(m.ID)
		for rd.Next() {
			n++
		}
		if err := rd.Err(); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// readAllParallel decodes every record with one goroutine per module: a Log
// may serve several RecordReaders at once.
func readAllParallel(b *testing.B, data []byte) int {
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	mods := l.Modules()
	counts := make([]int, len(mods))
	errs := make([]error, len(mods))
	var wg sync.WaitGroup
	for i, m := range mods {
		wg.Go(func() {
			rd := l.Records(m.ID)
			for rd.Next() {
				counts[i]++
			}
			errs[i] = rd.Err()
		})
	}
	wg.Wait()
	n := 0
	for i := range mods {
		if errs[i] != nil {
			b.Fatal(errs[i])
		}
		n += counts[i]
	}
	return n
}

// BenchmarkReadAllParallel is BenchmarkReadAll with the modules read
// concurrently, as the sidecar can.
func BenchmarkReadAllParallel(b *testing.B) {
	for _, name := range []string{"jeanbez", "e3sm", "synthetic-100k"} {
		b.Run(name, func(b *testing.B) {
			data := benchLog(b, name)
			var n int
			loop(b, func() { n = readAllParallel(b, data) })
			b.ReportMetric(float64(n), "records")
		})
	}
}

// BenchmarkReadParserModules reads the records darshan-parser's dump reads:
// every module but DXT_POSIX and DXT_MPIIO (darshan-dxt-parser's).
func BenchmarkReadParserModules(b *testing.B) {
	for _, name := range []string{"jeanbez", "e3sm", "synthetic-100k"} {
		b.Run(name, func(b *testing.B) {
			data := benchLog(b, name)
			var n int
			loop(b, func() {
				l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "bench")
				if err != nil {
					b.Fatal(err)
				}
				n = 0
				for _, m := range l.Modules() {
					if m.ID == darshan.DXTPOSIX || m.ID == darshan.DXTMPIIO {
						continue
					}
					rd := l.Records(m.ID)
					for rd.Next() {
						n++
					}
				}
			})
			b.ReportMetric(float64(n), "records")
		})
	}
}

func BenchmarkReadAll(b *testing.B) {
	for _, name := range []string{"jeanbez", "e3sm", "synthetic-100k"} {
		b.Run(name, func(b *testing.B) {
			data := benchLog(b, name)
			var n int
			loop(b, func() { n = readAll(b, data) })
			b.ReportMetric(float64(n), "records")
		})
	}
}

// BenchmarkDarshanParser runs darshan-util 3.5.0's darshan-parser
// --show-incomplete (and darshan-dxt-parser on jeanbez) as whole
// processes writing to /dev/null, the reference measurement. It is
// not part of the project: build darshan-util and point DARSHAN_UTIL_BIN at
// its bin directory (LD_LIBRARY_PATH as it needs); skipped otherwise.
func BenchmarkDarshanParser(b *testing.B) {
	dir := os.Getenv("DARSHAN_UTIL_BIN")
	if dir == "" {
		b.Skip("DARSHAN_UTIL_BIN is not set: no reference darshan-util to run")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for _, c := range []struct{ name, tool, log string }{
		{"jeanbez", "darshan-parser", jeanbez},
		{"e3sm", "darshan-parser", e3sm},
		{"dxt-jeanbez", "darshan-dxt-parser", jeanbez},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(corpus.Dir(b, "darshan"), c.log)
			for b.Loop() {
				cmd := exec.Command(filepath.Join(dir, c.tool), "--show-incomplete", path)
				cmd.Stdout = null
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
