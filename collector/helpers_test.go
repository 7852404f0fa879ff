package collector

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// textSource is an lctl that prints the next of its texts on each run (the
// last one again once they are used up).
type textSource struct {
	mu    sync.Mutex
	texts []string
	calls atomic.Int32
	exit  *toolrun.ExitError
	delay time.Duration
}

func (s *textSource) GetParam(ctx context.Context, patterns []string) (io.ReadCloser, error) {
	n := int(s.calls.Add(1)) - 1
	s.mu.Lock()
	text := s.texts[min(n, len(s.texts)-1)]
	s.mu.Unlock()
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &closer{Reader: strings.NewReader(text), exit: s.exit}, nil
}

type closer struct {
	io.Reader
	exit *toolrun.ExitError
}

func (c *closer) Close() error {
	if c.exit != nil {
		return c.exit
	}
	return nil
}

// onlyCollectors enables the named collectors and no other, for the test.
func onlyCollectors(t *testing.T, names ...string) {
	t.Helper()
	saved := map[string]bool{}
	for n, r := range registrations {
		saved[n] = *r.enabled
		*r.enabled = false
	}
	for _, n := range names {
		if err := SetEnabled(n, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for n, on := range saved {
			*registrations[n].enabled = on
		}
	})
}

// setFlag sets a package flag variable for one test.
func setFlag[T any](t *testing.T, p *T, v T) {
	t.Helper()
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// testLnetctl is the lnetctl of the registries tests make.
var testLnetctl = toolrun.Path("lnetctl")

func newTestRegistry(t *testing.T, src lctl.Source) *Registry {
	t.Helper()
	r, err := NewRegistry(Env{Logger: testLogger(t), LctlSource: src, Lnetctl: testLnetctl})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scrapeText scrapes r once, as the HTTP handler would, and returns the
// response in the given format, OpenMetrics with its _created lines
// (--web.openmetrics-created-samples), so that the goldens show the created
// timestamps the collectors hand over.
func scrapeText(t *testing.T, r *Registry, format expfmt.Format) string {
	t.Helper()
	s := r.NewScrape(context.Background())
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := exposition.WriteResponse(&buf, format, mfs, s.Streams(), exposition.WithCreatedSamples()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return buf.String()
}

// volatile matches lines whose values change from run to run.
var volatile = regexp.MustCompile(`(?m)^(hpcio_exporter_(scrape_collector_duration_seconds|lctl_last_run_duration_seconds)|lustre_jobstats_\w+_created)\b.*\n`)

// processWide matches the samples of counters the whole process shares:
// another test of the package may have added to them (a stray killed after
// a hanging fake lctl, on a loaded machine), so a golden file holds where
// they are, not their values. toolrun's tests count the strays.
var processWide = regexp.MustCompile(`(?m)^(hpcio_exporter_lctl_strays_killed_total) [0-9.e+]+$`)

func stable(text string) string {
	return processWide.ReplaceAllString(volatile.ReplaceAllString(text, ""), "$1 (process-wide)")
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update)
}

// value returns the sample value of the series whose line starts with
// prefix (metric name and labels, as written), or -1.
func value(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, series+" ") {
			var v float64
			if _, err := fmtSscan(line[len(series)+1:], &v); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return v
		}
	}
	return -1
}
