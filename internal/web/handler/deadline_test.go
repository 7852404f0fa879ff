package handler

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// countingSource counts its lctl runs and notes the deadline of the last.
type countingSource struct {
	src      lctl.Source
	runs     atomic.Int64
	mu       sync.Mutex
	deadline time.Time
	hasDL    bool
}

func (s *countingSource) GetParam(ctx context.Context, params []string) (io.ReadCloser, error) {
	s.runs.Add(1)
	s.mu.Lock()
	s.deadline, s.hasDL = ctx.Deadline()
	s.mu.Unlock()
	return s.src.GetParam(ctx, params)
}

// countingServer serves the simulated server of a few jobs, or src.
func countingServer(t *testing.T, src lctl.Source, opts Options) (*httptest.Server, *countingSource) {
	t.Helper()
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats")
	}
	if src == nil {
		cfg := lustresim.DemoConfig()
		cfg.Jobs = 20
		src = lustresim.New(cfg)
	}
	counting := &countingSource{src: src}
	reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: counting})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(reg, prometheus.NewRegistry(), opts))
	t.Cleanup(srv.Close)
	return srv, counting
}

// A timeout header that is not a finite number of seconds above zero and
// at most MaxTimeout is ignored: the scrape gets the configured timeout. At
// e27eef4, Inf, NaN, 1e308 and 9.3e9 overflowed time.Duration into an
// expired deadline, and every Lustre collector failed.
func TestTimeoutHeader(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   time.Duration // 0: ignored
	}{
		{"Inf", 0}, {"+Inf", 0}, {"-Inf", 0}, {"NaN", 0}, {"-1", 0}, {"0", 0}, {"-0", 0},
		{"1e308", 0}, {"9.3e9", 0}, {"3600.5", 0}, {"1e-12", 0}, {"abc", 0}, {"10s", 0}, {"", 0},
		{"10", 10 * time.Second}, {" 9.5 ", 9500 * time.Millisecond}, {"0.25", 250 * time.Millisecond}, {"3600", time.Hour},
	} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", tc.header)
		got, ok := scrapeTimeout(req)
		if tc.want == 0 && ok {
			t.Errorf("header %q: timeout %v, want it ignored", tc.header, got)
		}
		if tc.want != 0 && (!ok || got != tc.want) {
			t.Errorf("header %q: timeout %v (%v), want %v", tc.header, got, ok, tc.want)
		}
	}

	// Through the handler: the collectors run, under the configured
	// timeout.
	srv, src := countingServer(t, nil, Options{})
	for _, header := range []string{"Inf", "NaN", "1e308", "9.3e9", "-1", "0", "abc"} {
		begin := time.Now()
		resp, body := get(t, srv.URL, map[string]string{"X-Prometheus-Scrape-Timeout-Seconds": header})
		if resp.StatusCode != 200 || !strings.Contains(body, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`) {
			t.Errorf("header %q: %s, jobstats failed", header, resp.Status)
		}
		src.mu.Lock()
		dl, ok := src.deadline, src.hasDL
		src.mu.Unlock()
		if !ok || dl.Before(begin) || dl.After(begin.Add(DefaultTimeout+time.Minute)) {
			t.Errorf("header %q: lctl's deadline %v (set %v), want about %v after the scrape began", header, dl.Sub(begin), ok, DefaultTimeout)
		}
	}
}

// Only GET and HEAD scrape: every other method gets 405 with Allow, and
// runs no lctl. At e27eef4 each ran a whole scrape.
func TestOnlyGetAndHeadScrape(t *testing.T) {
	srv, src := countingServer(t, nil, Options{Instrument: true})
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND", "FOO"} {
		req, _ := http.NewRequest(method, srv.URL+"/metrics", strings.NewReader("x=1"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %s, Allow %q; want 405, Allow \"GET, HEAD\"", method, resp.Status, resp.Header.Get("Allow"))
		}
	}
	if n := src.runs.Load(); n != 0 {
		t.Errorf("%d lctl runs for requests that are not scrapes", n)
	}
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, srv.URL+"/metrics", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %s", method, resp.Status)
		}
	}
	if n := src.runs.Load(); n != 2 {
		t.Errorf("%d lctl runs for a GET and a HEAD, want 2", n)
	}
}

// stuckClient asks for a scrape with header as its timeout (none if
// empty) and never reads: its receive buffer is small.
func stuckClient(t *testing.T, addr, header string) net.Conn {
	t.Helper()
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	c, err := dialer.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "GET /metrics HTTP/1.1\r\nHost: exporter\r\n"
	if header != "" {
		req += "X-Prometheus-Scrape-Timeout-Seconds: " + header + "\r\n"
	}
	fmt.Fprint(c, req+"\r\n")
	return c
}

// closedWithin reads what c was sent, and tells whether the server closed
// it (end of stream, or a reset) before deadline.
func closedWithin(c net.Conn, deadline time.Time) bool {
	c.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, bufio.NewReader(c))
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// A client that asks for a scrape and never reads holds its slot until
// its deadline and WriteGrace, or for StallTimeout if its header asks for
// longer, whatever it asks: then its connection is closed and the slot
// goes to the next scrape. At e27eef4 it held the slot for as long as it
// stayed connected.
func TestClientThatDoesNotReadFreesItsSlot(t *testing.T) {
	var cuts atomic.Int64
	// 10,000 jobs: a response of 16 MB, more than the socket buffers hold.
	text := &turnsSource{texts: [][]byte{lustresim.JobStatsText(10000, 0)}}
	srv, _ := countingServer(t, text, Options{MaxRequests: 1, OnCut: func(*http.Request) { cuts.Add(1) }})
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		header string
		holds  time.Duration // at most, from the request
	}{
		{"3", 3*time.Second + WriteGrace},
		{"3600", StallTimeout},
	} {
		if testing.Short() && tc.header == "3600" {
			t.Log("-short: the stall case (10 s) skipped")
			continue
		}
		sent := time.Now()
		c := stuckClient(t, addr, tc.header)
		// Its slot is taken: the next scrape gets 503.
		time.Sleep(300 * time.Millisecond)
		if resp, _ := get(t, srv.URL, nil); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("header %q: a scrape beside one that does not read got %s, want 503 (it was done: the test shows nothing)", tc.header, resp.Status)
		}
		// Then it is closed, and the slot free: read past that time (read
		// earlier, the response would be read whole in time).
		time.Sleep(time.Until(sent.Add(tc.holds + time.Second)))
		if !closedWithin(c, time.Now().Add(5*time.Second)) {
			t.Fatalf("header %q: the connection of a client that does not read is still open after %v", tc.header, time.Since(sent))
		}
		resp, body := get(t, srv.URL, map[string]string{"Accept-Encoding": "gzip"})
		if resp.StatusCode != 200 {
			t.Errorf("header %q: the next scrape got %s", tc.header, resp.Status)
		}
		t.Logf("header %q: cut, closed and its slot free %v after its request; the whole response is %d bytes", tc.header, time.Since(sent).Round(10*time.Millisecond), len(body))
		if n := cuts.Load(); n != 1 {
			t.Errorf("header %q: OnCut called %d times for the response cut", tc.header, n)
		}
		cuts.Store(0)
	}
}

// Scrapes tracks what is in flight and the latest deadline.
func TestScrapesInFlight(t *testing.T) {
	var s Scrapes
	now := time.Now()
	end1 := s.begin(now.Add(time.Second))
	end2 := s.begin(now.Add(3 * time.Second))
	if n, latest := s.InFlight(); n != 2 || !latest.Equal(now.Add(3*time.Second)) {
		t.Errorf("in flight %d, latest %v", n, latest.Sub(now))
	}
	end2()
	if n, latest := s.InFlight(); n != 1 || !latest.Equal(now.Add(time.Second)) || s.Ended() != 1 {
		t.Errorf("in flight %d, latest %v, ended %d", n, latest.Sub(now), s.Ended())
	}
	end1()
	if n, latest := s.InFlight(); n != 0 || !latest.IsZero() || s.Ended() != 2 {
		t.Errorf("in flight %d, latest %v, ended %d", n, latest, s.Ended())
	}
}
