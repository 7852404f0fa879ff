package collector

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// sectionCollector is a family collector whose parameters turn into a few
// metrics each (recovery_status, changelog_users, brw_stats, quota, health,
// version, the stats tables): parser returns the parser of a parameter of
// the family, or nil, and its callbacks add the metrics of the run with
// emit.
type sectionCollector struct {
	familyBase
	parser func(param string) lctl.SectionParser

	next []prometheus.Metric // of the run under way
	cur  []prometheus.Metric // of the last run, under mu
}

func newSectionCollector(env Env, name string, patterns ...string) *sectionCollector {
	c := &sectionCollector{familyBase: newFamilyBase(env, name, patterns...)}
	env.lustre.add(c)
	return c
}

// emit adds metrics to the run under way; only the run's parsers call it.
func (c *sectionCollector) emit(m ...prometheus.Metric) { c.next = append(c.next, m...) }

func (c *sectionCollector) beginRun(now time.Time) {
	c.familyBase.beginRun(now)
	c.next = c.next[:0]
}

func (c *sectionCollector) route(param string) lctl.SectionParser {
	p := c.parser(param)
	if p == nil || !c.claim(param) {
		return nil
	}
	return p
}

func (c *sectionCollector) endRun(res runResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finish(res)
	// The two slices take turns, so that a steady server allocates no
	// new backing array per run.
	c.cur, c.next = c.next, c.cur
}

func (c *sectionCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	err := c.src.refresh(s, ch)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.cur {
		ch <- m
	}
	c.sendBadInput(ch)
	if err != nil {
		return err
	}
	return c.runErr
}

// newTextCollector is a section collector of one short text parameter
// (health_check, version): read turns its lines into metrics, or says why
// it cannot.
func newTextCollector(env Env, name, param string, read func([][]byte) ([]prometheus.Metric, string)) *sectionCollector {
	c := newSectionCollector(env, name, param)
	c.parser = func(p string) lctl.SectionParser {
		if p != param {
			return nil
		}
		return lctl.NewTextParser(func(lines [][]byte, truncated, complete bool) {
			if !complete {
				return
			}
			metrics, problem := read(lines)
			if problem != "" {
				c.bad(param, problem, 1, "text", joinLines(lines))
				return
			}
			c.emit(metrics...)
		})
	}
	return c
}

func joinLines(lines [][]byte) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "; ")
}
