package handler

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// benchmarkScrape measures a whole scrape as Prometheus sees it: an HTTP
// GET of /metrics whose collector runs a fake lctl (a shell script printing
// a server's job_stats of n jobs, a different output each time), until the
// last byte of the response is read.
func benchmarkScrape(b *testing.B, n int, gzip bool) {
	dir := b.TempDir()
	for i, offset := range []time.Duration{0, 30 * time.Second} {
		path := filepath.Join(dir, "out"+string(rune('0'+i)))
		if err := os.WriteFile(path, lustresim.JobStatsText(n, offset), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	script := filepath.Join(dir, "lctl")
	// Alternate between the two outputs, as counters advance between scrapes.
	body := "#!/bin/sh\nstate=" + dir + "/state\nif [ -e $state ]; then rm $state; cat " + dir + "/out1; else touch $state; cat " + dir + "/out0; fi\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats")
	}
	defer func() {
		for _, name := range collector.Names() {
			collector.SetEnabled(name, name == "jobstats")
		}
	}()
	reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: &lctl.Command{Path: script}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(New(reg, prometheus.NewRegistry(), Options{}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func() int64 {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		return n
	}
	size := get() // the first run sees every job for the first time
	b.ReportMetric(float64(size), "response-bytes")
	b.ReportAllocs()
	for b.Loop() {
		get()
	}
}

func BenchmarkScrape(b *testing.B) {
	b.Run("jobs=10000", func(b *testing.B) { benchmarkScrape(b, 10000, false) })
	b.Run("jobs=10000/gzip", func(b *testing.B) { benchmarkScrape(b, 10000, true) })
	b.Run("jobs=100000", func(b *testing.B) { benchmarkScrape(b, 100000, false) })
}
