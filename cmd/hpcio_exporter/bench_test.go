package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// peakRSS reads a process' high-water resident set, in bytes.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// BenchmarkBinaryScrape runs the built exporter with a fake lctl (a shell
// script that cats one OST of n jobs in Lustre 2.15's format, two outputs
// in turn, as counters advance) and scrapes it through HTTP as Prometheus
// does: time per scrape until the last byte is read, the bytes read, and
// the process' peak RSS. enc=gzip asks for gzip and reads the compressed
// bytes as they come (the client does not decompress: Prometheus does, but
// on its own cores). Each case has an exporter of its own, so that its peak
// RSS is its own.
func BenchmarkBinaryScrape(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		for _, gzip := range []bool{false, true} {
			enc := "plain"
			if gzip {
				enc = "gzip"
			}
			b.Run(fmt.Sprintf("jobs=%d/enc=%s", n, enc), func(b *testing.B) { benchmarkBinaryScrape(b, n, gzip) })
		}
	}
}

func benchmarkBinaryScrape(b *testing.B, n int, gzip bool) {
	bin := buildExporter(b)
	dir := b.TempDir()
	for i, offset := range []time.Duration{0, 30 * time.Second} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("out", i)), lustresim.JobStatsText(n, offset), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	script := filepath.Join(dir, "lctl")
	body := "#!/bin/sh\nif [ -e " + dir + "/state ]; then rm " + dir + "/state; cat " + dir + "/out1; else touch " + dir + "/state; cat " + dir + "/out0; fi\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		b.Fatal(err)
	}
	e := startExporter(b, bin, "--lustre.lctl-path="+script, "--lustre.timeout=60s")
	// DisableCompression: with Accept-Encoding set by hand, the transport
	// hands the body over as it came.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 120 * time.Second}
	scrape := func() int64 {
		req, _ := http.NewRequest("GET", "http://"+e.Addr+"/metrics", nil)
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		size, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != gzip {
			b.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
		}
		return size
	}
	scrape() // first sight of every job
	var size int64
	for b.Loop() {
		size = scrape()
	}
	rss, err := peakRSS(e.Cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size), "response-bytes")
	b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
}
