package main

import (
	"container/list"
	"context"
	"crypto/tls"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/web/authgate"
	"github.com/hpcio/hpcio_exporter/internal/web/peer"
)

// The exporter's connections, over all its servers (the fleet's too): open
// files are the process's, and so is the cap.
//
// A connection is counted from its accept (http.Server.ConnState's
// StateNew, which net/http reports right after Accept and before serving
// it, on every listener exporter-toolkit makes: TCP, systemd sockets,
// vsock, TLS) to its close. A connection is quiet from its accept until a
// complete request of it reaches the server's handler (the first of ours,
// in front of exporter-toolkit's basic auth: see front), and again from the
// end of its last response: silent while it has never completed a request
// (and may never have sent a byte), idle (keep-alive, between requests)
// once it has. At --web.max-connections, a quiet connection is closed to
// admit the new one: the silent one open the longest, or with none, the
// idle one idle the longest (as nginx reuses its idle keep-alive
// connections when it runs out); with none quiet but the new one, the new
// one is closed at once. It is closed rather than answered: it has sent
// nothing yet (with TLS, not even its handshake), answering would mean
// reading its request on the accept path, and a closed connection costs
// nothing and shows as a failed scrape (up 0) to whoever is refused.
//
// Silent ones go first because a scraper's connection is not: Prometheus
// keeps its connection between scrapes, and a request that completed (past
// the basic auth, when there is one: a 401 closes its connection) is what
// a flood of connections that send nothing cannot fake. Ordered by time
// alone, the scraper's connection, idle since its last scrape, would be
// older than the flood's and go first at every scrape.
//
// One source address (package peer: an IPv4 address, an IPv6 /64, the
// exporter's own host) holds at most --web.max-connections-per-address of
// them: past it, that address's quiet connection is closed in the same
// order (the new one if it is the only one quiet). A client holding
// connections it does not use thus pushes out its own, and one address
// cannot hold them all. Every other state is bounded in time: a new
// connection by the header timeout, a busy one by its scrape's deadline
// (handler), an idle one by --web.idle-timeout.

// reserveFiles are the open files kept for what is not a connection: the
// standard streams, the listeners, the epoll and inotify descriptors, the
// lctl and lnetctl runs (each a pipe or two and a pidfd; at most three at a
// time), the logs a sidecar worker reads, the directories of a rescan.
// Together they stay under 64; 128 is twice that.
const reserveFiles = 128

// defaultMaxConnections derives the cap from the open-file limit: the soft
// RLIMIT_NOFILE, which Go raised to the hard limit at start, less
// reserveFiles, and at least half the limit.
func defaultMaxConnections() (maxConns int, limit uint64) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1024 - reserveFiles, 0
	}
	limit = min(rl.Cur, 1<<24) // RLIM_INFINITY
	return int(max(limit-min(reserveFiles, limit/2), 1)), limit
}

// Why the server closed a connection, the label of
// hpcio_exporter_http_connections_closed_total.
type closeReason int

const (
	notClosed closeReason = iota
	// An idle keep-alive connection closed to admit a new one at the cap.
	closedIdleEvicted
	// A connection that never completed a request (silent, or still
	// sending its first) closed to admit a new one at the cap.
	closedSilentEvicted
	// A connection of an address at --web.max-connections-per-address
	// closed, quiet the longest, to admit that address's new one (or the
	// new one, none other quiet).
	closedAddressLimit
	// A new connection closed at once: at the cap, no other quiet.
	closedRefused
	// A connection whose request was answered before reaching the
	// exporter's handlers (401 for basic auth, 429 of the password checks'
	// bounds or exporter-toolkit's rate limiter): closed once answered, so
	// that it holds nothing.
	closedRejected
	// A scrape whose client did not read its response by its deadline.
	closedWriteDeadline
	// An idle keep-alive connection closed after --web.idle-timeout.
	closedIdleTimeout
	numCloseReasons
)

var closeReasons = [numCloseReasons]string{"", "idle_evicted", "silent_evicted", "address_limit", "refused", "rejected", "write_deadline", "idle_timeout"}

// connRecord is the state of one connection.
type connRecord struct {
	conn  net.Conn
	addr  *addrConns
	state http.ConnState
	// In a quiet list of the guard and of its address while quiet (no
	// request of it being served): silent until it completes a request,
	// idle after; in the order of quietSince, its accept or the end of its
	// last response.
	quiet, addrQuiet *list.Element
	quietSince       time.Time
	idleSince        time.Time
	// busy: a request of it reached the front handler, and it has not been
	// idle since; completed: it has been; talking: silent, but found to
	// have sent bytes.
	busy, completed, talking bool
	closedBy                 closeReason
	counted                  bool // in connGuard.byState[state]
	wasIdle                  bool
	// served tells that a handler of ours saw a request since the
	// connection was last active (set by the handler, under the guard's
	// mutex).
	served bool
}

// quietLists are quiet connections, each list in the order they became
// quiet (of *connRecord): silent ones not known to have sent a byte,
// silent ones that have (talking: a TLS handshake or a request under way),
// and idle ones.
type quietLists struct {
	silent, talking, idle list.List
}

func (q *quietLists) of(rec *connRecord) *list.List {
	switch {
	case rec.completed:
		return &q.idle
	case rec.talking:
		return &q.talking
	}
	return &q.silent
}

// scanSilent bounds the silent connections asked for the bytes they
// received (a getsockopt each) to admit one new connection.
const scanSilent = 16

// victim returns the connection of q to close to admit rec, just accepted
// and last in q.silent: the silent one open the longest that has not sent
// a byte, else the one talking the longest, else the one idle the longest,
// else rec itself. A client whose new connection sent its TLS handshake or
// its request at once (Prometheus) is thus not pushed out by connections
// that send nothing, however fast they come, before its request is
// complete. Silent connections found to have sent bytes move to the
// talking list (a connection never unsends them); past scanSilent asked,
// the oldest silent one goes, sent or not.
func (g *connGuard) victim(q *quietLists, rec *connRecord) *connRecord {
	e := q.silent.Front()
	for range scanSilent {
		if e == nil || e.Value == rec {
			break
		}
		next := e.Next()
		c := e.Value.(*connRecord)
		if n, known := bytesReceived(c.conn); !known || n == 0 {
			return c
		}
		g.dropQuiet(c)
		c.talking = true
		g.pushQuiet(c) // still in the order of quietSince: see pushQuiet
		e = next
	}
	if e != nil && e.Value != rec {
		return e.Value.(*connRecord)
	}
	if f := q.talking.Front(); f != nil {
		return f.Value.(*connRecord)
	}
	if f := q.idle.Front(); f != nil {
		return f.Value.(*connRecord)
	}
	return rec
}

// addrConns are the open connections of one source address.
type addrConns struct {
	key   peer.Key
	open  int
	quiet quietLists
}

type connKey struct{}

// connGuard counts the connections, enforces the caps and closes the
// connections whose request never reached us.
type connGuard struct {
	max, maxPerAddr int
	idleTimeout     time.Duration
	logger          *slog.Logger

	mu      sync.Mutex
	conns   map[net.Conn]*connRecord
	addrs   map[peer.Key]*addrConns
	open    int    // not closed, nor being closed by us
	byState [3]int // new, active, idle
	quiet   quietLists
	closed  [numCloseReasons]uint64
	// The address that last reached its cap, for the log.
	lastLimited peer.Key
	// Log lines about closes: the first at once, then at most one a
	// minute with the counts since the last.
	logged   [numCloseReasons]uint64
	lastLog  time.Time
	logTimer *time.Timer
	// TLS handshakes that failed (net/http's ErrorLog lines), logged with
	// the closes.
	handshakeErrors, loggedHandshakes uint64
	lastHandshake                     string

	frontMu sync.Mutex // installing the front handler
}

func newConnGuard(maxConns, maxPerAddr int, idleTimeout time.Duration, logger *slog.Logger) *connGuard {
	return &connGuard{max: maxConns, maxPerAddr: maxPerAddr, idleTimeout: idleTimeout, logger: logger,
		conns: map[net.Conn]*connRecord{}, addrs: map[peer.Key]*addrConns{}}
}

// defaultMaxPerAddress is --web.max-connections-per-address when not set:
// a quarter of the cap (224 under an open-file limit of 1024), so that an
// address holds at most a quarter and four are needed to reach the cap; at
// least 16 (or the cap), room for the scrapers and browsers of one host.
func defaultMaxPerAddress(maxConns int) int {
	return max(maxConns/4, min(maxConns, 16))
}

// server returns an http.Server of handler whose connections the guard
// keeps: the exporter's timeouts, ConnState and ConnContext, handler
// wrapped to note that a request reached it, and the front handler
// (with gate's password checks, if any) installed in front of whatever
// serves it.
func (g *connGuard) server(handler http.Handler, gate *authgate.Gate) *http.Server {
	srv := &http.Server{
		Handler: g.served(handler),
		// A client has this long to send its request's headers (and its
		// TLS handshake).
		ReadHeaderTimeout: 10 * time.Second,
		// The rest of the request and the response: for what reaches no
		// handler that sets its own (exporter-toolkit's 401 and the
		// discarding of its request body). The metrics handler sets the
		// scrape's own deadlines; these bound the landing page, /demo/*
		// and pprof (whose profiles are then at most this long).
		ReadTimeout:  requestTimeout,
		WriteTimeout: requestTimeout,
		IdleTimeout:  g.idleTimeout,
		ConnState:    g.connState,
		ConnContext:  g.connContext,
		ErrorLog:     log.New(serverErrors{g}, "", 0),
	}
	srv.BaseContext = func(net.Listener) context.Context {
		g.installFront(srv, gate)
		return context.Background()
	}
	return srv
}

// installFront puts the front handler in front of srv's handler. It runs
// from http.Server.Serve (BaseContext) as a listener starts accepting:
// after exporter-toolkit's Serve has wrapped the handler in its own (basic
// auth, rate limit), which it does for each listener, and before a
// connection of that listener is served. The front is then the first
// handler every request reaches, whoever serves the server. With several
// listeners, the toolkit wraps the front of the first in its handler, and a
// front goes before that one: the inner gate lets through what the outer
// let through, unchecked. (The toolkit's Serve writes the server's handler
// from each listener's goroutine as the others start serving: with two
// listeners and a web configuration, a data race of its own at start,
// which these writes, made the same way, join.)
func (g *connGuard) installFront(srv *http.Server, gate *authgate.Gate) {
	g.frontMu.Lock()
	defer g.frontMu.Unlock()
	if _, ok := srv.Handler.(*front); ok {
		return
	}
	srv.Handler = &front{guard: g, next: gate.Wrap(srv.Handler)}
}

// front is the first handler a request reaches: the request is complete,
// its connection busy (not to be evicted) until its response is written;
// then the password checks.
type front struct {
	guard *connGuard
	next  http.Handler
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rec, ok := r.Context().Value(connKey{}).(*connRecord); ok {
		f.guard.mu.Lock()
		if rec.closedBy == notClosed && !rec.busy {
			rec.busy = true
			f.guard.dropQuiet(rec)
		}
		f.guard.mu.Unlock()
	}
	f.next.ServeHTTP(w, r)
}

func (g *connGuard) connContext(ctx context.Context, c net.Conn) context.Context {
	g.mu.Lock()
	rec := &connRecord{conn: c, state: -1}
	g.conns[c] = rec
	g.mu.Unlock()
	return context.WithValue(ctx, connKey{}, rec)
}

// served notes, for each request that reaches next, that it did.
func (g *connGuard) served(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := r.Context().Value(connKey{}).(*connRecord); ok {
			g.mu.Lock()
			rec.served = true
			g.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// cut counts a response cut at its write deadline: net/http closes its
// connection (with HTTP/2, resets its stream), whose write failed.
func (g *connGuard) cut(*http.Request) {
	g.mu.Lock()
	g.count(closedWriteDeadline)
	g.mu.Unlock()
}

func (g *connGuard) connState(c net.Conn, state http.ConnState) {
	var toClose []net.Conn
	g.mu.Lock()
	rec := g.conns[c]
	if rec == nil { // closed twice (HTTP/2 and its HTTP/1 conn both report it)
		g.mu.Unlock()
		return
	}
	g.leave(rec)
	now := time.Now()
	switch state {
	case http.StateNew:
		g.open++
		key := peer.Of(c.RemoteAddr(), c.LocalAddr())
		a := g.addrs[key]
		if a == nil {
			a = &addrConns{key: key}
			g.addrs[key] = a
		}
		a.open++
		rec.addr = a
		rec.quietSince = now
		g.pushQuiet(rec)
		var victim *connRecord
		var why closeReason
		switch {
		case a.open > g.maxPerAddr:
			victim, why = g.victim(&a.quiet, rec), closedAddressLimit
			g.lastLimited = key
		case g.open > g.max:
			victim = g.victim(&g.quiet, rec)
			switch {
			case victim == rec:
				why = closedRefused
			case victim.completed:
				why = closedIdleEvicted
			default:
				why = closedSilentEvicted
			}
		}
		if victim != nil {
			if victim != rec {
				g.leave(victim)
			}
			g.closing(victim, why)
			toClose = append(toClose, victim.conn)
		}
	case http.StateActive:
		rec.served = false
	case http.StateIdle:
		if rec.closedBy != notClosed {
			break
		}
		// Idle after requests none of which reached us: they got their
		// answer before (a wrong password's 401, a 429). HTTP/2 reports
		// Active then Idle as it starts, before any request; then Active
		// and Idle around its streams.
		rejected := !rec.served && (rec.wasIdle || !isHTTP2(c))
		rec.wasIdle = true
		if rejected {
			g.closing(rec, closedRejected)
			toClose = append(toClose, c)
			break
		}
		rec.idleSince = now
		if rec.busy {
			// A request answered: quiet again from now.
			rec.busy, rec.completed = false, true
			rec.quietSince = now
			g.pushQuiet(rec)
		}
	case http.StateClosed, http.StateHijacked:
		delete(g.conns, c)
		g.dropQuiet(rec)
		switch {
		case rec.closedBy != notClosed: // by us, counted then
		case rec.state == http.StateIdle && g.idleTimeout > 0 && now.Sub(rec.idleSince) >= g.idleTimeout-10*time.Millisecond:
			g.forget(rec)
			g.count(closedIdleTimeout)
		default: // by the client, or after a failed request
			g.forget(rec)
		}
	}
	rec.state = state
	g.enter(rec)
	g.mu.Unlock()
	for _, c := range toClose {
		closeNow(c)
	}
}

// serverErrors is the writer of net/http's ErrorLog (one Write a line).
// A failed TLS handshake is a line each: a connection closed by the guard
// before its handshake (at a cap: hundreds of thousands a minute under a
// flood), a client that hung up or spoke no TLS. They are counted and
// logged with the closes, at most a line a minute; the rest (accept
// errors, HTTP/2 errors: few) go to the log as they come.
type serverErrors struct{ g *connGuard }

func (w serverErrors) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if strings.HasPrefix(line, "http: TLS handshake error") {
		g := w.g
		g.mu.Lock()
		g.handshakeErrors++
		g.lastHandshake = line
		g.scheduleLog()
		g.mu.Unlock()
		return len(p), nil
	}
	w.g.logger.Warn("HTTP server error", "err", line)
	return len(p), nil
}

func isHTTP2(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

// closeNow closes c at once. A TLS connection is closed under its TLS
// layer: tls.Conn.Close first sends a close_notify alert, which may wait
// up to 5 s for a client that does not read, here on the accept path.
func closeNow(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		tc.NetConn().Close()
		return
	}
	c.Close()
}

// leave and enter keep byState as rec leaves its state and enters the
// next.
func (g *connGuard) leave(rec *connRecord) {
	if rec.counted {
		g.byState[rec.state]--
		rec.counted = false
	}
}

func (g *connGuard) enter(rec *connRecord) {
	if rec.state >= http.StateNew && rec.state <= http.StateIdle && rec.closedBy == notClosed {
		g.byState[rec.state]++
		rec.counted = true
	}
}

// pushQuiet puts rec last in its quiet lists, silent, talking or idle
// (quiet since now: the lists stay in the order of quietSince; a silent
// connection moved to talking comes from the front of the silent ones, all
// older ones gone or moved before it); dropQuiet takes it out.
func (g *connGuard) pushQuiet(rec *connRecord) {
	g.dropQuiet(rec)
	rec.quiet = g.quiet.of(rec).PushBack(rec)
	rec.addrQuiet = rec.addr.quiet.of(rec).PushBack(rec)
}

func (g *connGuard) dropQuiet(rec *connRecord) {
	if rec.quiet != nil {
		g.quiet.of(rec).Remove(rec.quiet)
		rec.addr.quiet.of(rec).Remove(rec.addrQuiet)
		rec.quiet, rec.addrQuiet = nil, nil
	}
}

// forget takes rec out of the open connections' counts: its own and its
// address's.
func (g *connGuard) forget(rec *connRecord) {
	g.dropQuiet(rec)
	g.open--
	if a := rec.addr; a != nil {
		if a.open--; a.open == 0 {
			delete(g.addrs, a.key)
		}
	}
}

// closing notes that the guard closes rec (the caller closes it once the
// mutex is released): it no longer counts against the caps.
func (g *connGuard) closing(rec *connRecord, why closeReason) {
	if rec.closedBy != notClosed {
		return
	}
	rec.closedBy = why
	g.forget(rec)
	g.count(why)
}

// count counts a close and logs it (the mutex held): the first at once,
// then at most one line a minute with what happened since the last.
func (g *connGuard) count(why closeReason) {
	g.closed[why]++
	if why == closedIdleTimeout {
		return // routine: a scraper that went away
	}
	g.scheduleLog()
}

// scheduleLog logs now if the last line is a minute old, else sets a timer
// for when it is (the mutex held).
func (g *connGuard) scheduleLog() {
	if time.Since(g.lastLog) >= time.Minute {
		g.logLocked()
	} else if g.logTimer == nil {
		g.logTimer = time.AfterFunc(time.Until(g.lastLog.Add(time.Minute)), func() {
			g.mu.Lock()
			g.logTimer = nil
			g.logLocked()
			g.mu.Unlock()
		})
	}
}

func (g *connGuard) logLocked() {
	attrs := []any{"max_connections", g.max, "max_connections_per_address", g.maxPerAddr, "open", g.open}
	news := false
	for why := closedIdleEvicted; why < numCloseReasons; why++ {
		if why == closedIdleTimeout {
			continue
		}
		if n := g.closed[why] - g.logged[why]; n > 0 {
			attrs = append(attrs, closeReasons[why], n)
			if why == closedAddressLimit {
				attrs = append(attrs, "last_address_limited", string(g.lastLimited))
			}
			news = true
		}
		g.logged[why] = g.closed[why]
	}
	if n := g.handshakeErrors - g.loggedHandshakes; n > 0 {
		attrs = append(attrs, "tls_handshake_errors", n, "last_tls_handshake_error", g.lastHandshake)
		g.loggedHandshakes = g.handshakeErrors
		news = true
	}
	if !news {
		return
	}
	g.lastLog = time.Now()
	// Under the mutex: a line at most a minute, and slog's handler does
	// not call back into the guard.
	// The reasons are those of hpcio_exporter_http_connections_closed_total.
	g.logger.Warn("connections closed by the server", attrs...)
}

var (
	connsDesc = prometheus.NewDesc("hpcio_exporter_http_connections",
		"Open HTTP connections of the exporter, by state: new (no request yet), active (a request being read or served), idle (keep-alive, between requests).",
		[]string{"state"}, nil)
	connsMaxDesc = prometheus.NewDesc("hpcio_exporter_http_connections_max",
		"The cap on open HTTP connections (--web.max-connections, by default from the open-file limit); at the cap, the connection the longest without a complete request (silent or idle) is closed to admit a new one.",
		nil, nil)
	connsMaxPerAddrDesc = prometheus.NewDesc("hpcio_exporter_http_connections_per_address_max",
		"The cap on the open HTTP connections of one source address (an IPv4 address, an IPv6 /64, the exporter's own host): --web.max-connections-per-address.",
		nil, nil)
	handshakeErrorsDesc = prometheus.NewDesc("hpcio_exporter_http_tls_handshake_errors_total",
		"TLS handshakes that failed: the connection closed by the exporter before its handshake ended (at a cap), by the client, or a client that spoke no TLS or offered nothing acceptable.",
		nil, nil)
	connsClosedDesc = prometheus.NewDesc("hpcio_exporter_http_connections_closed_total",
		"HTTP connections closed by the exporter, by reason: idle_evicted and silent_evicted (idle, or never having completed a request, to admit a new one at the cap), address_limit (one of an address's at its cap), refused (new, at the cap with no other quiet), rejected (request answered by the web config's basic auth, the password checks' bounds or rate limit), write_deadline (scrape response not read by its deadline), idle_timeout (idle for --web.idle-timeout).",
		[]string{"reason"}, nil)
)

func (g *connGuard) Describe(ch chan<- *prometheus.Desc) {
	ch <- connsDesc
	ch <- connsMaxDesc
	ch <- connsMaxPerAddrDesc
	ch <- connsClosedDesc
	ch <- handshakeErrorsDesc
}

func (g *connGuard) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	byState, closed, handshakes := g.byState, g.closed, g.handshakeErrors
	g.mu.Unlock()
	for i, name := range []string{"new", "active", "idle"} {
		ch <- prometheus.MustNewConstMetric(connsDesc, prometheus.GaugeValue, float64(byState[i]), name)
	}
	ch <- prometheus.MustNewConstMetric(connsMaxDesc, prometheus.GaugeValue, float64(g.max))
	ch <- prometheus.MustNewConstMetric(connsMaxPerAddrDesc, prometheus.GaugeValue, float64(g.maxPerAddr))
	for why := closedIdleEvicted; why < numCloseReasons; why++ {
		ch <- prometheus.MustNewConstMetric(connsClosedDesc, prometheus.CounterValue, float64(closed[why]), closeReasons[why])
	}
	ch <- prometheus.MustNewConstMetric(handshakeErrorsDesc, prometheus.CounterValue, float64(handshakes))
}
