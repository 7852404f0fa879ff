package authgate

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"
)

const (
	user     = "prometheus"
	password = "right-password"
)

func hashOf(t testing.TB, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// writeConfig writes a web configuration with users (name: hash) and
// extra (more YAML) and returns its path.
func writeConfig(t testing.TB, path string, users map[string]string, extra string) string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "web-config.yml")
	}
	var b strings.Builder
	b.WriteString(extra)
	if len(users) > 0 {
		b.WriteString("basic_auth_users:\n")
		for name, hash := range users {
			fmt.Fprintf(&b, "  %s: %s\n", name, hash)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// behind is a gate in front of a handler that counts the requests it lets
// through, and the checks the gate ran.
type behind struct {
	gate    *Gate
	handler http.Handler
	reached atomic.Int64
	checks  atomic.Int64
}

func newBehind(cfg Config) *behind {
	b := &behind{gate: New(cfg)}
	compare := b.gate.compare
	b.gate.compare = func(hash, password []byte) error {
		b.checks.Add(1)
		return compare(hash, password)
	}
	b.handler = b.gate.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.reached.Add(1)
	}))
	return b
}

// get sends a request from remote with user and password ("" for none)
// and returns its response.
func (b *behind) get(remote, user, password string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/metrics", nil)
	r.RemoteAddr = remote
	if user != "" || password != "" {
		r.SetBasicAuth(user, password)
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, r)
	return w
}

func (b *behind) results(t *testing.T) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.gate)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, s := range mfs[0].GetMetric() {
		m[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
	}
	return m
}

// The right password is checked once, then remembered; a wrong one is a
// 401 as the toolkit's, after a check; requests without credentials, and
// any when there are no users, go through unchecked (the toolkit answers
// them).
func TestGateChecks(t *testing.T) {
	path := writeConfig(t, "", map[string]string{user: hashOf(t, password)},
		"http_server_config:\n  headers:\n    X-Frame-Options: deny\n")
	b := newBehind(Config{WebConfigFile: path, MaxChecks: 1})

	for i := range 3 {
		if w := b.get("192.0.2.7:1000", user, password); w.Code != 200 {
			t.Fatalf("right password, request %d: %d", i, w.Code)
		}
	}
	if b.reached.Load() != 3 || b.checks.Load() != 1 {
		t.Errorf("right password thrice: %d let through, %d checks; want 3, 1", b.reached.Load(), b.checks.Load())
	}

	w := b.get("192.0.2.7:1000", user, "wrong")
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != "Basic" || w.Header().Get("X-Frame-Options") != "deny" {
		t.Errorf("wrong password: %d %v", w.Code, w.Header())
	}
	// An unknown user costs a check too.
	if w := b.get("192.0.2.7:1000", "nobody", password); w.Code != 401 {
		t.Errorf("unknown user: %d", w.Code)
	}
	if b.reached.Load() != 3 || b.checks.Load() != 3 {
		t.Errorf("after two wrong: %d let through, %d checks; want 3, 3", b.reached.Load(), b.checks.Load())
	}
	// No credentials: the toolkit's 401.
	if w := b.get("192.0.2.7:1000", "", ""); w.Code != 200 || b.reached.Load() != 4 {
		t.Errorf("no credentials: %d, %d let through", w.Code, b.reached.Load())
	}
	if got, want := b.results(t), map[string]float64{"cached": 2, "ok": 1, "failed": 2, "throttled": 0, "busy": 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results %v, want %v", got, want)
	}

	// A new hash for the user: the remembered password is checked again,
	// and is wrong now.
	writeConfig(t, path, map[string]string{user: hashOf(t, "new-password")}, "")
	if w := b.get("192.0.2.8:1000", user, password); w.Code != 401 {
		t.Errorf("the old password after the hash changed: %d", w.Code)
	}
	if w := b.get("192.0.2.8:1000", user, "new-password"); w.Code != 200 {
		t.Errorf("the new password: %d", w.Code)
	}
	// No users: nothing is checked.
	writeConfig(t, path, nil, "")
	checks := b.checks.Load()
	if w := b.get("192.0.2.8:1000", user, "anything"); w.Code != 200 || b.checks.Load() != checks {
		t.Errorf("no users: %d, %d checks", w.Code, b.checks.Load()-checks)
	}
	// A configuration the toolkit cannot parse: its 500, not ours.
	os.WriteFile(path, []byte("basic_auth_users: [\n"), 0o600)
	if w := b.get("192.0.2.8:1000", user, "anything"); w.Code != 200 || b.checks.Load() != checks {
		t.Errorf("unparsable configuration: %d, %d checks", w.Code, b.checks.Load()-checks)
	}
}

// Past its budget, an address's wrong passwords are answered 429 without a
// check, for as long as the refill says; another address, and a password
// remembered from the throttled one, are not held.
func TestGateThrottlesWrongPasswordsPerAddress(t *testing.T) {
	path := writeConfig(t, "", map[string]string{user: hashOf(t, password)}, "")
	b := newBehind(Config{WebConfigFile: path, MaxChecks: 1, Burst: 3, Refill: 400 * time.Millisecond})
	if w := b.get("[2001:db8:1:2::5]:1", user, password); w.Code != 200 {
		t.Fatalf("right password: %d", w.Code)
	}
	for i := range 3 {
		if w := b.get("[2001:db8:1:2::5]:1", user, fmt.Sprint("wrong", i)); w.Code != 401 {
			t.Fatalf("wrong password %d within the budget: %d", i, w.Code)
		}
	}
	checks := b.checks.Load()
	// Another address of the same /64, another port: the same budget.
	w := b.get("[2001:db8:1:2::6]:2", user, "wrong")
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" {
		t.Errorf("past the budget: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if b.checks.Load() != checks {
		t.Error("a password past the budget was checked")
	}
	// Remembered: let through without a check.
	if w := b.get("[2001:db8:1:2::5]:1", user, password); w.Code != 200 {
		t.Errorf("the remembered password from the throttled address: %d", w.Code)
	}
	// Another address has its own budget.
	if w := b.get("192.0.2.9:1", user, "wrong"); w.Code != 401 {
		t.Errorf("another address: %d", w.Code)
	}
	// One refill later, one more check.
	time.Sleep(450 * time.Millisecond)
	if w := b.get("[2001:db8:1:2::5]:1", user, "wrong"); w.Code != 401 {
		t.Errorf("after a refill: %d", w.Code)
	}
	if w := b.get("[2001:db8:1:2::5]:1", user, "wrong"); w.Code != 429 {
		t.Errorf("the refill spent: %d", w.Code)
	}
	got := b.results(t)
	if got["throttled"] != 2 || got["failed"] != 5 || got["cached"] != 1 {
		t.Errorf("results %v", got)
	}
}

// With every check slot taken, a password that needs a check is answered
// 429 at once; one remembered goes through.
func TestGateChecksInFlight(t *testing.T) {
	path := writeConfig(t, "", map[string]string{user: hashOf(t, password)}, "")
	b := newBehind(Config{WebConfigFile: path, MaxChecks: 2})
	if w := b.get("192.0.2.1:1", user, password); w.Code != 200 {
		t.Fatalf("right password: %d", w.Code)
	}
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	compare := b.gate.compare
	b.gate.compare = func(hash, password []byte) error {
		started <- struct{}{}
		<-release
		return compare(hash, password)
	}
	done := make(chan int, 2)
	for i := range 2 {
		go func() { done <- b.get(fmt.Sprintf("192.0.2.%d:1", 10+i), user, "wrong").Code }()
	}
	<-started
	<-started
	begin := time.Now()
	w := b.get("192.0.2.20:1", user, "wrong")
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" {
		t.Errorf("a third check with two running: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if took := time.Since(begin); took > time.Second {
		t.Errorf("a third check waited %v instead of being answered at once", took)
	}
	if w := b.get("192.0.2.20:1", user, password); w.Code != 200 {
		t.Errorf("the remembered password with the slots taken: %d", w.Code)
	}
	close(release)
	for range 2 {
		if code := <-done; code != 401 {
			t.Errorf("a held check: %d", code)
		}
	}
	if got := b.results(t); got["busy"] != 1 || got["failed"] != 2 {
		t.Errorf("results %v", got)
	}
}

// The address budgets remembered are bounded: past the bound, the address
// whose last failure is the oldest starts again with a full budget.
func TestGateForgetsOldestAddress(t *testing.T) {
	path := writeConfig(t, "", map[string]string{user: hashOf(t, password)}, "")
	b := newBehind(Config{WebConfigFile: path, Burst: 1, Refill: time.Hour, MaxAddresses: 2})
	for _, addr := range []string{"192.0.2.1:1", "192.0.2.2:1", "192.0.2.3:1"} {
		if w := b.get(addr, user, "wrong"); w.Code != 401 {
			t.Fatalf("%s: %d", addr, w.Code)
		}
	}
	b.gate.mu.Lock()
	n := len(b.gate.budgets.byAddr)
	b.gate.mu.Unlock()
	if n != 2 {
		t.Errorf("%d budgets remembered, want 2", n)
	}
	if w := b.get("192.0.2.3:1", user, "wrong"); w.Code != 429 {
		t.Errorf("the latest address: %d, want 429", w.Code)
	}
	if w := b.get("192.0.2.1:1", user, "wrong"); w.Code != 401 {
		t.Errorf("the forgotten address: %d, want 401", w.Code)
	}
}

// A gate wrapped twice checks once.
func TestGateWrappedTwice(t *testing.T) {
	path := writeConfig(t, "", map[string]string{user: hashOf(t, password)}, "")
	b := newBehind(Config{WebConfigFile: path})
	b.handler = b.gate.Wrap(b.handler)
	if w := b.get("192.0.2.1:1", user, password); w.Code != 200 || b.checks.Load() != 1 {
		t.Errorf("%d, %d checks", w.Code, b.checks.Load())
	}
	if got := b.results(t); got["ok"] != 1 || got["cached"] != 0 {
		t.Errorf("results %v: the second gate counted the request again", got)
	}
}

// Whatever the credentials and the address, a request is let through only
// with the right password, and answered 200, 401 or 429.
func FuzzGate(f *testing.F) {
	path := writeConfig(f, "", map[string]string{user: hashOf(f, password), "other": hashOf(f, "x")}, "")
	for _, s := range []string{"Basic cHJvbWV0aGV1czpyaWdodC1wYXNzd29yZA==", "Basic cHJvbWV0aGV1czp3cm9uZw==", "Basic ", "basic Og==", "Bearer x", "Basic !!!", ""} {
		f.Add(s, "192.0.2.1:1")
	}
	f.Add("Basic cHJvbWV0aGV1czpyaWdodC1wYXNzd29yZA==", "[::1]:2")
	b := newBehind(Config{WebConfigFile: path, MaxChecks: 1, Burst: 1 << 30})
	f.Fuzz(func(t *testing.T, authorization, remote string) {
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.RemoteAddr = remote
		r.Header.Set("Authorization", authorization)
		u, p, hasAuth := r.BasicAuth()
		before := b.reached.Load()
		w := httptest.NewRecorder()
		b.handler.ServeHTTP(w, r)
		through := b.reached.Load() > before
		right := hasAuth && ((u == user && p == password) || (u == "other" && p == "x"))
		switch {
		case through && hasAuth && !right:
			t.Fatalf("%q from %q let through", authorization, remote)
		case !through && (right || !hasAuth):
			t.Fatalf("%q from %q: %d, not let through", authorization, remote, w.Code)
		case !through && w.Code != 401 && w.Code != 429:
			t.Fatalf("%q from %q: %d", authorization, remote, w.Code)
		}
	})
}
