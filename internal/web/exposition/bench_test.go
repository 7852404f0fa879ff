package exposition

import (
	"fmt"
	"io"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
)

// jobFamily is a per-job family as the jobstats collector writes it: rows
// of a target cut into parts of 128, each row's labels written once and
// one sample per operation.
func jobFamily(rows int, ops []string) Family {
	ids := make([]string, rows)
	for r := range ids {
		ids[r] = fmt.Sprint(11300000 + r*7919%1000003)
	}
	const perPart = 128
	return Family{Name: "lustre_job_stats", Help: "Operations per job.", Type: Counter,
		Parts: (rows + perPart - 1) / perPart,
		WritePart: func(w *Writer, part int) error {
			for r := part * perPart; r < min(rows, (part+1)*perPart); r++ {
				w.ResetLabels()
				w.Label("component", "ost")
				w.Label("target", "bench-OST0000")
				w.Label("jobid", ids[r])
				w.Label("uid", "20000")
				w.Label("node", "r18c40")
				mark := w.LabelMark()
				for i, op := range ops {
					w.TruncateLabels(mark)
					w.Label("operation", op)
					if err := w.SampleUint(uint64(r)*1000+uint64(i), 1.7e9); err != nil {
						return err
					}
				}
			}
			return nil
		}}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkWriteResponse: the encoding of a response of per-job series
// alone (no scrape, no HTTP), plain and gzipped as the handler does.
func BenchmarkWriteResponse(b *testing.B) {
	ops := []string{"read", "write", "getattr", "setattr", "punch", "sync", "statfs", "create"}
	for _, rows := range []int{10000, 100000} {
		streams := []Family{jobFamily(rows, ops)}
		for _, gz := range []bool{false, true} {
			for _, format := range []expfmt.Format{expfmt.FmtText, expfmt.FmtProtoDelim} {
				enc, name := "plain", "text"
				if gz {
					enc = "gzip"
				}
				if format == expfmt.FmtProtoDelim {
					name = "proto"
				}
				b.Run(fmt.Sprintf("rows=%d/enc=%s/fmt=%s", rows, enc, name), func(b *testing.B) {
					var out countingWriter
					z := NewGzip(nil)
					cpu := cpuclock.Start(b)
					for b.Loop() {
						var body io.Writer = &out
						if gz {
							z.Reset(&out)
							body = z
						}
						if err := WriteResponse(body, format, nil, streams); err != nil {
							b.Fatal(err)
						}
						if gz {
							if err := z.Close(); err != nil {
								b.Fatal(err)
							}
						}
					}
					cpu(b.N)
					b.ReportMetric(float64(out.n)/float64(b.N), "response-bytes")
				})
			}
		}
	}
}
