package parsertext

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/internal/synth"
	"github.com/hpcio/hpcio_exporter/internal/corpus"
)

// Benchmarks of Dump (darshan-parser --show-incomplete) from the log file in
// memory to io.Discard: opening, reading and printing. darshan-parser 3.5.0
// takes 62 ms (jeanbez) and 155 ms (e3sm) for the same work (issue 4).

var synthetic = sync.OnceValues(func() ([]byte, error) { return synth.Large(100000, 1000) })

func benchLog(b *testing.B, name string) []byte {
	if name == "synthetic-100k" {
		data, err := synthetic()
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	rel := map[string]string{
		"jeanbez": "apps/jeanbez_8_benchmark_parallel_id45195555_8-6-50011-11681279140261054765_1628283217.darshan",
		"e3sm":    "apps/e3sm_io_heatmap_only.darshan",
	}[name]
	data, err := os.ReadFile(filepath.Join(corpus.Dir(b, "darshan"), rel))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchPrint(b *testing.B, print func(w, warn io.Writer, l *darshan.Log) error) {
	for _, name := range []string{"jeanbez", "e3sm", "synthetic-100k"} {
		b.Run(name, func(b *testing.B) {
			data := benchLog(b, name)
			b.ReportAllocs()
			var out countingWriter
			start, n := cpuTime(), 0
			for b.Loop() {
				l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), name)
				if err != nil {
					b.Fatal(err)
				}
				if err := print(&out, nil, l); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
			b.ReportMetric(float64(out.n)/float64(n)/1e6, "MB-out/op")
		})
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkDump(b *testing.B)  { benchPrint(b, Dump) }
func BenchmarkTotal(b *testing.B) { benchPrint(b, Total) }
func BenchmarkDXT(b *testing.B)   { benchPrint(b, DXT) }
