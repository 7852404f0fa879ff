package prom

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWindowStep: about Points points whatever the window, in whole
// seconds, and rate() ranges never shorter than deploy's 5 minutes nor
// than the step (no traffic between two points left out).
func TestWindowStep(t *testing.T) {
	to := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		window             time.Duration
		step, win, rateWin string
	}{
		{24 * time.Hour, "432s", "86400s", "432s"},
		{time.Hour, "18s", "3600s", "300s"},
		{time.Minute, "1s", "60s", "300s"},
		{1500 * time.Millisecond, "1s", "2s", "300s"},
	} {
		q := newQueries("90000002", to.Add(-tc.window), to)
		if q.stepDur != tc.step || q.win != tc.win || q.rateWin != tc.rateWin {
			t.Errorf("%v: step %s, window %s, rate over %s; want %s, %s, %s", tc.window, q.stepDur, q.win, q.rateWin, tc.step, tc.win, tc.rateWin)
		}
		if n := int(tc.window / q.step); n > Points {
			t.Errorf("%v: %d points", tc.window, n)
		}
	}
	// A job id is a PromQL string, quoted: no way out of the matcher.
	if q := newQueries(`1"}or vector(1)#`, to.Add(-time.Hour), to); q.job != `jobid="1\"}or vector(1)#"` {
		t.Errorf("job matcher %s", q.job)
	}
}

// TestServersErrors: what the command prints when Prometheus is not
// there, is not a Prometheus, or the window is empty: one line each.
func TestServersErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	notProm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>hello</html>"))
	}))
	defer notProm.Close()
	now := time.Now()
	for _, tc := range []struct {
		url, want string
		from, to  time.Time
	}{
		{closed, "cannot reach it", now.Add(-time.Hour), now},
		{notProm.URL, "is the URL a Prometheus?", now.Add(-time.Hour), now},
		{notProm.URL, "is not after its start", now, now.Add(-time.Hour)},
	} {
		c, err := New(tc.url, "")
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Servers(context.Background(), "90000002", tc.from, tc.to, "flags")
		if err == nil || s != nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, %v; want one line with %q", tc.url, s, err, tc.want)
		}
	}
	// A deadline: the queries stop with it.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer slow.Close()
	c, _ := New(slow.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Servers(ctx, "1", now.Add(-time.Hour), now, "flags"); err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("slow server: %v", err)
	}
}
