package main

import (
	"container/list"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The exporter's connections, over all its servers (the fleet's too): open
// files are the process's, and so is the cap.
//
// A connection is counted from its accept (http.Server.ConnState's
// StateNew, which net/http reports right after Accept and before serving
// it, on every listener exporter-toolkit makes: TCP, systemd sockets,
// vsock, TLS) to its close. At --web.max-connections, the connection idle
// the longest is closed to admit the new one, as nginx reuses its idle
// keep-alive connections when it runs out; with none idle, the new one is
// closed at once. It is closed rather than answered: it has sent nothing
// yet (with TLS, not even its handshake), answering would mean reading its
// request on the accept path, and a closed connection costs nothing and
// shows as a failed scrape (up 0) to whoever is refused. Every other state
// is bounded in time: a new connection by the header timeout, an active one
// by its scrape's deadline (handler), an idle one by --web.idle-timeout.

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
	// A new connection closed at once: at the cap, none idle.
	closedRefused
	// A connection whose request was answered before reaching the
	// exporter's handlers (exporter-toolkit's 401 for basic auth, 429 of its
	// rate limiter): closed once answered, so that it holds nothing.
	closedRejected
	// A scrape whose client did not read its response by its deadline.
	closedWriteDeadline
	// An idle keep-alive connection closed after --web.idle-timeout.
	closedIdleTimeout
	numCloseReasons
)

var closeReasons = [numCloseReasons]string{"", "idle_evicted", "refused", "rejected", "write_deadline", "idle_timeout"}

// connRecord is the state of one connection.
type connRecord struct {
	conn      net.Conn
	state     http.ConnState
	idle      *list.Element // in connGuard.idle while idle
	idleSince time.Time
	closedBy  closeReason
	counted   bool // in connGuard.byState[state]
	wasIdle   bool
	// served tells that a handler of ours saw a request since the
	// connection was last active (set by the handler, under the guard's
	// mutex).
	served bool
}

type connKey struct{}

// connGuard counts the connections, enforces the cap and closes the
// connections whose request never reached us.
type connGuard struct {
	max         int
	idleTimeout time.Duration
	logger      *slog.Logger

	mu      sync.Mutex
	conns   map[net.Conn]*connRecord
	open    int       // not closed, nor being closed by us
	byState [3]int    // new, active, idle
	idle    list.List // of *connRecord, idle the longest first
	closed  [numCloseReasons]uint64
	// Log lines about closes: the first at once, then at most one a
	// minute with the counts since the last.
	logged   [numCloseReasons]uint64
	lastLog  time.Time
	logTimer *time.Timer
}

func newConnGuard(maxConns int, idleTimeout time.Duration, logger *slog.Logger) *connGuard {
	return &connGuard{max: maxConns, idleTimeout: idleTimeout, logger: logger, conns: map[net.Conn]*connRecord{}}
}

// server returns an http.Server of handler whose connections the guard
// keeps: the exporter's timeouts, ConnState and ConnContext, and handler
// wrapped to note that a request reached it.
func (g *connGuard) server(handler http.Handler) *http.Server {
	return &http.Server{
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
	}
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
		if g.open > g.max {
			if oldest := g.idle.Front(); oldest != nil {
				victim := oldest.Value.(*connRecord)
				g.leave(victim)
				g.closing(victim, closedIdleEvicted)
				toClose = append(toClose, victim.conn)
			} else {
				g.closing(rec, closedRefused)
				toClose = append(toClose, c)
			}
		}
	case http.StateActive:
		rec.served = false
	case http.StateIdle:
		if rec.closedBy != notClosed {
			break
		}
		// Idle after requests none of which reached us: they got their
		// answer from exporter-toolkit (401). HTTP/2 reports Active then
		// Idle as it starts, before any request; then Active and Idle
		// around its streams.
		rejected := !rec.served && (rec.wasIdle || !isHTTP2(c))
		rec.wasIdle = true
		if rejected {
			g.closing(rec, closedRejected)
			toClose = append(toClose, c)
		} else {
			rec.idleSince = now
			rec.idle = g.idle.PushBack(rec)
		}
	case http.StateClosed, http.StateHijacked:
		delete(g.conns, c)
		switch {
		case rec.closedBy != notClosed: // by us, counted then
		case rec.state == http.StateIdle && g.idleTimeout > 0 && now.Sub(rec.idleSince) >= g.idleTimeout-10*time.Millisecond:
			g.open--
			g.count(closedIdleTimeout)
		default: // by the client, or after a failed request
			g.open--
		}
	}
	rec.state = state
	g.enter(rec)
	g.mu.Unlock()
	for _, c := range toClose {
		closeNow(c)
	}
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

// leave and enter keep byState and the idle list as rec leaves its state
// and enters the next.
func (g *connGuard) leave(rec *connRecord) {
	if rec.counted {
		g.byState[rec.state]--
		rec.counted = false
	}
	if rec.idle != nil {
		g.idle.Remove(rec.idle)
		rec.idle = nil
	}
}

func (g *connGuard) enter(rec *connRecord) {
	if rec.state >= http.StateNew && rec.state <= http.StateIdle && rec.closedBy == notClosed {
		g.byState[rec.state]++
		rec.counted = true
	}
}

// closing notes that the guard closes rec (the caller closes it once the
// mutex is released): it no longer counts against the cap.
func (g *connGuard) closing(rec *connRecord, why closeReason) {
	if rec.closedBy != notClosed {
		return
	}
	rec.closedBy = why
	g.open--
	g.count(why)
}

// count counts a close and logs it (the mutex held): the first at once,
// then at most one line a minute with what happened since the last.
func (g *connGuard) count(why closeReason) {
	g.closed[why]++
	if why == closedIdleTimeout {
		return // routine: a scraper that went away
	}
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
	attrs := []any{"max_connections", g.max, "open", g.open}
	news := false
	for why := closedIdleEvicted; why < numCloseReasons; why++ {
		if why == closedIdleTimeout {
			continue
		}
		if n := g.closed[why] - g.logged[why]; n > 0 {
			attrs = append(attrs, closeReasons[why], n)
			news = true
		}
		g.logged[why] = g.closed[why]
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
		"Open HTTP connections of the exporter, by state: new (no request yet), active (a request being served), idle (keep-alive, between requests).",
		[]string{"state"}, nil)
	connsMaxDesc = prometheus.NewDesc("hpcio_exporter_http_connections_max",
		"The cap on open HTTP connections (--web.max-connections, by default from the open-file limit); at the cap, the connection idle the longest is closed to admit a new one.",
		nil, nil)
	connsClosedDesc = prometheus.NewDesc("hpcio_exporter_http_connections_closed_total",
		"HTTP connections closed by the exporter, by reason: idle_evicted (idle, to admit a new one at the cap), refused (new, at the cap with none idle), rejected (request answered by the web config's basic auth or rate limit), write_deadline (scrape response not read by its deadline), idle_timeout (idle for --web.idle-timeout).",
		[]string{"reason"}, nil)
)

func (g *connGuard) Describe(ch chan<- *prometheus.Desc) {
	ch <- connsDesc
	ch <- connsMaxDesc
	ch <- connsClosedDesc
}

func (g *connGuard) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	byState, closed := g.byState, g.closed
	g.mu.Unlock()
	for i, name := range []string{"new", "active", "idle"} {
		ch <- prometheus.MustNewConstMetric(connsDesc, prometheus.GaugeValue, float64(byState[i]), name)
	}
	ch <- prometheus.MustNewConstMetric(connsMaxDesc, prometheus.GaugeValue, float64(g.max))
	for why := closedIdleEvicted; why < numCloseReasons; why++ {
		ch <- prometheus.MustNewConstMetric(connsClosedDesc, prometheus.CounterValue, float64(closed[why]), closeReasons[why])
	}
}
