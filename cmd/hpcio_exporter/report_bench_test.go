package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// BenchmarkReportProcessLargest runs the whole process, `hpcio_exporter
// report --format=json` of the largest corpus log (3.6 MB, DXT traces of
// 8 ranks), as a user or an epilog runs it: start, read, write, exit. The
// issue's target is 0.3 s; the page's format is benchmarked by
// BenchmarkReportProcessLargestHTML once the page is built.
func BenchmarkReportProcessLargest(b *testing.B) {
	benchReportProcess(b, "--format=json")
}

func BenchmarkReportProcessLargestHTML(b *testing.B) {
	if _, _, err := reportOnce(b, "--format=html"); err != nil {
		b.Skipf("no HTML page in this build: %v", err)
	}
	benchReportProcess(b, "--format=html")
}

func reportOnce(b *testing.B, format string) (string, string, error) {
	bin := buildExporter(b)
	var stderr strings.Builder
	cmd := exec.Command(bin, "report", format, corpus.LargestDarshanLog(b))
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err := cmd.Run()
	return bin, stderr.String(), err
}

func benchReportProcess(b *testing.B, format string) {
	bin := buildExporter(b)
	log := corpus.LargestDarshanLog(b)
	// The process' CPU time beside the wall time: on a shared machine the
	// wall time is the scheduler's as much as the report's.
	var cpu, rss float64
	for b.Loop() {
		var stderr strings.Builder
		cmd := exec.Command(bin, "report", format, log)
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %s", err, stderr.String())
		}
		ps := cmd.ProcessState
		cpu += (ps.UserTime() + ps.SystemTime()).Seconds()
		rss = max(rss, float64(ps.SysUsage().(*syscall.Rusage).Maxrss)*1024)
	}
	// ru_maxrss of a child of this process counts this process' peak too
	// (peakrss_test.go): small here, where the benchmark holds no log.
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(rss, "peak-rss-bytes")
}

// The report of the largest corpus log stays within a generous memory
// bound (peak RSS of the real process; it is about 30 MB).
func TestReportPeakMemory(t *testing.T) {
	t.Parallel()
	log := corpus.LargestDarshanLog(t)
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	bin := buildExporter(t)
	var stderr strings.Builder
	// Through the wrapper: a child started from this test process would
	// count the test process' own peak (peakrss_test.go).
	m, err := runMeasured(2*time.Minute, io.Discard, &stderr, bin, "report", log)
	if err != nil || m.status != 0 {
		t.Fatalf("report: status %d, %v: %s", m.status, err, stderr.String())
	}
	rss := m.maxRSSKiB * 1024
	t.Logf("report of %s (%d bytes): peak RSS %d MiB", filepath.Base(log), size, rss>>20)
	if rss > 256<<20 {
		t.Errorf("peak RSS %d MiB, more than 256 MiB", rss>>20)
	}
}
