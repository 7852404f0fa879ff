package jobstats

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// BenchmarkTrackerRun measures one run of the tracker on one OST's
// job_stats with n jobs, as the Lustre source drives it: the sequential
// parser, job_id classification, accumulation, summaries and the View, in
// steady state (the outputs alternate between two times 30 s apart, every
// counter grown). The simulator's ids are well-formed but for its share of
// broken ones; no job_id is printed twice.
func BenchmarkTrackerRun(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			texts := [][]byte{lustresim.JobStatsText(n, 0), lustresim.JobStatsText(n, 30*time.Second)}
			tr, err := New(Config{TTL: time.Hour, UntrustedBucket: true, Labels: []string{"jobid", "uid", "node", "exe"}, DensityBase: 10})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Unix(1_700_000_000, 0)
			var prev *View
			i := 0
			run := func() {
				now = now.Add(30 * time.Second)
				tr.BeginRun(now)
				err := lctl.Scan(bytes.NewReader(texts[i%2]), "", func(param string) lctl.SectionParser {
					if h := tr.Target(param); h != nil {
						return lctl.NewJobStatsParser(h)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				i++
				v := tr.EndRun(nil, nil)
				tr.Recycle(prev)
				prev = v
			}
			run()
			b.SetBytes(int64(len(texts[0])))
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
		})
	}
}
