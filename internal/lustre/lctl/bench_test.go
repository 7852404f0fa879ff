package lctl_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
)

// counter is a JobStatsHandler that only counts, so that the benchmark
// measures the parser.
type counter struct{ jobs, ops int }

func (c *counter) Job(js *lctl.JobStat)                 { c.jobs++; c.ops += len(js.Ops) }
func (c *counter) End(bool, lctl.SectionStats)          {}
func (c *counter) route(string) lctl.SectionParser      { return lctl.NewJobStatsParser(c) }
func (c *counter) concurrent(string) lctl.SectionParser { return lctl.NewConcurrentJobStatsParser(c) }

// BenchmarkJobStatsParse: Scan and the job_stats parser alone on one OST's
// output of n jobs (Lustre 2.15's format, as the simulator prints it),
// read from memory, sequential and on every core.
func BenchmarkJobStatsParse(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		text := lustresim.JobStatsText(n, 0)
		for _, how := range []string{"sequential", "concurrent"} {
			b.Run(fmt.Sprintf("jobs=%d/%s", n, how), func(b *testing.B) {
				var c counter
				route := c.route
				if how == "concurrent" {
					route = c.concurrent
				}
				b.SetBytes(int64(len(text)))
				cpu := cpuclock.Start(b)
				for b.Loop() {
					c = counter{}
					if err := lctl.Scan(bytes.NewReader(text), "", route); err != nil {
						b.Fatal(err)
					}
				}
				cpu(b.N)
				if c.jobs != n {
					b.Fatalf("%d jobs, want %d", c.jobs, n)
				}
			})
		}
	}
}
