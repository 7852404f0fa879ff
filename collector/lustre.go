package collector

import (
	"fmt"
	"iter"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// Flags shared by the Lustre collectors (lctl) and the lnet collector
// (lnetctl).
var (
	lctlTimeout       = 20 * time.Second
	lctlTimeoutOffset = 500 * time.Millisecond
	// lctlMaxOutput reads --lustre.max-output-size: 1 GiB, over four
	// kilobytes for each of --lustre.jobstats.max-entries' 200,000 entries
	// (an MDT's entry is about 3 KB, an OST's 2.3 KB), so that the entry
	// budget is met first; it bounds the time a run spends on output that
	// is not entries.
	lctlMaxOutput = func() int64 { return 1 << 30 }
)

func init() {
	addFlags(func(a FlagGroup) {
		a.Flag("lustre.timeout", "Longest time one lctl (or lnetctl) run may take; it is killed, with its process group, after that. Longer than 0 and than --lustre.timeout-offset.").
			Default(lctlTimeout.String()).Action(checkLustreBounds).DurationVar(&lctlTimeout)
		a.Flag("lustre.timeout-offset", "Time kept free before the scrape deadline (X-Prometheus-Scrape-Timeout-Seconds) to write the response after lctl. 0 or more, shorter than --lustre.timeout.").
			Default(lctlTimeoutOffset.String()).Action(checkLustreBounds).DurationVar(&lctlTimeoutOffset)
		maxOutput := a.Flag("lustre.max-output-size", "Most bytes one lctl run may print, with a unit (1GiB, 512MiB): past it, reading stops, the tool is killed, the run counts hpcio_exporter_lctl_runs_total{result=\"over_budget\"}, every Lustre collector fails and nothing of the run is published.").
			Default("1GiB").Bytes()
		lctlMaxOutput = func() int64 { return int64(*maxOutput) }
	})
}

// checkLustreBounds makes an offset that leaves a run no time a usage
// error: every run would fail at once. (Each duration's own sign is
// checked by checkDurations.) As a flag's action it runs once every flag
// is set, whichever of the two was given.
func checkLustreBounds(*kingpin.ParseContext) error {
	if lctlTimeout > 0 && lctlTimeoutOffset >= lctlTimeout {
		return fmt.Errorf("--lustre.timeout-offset (%v) must be shorter than --lustre.timeout (%v): no lctl run would have any time", lctlTimeoutOffset, lctlTimeout)
	}
	return nil
}

func lustreBounds() toolrun.Bounds {
	return toolrun.Bounds{Timeout: lctlTimeout, Offset: lctlTimeoutOffset}
}

// lustreCollector is a collector of Lustre families: send turns the
// parameters its request asked for, as the scrape's snapshot holds them,
// into metrics. Parsing, and the run, are the Lustre source's.
type lustreCollector struct {
	name string
	send func(snap *lustre.Snapshot, ch chan<- prometheus.Metric)
}

// registerLustre registers a collector of one kind of Lustre parameters.
// match picks its parameters among those lctl prints (nil: the patterns,
// as lctl globs them).
func registerLustre(name string, defaultEnabled bool, kind lustre.Kind, patterns []string, match func(param string) bool,
	send func(snap *lustre.Snapshot, ch chan<- prometheus.Metric)) {
	register(name, defaultEnabled, func(env Env) (Collector, error) {
		env.lustre.Add(lustre.Request{Owner: name, Kind: kind, Patterns: patterns, Match: match})
		return &lustreCollector{name: name, send: send}, nil
	})
}

var lctlBadInputDesc = prometheus.NewDesc(
	prometheus.BuildFQName(Namespace, "lctl", "bad_input_total"),
	"Parameter values and lines a Lustre collector could not read and dropped (a value printed as \"not supported\", a malformed or cut line); the rest of the collector's output is unaffected.",
	[]string{"collector"}, nil)

func (c *lustreCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	snap, err := s.Lustre()
	if snap == nil {
		return err
	}
	c.send(snap, ch)
	ch <- prometheus.MustNewConstMetric(lctlBadInputDesc, prometheus.CounterValue, float64(snap.BadInput[c.name]), c.name)
	return err
}

// owned iterates over the parameters of one collector.
func owned[T any](params []lustre.Param[T], owner string) iter.Seq[*lustre.Param[T]] {
	return func(yield func(*lustre.Param[T]) bool) {
		for i := range params {
			if params[i].Owner == owner && !yield(&params[i]) {
				return
			}
		}
	}
}

var (
	lctlRunsDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "lctl", "runs_total"),
		"lctl get_param runs by result: ok; partial (a non-zero exit after printing some of the parameters asked for: another pattern matched nothing); failed (lctl could not start, its output could not be read, or it exited non-zero printing none of the parameters asked for: every Lustre collector fails); killed (at the deadline, the output cut short).",
		[]string{"result"}, nil)
	lctlDurationDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "lctl", "last_run_duration_seconds"),
		"Duration of the latest lctl get_param run, output parsing included.",
		nil, nil)
)

// sendLctlRuns sends the run accounting of the scrape's snapshot, when a
// collector of the scrape asked for one.
func (s *Scrape) sendLctlRuns(ch chan<- prometheus.Metric) {
	if !s.lustreAsked {
		return
	}
	runs, last := s.registry.lustre.Runs()
	if snap := s.lustreSnap; snap != nil {
		runs, last = snap.Runs, snap.Duration
	}
	for _, r := range toolrun.Results {
		ch <- prometheus.MustNewConstMetric(lctlRunsDesc, prometheus.CounterValue, float64(runs[r]), r.String())
	}
	ch <- prometheus.MustNewConstMetric(lctlDurationDesc, prometheus.GaugeValue, last.Seconds())
}

var toolStraysDesc = prometheus.NewDesc(
	prometheus.BuildFQName(Namespace, "lctl", "strays_killed_total"),
	"Processes left behind by lctl and lnetctl runs that the exporter killed: escaped from a run's process group (setsid), or still holding a run's output after it exited and a grace of 250 ms. Each is logged.",
	nil, nil)

// sendToolStrays sends the processes the runs of lctl and lnetctl left
// behind, when the scrape ran one of them.
func (s *Scrape) sendToolStrays(ch chan<- prometheus.Metric) {
	if s.lustreAsked || s.collectors["lnet"] != nil {
		ch <- prometheus.MustNewConstMetric(toolStraysDesc, prometheus.CounterValue, float64(toolrun.StraysKilled()))
	}
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

// valueMetric is what a single-value parameter becomes: a metric of desc
// with these label values, the value multiplied by scale (1024 for
// kilobytes).
type valueMetric struct {
	desc      *prometheus.Desc
	valueType prometheus.ValueType
	scale     float64
	labels    []string
}

// registerValues registers a collector of single-value parameters
// (capacity, export counts, memory, LDLM namespaces, OSP state): each
// parameter is one number, and match tells which metric it is.
func registerValues(name string, patterns []string, match func(param string) (valueMetric, bool)) {
	registerLustre(name, true, lustre.Values, patterns,
		func(param string) bool { _, ok := match(param); return ok },
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Values, name) {
				m, _ := match(p.Name)
				ch <- prometheus.MustNewConstMetric(m.desc, m.valueType, p.V*m.scale, m.labels...)
			}
		})
}

// osdParam recognizes "osd-<fstype>.<target>.<leaf>" and returns the
// target's component and name.
func osdParam(param string) (component, target, leaf string, ok bool) {
	prefix, target, leaf, ok := lctl.DeviceParam(param)
	if !ok || len(prefix) < 5 || prefix[:4] != "osd-" {
		return "", "", "", false
	}
	return lctl.TargetComponent(target), target, leaf, true
}

// obdParam recognizes "obdfilter.<target>.<leaf>" (component ost),
// "mdt.<target>.<leaf>" (mdt) and "mgs.MGS.<leaf>" (mgs).
func obdParam(param string) (component, target, leaf string, ok bool) {
	prefix, target, leaf, ok := lctl.DeviceParam(param)
	if !ok {
		return "", "", "", false
	}
	switch prefix {
	case "obdfilter":
		return "ost", target, leaf, true
	case "mdt":
		return "mdt", target, leaf, true
	case "mgs":
		return "mgs", target, leaf, true
	}
	return "", "", "", false
}
