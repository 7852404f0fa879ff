package handler

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
)

// memorySource prints its texts in turn from memory, as counters advance
// between scrapes: the scrape without lctl's process and pipe.
type memorySource struct {
	texts [][]byte
	n     atomic.Int64
}

func (s *memorySource) GetParam(context.Context, []string) (io.ReadCloser, error) {
	i := s.n.Add(1)
	return io.NopCloser(bytes.NewReader(s.texts[int(i)%len(s.texts)])), nil
}

// benchmarkScrape measures a whole scrape as Prometheus sees it: an HTTP
// GET of /metrics whose collector runs a fake lctl (a shell script printing
// a server's job_stats of n jobs, a different output each time), until the
// last byte of the response is read. With exec false, the same outputs
// come from memory: the difference is the cost of the process and the
// pipe, which cmd/hpcio_exporter's BenchmarkBinaryScrape pays too.
func benchmarkScrape(b *testing.B, n int, gzip, exec bool, accept string) {
	dir := b.TempDir()
	texts := [][]byte{lustresim.JobStatsText(n, 0), lustresim.JobStatsText(n, 30*time.Second)}
	var src lctl.Source = &memorySource{texts: texts}
	if exec {
		for i, text := range texts {
			path := filepath.Join(dir, "out"+string(rune('0'+i)))
			if err := os.WriteFile(path, text, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		script := filepath.Join(dir, "lctl")
		// Alternate between the two outputs, as counters advance between scrapes.
		body := "#!/bin/sh\nstate=" + dir + "/state\nif [ -e $state ]; then rm $state; cat " + dir + "/out1; else touch $state; cat " + dir + "/out0; fi\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			b.Fatal(err)
		}
		src = &lctl.Command{Path: script}
	}
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats")
	}
	defer func() {
		for _, name := range collector.Names() {
			collector.SetEnabled(name, name == "jobstats")
		}
	}()
	reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: src})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(New(reg, prometheus.NewRegistry(), Options{}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func() int64 {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("Accept", accept)
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
	get() // the first run sees every job for the first time
	b.ReportAllocs()
	cpu := cpuclock.Start(b)
	var size int64
	for b.Loop() {
		size = get()
	}
	cpu(b.N)
	b.ReportMetric(float64(size), "response-bytes")
}

// BenchmarkScrape: the whole scrape in one process, lctl run as a process
// (lctl=exec) or read from memory (lctl=memory), plain and gzipped, in the
// text format or in protobuf (fmt=proto, as Prometheus 3 asks); the CPU
// time includes the client's reading, not its decoding.
func BenchmarkScrape(b *testing.B) {
	formats := []struct{ name, accept string }{
		{"text", "text/plain;version=0.0.4"},
		{"proto", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"},
	}
	for _, n := range []int{10000, 100000} {
		for _, gzip := range []bool{false, true} {
			for _, exec := range []bool{true, false} {
				for _, f := range formats {
					enc, how := "plain", "exec"
					if gzip {
						enc = "gzip"
					}
					if !exec {
						how = "memory"
					}
					b.Run(fmt.Sprintf("jobs=%d/enc=%s/lctl=%s/fmt=%s", n, enc, how, f.name), func(b *testing.B) { benchmarkScrape(b, n, gzip, exec, f.accept) })
				}
			}
		}
	}
}
