package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
	"github.com/hpcio/hpcio_exporter/lnet"
	"github.com/hpcio/hpcio_exporter/lustresim"
)

// lnetctlPath is --lustre.lnetctl-path. The runs are bounded like lctl's,
// by --lustre.timeout and --lustre.timeout-offset.
var lnetctlPath = "lnetctl"

func init() {
	register("lnet", true, newLNetCollector)
	addFlags(func(a *kingpin.Application) {
		a.Flag("lustre.lnetctl-path", "The lnetctl binary (a name looked up in $PATH, or a path); each scrape runs `net show -v 4` and `stats show`.").
			Default(lnetctlPath).StringVar(&lnetctlPath)
	})
}

// The two lnetctl commands of a scrape, by the name used in logs and in
// hpcio_exporter_lnetctl_runs_total.
const (
	lnetNetShow   = "net show"
	lnetStatsShow = "stats show"
)

var lnetArgs = map[string][]string{
	lnetNetShow:   {"net", "show", "-v", "4"},
	lnetStatsShow: {"stats", "show"},
}

// lnetRunner starts an lnetctl command: lctl.Start, or the simulator.
type lnetRunner func(ctx context.Context, args ...string) (io.ReadCloser, error)

// lnetCollector runs both commands once per scrape, and once for
// concurrent scrapes: a scrape arriving while a run is under way waits for
// that run's results instead of starting lnetctl again (as lustreSource
// does for lctl).
type lnetCollector struct {
	logger *slog.Logger
	run    lnetRunner
	// bounds computes a run's deadline from the scrape's, with the
	// Lustre flags.
	bounds *lustreSource

	mu       sync.Mutex
	inflight *lnetRun

	runsMu sync.Mutex
	runs   map[[2]string]float64 // command, result → runs
}

// lnetRun is one execution of both commands. net and stats are nil when
// their command failed or was cut short: a cut output can end in a cut
// number, which must not reach a counter.
type lnetRun struct {
	done  chan struct{}
	net   *lnet.NetShow
	stats *lnet.Stats
	err   error
}

func newLNetCollector(env Env) (Collector, error) {
	path := lnetctlPath
	run := func(ctx context.Context, args ...string) (io.ReadCloser, error) {
		return lctl.Start(ctx, path, args...)
	}
	if env.Demo {
		run = func(_ context.Context, args ...string) (io.ReadCloser, error) {
			out, err := lustresim.Lnetctl(args...)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(bytes.NewReader(out)), nil
		}
	}
	c := &lnetCollector{
		logger: env.Logger, run: run,
		bounds: &lustreSource{timeout: lctlTimeout, offset: lctlTimeoutOffset},
		runs:   map[[2]string]float64{},
	}
	for cmd := range lnetArgs {
		for _, result := range []string{"ok", "partial", "failed", "killed"} {
			c.runs[[2]string{cmd, result}] = 0
		}
	}
	return c, nil
}

func (c *lnetCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	r, err := c.shared(s.Context())
	if r != nil {
		emitLNetNet(ch, r.net)
		emitLNetStats(ch, r.stats)
		err = r.err
	}
	c.runsMu.Lock()
	for k, n := range c.runs {
		ch <- prometheus.MustNewConstMetric(lnetctlRunsDesc, prometheus.CounterValue, n, k[0], k[1])
	}
	c.runsMu.Unlock()
	return err
}

// shared joins the run under way or starts one, and waits for it as long
// as ctx allows. The run is bounded by the deadline of the scrape that
// started it and outlives that scrape, since others may be waiting.
func (c *lnetCollector) shared(ctx context.Context) (*lnetRun, error) {
	c.mu.Lock()
	r := c.inflight
	if r == nil {
		r = &lnetRun{done: make(chan struct{})}
		c.inflight = r
		runCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), c.bounds.deadline(ctx, time.Now()))
		go func() {
			defer cancel()
			c.execute(runCtx, r)
			c.mu.Lock()
			c.inflight = nil
			c.mu.Unlock()
			close(r.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for lnetctl: %w", ctx.Err())
	}
}

// execute runs both commands concurrently.
func (c *lnetCollector) execute(ctx context.Context, r *lnetRun) {
	var wg sync.WaitGroup
	var netErr, statsErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.net, netErr = c.netShow(ctx)
	}()
	go func() {
		defer wg.Done()
		r.stats, statsErr = c.statsShow(ctx)
	}()
	wg.Wait()
	r.err = errors.Join(netErr, statsErr)
}

func (c *lnetCollector) netShow(ctx context.Context) (*lnet.NetShow, error) {
	var ns *lnet.NetShow
	result, err := c.exec(ctx, lnetNetShow, func(r io.Reader) (err error) {
		ns, err = lnet.ParseNetShow(r)
		return err
	})
	var printed *lnet.Error
	if ns != nil {
		printed = ns.Err
	}
	ns, err = lnetJudge(c, lnetNetShow, "net", result, err, ns, ns != nil && ns.Found, printed)
	return ns, err
}

func (c *lnetCollector) statsShow(ctx context.Context) (*lnet.Stats, error) {
	var s *lnet.Stats
	result, err := c.exec(ctx, lnetStatsShow, func(r io.Reader) (err error) {
		s, err = lnet.ParseStats(r)
		return err
	})
	var printed *lnet.Error
	if s != nil {
		printed = s.Err
	}
	s, err = lnetJudge(c, lnetStatsShow, "statistics", result, err, s, s != nil && s.Found, printed)
	return s, err
}

// exec runs one command and parses its output. The
// result is how the run ended: ok, partial (a non-zero exit after a whole
// output), failed or killed.
func (c *lnetCollector) exec(ctx context.Context, cmd string, parse func(io.Reader) error) (string, error) {
	out, err := c.run(ctx, lnetArgs[cmd]...)
	if err != nil {
		return "failed", err
	}
	parseErr := parse(out)
	closeErr := out.Close()
	var exit *lctl.ExitError
	switch {
	case errors.Is(parseErr, lctl.ErrKilled):
		return "killed", parseErr
	case parseErr != nil:
		return "failed", parseErr
	case errors.As(closeErr, &exit):
		return "partial", exit
	case closeErr != nil:
		return "failed", closeErr
	}
	return "ok", nil
}

// lnetJudge decides whether a command's output is usable, counts the run, and
// returns the output (nil when not usable) and the collector's error.
//
// lnetctl exits non-zero after printing everything when one of its ioctls
// fails (an older kernel module under a newer lnetctl), so a non-zero exit
// with the section printed is a success. Without the section, the error is
// the one lnetctl printed, if any, else the exit status and stderr.
func lnetJudge[T any](c *lnetCollector, cmd, section, result string, err error, out *T, found bool, printed *lnet.Error) (*T, error) {
	switch {
	case result == "partial" && found:
		c.logger.Debug("lnetctl exited non-zero after printing its output", "command", cmd, "err", err)
		err = nil
	case result == "partial" || (result == "ok" && !found):
		if result == "ok" {
			err = fmt.Errorf("no %q section in the output", section)
		}
		result = "failed"
		if printed != nil {
			err = printed
		}
	case result == "ok" && printed != nil:
		c.logger.Debug("lnetctl reported an error after its output", "command", cmd, "err", printed)
	}
	c.runsMu.Lock()
	c.runs[[2]string{cmd, result}]++
	c.runsMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("lnetctl %s: %w", cmd, err)
	}
	return out, nil
}
