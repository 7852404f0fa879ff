package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// guardCounts gathers the guard's metrics: open connections by state,
// closed by reason.
func guardCounts(t *testing.T, g *connGuard) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range s.GetLabel() {
				name += "/" + l.GetValue()
			}
			m[name] = value(s)
		}
	}
	return m
}

func value(s *dto.Metric) float64 {
	if s.GetCounter() != nil {
		return s.GetCounter().GetValue()
	}
	return s.GetGauge().GetValue()
}

// getOn sends a GET of path on a new connection, reads the response whole
// and leaves the connection open.
func getOn(t *testing.T, addr, path string) (net.Conn, int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: exporter\r\n\r\n", path)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return c, 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, resp.StatusCode
}

// At the cap with none idle, a new connection is closed at once (refused);
// with one idle, that one goes (idle_evicted); an idle connection is closed
// after the idle timeout (idle_timeout). The counts follow.
func TestConnGuard(t *testing.T) {
	g := newConnGuard(2, 500*time.Millisecond, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) { <-release })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {})
	srv := g.server(mux)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	addr := l.Addr().String()

	// Two active (blocked) requests fill the cap.
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /block HTTP/1.1\r\nHost: exporter\r\n\r\n")
	}
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/active"] == 2 })
	// A third is refused: closed before any answer.
	if _, code := getOn(t, addr, "/"); code != 0 {
		t.Errorf("a connection past the cap, none idle: answered %d", code)
	}
	m := guardCounts(t, g)
	if m["hpcio_exporter_http_connections_closed_total/refused"] != 1 || m["hpcio_exporter_http_connections/active"] != 2 {
		t.Errorf("after a refusal: %v", m)
	}

	// Once they are answered, both idle: a new one evicts the one idle
	// the longest.
	close(release)
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/idle"] == 2 })
	if _, code := getOn(t, addr, "/"); code != 200 {
		t.Errorf("a connection at the cap with two idle: %d", code)
	}
	m = guardCounts(t, g)
	if m["hpcio_exporter_http_connections_closed_total/idle_evicted"] != 1 {
		t.Errorf("after an eviction: %v", m)
	}

	// The idle ones close after the idle timeout.
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/idle"] == 0 })
	m = guardCounts(t, g)
	if m["hpcio_exporter_http_connections_closed_total/idle_timeout"] != 2 {
		t.Errorf("after the idle timeout: %v", m)
	}
	g.mu.Lock()
	open, conns := g.open, len(g.conns)
	g.mu.Unlock()
	if open != 0 || conns != 0 {
		t.Errorf("%d connections counted open, %d records, after all closed", open, conns)
	}
}

func waitGuard(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
	}
}

// An idle timeout of zero or less, or a negative cap, is a usage error.
func TestWebFlagsUsage(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	for _, arg := range []string{"--web.idle-timeout=0s", "--web.idle-timeout=-1s", "--web.max-connections=-1"} {
		_, stderr, status := runBinary(t, bin, arg, "--web.listen-address=127.0.0.1:0")
		if status != exitUsage || !strings.Contains(stderr, strings.SplitN(strings.TrimPrefix(arg, "--"), "=", 2)[0]) {
			t.Errorf("%s: status %d, want %d (usage), with the flag named:\n%s", arg, status, exitUsage, stderr)
		}
	}
}
