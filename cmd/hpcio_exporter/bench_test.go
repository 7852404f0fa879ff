package main

import (
	"bufio"
	"bytes"
	stdgzip "compress/gzip"
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
//
// HPCIO_BENCH_BINARY=path scrapes that binary instead of this tree's (a
// build of an older commit: run both in turn, then benchstat), and
// HPCIO_BENCH_CPUPROFILE=dir writes a CPU profile of the exporter over the
// timed scrapes of each case into dir (the exporter runs with
// --web.enable-pprof; give -benchtime enough scrapes to cover 10 s).
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
	bin := os.Getenv("HPCIO_BENCH_BINARY")
	if bin == "" {
		bin = buildExporter(b)
	}
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
	// Every job's series, as the figures of docs/performance.md have always
	// been taken (the default cap folds jobs past 20,000 per target).
	args := []string{"--lustre.lctl-path=" + script, "--lustre.timeout=60s", "--lustre.jobstats.max-series=0"}
	profileDir := os.Getenv("HPCIO_BENCH_CPUPROFILE")
	if profileDir != "" {
		args = append(args, "--web.enable-pprof")
	}
	e := startExporter(b, bin, args...)
	// DisableCompression: with Accept-Encoding set by hand, the transport
	// hands the body over as it came.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 120 * time.Second}
	// scrape returns the bytes read and the lctl run's duration the
	// response reports (hpcio_exporter_lctl_last_run_duration_seconds,
	// among the first lines), so that the exec, pipe and parse stay
	// visible beside the rest of the scrape.
	head := make([]byte, 256<<10)
	scrape := func() (int64, float64) {
		req, _ := http.NewRequest("GET", "http://"+e.Addr+"/metrics", nil)
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.ReadFull(resp.Body, head)
		size, err := io.Copy(io.Discard, resp.Body)
		size += int64(n)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != gzip {
			b.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
		}
		return size, lctlRunSeconds(head[:n], gzip)
	}
	scrape() // first sight of every job
	var profiled chan error
	if profileDir != "" {
		profiled = make(chan error, 1)
		name := filepath.Join(profileDir, strings.NewReplacer("/", "-", "=", "").Replace(b.Name())+".pprof")
		go func() { profiled <- cpuProfile("http://"+e.Addr+"/debug/pprof/profile?seconds=10", name) }()
	}
	var size int64
	var lctlSeconds float64
	scrapes := 0
	cpu0, err := processCPU(e.Cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var run float64
		size, run = scrape()
		lctlSeconds += run
		scrapes++
	}
	cpu1, err := processCPU(e.Cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			b.Error(err)
		}
	}
	rss, err := peakRSS(e.Cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size), "response-bytes")
	b.ReportMetric(lctlSeconds/float64(scrapes)*1e3, "lctl-run-ms")
	// The exporter's CPU time per scrape (lctl's own not included): on a
	// shared machine, what contention changes least.
	b.ReportMetric((cpu1-cpu0).Seconds()*1e3/float64(scrapes), "exporter-cpu-ms")
	b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
}

// cpuProfile saves the CPU profile served at url into file.
func cpuProfile(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lctlRunSeconds finds hpcio_exporter_lctl_last_run_duration_seconds in the
// first bytes of a response (gzipped or not); 0 when it is not there.
func lctlRunSeconds(head []byte, gzipped bool) float64 {
	text := head
	if gzipped {
		zr, err := stdgzip.NewReader(bytes.NewReader(head))
		if err != nil {
			return 0
		}
		text, _ = io.ReadAll(io.LimitReader(zr, 1<<20))
	}
	const name = "\nhpcio_exporter_lctl_last_run_duration_seconds "
	i := bytes.Index(text, []byte(name))
	if i < 0 {
		return 0
	}
	line := text[i+len(name):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	v, _ := strconv.ParseFloat(string(line), 64)
	return v
}

// processCPU returns the user and system CPU time a process has used, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 100 Hz on Linux).
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	fields := strings.Fields(string(data[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
