package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// valueMetric is what a single-value parameter becomes: a metric of desc
// with these label values, the value multiplied by scale (1024 for
// kilobytes).
type valueMetric struct {
	desc      *prometheus.Desc
	valueType prometheus.ValueType
	scale     float64
	labels    []string
}

// valuesCollector is a collector of single-value parameters (capacity,
// export counts, memory, LDLM namespaces, OSP state): each parameter is one
// number, and match tells which metric it is.
type valuesCollector struct {
	familyBase
	match func(param string) (valueMetric, bool)

	next []valueSample // being read in the run under way
	cur  []valueSample // of the last run, under mu
}

type valueSample struct {
	m valueMetric
	v float64
}

func newValuesCollector(env Env, name string, match func(string) (valueMetric, bool), patterns ...string) *valuesCollector {
	c := &valuesCollector{familyBase: newFamilyBase(env, name, patterns...), match: match}
	env.lustre.add(c)
	return c
}

func (c *valuesCollector) beginRun(now time.Time) {
	c.familyBase.beginRun(now)
	c.next = nil
}

func (c *valuesCollector) route(param string) lctl.SectionParser {
	m, ok := c.match(param)
	if !ok || !c.claim(param) {
		return nil
	}
	return lctl.NewValueParser(func(v *lctl.Value, complete bool) {
		if !complete {
			return
		}
		n, ok := v.Number()
		if !ok {
			c.bad(param, "not a number", 1, "value", string(v.Text), "lines", v.Lines)
			return
		}
		c.next = append(c.next, valueSample{m: m, v: n * m.scale})
	})
}

func (c *valuesCollector) endRun(res runResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finish(res)
	c.cur, c.next = c.next, nil
}

func (c *valuesCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	err := c.src.refresh(s, ch)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range c.cur {
		ch <- prometheus.MustNewConstMetric(v.m.desc, v.m.valueType, v.v, v.m.labels...)
	}
	c.sendBadInput(ch)
	if err != nil {
		return err
	}
	return c.runErr
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
