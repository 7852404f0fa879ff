package collector

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// familyBase is what the collectors of the Lustre families (everything but
// job_stats) share: the patterns they add to the one lctl run of a scrape,
// the outcome of that run, a filter for parameters lctl prints twice, and a
// log that reports bad input once.
//
// A family collector builds its values in the run goroutine (beginRun,
// the parsers it hands out in route, endRun) without a lock: runs never
// overlap. endRun publishes them under mu for Update.
type familyBase struct {
	name     string
	src      *lustreSource
	logger   *slog.Logger
	patterns []string

	// seen holds the parameters routed in the run under way: lctl prints a
	// parameter once for every pattern that matches it.
	seen map[string]bool

	mu       sync.Mutex
	runErr   error
	warned   map[string]bool
	badInput float64
}

func newFamilyBase(env Env, name string, patterns ...string) familyBase {
	return familyBase{name: name, src: env.lustre, logger: env.Logger, patterns: patterns, seen: map[string]bool{}, warned: map[string]bool{}}
}

func (b *familyBase) lctlPatterns() []string { return b.patterns }

func (b *familyBase) beginRun(time.Time) { clear(b.seen) }

// claim reports whether param is met for the first time in this run.
func (b *familyBase) claim(param string) bool {
	if b.seen[param] {
		return false
	}
	b.seen[param] = true
	return true
}

// finish records the run's outcome; call it under mu from endRun.
func (b *familyBase) finish(res runResult) { b.runErr = res.err }

var lctlBadInputDesc = prometheus.NewDesc(
	prometheus.BuildFQName(Namespace, "lctl", "bad_input_total"),
	"Parameter values and lines a Lustre collector could not read and dropped (a value printed as \"not supported\", a malformed or cut line); the rest of the collector's output is unaffected.",
	[]string{"collector"}, nil)

// bad reports input a parser could not read. The first report for a kind
// of parameter (its leaf name) and reason is a warning; later ones are
// debug lines, so that a server that always prints "not supported" for a
// value does not fill the log. count is the number of values or lines
// dropped.
func (b *familyBase) bad(param, reason string, count int, detail ...any) {
	b.mu.Lock()
	b.badInput += float64(count)
	key := lctl.ParamLeaf(param) + "\x00" + reason
	first := !b.warned[key]
	b.warned[key] = true
	b.mu.Unlock()
	args := append([]any{"param", param, "reason", reason, "dropped", count}, detail...)
	if first {
		b.logger.Warn("bad input from lctl dropped (later ones of this kind are logged at debug level)", args...)
	} else {
		b.logger.Debug("bad input from lctl dropped", args...)
	}
}

// sendBadInput sends the bad input counter; call it under mu.
func (b *familyBase) sendBadInput(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(lctlBadInputDesc, prometheus.CounterValue, b.badInput, b.name)
}

// created returns a counter's creation time from Lustre's start_time, or
// the zero time when there is none or it is not a plausible Unix time
// (EXAScaler 2.14 prints seconds since boot in some start_times).
func created(start, snapshot float64) time.Time {
	if start < 1e9 || (snapshot > 0 && start > snapshot) {
		return time.Time{}
	}
	sec := int64(start)
	return time.Unix(sec, int64((start-float64(sec))*1e9))
}

// counter makes a counter, with its created timestamp when known.
func counter(desc *prometheus.Desc, v float64, createdAt time.Time, labels ...string) prometheus.Metric {
	if createdAt.IsZero() {
		return prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
	}
	return prometheus.MustNewConstMetricWithCreatedTimestamp(desc, prometheus.CounterValue, v, createdAt, labels...)
}

func gauge(desc *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}
