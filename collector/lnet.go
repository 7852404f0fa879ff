package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lnet"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

func init() {
	register("lnet", true, newLNetCollector)
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

// lnetCollector runs both commands once per scrape, and once for
// concurrent scrapes: a scrape arriving while a run is under way waits for
// that run's results instead of starting lnetctl again. Runs are bounded
// like lctl's, by --lustre.timeout and --lustre.timeout-offset.
type lnetCollector struct {
	logger *slog.Logger
	start  toolrun.StartFunc
	runner *toolrun.Runner[*lnetRun]
	runs   map[string]*toolrun.Counts // by command
}

// lnetRun is one execution of both commands, never changed once made. net
// and stats are nil when their command failed or was cut short: a cut
// output can end in a cut number, which must not reach a counter.
type lnetRun struct {
	net   *lnet.NetShow
	stats *lnet.Stats
	err   error
	// runs are the runs by command and result after this one.
	runs map[string][len(toolrun.Results)]uint64
}

func newLNetCollector(env Env) (Collector, error) {
	c := &lnetCollector{logger: env.Logger, start: env.Lnetctl, runs: map[string]*toolrun.Counts{}}
	for cmd := range lnetArgs {
		c.runs[cmd] = &toolrun.Counts{}
	}
	c.runner = toolrun.NewRunner("lnetctl", lustreBounds(), func(ctx context.Context) (*lnetRun, error) {
		return c.execute(ctx), nil
	})
	return c, nil
}

func (c *lnetCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	r, err := c.runner.Do(s.Context())
	var runs map[string][len(toolrun.Results)]uint64
	if r != nil {
		emitLNetNet(ch, r.net)
		emitLNetStats(ch, r.stats)
		err, runs = r.err, r.runs
	} else {
		runs = c.counts()
	}
	for cmd, n := range runs {
		for _, result := range toolrun.Results {
			ch <- prometheus.MustNewConstMetric(lnetctlRunsDesc, prometheus.CounterValue, float64(n[result]), cmd, result.String())
		}
	}
	return err
}

func (c *lnetCollector) counts() map[string][len(toolrun.Results)]uint64 {
	out := make(map[string][len(toolrun.Results)]uint64, len(c.runs))
	for cmd, counts := range c.runs {
		out[cmd], _ = counts.Get()
	}
	return out
}

// execute runs both commands concurrently.
func (c *lnetCollector) execute(ctx context.Context) *lnetRun {
	r := &lnetRun{}
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
	r.runs = c.counts()
	return r
}

func (c *lnetCollector) netShow(ctx context.Context) (*lnet.NetShow, error) {
	var ns *lnet.NetShow
	begin := time.Now()
	result, err := c.exec(ctx, lnetNetShow, func(r io.Reader) (err error) {
		ns, err = lnet.ParseNetShow(r)
		return err
	})
	var printed *lnet.Error
	if ns != nil {
		printed = ns.Err
	}
	ns, err = lnetJudge(c, lnetNetShow, "net", result, time.Since(begin), err, ns, ns != nil && ns.Found, printed)
	return ns, err
}

func (c *lnetCollector) statsShow(ctx context.Context) (*lnet.Stats, error) {
	var s *lnet.Stats
	begin := time.Now()
	result, err := c.exec(ctx, lnetStatsShow, func(r io.Reader) (err error) {
		s, err = lnet.ParseStats(r)
		return err
	})
	var printed *lnet.Error
	if s != nil {
		printed = s.Err
	}
	s, err = lnetJudge(c, lnetStatsShow, "statistics", result, time.Since(begin), err, s, s != nil && s.Found, printed)
	return s, err
}

// exec runs one command and parses its output. The result is how the run
// ended: ok, partial (a non-zero exit after a whole output), failed or
// killed.
func (c *lnetCollector) exec(ctx context.Context, cmd string, parse func(io.Reader) error) (toolrun.Result, error) {
	out, err := c.start(ctx, lnetArgs[cmd]...)
	if err != nil {
		return toolrun.Failed, err
	}
	parseErr := parse(out)
	return toolrun.Classify(parseErr, out.Close())
}

// lnetJudge decides whether a command's output is usable, counts the run, and
// returns the output (nil when not usable) and the collector's error.
//
// lnetctl exits non-zero after printing everything when one of its ioctls
// fails (an older kernel module under a newer lnetctl), so a non-zero exit
// with the section printed is a success. Without the section, the error is
// the one lnetctl printed, if any, else the exit status and stderr.
func lnetJudge[T any](c *lnetCollector, cmd, section string, result toolrun.Result, took time.Duration, err error, out *T, found bool, printed *lnet.Error) (*T, error) {
	switch {
	case result == toolrun.Partial && found:
		c.logger.Debug("lnetctl exited non-zero after printing its output", "command", cmd, "err", err)
		err = nil
	case result == toolrun.Partial || (result == toolrun.OK && !found):
		if result == toolrun.OK {
			err = fmt.Errorf("no %q section in the output", section)
		}
		result = toolrun.Failed
		if printed != nil {
			err = printed
		}
	case result == toolrun.OK && printed != nil:
		c.logger.Debug("lnetctl reported an error after its output", "command", cmd, "err", printed)
	}
	c.runs[cmd].Add(result, took)
	if err != nil {
		return nil, fmt.Errorf("lnetctl %s: %w", cmd, err)
	}
	return out, nil
}
