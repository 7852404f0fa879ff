package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// startWithOwnMetrics starts the exporter with its own metrics, which
// hold the connections' (hpcio_exporter_http_*).
func startWithOwnMetrics(t *testing.T, bin string, args ...string) *exporter {
	t.Helper()
	addr := freeAddress(t)
	e := exportertest.Command("exporter", bin, append([]string{"--web.listen-address=" + addr}, args...)...)
	e.Addr = addr
	return launch(t, e)
}

// startUnderFileLimit starts the exporter (with its own metrics) under an
// open-file limit of n, soft and hard (Go raises the soft limit to the hard
// one at start: both must be n), as a server with the usual limit of 1024
// runs it.
func startUnderFileLimit(t *testing.T, bin string, n int, args ...string) *exporter {
	t.Helper()
	addr := freeAddress(t)
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, n)
	e := exportertest.Command("exporter", "sh", append([]string{"-c", script, bin, "--web.listen-address=" + addr}, args...)...)
	e.Addr = addr
	launch(t, e)
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", e.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(fmt.Sprintf(`(?m)^Max open files\s+%d\s+%d\s`, n, n))
	if !want.Match(limits) {
		t.Fatalf("the exporter's open-file limit is not %d:\n%s", n, limits)
	}
	return e
}

// heldConn is a keep-alive connection that made one request.
type heldConn struct {
	net.Conn
	r *bufio.Reader
}

// request sends a GET of path on c and reads the response whole.
func (c *heldConn) request(path string) (int, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: exporter\r\n\r\n", path); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// closedByServer tells whether the server closed c: a read ends at once
// (EOF, reset) instead of waiting until deadline.
func closedByServer(c net.Conn, r io.Reader, deadline time.Time) (bool, error) {
	c.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, err
	}
	return true, err
}

var metricLine = regexp.MustCompile(`(?m)^(hpcio_exporter_http_connections\w*(?:\{[^}]*\})?) (\S+)$`)

// connMetrics returns the exporter's connection metrics from a scrape.
func connMetrics(body string) map[string]float64 {
	m := map[string]float64{}
	for _, l := range metricLine.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(l[2], 64)
		m[l[1]] = v
	}
	return m
}

// scrapeOnce is a normal scrape (a new connection, a 10 s timeout header,
// the body read whole).
func scrapeOnce(e *exporter, timeout time.Duration) (int, string, error) {
	req, _ := http.NewRequest("GET", "http://"+e.Addr+"/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// Under an open-file limit of 1024, idle keep-alive connections cannot
// use up the files: at the cap, the one idle the longest is closed to
// admit a new one. At e27eef4, 1,014 of them made every scrape time out
// (`accept4: too many open files`).
func TestEndToEndIdleConnectionsUnderFileLimit(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	// Every connection comes from this host: the cap per address (224 by
	// default) raised above the cap, the one under test.
	e := startUnderFileLimit(t, bin, 1024, "--demo", "--web.max-connections-per-address=1024")
	scrape := func(timeout time.Duration) (int, string, error) { return scrapeOnce(e, timeout) }

	// 1,100 connections, each having made a request, left open and idle.
	const idle = 1100
	var held []*heldConn
	failed := 0
	for i := 0; i < idle && failed < 5; i++ {
		c, err := net.DialTimeout("tcp", e.Addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		h := &heldConn{Conn: c, r: bufio.NewReader(c)}
		if code, err := h.request("/"); err != nil || code != 200 {
			failed++
			t.Errorf("idle connection %d: its request got %d %v", i, code, err)
		}
		held = append(held, h)
	}
	t.Cleanup(func() {
		for _, h := range held {
			h.Close()
		}
	})
	code, body, err := scrape(20 * time.Second)
	if err != nil || code != 200 {
		t.Fatalf("scrape with %d idle connections open: %d %v", len(held), code, err)
	}
	if !strings.Contains(body, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`) || !strings.Contains(body, "lustre_job_write_bytes_total{") {
		t.Fatalf("scrape with %d idle connections open: a %d-byte body without the demo's jobs", len(held), len(body))
	}
	m := connMetrics(body)
	maxConns := m["hpcio_exporter_http_connections_max"]
	evicted := m[`hpcio_exporter_http_connections_closed_total{reason="idle_evicted"}`]
	t.Logf("%d idle connections: cap %v, %v idle ones closed to admit new ones, %v left idle", idle, maxConns, evicted, m[`hpcio_exporter_http_connections{state="idle"}`])
	if maxConns != 1024-reserveFiles {
		t.Errorf("cap %v under an open-file limit of 1024, want %d", maxConns, 1024-reserveFiles)
	}
	// The scrape's own connection came after the idle ones.
	if evicted < idle+1-maxConns {
		t.Errorf("%v idle connections closed at the cap, want at least %v", evicted, idle+1-maxConns)
	}
	// The one idle the longest went first; the latest is still served.
	if closed, err := closedByServer(held[0], held[0].r, time.Now().Add(2*time.Second)); !closed {
		t.Errorf("the connection idle the longest is still open (%v)", err)
	}
	if code, err := held[len(held)-1].request("/"); err != nil || code != 200 {
		t.Errorf("the latest idle connection: %d %v", code, err)
	}
}

// Under the same limit, 40 clients (--web.max-requests) that ask for a
// scrape and never read it hold the slots until their deadline and grace,
// no longer: then a normal scrape answers 200, and their connections are
// closed. At e27eef4, every other scrape got 503 for as long as they stayed
// connected, and they were never closed.
func TestEndToEndClientsThatDoNotRead(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	// The _created lines make the demo's OpenMetrics response (5.4 MB)
	// larger than the kernel's socket buffers hold, so that a client that
	// never reads holds its scrape; without them it is 2.8 MB.
	e := startUnderFileLimit(t, bin, 1024, "--demo", "--web.openmetrics-created-samples")
	scrape := func(timeout time.Duration) (int, string, error) { return scrapeOnce(e, timeout) }

	// A first scrape: the simulator's first run is the slowest, and the
	// stuck ones' must fit their timeout (else their lctl run is cut, and
	// their response is small enough for the socket buffers). 3 s (2.5 s
	// for the run) leaves room on a busy machine.
	code, body, err := scrape(20 * time.Second)
	if err != nil || code != 200 {
		t.Fatalf("first scrape: %d %v", code, err)
	}
	t.Logf("a scrape of the demo: %d bytes", len(body))

	// They ask for a scrape with a 3 s timeout, in OpenMetrics (as
	// Prometheus asks: 5 MB, more than the kernel's socket buffers take,
	// 4 MB at most by default), and never read it: a small receive buffer
	// fills at once.
	const stuck = 40
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	var stuckConns []net.Conn
	for i := range stuck {
		c, err := dialer.Dial("tcp", e.Addr)
		if err != nil {
			t.Fatalf("stuck client %d: %v", i, err)
		}
		stuckConns = append(stuckConns, c)
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: exporter\r\nX-Prometheus-Scrape-Timeout-Seconds: 3\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n")
	}
	sent := time.Now()
	t.Cleanup(func() {
		for _, c := range stuckConns {
			c.Close()
		}
	})
	// A normal scrape answers 200 once their deadline and grace are past
	// (30 s is a generous bound: the figure is the logged time). It starts
	// once the 40 were read and took the slots.
	time.Sleep(time.Second)
	var refused int
	for {
		code, body, err := scrape(20 * time.Second)
		if err == nil && code == 200 && strings.Contains(body, "lustre_job_write_bytes_total{") {
			t.Logf("a normal scrape answered 200 %v after the 40 stuck ones were sent (%d answered 503 before)", time.Since(sent).Round(10*time.Millisecond), refused)
			break
		}
		if code == http.StatusServiceUnavailable {
			refused++
		}
		if time.Since(sent) > 30*time.Second {
			t.Fatalf("40 clients that do not read hold the exporter: a scrape %v after them got %d %v (%d refused)", time.Since(sent), code, err, refused)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Past their deadline and grace, the server closed them, their
	// responses cut.
	time.Sleep(time.Until(sent.Add(6 * time.Second)))
	cut := 0
	for i, c := range stuckConns {
		r := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(r, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		if err == nil {
			// Written whole (into the kernel's buffers) before its deadline:
			// then the connection is open, and idle.
			continue
		}
		if closed, _ := closedByServer(c, r, time.Now().Add(5*time.Second)); !closed {
			t.Errorf("stuck client %d: its response cut (%v) but its connection still open", i, err)
			continue
		}
		cut++
	}
	_, body, _ = scrape(20 * time.Second)
	m := connMetrics(body)
	t.Logf("%d of the %d stuck responses cut; closed: %v at their write deadline", cut, stuck, m[`hpcio_exporter_http_connections_closed_total{reason="write_deadline"}`])
	if cut == 0 {
		t.Error("no stuck response was cut: none held its slot, the test shows nothing")
	}
	if got := m[`hpcio_exporter_http_connections_closed_total{reason="write_deadline"}`]; got != float64(cut) {
		t.Errorf("hpcio_exporter_http_connections_closed_total{reason=\"write_deadline\"} %v, %d cut", got, cut)
	}
	// Its log, once it ended (the buffer is written while it runs).
	e.Cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, e, 10*time.Second)
	if !strings.Contains(e.Logs.String(), "connections closed by the server") {
		t.Error("no log line about the connections closed")
	}
}

// testPassword's bcrypt hash, made with golang.org/x/crypto/bcrypt at its
// minimum cost (a constant: the test does not make x/crypto a direct
// dependency of the module).
const (
	testUser     = "prometheus"
	testPassword = "h3-test-password"
	testHash     = "$2a$04$Du20RTWnYsXaW9xJl5HEJ.fn1mQtqhgNmYk0QmXQK4sB5e36GS0dq"
)

// With TLS and basic auth (--web.config.file), a connection whose request
// got a 401 is closed once answered (at e27eef4, 2,000 of them stayed
// open); one that authenticated is kept alive.
func TestEndToEndUnauthorizedConnectionsClosed(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	certPEM, keyPEM, pool := selfSignedCert(t)
	os.WriteFile(filepath.Join(dir, "server.crt"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "server.key"), keyPEM, 0o600)
	cfg := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n",
		filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"), testUser, testHash)
	cfgPath := filepath.Join(dir, "web-config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startWithOwnMetrics(t, bin, append(onlyCollectors(), "--web.config.file="+cfgPath)...)
	tlsConfig := &tls.Config{RootCAs: pool}

	// The user with its password: 200, twice on one connection, with
	// HTTP/1.1 and HTTP/2 (exporter-toolkit's default with TLS).
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	h2 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig.Clone(), ForceAttemptHTTP2: true}}
	authorizedBy := func(client *http.Client, proto int) (int, bool, string) {
		reused := false
		req, _ := http.NewRequest("GET", "https://"+e.Addr+"/metrics", nil)
		req.SetBasicAuth(testUser, testPassword)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("HTTP/%d: %v", proto, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.ProtoMajor != proto {
			t.Errorf("HTTP/%d wanted, got %s", proto, resp.Proto)
		}
		return resp.StatusCode, reused, string(body)
	}
	authorized := func() (int, bool, string) { return authorizedBy(client, 1) }
	for proto, client := range map[int]*http.Client{1: client, 2: h2} {
		if code, _, _ := authorizedBy(client, proto); code != 200 {
			t.Fatalf("HTTP/%d with the password: %d", proto, code)
		}
		time.Sleep(100 * time.Millisecond) // idle
		if code, reused, _ := authorizedBy(client, proto); code != 200 || !reused {
			t.Errorf("HTTP/%d: second request with the password: %d, connection reused %v", proto, code, reused)
		}
	}
	// A 401 over HTTP/2 closes its connection too (counted below).
	resp, err := h2.Get("https://" + e.Addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.ProtoMajor != 2 {
		t.Errorf("HTTP/2 without a password: %s %s", resp.Proto, resp.Status)
	}

	// Connections without a password, each answered 401, then left open.
	const n = 500
	conns := make([]*tls.Conn, n)
	readers := make([]*bufio.Reader, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 20 {
		wg.Go(func() {
			for i := w; i < n; i += 20 {
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", e.Addr, tlsConfig)
				if err != nil {
					errs <- err
					continue
				}
				conns[i], readers[i] = c, bufio.NewReader(c)
				c.SetDeadline(time.Now().Add(10 * time.Second))
				fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: exporter\r\n\r\n")
				resp, err := http.ReadResponse(readers[i], nil)
				if err != nil {
					errs <- err
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					errs <- fmt.Errorf("without a password: %s", resp.Status)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	// Each is closed by the server: the next read ends (EOF), rather than
	// waiting for a next response until the deadline.
	deadline := time.Now().Add(5 * time.Second)
	open := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			closed, _ := closedByServer(conns[i], readers[i], deadline)
			open[i] = !closed
		})
	}
	wg.Wait()
	stillOpen := 0
	for _, o := range open {
		if o {
			stillOpen++
		}
	}
	if stillOpen > 0 {
		t.Errorf("%d of %d connections answered 401 are still open", stillOpen, n)
	}
	_, _, body := authorized()
	m := connMetrics(body)
	if got := m[`hpcio_exporter_http_connections_closed_total{reason="rejected"}`]; got != n+1 {
		t.Errorf("hpcio_exporter_http_connections_closed_total{reason=\"rejected\"} %v, want %d (HTTP/1.1) + 1 (HTTP/2)", got, n)
	}
}

// selfSignedCert makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSignedCert(t testing.TB) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), pool
}

// Under systemd's socket activation with two sockets, TLS and basic auth,
// the password checks come before exporter-toolkit's on both sockets (it
// wraps the server's handler once per listener): wrong passwords from this
// host share one budget whichever socket they come on, and the right one,
// checked once, is served on both, over HTTP/1.1 and HTTP/2.
func TestEndToEndSocketActivationPasswordChecks(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	certPEM, keyPEM, pool := selfSignedCert(t)
	os.WriteFile(filepath.Join(dir, "server.crt"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "server.key"), keyPEM, 0o600)
	cfg := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n",
		filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"), testUser, testHash)
	cfgPath := filepath.Join(dir, "web-config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// The sockets, as systemd passes them: file descriptors 3 and 4,
	// LISTEN_FDS, and LISTEN_PID the exporter's own (the shell's, which
	// execs it).
	var addrs []string
	var files []*os.File
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := l.(*net.TCPListener).File()
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		t.Cleanup(func() { f.Close() })
		addrs = append(addrs, l.Addr().String())
		files = append(files, f)
	}
	e := exportertest.Command("exporter", "sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin,
		"--web.systemd-socket", "--web.config.file="+cfgPath)
	e.Cmd.ExtraFiles = files
	e.Cmd.Env = append(os.Environ(), "LISTEN_FDS=2")
	e.Addr = addrs[0]
	launch(t, e)

	h1 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	// A connection each: the server closes one answered 401 or 429, and a
	// keep-alive client would send its next request on it again.
	once := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	h2 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	get := func(client *http.Client, addr, password string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		if password != "" {
			req.SetBasicAuth(testUser, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, addr := range addrs {
		if code, _ := get(once, addr, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without a password: %d", addr, code)
		}
		for _, client := range []*http.Client{h1, h2} {
			if code, _ := get(client, addr, testPassword); code != 200 {
				t.Errorf("%s with the password: %d", addr, code)
			}
		}
	}
	// The budget of this host's wrong passwords (10), spent on the first
	// socket: the second answers 429 without a check.
	for i := range 10 {
		if code, _ := get(once, addrs[0], fmt.Sprint("wrong-", i)); code != http.StatusUnauthorized {
			t.Errorf("wrong password %d: %d", i, code)
		}
	}
	if code, _ := get(once, addrs[1], "wrong-10"); code != http.StatusTooManyRequests {
		t.Errorf("a wrong password past the budget, on the other socket: %d", code)
	}
	code, body := get(h2, addrs[1], testPassword)
	if code != 200 {
		t.Fatalf("the password after the budget is spent: %d", code)
	}
	checks := map[string]float64{}
	for _, result := range []string{"cached", "ok", "failed", "throttled", "busy"} {
		checks[result] = passwordCheckCount(body, result)
	}
	// One check of the right password; the rest remembered (4 + this one).
	if want := map[string]float64{"cached": 4, "ok": 1, "failed": 10, "throttled": 1, "busy": 0}; fmt.Sprint(checks) != fmt.Sprint(want) {
		t.Errorf("password checks %v, want %v", checks, want)
	}
}
