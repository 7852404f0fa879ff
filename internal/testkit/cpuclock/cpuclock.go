// Package cpuclock measures the CPU time the process uses. Benchmarks
// report it per operation besides wall time: the machines that run them
// are shared, and CPU time is what contention changes least.
package cpuclock

import (
	"syscall"
	"testing"
	"time"
)

// Used returns the user and system CPU time the process has used so far,
// in all its threads.
func Used() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Start begins measuring; the function it returns reports the CPU time
// since, per operation over ops operations, as the metric cpu-ms/op.
func Start(b *testing.B) func(ops int) {
	start := Used()
	return func(ops int) {
		b.ReportMetric(float64(Used()-start)/float64(time.Millisecond)/float64(max(ops, 1)), "cpu-ms/op")
	}
}
