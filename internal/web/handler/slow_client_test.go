package handler

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// turnsSource prints its texts in turn, one per lctl run, as a server's
// output changes between scrapes.
type turnsSource struct {
	texts [][]byte
	n     atomic.Int64
}

func (s *turnsSource) GetParam(context.Context, []string) (io.ReadCloser, error) {
	i := s.n.Add(1) - 1
	return io.NopCloser(bytes.NewReader(s.texts[int(i)%len(s.texts)])), nil
}

// volatileLines are the lines of a response that differ between two
// scrapes of the same run: durations, and the rate density, which divides
// by the wall-clock time between runs.
var volatileLines = regexp.MustCompile(`(?m)^(hpcio_exporter_scrape_collector_duration_seconds|hpcio_exporter_lctl_last_run_duration_seconds|lustre_job_(bytes|ops)_rate_density_(bucket|sum|count))\b.*\n`)

var okRuns = regexp.MustCompile(`(?m)^hpcio_exporter_lctl_runs_total\{result="ok"\} (\d+)$`)

// fingerprint identifies a response by its run (the number of ok runs it
// reports) and the hash of what it says of that run.
func fingerprint(t *testing.T, body []byte) (run int, sum [32]byte) {
	t.Helper()
	m := okRuns.FindSubmatch(body)
	if m == nil {
		t.Fatalf("response without hpcio_exporter_lctl_runs_total{result=\"ok\"} (%d bytes)", len(body))
	}
	run, _ = strconv.Atoi(string(m[1]))
	return run, sha256.Sum256(volatileLines.ReplaceAll(body, nil))
}

// A scraper on a congested link (here reading 100 KB/s) holds nothing that
// another scrape or the next lctl run needs: the scrapes sent meanwhile
// finish within their own scrape timeout, and every response, the slow one
// included, is exactly what a scrape of its run alone says, every family
// from that one run.
func TestSlowClientDoesNotStallScrapes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a client reading 10,000 jobs at 100 KB/s takes a while")
	}
	const jobs = 10000
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats" || name == "memory" || name == "ost_stats")
	}
	t.Cleanup(func() {
		for _, name := range collector.Names() {
			collector.SetEnabled(name, name == "jobstats")
		}
	})
	// Two outputs in turn; each run's small families say which it is.
	var texts [][]byte
	for i, offset := range []time.Duration{0, 30 * time.Second} {
		text := lustresim.JobStatsText(jobs, offset)
		text = fmt.Appendf(text, "memused=%d\nobdfilter.bench-OST0000.stats=\nsnapshot_time 1700003600.0 secs.nsecs\nwrite_bytes %d samples [bytes] 1 4096 %d\n",
			1000+i, 10+i, 4096*(10+i))
		texts = append(texts, text)
	}
	newRegistry := func() *collector.Registry {
		reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: &turnsSource{texts: texts}})
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}

	// What each run says, scraped one run at a time.
	const runs = 6
	want := map[int][32]byte{}
	ref := newRegistry()
	for range runs {
		s := ref.NewScrape(context.Background())
		reg := prometheus.NewRegistry()
		reg.MustRegister(s)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := exposition.WriteResponse(&buf, expfmt.FmtText, mfs, s.Streams()); err != nil {
			t.Fatal(err)
		}
		run, sum := fingerprint(t, buf.Bytes())
		want[run] = sum
	}

	srv := httptest.NewServer(New(newRegistry(), prometheus.NewRegistry(), Options{}))
	defer srv.Close()

	// The slow scraper: a small receive buffer, 100 KB/s.
	var rate atomic.Int64
	rate.Store(100 << 10)
	slowStarted := make(chan struct{})
	var slowBody []byte
	var slowErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
			})
		}}
		client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableCompression: true}}
		resp, err := client.Get(srv.URL)
		if err != nil {
			slowErr = err
			close(slowStarted)
			return
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		buf := make([]byte, 4<<10)
		started := false
		for {
			n, err := resp.Body.Read(buf)
			out.Write(buf[:n])
			if !started && out.Len() >= 256<<10 {
				started = true
				close(slowStarted)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				slowErr = err
				break
			}
			if r := rate.Load(); r > 0 {
				time.Sleep(time.Duration(n) * time.Second / time.Duration(r))
			}
		}
		if !started {
			close(slowStarted)
		}
		slowBody = out.Bytes()
	}()
	<-slowStarted
	if slowErr != nil {
		t.Fatal(slowErr)
	}

	// Scrapes as Prometheus sends them, while the slow one is under way.
	const timeout = 10 * time.Second
	seen := map[int]bool{}
	for range 3 {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.Itoa(int(timeout.Seconds())))
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		begin := time.Now()
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req.WithContext(ctx))
		if err != nil {
			cancel()
			t.Fatalf("scrape during a slow one: %v after %v", err, time.Since(begin))
		}
		zr, err := gzip.NewReader(bufio.NewReader(resp.Body))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(zr)
		resp.Body.Close()
		took := time.Since(begin)
		cancel()
		if err != nil {
			t.Fatalf("reading a scrape during a slow one: %v after %v", err, took)
		}
		run, sum := fingerprint(t, body)
		t.Logf("scrape of run %d: %d bytes in %v", run, len(body), took)
		if sum != want[run] {
			t.Errorf("scrape of run %d differs from a scrape of that run alone", run)
		}
		seen[run] = true
	}
	if len(seen) != 3 {
		t.Errorf("3 scrapes saw runs %v: each should have had a run of its own", seen)
	}

	// Let the slow one finish: it says what its run said, although three
	// runs went by while it was being written.
	rate.Store(0)
	wg.Wait()
	if slowErr != nil {
		t.Fatal(slowErr)
	}
	run, sum := fingerprint(t, slowBody)
	if run != 1 || sum != want[1] {
		t.Errorf("the slow scrape (%d bytes, run %d) is not what run 1 alone said", len(slowBody), run)
	}
}
