package collector

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

// clock is a settable time for the runs of a test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newClockedRegistry(t *testing.T, src *textSource, c *clock) *Registry {
	t.Helper()
	r, err := NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: src, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The rate density on a hand-computed example: over a 10 s interval, four
// jobs write 5, 50, 500 and 1000 bytes (0.5, 5, 50 and 100 B/s) and a
// fifth writes nothing. In base 10 their buckets y = floor(log10(rate))
// are -1, 0, 1 and 2 (100 B/s is 10^2 exactly, so it is in [10^2, 10^3));
// the idle job is in none. Bucket le=10^k counts the rates below 10^k.
func TestRateDensityHandComputed(t *testing.T) {
	onlyCollectors(t, "jobstats")
	first := ost(entry("1:1:a", 1, 0), entry("2:1:a", 1, 0), entry("3:1:a", 1, 0), entry("4:1:a", 1, 0), entry("5:1:a", 1, 7))
	second := ost(entry("1:1:a", 1, 5), entry("2:1:a", 1, 50), entry("3:1:a", 1, 500), entry("4:1:a", 1, 1000), entry("5:1:a", 1, 7))
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newClockedRegistry(t, &textSource{texts: []string{first, second}}, c)
	text := scrapeText(t, r, expfmt.FmtText)
	if strings.Contains(text, "lustre_job_bytes_rate_density") {
		t.Fatal("a density after a single run, without an interval")
	}
	c.t = c.t.Add(10 * time.Second)
	text = scrapeText(t, r, expfmt.FmtText)
	prefix := `lustre_job_bytes_rate_density_bucket{component="ost",operation="write",target="t-OST0000",le="`
	for le, want := range map[string]float64{
		"0.1": 0, "1": 1, "10": 2, "100": 3, "1000": 4, "10000": 4, "1e+11": 4, "+Inf": 4,
	} {
		if got := value(t, text, prefix+le+`"}`); got != want {
			t.Errorf("le=%s: %v, want %v", le, got, want)
		}
	}
	if got := value(t, text, `lustre_job_bytes_rate_density_sum{component="ost",operation="write",target="t-OST0000"}`); got != 155.5 {
		t.Errorf("sum %v, want 155.5", got)
	}
	if got := value(t, text, `lustre_job_bytes_rate_density_count{component="ost",operation="write",target="t-OST0000"}`); got != 4 {
		t.Errorf("count %v, want 4", got)
	}
	// Write requests (samples = bytes/4096 in these entries, all 0 but
	// the 1000 bytes one: 0) — nobody made a request of a whole page.
	if got := value(t, text, `lustre_job_active{component="ost",target="t-OST0000"}`); got != 5 {
		t.Errorf("active %v, want 5", got)
	}
	// Base 2: 5 B/s lies in [4, 8).
	setFlag(t, &rateDensityBase, 2)
	r = newClockedRegistry(t, &textSource{texts: []string{first, second}}, c)
	scrapeText(t, r, expfmt.FmtText)
	c.t = c.t.Add(10 * time.Second)
	text = scrapeText(t, r, expfmt.FmtText)
	if a, b := value(t, text, prefix+`4"}`), value(t, text, prefix+`8"}`); a != 1 || b != 2 {
		t.Errorf("base 2: below 4: %v (want 1: 0.5), below 8: %v (want 2: 0.5 and 5)", a, b)
	}
}

// With --lustre.jobstats.max-series=1, the fastest job keeps its series
// and the others sum under jobid="_other", which only grows although the
// fastest job changes from run to run.
func TestMaxSeriesOther(t *testing.T) {
	onlyCollectors(t, "jobstats")
	setFlag(t, &jobstatsMaxSeries, 1)
	runs := []string{
		ost(entry("1:1:a", 1, 0), entry("2:1:a", 1, 0), entry("3:1:a", 1, 0)),
		ost(entry("1:1:a", 1, 1000), entry("2:1:a", 1, 10), entry("3:1:a", 1, 20)),      // 1 leads: other +30
		ost(entry("1:1:a", 1, 1001), entry("2:1:a", 1, 5000), entry("3:1:a", 1, 40)),    // 2 leads: other +1 +20
		ost(entry("1:1:a", 1, 1002), entry("2:1:a", 1, 5001), entry("3:1:a", 1, 90000)), // 3 leads
	}
	wantOther := []float64{-1, 30, 51, 53}
	wantShown := []string{"", `jobid="1"`, `jobid="2"`, `jobid="3"`}
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := newClockedRegistry(t, &textSource{texts: runs}, c)
	for i := range runs {
		text := scrapeText(t, r, expfmt.FmtText)
		c.t = c.t.Add(30 * time.Second)
		got := value(t, text, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="_other"}`)
		if i == 0 {
			continue // the first run has no interval to rank by
		}
		if got != wantOther[i] {
			t.Errorf("run %d: _other = %v, want %v", i, got, wantOther[i])
		}
		n := strings.Count(text, "lustre_job_write_bytes_total{")
		if n != 2 || !strings.Contains(text, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",`+wantShown[i]) {
			t.Errorf("run %d: %d write series, want the leader %s and _other:\n%s", i, n, wantShown[i], text)
		}
	}
}

// Filters: excluded identities count under _other.
func TestIdentityFilters(t *testing.T) {
	onlyCollectors(t, "jobstats")
	v := "_nojob"
	setFlag(t, jobstatsFilters["exclude-jobid"], v)
	r := newTestRegistry(t, &textSource{texts: []string{ost(entry(":1:a", 1, 4096), entry("9:1:a", 1, 8192))}})
	text := scrapeText(t, r, expfmt.FmtText)
	if strings.Contains(text, `jobid="_nojob"`) {
		t.Error("excluded identity has series")
	}
	if value(t, text, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="_other"}`) != 4096 ||
		value(t, text, `lustre_job_write_bytes_total{component="ost",target="t-OST0000",jobid="9",uid="1",node="a"}`) != 8192 {
		t.Errorf("filter:\n%s", text)
	}
	setFlag(t, jobstatsFilters["include-uid"], "[")
	if _, err := NewRegistry(Env{Logger: slog.New(slog.DiscardHandler), LctlSource: &textSource{texts: []string{""}}}); err == nil {
		t.Error("a bad regular expression was accepted")
	}
}

func TestPerJobSeriesOff(t *testing.T) {
	onlyCollectors(t, "jobstats")
	setFlag(t, &jobstatsPerJobSeries, false)
	r := newTestRegistry(t, &textSource{texts: []string{ost(entry("9:1:a", 1, 8192))}})
	text := scrapeText(t, r, expfmt.FmtText)
	if strings.Contains(text, "lustre_job_write_bytes_total") || !strings.Contains(text, "lustre_job_active") {
		t.Errorf("per-job series off:\n%s", text)
	}
}
