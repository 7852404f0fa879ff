package main

// The figures of issue 36 (items 7, 8 and 9), measured on the built
// binary with its default flags: HPCIO_SIDECAR_FIGURES=1 go test
// ./cmd/hpcio_exporter -run TestSidecarFigures -v -timeout 30m. The same
// file, dropped into an older tree, measures the older code (it gives no
// flag the older code lacks). The figures are logged; the assertions are
// the bounds the sidecar promises (docs/threat-model.md).

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

func TestSidecarFigures(t *testing.T) {
	if os.Getenv("HPCIO_SIDECAR_FIGURES") == "" {
		t.Skip("HPCIO_SIDECAR_FIGURES=1 measures the sidecar's figures of issue 36 (minutes)")
	}
	bin := buildExporter(t)
	t.Run("flood", func(t *testing.T) { figuresFlood(t, bin) })
	t.Run("rewrite", func(t *testing.T) { figuresRewrite(t, bin) })
	t.Run("deep", func(t *testing.T) { figuresDeep(t, bin) })
}

// rawScrape scrapes e's /metrics as text and returns the body and how long
// the scrape took.
func rawScrape(addr string) (string, time.Duration, error) {
	begin := time.Now()
	req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return string(data), time.Since(begin), err
}

// metricValue returns the value of the sample line that starts with
// prefix (name and labels), -1 without one.
func metricValue(text, prefix string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

func seriesCount(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if line != "" && line[0] != '#' {
			n++
		}
	}
	return n
}

// figuresFlood: 1,000 jobs of 100 users, then 20,000 valid logs of one
// uid that ended later: how many of the others' jobs survive, the series
// and bytes of /metrics, how long reading and the scrapes meanwhile took.
func figuresFlood(t *testing.T, bin string) {
	dir := t.TempDir()
	now := time.Now()
	const others, flood = 1000, 20000
	write := func(name string, j darshantest.Job) {
		data, err := j.Log()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "2026", "1", "15", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range others {
		uid := int64(2000 + i%100)
		write(fmt.Sprintf("u%d_app_id%d-1_1-15-1-1_1.darshan", uid, 100000+i),
			darshantest.Job{JobID: int64(100000 + i), UID: uid, Exe: "/apps/app", End: now.Add(-2*time.Hour - time.Duration(i)*time.Second), Ranks: 2, Bytes: 1 << 20})
	}
	var bytesDropped int64
	for i := range flood {
		j := darshantest.Job{JobID: int64(900000 + i), UID: 6666, Exe: "/home/mallory/spam", End: now.Add(-time.Hour + time.Duration(i)*time.Millisecond), Ranks: 2, Bytes: 1 << 20}
		data, _ := j.Log()
		bytesDropped += int64(len(data))
		write(fmt.Sprintf("mallory_spam_id%d-1_1-15-1-1_1.darshan", 900000+i), j)
	}
	t.Logf("dropped %d logs of other users and %d logs of uid 6666 (%.0f MB)", others, flood, float64(bytesDropped)/1e6)

	begin := time.Now()
	e := startExporter(t, bin, "--collector.disable-defaults", "--collector.darshan", "--darshan.dir="+dir)
	var (
		mu        sync.Mutex
		slowest   time.Duration
		scrapes   int
		stop      = make(chan struct{})
		scraperWG sync.WaitGroup
	)
	scraperWG.Add(1)
	go func() {
		defer scraperWG.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			_, took, err := rawScrape(e.Addr)
			if err != nil {
				continue
			}
			mu.Lock()
			slowest = max(slowest, took)
			scrapes++
			mu.Unlock()
		}
	}()
	var text string
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not every log read in 10 minutes")
		}
		var err error
		if text, _, err = rawScrape(e.Addr); err != nil {
			continue
		}
		if metricValue(text, "darshan_logs_processed_total") >= others+flood && metricValue(text, `darshan_logs_waiting{reason="queued"}`) == 0 {
			break
		}
	}
	read := time.Since(begin)
	close(stop)
	scraperWG.Wait()
	text, took, err := rawScrape(e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	info := regexp.MustCompile(`(?m)^darshan_job_info\{.*uid="(\d+)".*\} 1$`)
	byUID := map[string]int{}
	for _, m := range info.FindAllStringSubmatch(text, -1) {
		byUID[m[1]]++
	}
	othersKept := 0
	for uid, n := range byUID {
		if uid != "6666" {
			othersKept += n
		}
	}
	perJob := regexp.MustCompile(`(?m)^darshan_job_`).FindAllStringIndex(text, -1)
	t.Logf("FLOOD: others' jobs surviving %d of %d; uid 6666 holds %d jobs; /metrics %d series (%d per-job), %.1f MB; "+
		"all read in %v (exporter start included); %d scrapes meanwhile, the slowest %v; the last scrape %v",
		othersKept, others, byUID["6666"], seriesCount(text), len(perJob), float64(len(text))/1e6, read.Round(100*time.Millisecond),
		scrapes, slowest.Round(time.Millisecond), took.Round(time.Millisecond))
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "darshan_jobs_dropped_total") || strings.HasPrefix(line, "darshan_user_jobs_dropped_total") ||
			strings.HasPrefix(line, "darshan_retained_") || strings.HasPrefix(line, "darshan_job_series") {
			t.Logf("  %s", line)
		}
	}
	warns := 0
	for _, line := range strings.Split(e.Logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "dropped") {
			warns++
			if warns <= 3 {
				t.Logf("  log: %s", line)
			}
		}
	}
	t.Logf("  WARN lines about drops: %d", warns)
}

// figuresRewrite: one log of a job that wrote 18 MB through POSIX,
// rewritten in place every 100 ms for HPCIO_REWRITE_SECONDS (60): the site
// total against the job's own bytes.
func figuresRewrite(t *testing.T, bin string) {
	dir := t.TempDir()
	seconds := 60
	if s, err := strconv.Atoi(os.Getenv("HPCIO_REWRITE_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	// Rank r writes (r+1)·B: 4 ranks write 10·B = 18 MB.
	data, err := darshantest.Job{JobID: 4242, UID: 1000, Exe: "/apps/sim", End: time.Now().Add(-time.Minute), Ranks: 4, Bytes: 1_800_000}.Log()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "alice_sim_id4242-1_1-15-1-1_1.darshan")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := startExporter(t, bin, "--collector.disable-defaults", "--collector.darshan", "--darshan.dir="+dir)
	waitFor(t, e, "the log read", has("darshan_logs_processed_total 1"))
	tick := time.NewTicker(100 * time.Millisecond)
	writes := 0
	for end := time.Now().Add(time.Duration(seconds) * time.Second); time.Now().Before(end); <-tick.C {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		writes++
	}
	tick.Stop()
	var text string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		text, _, _ = rawScrape(e.Addr)
		if metricValue(text, `darshan_logs_waiting{reason="queued"}`) == 0 && metricValue(text, `darshan_logs_waiting{reason="incomplete"}`) == 0 {
			break
		}
	}
	site := metricValue(text, `darshan_write_bytes_total{module="POSIX"}`)
	job := metricValue(text, `darshan_job_module_write_bytes{jobid="4242",uid="1000",exe="sim",module="POSIX"}`)
	t.Logf("REWRITE: %d writes in %d s; %v versions read; site darshan_write_bytes_total{module=\"POSIX\"} %.4g, the job's darshan_job_module_write_bytes %.4g (ratio %.1f); retracted %v",
		writes, seconds, metricValue(text, "darshan_logs_processed_total"), site, job, site/job,
		metricValue(text, `darshan_write_bytes_retracted_total{module="POSIX"}`))
}

// figuresDeep: a tree 40 directories deep with a log at its bottom and
// one 10 deep: what /metrics and the log say of the levels not listed.
func figuresDeep(t *testing.T, bin string) {
	dir := t.TempDir()
	deep := dir
	for i := range 40 {
		deep = filepath.Join(deep, fmt.Sprintf("d%02d", i+1))
		if i+1 == 10 {
			data, _ := darshantest.Job{JobID: 10, UID: 1000, Exe: "/apps/a", End: time.Now().Add(-time.Minute), Bytes: 100}.Log()
			writeAll(t, filepath.Join(deep, "ten.darshan"), data)
		}
	}
	data, _ := darshantest.Job{JobID: 40, UID: 1000, Exe: "/apps/a", End: time.Now().Add(-time.Minute), Bytes: 100}.Log()
	writeAll(t, filepath.Join(deep, "forty.darshan"), data)
	e := startExporter(t, bin, "--collector.disable-defaults", "--collector.darshan", "--darshan.dir="+dir)
	waitFor(t, e, "the first scan", has("darshan_logs_processed_total 1"))
	time.Sleep(time.Second)
	text, _, err := rawScrape(e.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var unlisted []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "darshan_dirs_unlisted") {
			unlisted = append(unlisted, line)
		}
	}
	var said []string
	for _, line := range strings.Split(e.Logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && (strings.Contains(line, "deep") || strings.Contains(line, "d33")) {
			said = append(said, line)
		}
	}
	t.Logf("DEEP: logs read %v (the one 40 deep: %v); %s; WARN lines: %d %q", metricValue(text, "darshan_logs_processed_total"),
		metricValue(text, "darshan_retained_jobs") == 2, strings.Join(unlisted, "; "), len(said), said)
}

func writeAll(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
