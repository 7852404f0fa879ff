package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
	"github.com/hpcio/hpcio_exporter/lustresim"
)

// Flags shared by every Lustre collector.
var (
	lctlPath          = "lctl"
	lctlTimeout       = 20 * time.Second
	lctlTimeoutOffset = 500 * time.Millisecond
)

func init() {
	addFlags(func(a *kingpin.Application) {
		a.Flag("lustre.lctl-path", "The lctl binary (a name looked up in $PATH, or a path).").
			Default(lctlPath).StringVar(&lctlPath)
		a.Flag("lustre.timeout", "Longest time one lctl run may take; it is killed, with its process group, after that.").
			Default(lctlTimeout.String()).DurationVar(&lctlTimeout)
		a.Flag("lustre.timeout-offset", "Time kept free before the scrape deadline (X-Prometheus-Scrape-Timeout-Seconds) to write the response after lctl.").
			Default(lctlTimeoutOffset.String()).DurationVar(&lctlTimeoutOffset)
	})
}

// A lustreConsumer is a collector fed by the shared lctl run. Calls come
// from one run at a time, in the order lctlPatterns, beginRun, route
// (for each parameter of the output), endRun.
type lustreConsumer interface {
	// lctlPatterns are the get_param patterns it needs.
	lctlPatterns() []string
	beginRun(now time.Time)
	// route returns the parser for a parameter, nil when not its own.
	route(param string) lctl.SectionParser
	// endRun closes the run.
	endRun(res runResult)
}

// runResult is how an lctl run ended.
type runResult struct {
	// err is set when the run failed or was cut short; the sections read
	// before still reached the consumers, ended as incomplete.
	err error
	// exit is set when lctl exited non-zero after printing: some pattern
	// matched nothing. The output is still valid.
	exit *lctl.ExitError
}

// lustreSource runs lctl once per scrape for all Lustre collectors, and
// once for concurrent scrapes: a scrape that arrives while a run is under
// way waits for that run instead of starting another.
type lustreSource struct {
	source    lctl.Source
	logger    *slog.Logger
	timeout   time.Duration
	offset    time.Duration
	consumers []lustreConsumer
	now       func() time.Time

	mu       sync.Mutex
	inflight *lustreRun

	// lastErr is the latest run's failure, so that a run failing the same
	// way scrape after scrape is logged once (see reportedError).
	lastErr string

	statsMu      sync.Mutex
	runs         map[string]float64 // by result
	lastDuration float64
}

type lustreRun struct {
	done chan struct{}
	err  error
}

var (
	lctlRunsDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "lctl", "runs_total"),
		"lctl get_param runs by result: ok, partial (some patterns matched nothing), failed, killed (deadline).",
		[]string{"result"}, nil)
	lctlDurationDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "lctl", "last_run_duration_seconds"),
		"Duration of the latest lctl get_param run, output parsing included.",
		nil, nil)
)

func newLustreSource(env Env) *lustreSource {
	var src lctl.Source = &lctl.Command{Path: lctlPath}
	if env.Demo {
		src = lustresim.Default()
	}
	if env.LctlSource != nil {
		src = env.LctlSource
	}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	return &lustreSource{
		source: src, logger: env.Logger.With("source", "lctl"), now: now,
		timeout: lctlTimeout, offset: lctlTimeoutOffset,
		runs: map[string]float64{"ok": 0, "partial": 0, "failed": 0, "killed": 0},
	}
}

func (l *lustreSource) add(c lustreConsumer) { l.consumers = append(l.consumers, c) }

// refresh makes sure the scrape has a fresh lctl run behind it, and sends
// the run statistics once per scrape.
func (l *lustreSource) refresh(s *Scrape, ch chan<- prometheus.Metric) error {
	_, err := s.Once(l, func() (any, error) {
		err := l.shared(s.Context())
		l.statsMu.Lock()
		for result, n := range l.runs {
			ch <- prometheus.MustNewConstMetric(lctlRunsDesc, prometheus.CounterValue, n, result)
		}
		ch <- prometheus.MustNewConstMetric(lctlDurationDesc, prometheus.GaugeValue, l.lastDuration)
		l.statsMu.Unlock()
		return nil, err
	})
	return err
}

// deadline is the scrape's deadline less the offset, capped by the timeout.
func (l *lustreSource) deadline(ctx context.Context, now time.Time) time.Time {
	d := now.Add(l.timeout)
	if scrape, ok := ctx.Deadline(); ok && scrape.Add(-l.offset).Before(d) {
		d = scrape.Add(-l.offset)
	}
	return d
}

// shared joins the run under way or starts one, and waits for it as long
// as ctx allows. The run itself is bounded by the deadline of the scrape
// that started it, and is not cancelled when that scrape goes away, since
// others may be waiting for it.
func (l *lustreSource) shared(ctx context.Context) error {
	l.mu.Lock()
	r := l.inflight
	if r == nil {
		r = &lustreRun{done: make(chan struct{})}
		l.inflight = r
		runCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), l.deadline(ctx, time.Now()))
		go func() {
			defer cancel()
			r.err = l.report(l.run(runCtx))
			l.mu.Lock()
			l.inflight = nil
			l.mu.Unlock()
			close(r.done)
		}()
	}
	l.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("waiting for lctl: %w", ctx.Err())
	}
}

// report logs a run's failure once for all the Lustre collectors it fails,
// at error level when it is new, at debug level when it repeats, and its
// recovery at info level; the collectors get it as a reportedError, which
// the registry does not log again.
func (l *lustreSource) report(err error) error {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	switch {
	case msg == l.lastErr && err != nil:
		l.logger.Debug("lctl run failed again", "err", err)
	case err != nil:
		l.logger.Error("lctl run failed; every Lustre collector reports failure", "err", err)
	case l.lastErr != "":
		l.logger.Info("lctl runs again")
	}
	l.lastErr = msg
	if err == nil {
		return nil
	}
	return &reportedError{err}
}

func (l *lustreSource) patterns() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range l.consumers {
		for _, p := range c.lctlPatterns() {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// run executes one lctl get_param for every consumer and feeds them its
// output as it streams in.
func (l *lustreSource) run(ctx context.Context) (err error) {
	begin := l.now()
	result := "ok"
	defer func() {
		l.statsMu.Lock()
		l.runs[result]++
		l.lastDuration = l.now().Sub(begin).Seconds()
		l.statsMu.Unlock()
	}()
	if len(l.consumers) == 0 {
		return nil
	}
	patterns := l.patterns()
	out, err := l.source.GetParam(ctx, patterns)
	if err != nil {
		result = "failed"
		err = fmt.Errorf("lctl get_param: %w", err)
		for _, c := range l.consumers {
			c.beginRun(begin)
			c.endRun(runResult{err: err})
		}
		return err
	}
	for _, c := range l.consumers {
		c.beginRun(begin)
	}
	scanErr := lctl.Scan(out, "", func(param string) lctl.SectionParser {
		for _, c := range l.consumers {
			if p := c.route(param); p != nil {
				return p
			}
		}
		return nil
	})
	closeErr := out.Close()

	var exit *lctl.ExitError
	switch {
	case scanErr != nil && errors.Is(scanErr, lctl.ErrKilled):
		result = "killed"
		err = fmt.Errorf("lctl get_param: %w", scanErr)
	case scanErr != nil:
		result = "failed"
		err = fmt.Errorf("reading lctl get_param output: %w", scanErr)
	case errors.As(closeErr, &exit):
		// Some pattern matched nothing; what matched was printed. Each
		// consumer tells whether it got what it needs.
		result = "partial"
		l.logger.Debug("lctl get_param exited non-zero", "err", closeErr)
	case closeErr != nil:
		result = "failed"
		err = fmt.Errorf("lctl get_param: %w", closeErr)
	}
	for _, c := range l.consumers {
		c.endRun(runResult{err: err, exit: exit})
	}
	return err
}
