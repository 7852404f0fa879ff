package rates

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRun measures one run of the accumulator in steady state: n raw
// series of 20 slots (a Lustre 2.15 OST's operations), every value grown
// since the run before, each series printed once. It is the common case the
// duplicate handling of dups.go must not slow: Observe, Set, EndSection,
// EndRun.
func BenchmarkRun(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("series=%d", n), func(b *testing.B) {
			const slots = 20
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "%d:%d:n%d", 1000000+i, i%300, i%64)
			}
			acc := New[string, struct{}](time.Hour)
			acc.TrackDelta = true
			now := time.Unix(1_700_000_000, 0)
			step := uint64(0)
			run := func() {
				step++
				now = now.Add(30 * time.Second)
				acc.BeginRun(now)
				g := acc.Group("fs-OST0000")
				for slot := range slots {
					g.TrackDelta(g.Slot(fmt.Sprint("op", slot)))
				}
				for i, k := range keys {
					s, _ := g.Observe(k, 1_699_000_000)
					for slot := range slots {
						// Half the operations of a job stay at zero.
						if (i+slot)%2 == 0 {
							g.Set(s, slot, step*uint64(slot+i%7+1))
						} else {
							g.Set(s, slot, 0)
						}
					}
				}
				g.EndSection(true)
				for _, s := range g.Pending() {
					g.Resolve(s, s.Key, true)
				}
				acc.EndRun()
			}
			run()
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
		})
	}
}
