// Package collector holds the exporter's collectors and the registry that
// enables them, in the manner of node_exporter: every collector has a
// --[no-]collector.<name> flag, runs concurrently with the others on each
// scrape, and reports its own success and duration, so that one failing
// collector never fails the whole scrape.
//
// Collectors translate parsed values into metrics. They do not parse: the
// parsers live in lctl, jobid, darshan and dayu.
package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// Namespace is the prefix of the exporter's own metrics.
const Namespace = "hpcio_exporter"

var (
	scrapeDurationDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "scrape", "collector_duration_seconds"),
		"Duration of a collector scrape.",
		[]string{"collector"}, nil,
	)
	scrapeSuccessDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "scrape", "collector_success"),
		"Whether a collector succeeded (1) or failed (0) in this scrape.",
		[]string{"collector"}, nil,
	)
)

// Collector is one named part of the exporter.
type Collector interface {
	// Update sends the collector's metrics for one scrape. A returned error
	// marks the collector failed for this scrape (success 0); metrics already
	// sent are still exposed.
	Update(s *Scrape, ch chan<- prometheus.Metric) error
}

// ErrNoData tells the registry that a collector had nothing to report: it is
// neither logged as an error nor counted as a failure.
var ErrNoData = errors.New("collector returned no data")

// reportedError wraps an error its source already logged (one lctl failure
// shared by every Lustre collector): the registry still marks the
// collector failed, but logs it at debug level only.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// ErrNotConfigured is returned by a factory whose collector has nothing to
// do with the flags given (the darshan collector without --darshan.dir): the
// collector is left out silently instead of failing the start.
var ErrNotConfigured = errors.New("collector not configured")

// Env is what every collector factory receives.
type Env struct {
	Logger *slog.Logger
	// LctlSource prints `lctl get_param` output for the Lustre
	// collectors: the lctl command, or the simulator of --demo. nil: lctl
	// found in $PATH.
	LctlSource lctl.Source
	// Lnetctl starts lnetctl for the lnet collector: the command, or the
	// simulator of --demo. nil: lnetctl found in $PATH.
	Lnetctl toolrun.StartFunc
	// Now, when set, replaces the clock of the Lustre runs (tests).
	Now func() time.Time

	// lustre is the lctl run shared by the Lustre collectors of a registry.
	lustre *lustre.Source
}

type factory func(env Env) (Collector, error)

type registration struct {
	name           string
	defaultEnabled bool
	factory        factory
	enabled        *bool
}

var (
	registrations = map[string]*registration{}
	flagAdders    []func(a FlagGroup)

	// disableDefaults is --collector.disable-defaults: every collector is
	// off but those named on the command line (explicit).
	disableDefaults bool
	explicit        = map[string]bool{}
)

// register is called from each collector file's init function.
func register(name string, defaultEnabled bool, f factory) {
	if _, dup := registrations[name]; dup {
		panic("collector registered twice: " + name)
	}
	enabled := defaultEnabled
	registrations[name] = &registration{name: name, defaultEnabled: defaultEnabled, factory: f, enabled: &enabled}
}

// addFlags is called from collector files' init functions to declare their
// own flags; RegisterFlags adds them to the application. The variables the
// flags set carry their defaults already, so tests need no flag parsing.
func addFlags(f func(a FlagGroup)) { flagAdders = append(flagAdders, f) }

// FlagGroup is what RegisterFlags declares flags on: a *kingpin.Application,
// or the *kingpin.CmdClause of the one command that runs the collectors, so
// that the program's other commands neither show nor accept them.
type FlagGroup interface {
	Flag(name, help string) *kingpin.FlagClause
}

var (
	_ FlagGroup = (*kingpin.Application)(nil)
	_ FlagGroup = (*kingpin.CmdClause)(nil)
)

// RegisterFlags adds --[no-]collector.<name> for every collector,
// --collector.disable-defaults, and every collector's own flags, to a.
func RegisterFlags(a FlagGroup) {
	for _, name := range Names() {
		r := registrations[name]
		state := "disabled"
		if r.defaultEnabled {
			state = "enabled"
		}
		a.Flag("collector."+name, fmt.Sprintf("Enable the %s collector (default: %s).", name, state)).
			Default(fmt.Sprint(r.defaultEnabled)).
			Action(func(*kingpin.ParseContext) error { explicit[name] = true; return nil }).
			BoolVar(r.enabled)
	}
	// As node_exporter's: applied after parsing, so that its place among
	// the --collector.<name> flags does not matter.
	a.Flag("collector.disable-defaults", "Turn off every collector but those enabled with --collector.<name> (a sidecar: --collector.disable-defaults --collector.darshan --collector.dayu).").
		Default("false").BoolVar(&disableDefaults)
	for _, f := range flagAdders {
		f(a)
	}
	checkDurations(a)
	checkPositive(a)
}

// positiveFlags are the collectors' counts and sizes for which zero or
// less makes no sense (a cap of no series, a budget of no byte): a usage
// error (exit 2) rather than a collector that refuses to start. Those where
// 0 means "no limit" (--darshan.max-jobs) are not here.
var positiveFlags = []string{
	"lustre.max-output-size", "lustre.jobstats.max-entries",
	"darshan.workers", "darshan.max-log-memory", "darshan.max-records-per-job",
	"dayu.max-files", "dayu.max-stages", "dayu.max-workflows", "dayu.max-file-size", "dayu.max-total-size",
}

// checkPositive adds to each of positiveFlags declared on a an action that
// refuses zero or a negative number, as checkDurations does.
func checkPositive(a FlagGroup) {
	g, ok := a.(interface {
		GetFlag(name string) *kingpin.FlagClause
	})
	if !ok {
		return
	}
	for _, name := range positiveFlags {
		f := g.GetFlag(name)
		if f == nil {
			continue
		}
		f.Action(func(*kingpin.ParseContext) error {
			// An int prints as itself, a size as kingpin's bytes ("0B",
			// "-1KiB", "256MiB").
			v := f.Model().Value.String()
			if strings.HasPrefix(v, "-") || strings.TrimRight(v, "B") == "0" {
				return fmt.Errorf("--%s must be more than 0, not %s", name, v)
			}
			return nil
		})
	}
}

// durationFlags are the collectors' duration flags with the least value
// that makes sense: a timeout, an interval, a retention or a TTL of zero
// or less is a usage error (exit 2), not a setting that fails every run,
// spins, or is silently replaced by a default. An offset may be 0.
var durationFlags = []struct {
	name      string
	allowZero bool
}{
	{"lustre.timeout", false},
	{"lustre.timeout-offset", true},
	{"lustre.jobstats.ttl", false},
	{"darshan.rescan-interval", false},
	{"darshan.retention", false},
	{"dayu.rescan-interval", false},
}

// checkDurations adds to each of durationFlags declared on a an action
// that refuses a value out of range. kingpin runs a flag's actions only
// when the flag is given, during Parse: the error is a usage error.
func checkDurations(a FlagGroup) {
	g, ok := a.(interface {
		GetFlag(name string) *kingpin.FlagClause
	})
	if !ok {
		return
	}
	for _, d := range durationFlags {
		f := g.GetFlag(d.name)
		if f == nil {
			continue
		}
		f.Action(func(*kingpin.ParseContext) error {
			v, err := time.ParseDuration(f.Model().Value.String())
			switch {
			case err != nil:
				return nil // kingpin has refused it already
			case v < 0 && d.allowZero:
				return fmt.Errorf("--%s must be 0 or more, not %v", d.name, v)
			case v <= 0 && !d.allowZero:
				return fmt.Errorf("--%s must be longer than 0, not %v", d.name, v)
			}
			return nil
		})
	}
}

// Names lists every registered collector, sorted.
func Names() []string {
	names := make([]string, 0, len(registrations))
	for n := range registrations {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SetEnabled overrides a collector's flag; for tests and for main's defaults.
func SetEnabled(name string, on bool) error {
	r, ok := registrations[name]
	if !ok {
		return fmt.Errorf("unknown collector %q", name)
	}
	*r.enabled = on
	return nil
}

// Enabled reports whether the named collector is on, after the command
// line (--[no-]collector.<name>, --collector.disable-defaults): whether a
// registry built now would try it.
func Enabled(name string) bool {
	r, ok := registrations[name]
	return ok && r.isEnabled()
}

// isEnabled reports whether a collector runs, with --collector.disable-defaults
// applied.
func (r *registration) isEnabled() bool {
	return *r.enabled && (!disableDefaults || explicit[r.name])
}

// Registry holds the enabled collectors and scrapes them.
type Registry struct {
	collectors map[string]Collector
	logger     *slog.Logger
	// lustre runs lctl for the Lustre collectors; it has no request, and
	// never runs, when none is enabled.
	lustre *lustre.Source

	// failing holds each failing collector's last error, so that a
	// collector failing scrape after scrape logs one error line, then
	// debug lines, until it recovers or fails differently.
	failingMu sync.Mutex
	failing   map[string]string
}

// NewRegistry builds every enabled collector. A collector whose factory
// fails is an error: the exporter should not start half-configured.
func NewRegistry(env Env) (*Registry, error) {
	r := &Registry{collectors: map[string]Collector{}, logger: env.Logger, failing: map[string]string{}}
	if env.LctlSource == nil {
		env.LctlSource = &lctl.Command{Path: "lctl"}
	}
	if env.Lnetctl == nil {
		env.Lnetctl = toolrun.Path("lnetctl")
	}
	// Processes left behind by lctl and lnetctl runs are logged by
	// toolrun, process-wide.
	toolrun.SetLogger(env.Logger.With("source", "toolrun"))
	env.lustre = lustre.New(lustre.Config{Lctl: env.LctlSource, Bounds: lustreBounds(), MaxOutputBytes: lctlMaxOutput(),
		Logger: env.Logger, Now: env.Now})
	r.lustre = env.lustre
	for _, name := range Names() {
		reg := registrations[name]
		if !reg.isEnabled() {
			continue
		}
		cenv := env
		cenv.Logger = env.Logger.With("collector", name)
		c, err := reg.factory(cenv)
		if errors.Is(err, ErrNotConfigured) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("collector %s: %w", name, err)
		}
		r.collectors[name] = c
	}
	return r, nil
}

// Enabled lists the names of the collectors in r, sorted.
func (r *Registry) Enabled() []string {
	names := make([]string, 0, len(r.collectors))
	for n := range r.collectors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Collector returns the named collector, or nil.
func (r *Registry) Collector(name string) Collector { return r.collectors[name] }

// NewScrape starts one scrape bounded by ctx. The returned Scrape is a
// prometheus.Collector for a per-request registry; after Gather, its Streams
// write the families that are too large to materialize.
func (r *Registry) NewScrape(ctx context.Context) *Scrape {
	return &Scrape{ctx: ctx, registry: r, collectors: r.collectors}
}

// NewFilteredScrape is NewScrape for the collectors named only (the
// collect[] parameters of a request, as node_exporter reads them): the
// others are not run, so that a scrape of one collector costs that
// collector alone (no lctl run unless a Lustre collector is named). No
// name runs every collector. A name that is not a collector, or one that
// does not run on this exporter (disabled, or without its directories),
// is an error, as it is in node_exporter: a typo in a scrape config must
// not pass for a collector with nothing to say.
func (r *Registry) NewFilteredScrape(ctx context.Context, only []string) (*Scrape, error) {
	if len(only) == 0 {
		return r.NewScrape(ctx), nil
	}
	chosen := make(map[string]Collector, len(only))
	for _, name := range only {
		c, ok := r.collectors[name]
		switch {
		case ok:
			chosen[name] = c
		case registrations[name] == nil:
			return nil, fmt.Errorf("unknown collector %q (this exporter runs: %s)", name, strings.Join(r.Enabled(), ", "))
		default:
			return nil, fmt.Errorf("collector %q does not run on this exporter (this exporter runs: %s)", name, strings.Join(r.Enabled(), ", "))
		}
	}
	return &Scrape{ctx: ctx, registry: r, collectors: chosen}, nil
}

// A Scrape is the state of one /metrics request: its deadline, the Lustre
// snapshot its collectors share, and the streamed families they produced.
type Scrape struct {
	ctx      context.Context
	registry *Registry
	// collectors are those this scrape runs: every one of the registry,
	// or those a request named (NewFilteredScrape).
	collectors map[string]Collector

	lustreOnce  sync.Once
	lustreAsked bool // a collector of the scrape asked for the snapshot
	lustreSnap  *lustre.Snapshot
	lustreErr   error

	mu      sync.Mutex
	streams []exposition.Family
}

// Context bounds the scrape: it expires at the scrape's deadline.
func (s *Scrape) Context() context.Context { return s.ctx }

// Lustre returns the Lustre snapshot of this scrape. The first Lustre
// collector to ask starts an lctl run, or joins the one under way; every
// other collector of the scrape gets the same snapshot, so that every
// family of a response comes from the same run. The error is the run's
// failure (already logged by the source, so marked reported), or the
// scrape's deadline passing first, with the latest snapshot, if any.
func (s *Scrape) Lustre() (*lustre.Snapshot, error) {
	s.lustreOnce.Do(func() {
		snap, err := s.registry.lustre.Snapshot(s.ctx)
		if err != nil && snap != nil && err == snap.Err {
			err = &reportedError{err}
		}
		s.lustreAsked, s.lustreSnap, s.lustreErr = true, snap, err
	})
	return s.lustreSnap, s.lustreErr
}

// Close ends the scrape: nothing reads its snapshots any more, and their
// memory may go to the next runs. Call it once the response is written.
func (s *Scrape) Close() {
	if s.lustreSnap != nil {
		s.registry.lustre.Release(s.lustreSnap)
		s.lustreSnap = nil
	}
}

// Stream adds families that the handler writes directly to the response
// after the gathered ones, because materializing them through client_golang
// would cost too much memory at tens of thousands of jobs. They must only
// read what no one changes: a published snapshot or view.
func (s *Scrape) Stream(f ...exposition.Family) {
	s.mu.Lock()
	s.streams = append(s.streams, f...)
	s.mu.Unlock()
}

// Streams returns the families added by Stream, sorted by name.
func (s *Scrape) Streams() []exposition.Family {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]exposition.Family(nil), s.streams...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Describe sends nothing: the exporter's metrics change with what lctl and
// the drop directories hold, so the per-request registry is unchecked.
func (s *Scrape) Describe(chan<- *prometheus.Desc) {}

// Collect runs every collector concurrently.
func (s *Scrape) Collect(ch chan<- prometheus.Metric) {
	var wg sync.WaitGroup
	for name, c := range s.collectors {
		wg.Add(1)
		go func(name string, c Collector) {
			defer wg.Done()
			s.execute(name, c, ch)
		}(name, c)
	}
	wg.Wait()
	s.sendLctlRuns(ch)
	s.sendToolStrays(ch)
}

// noteFailure records a collector's error ("" for success) and reports
// whether it changed.
func (r *Registry) noteFailure(name, msg string) bool {
	r.failingMu.Lock()
	defer r.failingMu.Unlock()
	if r.failing[name] == msg {
		return false
	}
	if msg == "" {
		delete(r.failing, name)
	} else {
		r.failing[name] = msg
	}
	return true
}

func (s *Scrape) execute(name string, c Collector, ch chan<- prometheus.Metric) {
	begin := time.Now()
	err := c.Update(s, ch)
	duration := time.Since(begin)
	success := 1.0
	logger := s.registry.logger
	switch {
	case err == nil || errors.Is(err, ErrNoData):
		if s.registry.noteFailure(name, "") {
			logger.Info("collector recovered", "name", name)
		}
		logger.Debug("collector succeeded", "name", name, "duration_seconds", duration.Seconds(), "no_data", err != nil)
	default:
		success = 0
		var reported *reportedError
		if errors.As(err, &reported) {
			s.registry.noteFailure(name, err.Error())
			logger.Debug("collector failed", "name", name, "duration_seconds", duration.Seconds(), "err", err)
		} else if s.registry.noteFailure(name, err.Error()) {
			logger.Error("collector failed", "name", name, "duration_seconds", duration.Seconds(), "err", err)
		} else {
			logger.Debug("collector failed again", "name", name, "duration_seconds", duration.Seconds(), "err", err)
		}
	}
	ch <- prometheus.MustNewConstMetric(scrapeDurationDesc, prometheus.GaugeValue, duration.Seconds(), name)
	ch <- prometheus.MustNewConstMetric(scrapeSuccessDesc, prometheus.GaugeValue, success, name)
}
