package darshan_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/internal/synth"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
)

// Benchmarks of reading every record of the largest corpus logs and of a
// synthetic log of 100,000 records and 1,000 ranks. darshan-parser 3.5.0
// takes 62 ms (jeanbez) and 155 ms (e3sm) to dump these logs (issue 4);
// BenchmarkDarshanParser runs it in the same session, for ratios on a
// shared, noisy machine.

// loop runs op b.N times and reports CPU ms per op.
func loop(b *testing.B, op func()) {
	b.ReportAllocs()
	report := cpuclock.Start(b)
	n := 0
	for b.Loop() {
		op()
		n++
	}
	report(n)
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
			data := synth.BenchLog(b, name)
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
			data := synth.BenchLog(b, name)
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
			data := synth.BenchLog(b, name)
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
		{"jeanbez", "darshan-parser", "jeanbez"},
		{"e3sm", "darshan-parser", "e3sm"},
		{"dxt-jeanbez", "darshan-dxt-parser", "jeanbez"},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := synth.BenchPath(b, c.log)
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
