package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
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
	// All from the loopback: the cap per address above the cap.
	g := newConnGuard(2, 3, 500*time.Millisecond, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) { <-release })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {})
	srv := g.server(mux, nil)
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
	for _, arg := range []string{"--web.idle-timeout=0s", "--web.idle-timeout=-1s", "--web.max-connections=-1", "--web.max-connections-per-address=-1", "--web.max-password-checks=-1"} {
		_, stderr, status := runBinary(t, bin, arg, "--web.listen-address=127.0.0.1:0")
		if status != exitUsage || !strings.Contains(stderr, strings.SplitN(strings.TrimPrefix(arg, "--"), "=", 2)[0]) {
			t.Errorf("%s: status %d, want %d (usage), with the flag named:\n%s", arg, status, exitUsage, stderr)
		}
	}
}

// fromListener hands out each connection it accepts as coming from the
// next address sent on from: the guard's per-address cap on one machine.
type fromListener struct {
	net.Listener
	from    chan net.Addr
	entered atomic.Int64 // calls of Accept: one more than the connections the server took in
}

type fromConn struct {
	net.Conn
	remote net.Addr
}

func (c *fromConn) RemoteAddr() net.Addr { return c.remote }

// SyscallConn is the TCP connection's: the guard asks it what it received.
func (c *fromConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

func (l *fromListener) Accept() (net.Conn, error) {
	l.entered.Add(1)
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &fromConn{Conn: c, remote: <-l.from}, nil
}

// A connection that never completed a request goes before an idle one, at
// either cap; an address past its cap loses its own; the reasons count
// which.
func TestConnGuardSilentFirstAndPerAddress(t *testing.T) {
	g := newConnGuard(5, 3, time.Minute, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	mux := http.NewServeMux()
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) { <-release })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {})
	srv := g.server(mux, nil)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &fromListener{Listener: inner, from: make(chan net.Addr, 1)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	opened := 0
	// dial opens a connection from host (sending nothing) and waits until
	// the guard has seen it.
	dial := func(host string) net.Conn {
		t.Helper()
		l.from <- &net.TCPAddr{IP: net.ParseIP(host), Port: 40000 + opened}
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		opened++
		// The server calls ConnState(StateNew) before it accepts again.
		waitGuard(t, func() bool { return l.entered.Load() == int64(opened)+1 })
		return c
	}
	request := func(c net.Conn, path string) {
		t.Helper()
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: exporter\r\n\r\n", path)
		if path == "/" {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	open := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}
	closed := func() map[string]float64 {
		m := map[string]float64{}
		for k, v := range guardCounts(t, g) {
			if reason, ok := strings.CutPrefix(k, "hpcio_exporter_http_connections_closed_total/"); ok && v > 0 {
				m[reason] = v
			}
		}
		return m
	}

	// A: one that completed a request (idle), two silent: its cap.
	a1 := dial("192.0.2.1")
	request(a1, "/")
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/idle"] == 1 })
	a2, a3 := dial("192.0.2.1"), dial("192.0.2.1")
	// A fourth from A: A's silent one open the longest goes, not its idle
	// one, quiet for longer.
	a4 := dial("2001:db8::1") // another address
	a5 := dial("192.0.2.1")
	if open(a2) || !open(a1) || !open(a3) || !open(a5) || !open(a4) {
		t.Errorf("past A's cap: a1 %v a2 %v a3 %v a5 %v, want a2 alone closed", open(a1), open(a2), open(a3), open(a5))
	}
	if m := closed(); fmt.Sprint(m) != fmt.Sprint(map[string]float64{"address_limit": 1}) {
		t.Errorf("closed %v", m)
	}
	// At the cap (5: a1, a3, a5, a4 and one more): the silent one open the
	// longest goes, a3, though a1 has been quiet longer.
	b1 := dial("192.0.2.2")
	b2 := dial("192.0.2.2")
	if open(a3) || !open(a1) || !open(b1) || !open(b2) {
		t.Errorf("past the cap: a3 %v a1 %v b1 %v b2 %v, want a3 alone closed", open(a3), open(a1), open(b1), open(b2))
	}
	// The silent ones busy, a new one: the idle one goes.
	for _, c := range []net.Conn{a5, a4, b1, b2} {
		request(c, "/block")
	}
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/active"] == 4 })
	c1 := dial("192.0.2.3")
	if open(a1) || !open(c1) {
		t.Errorf("past the cap, none silent: a1 %v c1 %v, want a1 closed", open(a1), open(c1))
	}
	// All busy: the new one is refused.
	request(c1, "/block")
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/active"] == 5 })
	d1 := dial("192.0.2.4")
	if open(d1) {
		t.Error("past the cap, all busy: the new one is open")
	}
	if m, want := closed(), map[string]float64{"address_limit": 1, "silent_evicted": 1, "idle_evicted": 1, "refused": 1}; fmt.Sprint(m) != fmt.Sprint(want) {
		t.Errorf("closed %v, want %v", m, want)
	}
}

// At the cap, a silent connection that has sent bytes (a TLS handshake, a
// request under way: a scraper that just connected) stays, and a younger
// one that has sent nothing goes.
func TestConnGuardTalkingBeforeSilent(t *testing.T) {
	if _, known := bytesReceived(nil); !known && runtime.GOOS != "linux" {
		t.Skip("the bytes a connection received are known on Linux only")
	}
	g := newConnGuard(2, 3, time.Minute, slog.New(slog.DiscardHandler))
	srv := g.server(http.NewServeMux(), nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	open := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}
	// Its request under way: net/http reports it active only once its
	// headers are read whole.
	talking := dial()
	fmt.Fprint(talking, "GET / HT")
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/new"] == 1 })
	time.Sleep(100 * time.Millisecond) // its bytes arrived
	quiet := dial()
	waitGuard(t, func() bool { return guardCounts(t, g)["hpcio_exporter_http_connections/new"] == 2 })
	dial()
	waitGuard(t, func() bool {
		return guardCounts(t, g)["hpcio_exporter_http_connections_closed_total/silent_evicted"] == 1
	})
	if !open(talking) || open(quiet) {
		t.Errorf("at the cap: the one that sent bytes open %v, the younger one that sent none open %v; want true, false", open(talking), open(quiet))
	}
}
