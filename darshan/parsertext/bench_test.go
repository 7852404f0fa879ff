package parsertext

import (
	"bytes"
	"io"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/internal/synth"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
)

// Benchmarks of Dump (darshan-parser --show-incomplete) from the log file in
// memory to io.Discard: opening, reading and printing. darshan-parser 3.5.0
// takes 62 ms (jeanbez) and 155 ms (e3sm) for the same work (issue 4).

func benchPrint(b *testing.B, print func(w, warn io.Writer, l *darshan.Log) error) {
	for _, name := range []string{"jeanbez", "e3sm", "synthetic-100k"} {
		b.Run(name, func(b *testing.B) {
			data := synth.BenchLog(b, name)
			b.ReportAllocs()
			var out countingWriter
			report, n := cpuclock.Start(b), 0
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
			report(n)
			b.ReportMetric(float64(out.n)/float64(n)/1e6, "MB-out/op")
		})
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func BenchmarkDump(b *testing.B)  { benchPrint(b, Dump) }
func BenchmarkTotal(b *testing.B) { benchPrint(b, Total) }
func BenchmarkDXT(b *testing.B)   { benchPrint(b, DXT) }
