package handler

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultTimeout is the deadline of a scrape without a valid
	// X-Prometheus-Scrape-Timeout-Seconds. Prometheus and vmagent always
	// send one; curl and other scrapers do not. Two minutes is well past
	// what a scrape takes (lctl is bounded by --lustre.timeout, 20 s by
	// default, and the largest response is written in seconds), so it
	// cuts only a client that stopped reading, and then frees its slot.
	DefaultTimeout = 2 * time.Minute

	// MaxTimeout bounds what the header may ask: a larger value is
	// ignored, as a malformed one. Prometheus' scrape timeout cannot
	// exceed its scrape interval, and an interval over the 5-minute
	// staleness window already makes every series flap; an hour leaves any
	// real configuration room, and keeps the arithmetic far from
	// time.Duration's overflow (2^63 ns, 292 years: 9.3e9 s overflows it,
	// and 1e308 or +Inf would make an expired deadline).
	MaxTimeout = time.Hour

	// WriteGrace is the time after a scrape's deadline that its response
	// may still take to be written: the scraper has given up by then (its
	// own clock started before ours, when it sent the request), and what
	// is left is flushing buffers. A connection still being written past
	// it is closed.
	WriteGrace = 2 * time.Second

	// StallTimeout bounds how long one stallChunk of the response may
	// wait for the client to read, whatever the deadline: a client that
	// reads nothing for that long (or less than 6.4 KB/s) is cut, so
	// that a header asking for an hour does not let a client that never
	// reads hold a slot for an hour. (The deadline is moved at most once
	// in stallSlack: a chunk gets between StallTimeout-stallSlack and
	// StallTimeout.)
	StallTimeout = 10 * time.Second

	// The size of exposition's writes: a chunk is one write, and one HTTP
	// chunk of the response.
	stallChunk = 64 << 10
	stallSlack = time.Second

	timeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"
)

// scrapeTimeout reads Prometheus' X-Prometheus-Scrape-Timeout-Seconds. A
// value that is not a finite number of seconds above zero and at most
// MaxTimeout is not a timeout (false): the scrape gets the configured one,
// as if the header were absent.
func scrapeTimeout(r *http.Request) (time.Duration, bool) {
	return parseTimeout(r.Header.Get(timeoutHeader))
}

func parseTimeout(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	// NaN compares false with everything: checked by name.
	if err != nil || math.IsNaN(secs) || secs <= 0 || secs > MaxTimeout.Seconds() {
		return 0, false
	}
	d := time.Duration(secs * float64(time.Second))
	if d <= 0 { // below a nanosecond
		return 0, false
	}
	return d, true
}

// clip shortens a client's header value for a log line.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ScrapeMethod answers 405 Method Not Allowed, with Allow, to any method
// but GET and HEAD, and reports whether the request may scrape.
func ScrapeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed: only GET and HEAD scrape", http.StatusMethodNotAllowed)
	return false
}

// OnlyScrapeMethods is ScrapeMethod in front of next: for a metrics
// handler that is not this package's (the fleet's index).
func OnlyScrapeMethods(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ScrapeMethod(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// deadlineWriter writes a response through the connection's deadlines: no
// write past final, and no chunk of stallChunk bytes waiting more than
// StallTimeout for the client to read. The request's read deadline is
// final too: a background read past it would cancel the scrape, and the
// rest of a request body is discarded under it after the handler.
type deadlineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	final   time.Time
	ok      bool      // the connection takes deadlines (not an httptest recorder)
	armed   time.Time // the write deadline set
	stalled bool      // it is the stall's, not final
}

func newDeadlineWriter(w http.ResponseWriter, final time.Time) *deadlineWriter {
	d := &deadlineWriter{w: w, rc: http.NewResponseController(w), final: final, armed: final}
	d.ok = d.rc.SetWriteDeadline(final) == nil
	d.rc.SetReadDeadline(final)
	return d
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if !d.ok {
		return d.w.Write(p)
	}
	written := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), stallChunk)]
		deadline, stall := d.final, time.Now().Add(StallTimeout)
		stalled := stall.Before(deadline)
		if stalled {
			deadline = stall
		}
		if stalled != d.stalled || deadline.Sub(d.armed) > stallSlack {
			d.rc.SetWriteDeadline(deadline)
			d.armed, d.stalled = deadline, stalled
		}
		n, err := d.w.Write(chunk)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Scrapes tracks the scrapes in flight and their deadlines: a server
// being stopped waits for them, and no longer than the latest. It is safe
// for concurrent use.
type Scrapes struct {
	mu    sync.Mutex
	live  map[*time.Time]struct{}
	ended uint64
}

// begin notes a scrape whose response ends by deadline; the returned
// function notes its end.
func (s *Scrapes) begin(deadline time.Time) func() {
	key := &deadline
	s.mu.Lock()
	if s.live == nil {
		s.live = map[*time.Time]struct{}{}
	}
	s.live[key] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.live, key)
		s.ended++
		s.mu.Unlock()
	}
}

// InFlight returns how many scrapes are under way, and the latest time by
// which their responses are written or cut (zero when none is).
func (s *Scrapes) InFlight() (n int, latest time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for d := range s.live {
		if d.After(latest) {
			latest = *d
		}
	}
	return len(s.live), latest
}

// Ended returns how many scrapes have ended (answered, refused or cut).
func (s *Scrapes) Ended() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}
