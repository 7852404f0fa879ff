// Package authgate checks the passwords of the web configuration's basic
// auth (exporter-toolkit's basic_auth_users, bcrypt hashes) in front of
// exporter-toolkit, so that wrong passwords cannot take the machine.
//
// exporter-toolkit checks a password with bcrypt, one at a time, inside its
// own handler: each wrong password costs a bcrypt (64 ms at cost 10), the
// requests waiting for theirs queue without bound, each holding its
// connection, and its cache of 100 results keeps the wrong ones too, so
// that a flood of them pushes the right one out and Prometheus' next scrape
// waits behind the queue. The toolkit offers no hook before its check, so
// this package does the check first, bounded, and hands the toolkit only
// requests whose password is right (which it then checks once more, and
// caches):
//
//   - A password found right before is not checked again: the gate keeps
//     the credentials it verified (keyed by an HMAC with a key of the
//     process, never the password itself), whoever else fails meanwhile.
//   - At most Config.MaxChecks checks run at once; a request that would
//     need one more is answered 429 at once, with nothing queued.
//   - Each source address (package peer) has a budget of wrong passwords:
//     Burst, then one every Refill; past it, 429 at once, without a check.
//   - A wrong password is answered 401 as exporter-toolkit answers it; an
//     unknown user costs a check as a known one does.
//
// Requests without credentials, and every request when the web
// configuration has no users (or cannot be read: the toolkit answers 500),
// go to the toolkit unchecked.
package authgate

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/hpcio/hpcio_exporter/internal/web/peer"
)

// Config sets the gate's bounds.
type Config struct {
	// WebConfigFile is exporter-toolkit's --web.config.file; "" checks
	// nothing.
	WebConfigFile string
	// MaxChecks is how many password checks may run at once.
	MaxChecks int
	// Burst wrong passwords an address may send at once; then one every
	// Refill.
	Burst  int
	Refill time.Duration
	// MaxAddresses is how many addresses' budgets are remembered; past it,
	// the one whose last failure is the oldest is forgotten.
	MaxAddresses int
	Logger       *slog.Logger
}

// The defaults of Config's budget: a Prometheus with a wrong password,
// even at a 1 s interval, is never throttled (it gets its 401s, and its
// target shows down); a guesser from one address gets 10 checks, then one
// a second.
const (
	DefaultBurst        = 10
	DefaultRefill       = time.Second
	DefaultMaxAddresses = 4096
)

// DefaultMaxChecks is the number of checks run at once when not set: a
// quarter of the cores, at least one. A check is one core for its whole
// length (bcrypt does not share it), and the right passwords need one check
// per process (then the gate remembers them): one core checks 15 a second at
// cost 10, more than any site's scrapers need; the other cores stay for the
// scrapes and, on a Lustre server, for Lustre.
func DefaultMaxChecks(cores int) int { return max(1, cores/4) }

// Results of a request's check, the label of
// hpcio_exporter_http_password_checks_total.
const (
	resultCached    = iota // verified before: no bcrypt
	resultOK               // checked, right
	resultFailed           // checked, wrong (or unknown user)
	resultThrottled        // 429: the address is past its budget of wrong passwords
	resultBusy             // 429: every check slot in use
	numResults
)

var resultNames = [numResults]string{"cached", "ok", "failed", "throttled", "busy"}

// verifiedKey marks a request the gate let through: a gate wrapped twice
// (exporter-toolkit wraps the server's handler once per listener) checks
// once.
type verifiedKey struct{}

// Gate checks passwords before exporter-toolkit does.
type Gate struct {
	cfg     Config
	slots   chan struct{}
	compare func(hash, password []byte) error // bcrypt's; tests hold it
	key     [32]byte                          // HMAC key of the credentials remembered

	cfgMu   sync.Mutex
	stamp   os.FileInfo // of the file current was read from
	readAt  time.Time
	current *users

	mu       sync.Mutex
	verified map[[32]byte]struct{}
	budgets  budgets
	counts   [numResults]uint64
	logged   [numResults]uint64
	lastAddr peer.Key // the last address throttled
	lastLog  time.Time
	logTimer *time.Timer
}

// maxVerified bounds the credentials remembered: each is a user's right
// password (a user has one hash), so a site needs as many as it has users.
const maxVerified = 64

// New returns a gate; with cfg.WebConfigFile "" it lets every request
// through.
func New(cfg Config) *Gate {
	if cfg.MaxChecks <= 0 {
		cfg.MaxChecks = 1
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Refill <= 0 {
		cfg.Refill = DefaultRefill
	}
	if cfg.MaxAddresses <= 0 {
		cfg.MaxAddresses = DefaultMaxAddresses
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gate{cfg: cfg, slots: make(chan struct{}, cfg.MaxChecks), compare: bcrypt.CompareHashAndPassword, verified: map[[32]byte]struct{}{}}
	g.budgets.init(cfg)
	rand.Read(g.key[:])
	return g
}

// Wrap returns next behind the gate.
func (g *Gate) Wrap(next http.Handler) http.Handler {
	if g == nil || g.cfg.WebConfigFile == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(verifiedKey{}) != nil {
			next.ServeHTTP(w, r)
			return
		}
		u := g.users()
		user, pass, hasAuth := r.BasicAuth()
		if u == nil || len(u.hashes) == 0 || !hasAuth {
			next.ServeHTTP(w, r) // the toolkit's own answer
			return
		}
		switch status, retry := g.check(u, user, pass, peer.OfRequest(r)); status {
		case http.StatusOK:
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedKey{}, true)))
		default:
			for k, v := range u.headers {
				w.Header().Set(k, v)
			}
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", "Basic")
			} else {
				w.Header().Set("Retry-After", strconv.Itoa(retry))
			}
			http.Error(w, http.StatusText(status), status)
		}
	})
}

// check checks user's password from addr against u, within the gate's
// bounds: 200, 401, or 429 with the seconds to wait.
func (g *Gate) check(u *users, user, pass string, addr peer.Key) (status, retryAfter int) {
	hash, known := u.hashes[user]
	if !known {
		// As exporter-toolkit: an unknown user costs what a known one
		// does, so that timing tells no names. Any user's hash has the
		// configured cost, and is never a match here.
		hash = u.decoy
	}
	key := g.credentialKey(user, hash, pass)
	g.mu.Lock()
	if _, ok := g.verified[key]; ok && known {
		g.count(resultCached, "")
		g.mu.Unlock()
		return http.StatusOK, 0
	}
	if wait := g.budgets.wait(addr, time.Now()); wait > 0 {
		g.count(resultThrottled, addr)
		g.mu.Unlock()
		return http.StatusTooManyRequests, int(math.Ceil(wait.Seconds()))
	}
	g.mu.Unlock()

	select {
	case g.slots <- struct{}{}:
	default:
		g.mu.Lock()
		g.count(resultBusy, addr)
		g.mu.Unlock()
		return http.StatusTooManyRequests, 1
	}
	err := g.compare(hash, []byte(pass))
	<-g.slots

	g.mu.Lock()
	defer g.mu.Unlock()
	if known && err == nil {
		if len(g.verified) >= maxVerified {
			for k := range g.verified { // any one: they are all right passwords
				delete(g.verified, k)
				break
			}
		}
		g.verified[key] = struct{}{}
		g.count(resultOK, "")
		return http.StatusOK, 0
	}
	g.budgets.fail(addr, time.Now())
	g.count(resultFailed, addr)
	return http.StatusUnauthorized, 0
}

// credentialKey is an HMAC of the credentials and the hash they are
// checked against, each length-prefixed: the password is not kept, and a
// changed hash is checked again.
func (g *Gate) credentialKey(user string, hash []byte, pass string) [32]byte {
	m := hmac.New(sha256.New, g.key[:])
	for _, part := range [][]byte{[]byte(user), hash, []byte(pass)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	var sum [32]byte
	m.Sum(sum[:0])
	return sum
}

// users are the web configuration's users and the headers it adds to every
// response.
type users struct {
	hashes  map[string][]byte
	decoy   []byte
	headers map[string]string
}

// users returns the web configuration's users, read again when the file
// changed (exporter-toolkit reads it at each request: a change applies at
// once); nil when it cannot be read or parsed (the toolkit then answers
// 500).
func (g *Gate) users() *users {
	fi, err := os.Stat(g.cfg.WebConfigFile)
	if err != nil {
		return nil
	}
	g.cfgMu.Lock()
	defer g.cfgMu.Unlock()
	// The file as it was read, and read more than a second after it was
	// written: a file's times move in steps of a clock tick, so that a
	// write in the same tick as the one read, of the same size, would
	// look the same (git's "racily clean" files).
	if g.current != nil && os.SameFile(fi, g.stamp) && fi.Size() == g.stamp.Size() &&
		fi.ModTime().Equal(g.stamp.ModTime()) && g.readAt.Sub(fi.ModTime()) > time.Second {
		return g.current
	}
	readAt := time.Now()
	content, err := os.ReadFile(g.cfg.WebConfigFile)
	if err != nil {
		return nil
	}
	// Parsed as exporter-toolkit parses it (strictly, into its type), so
	// that the two agree on what the users are.
	var c web.Config
	if err := yaml.UnmarshalStrict(content, &c); err != nil {
		g.current, g.stamp = nil, nil
		return nil
	}
	u := &users{hashes: make(map[string][]byte, len(c.Users)), headers: c.HTTPConfig.Header}
	for name, hash := range c.Users {
		u.hashes[name] = []byte(hash)
		if u.decoy == nil || bytes.Compare([]byte(hash), u.decoy) < 0 {
			u.decoy = []byte(hash)
		}
	}
	g.current, g.stamp, g.readAt = u, fi, readAt
	return u
}

// count counts a result (the mutex held) and logs the refusals and
// failures: the first at once, then at most one line a minute with what
// happened since the last.
func (g *Gate) count(result int, addr peer.Key) {
	g.counts[result]++
	if result < resultFailed {
		return
	}
	if result != resultFailed {
		g.lastAddr = addr
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

func (g *Gate) logLocked() {
	var attrs []any
	refused := false
	for result := resultFailed; result < numResults; result++ {
		if n := g.counts[result] - g.logged[result]; n > 0 {
			attrs = append(attrs, resultNames[result], n)
			refused = refused || result != resultFailed
		}
		g.logged[result] = g.counts[result]
	}
	if attrs == nil {
		return
	}
	g.lastLog = time.Now()
	if refused {
		attrs = append(attrs, "last_address", string(g.lastAddr), "max_checks", g.cfg.MaxChecks)
	}
	// The results are those of hpcio_exporter_http_password_checks_total;
	// no user name nor password is logged.
	g.cfg.Logger.Warn("wrong passwords for the web configuration's basic auth", attrs...)
}

var checksDesc = prometheus.NewDesc("hpcio_exporter_http_password_checks_total",
	"Requests with basic auth credentials, by result: cached (verified before, no bcrypt), ok (checked, right), failed (checked, wrong or unknown user: 401), throttled (429: the source address past its budget of wrong passwords), busy (429: --web.max-password-checks checks already running).",
	[]string{"result"}, nil)

func (g *Gate) Describe(ch chan<- *prometheus.Desc) { ch <- checksDesc }

func (g *Gate) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	counts := g.counts
	g.mu.Unlock()
	for result, n := range counts {
		ch <- prometheus.MustNewConstMetric(checksDesc, prometheus.CounterValue, float64(n), resultNames[result])
	}
}
