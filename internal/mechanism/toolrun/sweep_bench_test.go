//go:build linux

package toolrun

import (
	"os"
	"testing"
)

// BenchmarkSweep is one look for strays: the listing of /proc, made in the
// background after each run. Its cost grows with the processes of the
// machine, reported beside it.
func BenchmarkSweep(b *testing.B) {
	for b.Loop() {
		sweep()
	}
	entries, _ := os.ReadDir("/proc")
	procs := 0
	for _, e := range entries {
		if n := e.Name(); n[0] >= '0' && n[0] <= '9' {
			procs++
		}
	}
	b.ReportMetric(float64(procs), "procs")
}
