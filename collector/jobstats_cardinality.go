package collector

import (
	"container/heap"
	"fmt"
	"math"
	"regexp"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/jobid"
)

// What the jobstats collector does about cardinality: the rate density
// (seeds/rates-theory.md, "Logarithmic density of rates"), which sums up
// thousands of jobs in a few series; a cap on per-job series with the rest
// folded into jobid="_other"; and filters on the identity labels.
var (
	rateDensityBase      = 10
	jobstatsMaxSeries    = 0
	jobstatsPerJobSeries = true
	// jobstatsFilters holds --lustre.jobstats.{include,exclude}-{jobid,uid,node}.
	jobstatsFilters = func() map[string]*string {
		m := map[string]*string{}
		for _, l := range filterLabels {
			m["include-"+l], m["exclude-"+l] = new(string), new(string)
		}
		return m
	}()
)

// OtherJob is the jobid of the identities without series of their own.
const OtherJob = "_other"

// filterLabels are the identity labels that include/exclude filters apply to.
var filterLabels = []string{"jobid", "uid", "node"}

func init() {
	addFlags(func(a *kingpin.Application) {
		a.Flag("lustre.rate-density.base", "Base b of the job rate density: bucket le=b^k counts the identities whose average rate over the last interval was below b^k. An integer > 1.").
			Default(fmt.Sprint(rateDensityBase)).IntVar(&rateDensityBase)
		a.Flag("lustre.jobstats.max-series", "Most identities per target with per-job series, the fastest over the last interval; the others are summed, reset-safe, under jobid=\"_other\". 0: no limit.").
			Default(fmt.Sprint(jobstatsMaxSeries)).IntVar(&jobstatsMaxSeries)
		a.Flag("lustre.jobstats.per-job-series", "Expose per-job series. Without them the rate density and the per-target metrics still summarize the jobs.").
			Default(fmt.Sprint(jobstatsPerJobSeries)).BoolVar(&jobstatsPerJobSeries)
		for _, l := range filterLabels {
			for _, kind := range []string{"include", "exclude"} {
				v := jobstatsFilters[kind+"-"+l]
				a.Flag("lustre.jobstats."+kind+"-"+l, fmt.Sprintf("Regular expression (anchored) on the normalized %s: identities that do not match (include) or match (exclude) get no series of their own; their traffic counts under jobid=\"_other\".", l)).
					StringVar(v)
			}
		}
	})
}

// identityFilter holds the compiled include/exclude expressions.
type identityFilter struct {
	include, exclude [3]*regexp.Regexp // jobid, uid, node
}

func newIdentityFilter() (*identityFilter, error) {
	f := &identityFilter{}
	for i, l := range filterLabels {
		for _, kind := range []string{"include", "exclude"} {
			p := jobstatsFilters[kind+"-"+l]
			if *p == "" {
				continue
			}
			re, err := regexp.Compile("^(?:" + *p + ")$")
			if err != nil {
				return nil, fmt.Errorf("--lustre.jobstats.%s-%s: %w", kind, l, err)
			}
			if kind == "include" {
				f.include[i] = re
			} else {
				f.exclude[i] = re
			}
		}
	}
	return f, nil
}

// allows reports whether an identity gets series of its own.
func (f *identityFilter) allows(id jobid.Identity) bool {
	for i, v := range [3]string{id.Job, id.UID, id.Node} {
		if f.include[i] != nil && !f.include[i].MatchString(v) {
			return false
		}
		if f.exclude[i] != nil && f.exclude[i].MatchString(v) {
			return false
		}
	}
	return true
}

// densityBounds are the upper bounds b^k of the density buckets, from below
// 1e-3 (one operation in a quarter of an hour) to above 1e11 (100 GB/s).
func densityBounds(base int) []float64 {
	b := float64(base)
	lo := int(math.Floor(math.Log(1e-3) / math.Log(b)))
	hi := int(math.Ceil(math.Log(1e11) / math.Log(b)))
	bounds := make([]float64, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		bounds = append(bounds, math.Pow(b, float64(k)))
	}
	return bounds
}

// densityHist is one target's and operation's density in the last interval.
type densityHist struct {
	op      string
	bytes   bool
	below   []uint64 // below[j]: identities with a rate < bounds[j]
	count   uint64
	sumRate float64
}

func (h *densityHist) observe(bounds []float64, rate float64) {
	h.count++
	h.sumRate += rate
	// The bucket y = floor(log_b(rate)), found on the exact bounds rather
	// than with a logarithm that may round across a bound.
	for j := len(bounds) - 1; j >= 0 && rate < bounds[j]; j-- {
		h.below[j]++
	}
}

// summarize runs after each lctl run: it counts the active identities,
// builds the rate density, picks the identities with series of their own
// and folds the increments of the others into "_other".
func (c *jobstatsCollector) summarize() {
	run := c.acc.Run()
	interval := c.acc.Interval().Seconds()
	otherKey := identityKey{OtherJob}
	for _, t := range c.order {
		t.active = 0
		t.density = t.density[:0]
		t.visible = nil
		ids := t.group.Identities()
		var hists []*densityHist
		var deltaHist []*densityHist // by index in Identity.Delta
		if interval > 0 && c.bounds != nil {
			deltaHist = make([]*densityHist, len(t.group.SlotNames()))
			for i := range t.opList {
				o := &t.opList[i]
				switch o.op {
				case "read_bytes", "write_bytes":
					if o.sum >= 0 {
						h := &densityHist{op: o.op[:len(o.op)-len("_bytes")], bytes: true, below: make([]uint64, len(c.bounds))}
						deltaHist[t.group.DeltaIndex(o.sum)] = h
						hists = append(hists, h)
					}
				default:
					h := &densityHist{op: o.op, below: make([]uint64, len(c.bounds))}
					deltaHist[t.group.DeltaIndex(o.samples)] = h
					hists = append(hists, h)
				}
			}
		}
		for _, id := range ids {
			if id.Key == otherKey {
				continue
			}
			if id.SeenInRun(run) {
				t.active++
			}
			if deltaHist == nil {
				continue
			}
			for di, d := range id.RunDelta(run) {
				if d > 0 && deltaHist[di] != nil {
					deltaHist[di].observe(c.bounds, float64(d)/interval)
				}
			}
		}
		t.density = hists
		if c.maxSeries > 0 {
			c.capSeries(t, run, otherKey)
		}
	}
}

// capSeries keeps the maxSeries identities that moved the most bytes (then
// operations) in the last run, preferring those already shown so that
// series do not flap at the boundary; the increments of the others go to
// "_other".
func (c *jobstatsCollector) capSeries(t *jobTarget, run uint64, otherKey identityKey) {
	ids := t.group.Identities()
	if len(ids) <= c.maxSeries {
		return
	}
	isBytes := make([]bool, len(t.group.SlotNames()))
	isSamples := make([]bool, len(t.group.SlotNames()))
	for _, o := range t.opList {
		if (o.op == "read_bytes" || o.op == "write_bytes") && o.sum >= 0 {
			isBytes[t.group.DeltaIndex(o.sum)] = true
		}
		isSamples[t.group.DeltaIndex(o.samples)] = true
	}
	score := func(id *jobIdentity) float64 {
		var bytes, ops float64
		for di, d := range id.RunDelta(run) {
			switch {
			case isBytes[di]:
				bytes += float64(d)
			case isSamples[di]:
				ops += float64(d)
			}
		}
		s := bytes*1e6 + ops // bytes first, operations break ties
		if t.shown[id] {
			s = s*2 + 1
		}
		return s
	}
	top := &scoreHeap{}
	for _, id := range ids {
		if id.Key == otherKey {
			continue
		}
		heap.Push(top, scored{id, score(id)})
		if top.Len() > c.maxSeries {
			heap.Pop(top)
		}
	}
	shown := make(map[*jobIdentity]bool, top.Len())
	for _, s := range *top {
		shown[s.id] = true
	}
	var fold []uint64
	visible := make([]*jobIdentity, 0, c.maxSeries+1)
	for _, id := range ids {
		switch {
		case id.Key == otherKey:
		case shown[id]:
			visible = append(visible, id)
		default:
			for di, d := range id.RunDelta(run) {
				if di >= len(fold) {
					fold = append(fold, make([]uint64, di+1-len(fold))...)
				}
				fold[di] += d
			}
		}
	}
	other := t.group.Fold(otherKey, fold)
	t.visible = append(visible, other)
	t.shown = shown
}

type scored struct {
	id    *jobIdentity
	score float64
}

// scoreHeap is a min-heap: the root is the weakest of the kept.
type scoreHeap []scored

func (h scoreHeap) Len() int           { return len(h) }
func (h scoreHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h scoreHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoreHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *scoreHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

var (
	jobActiveDesc = prometheus.NewDesc("lustre_job_active",
		"Job identities seen in the latest lctl output of the target.",
		[]string{"component", "target"}, nil)
	bytesDensityDesc = prometheus.NewDesc("lustre_job_bytes_rate_density",
		"Job identities of the target by average bytes per second over the last interval (the log-density of rates): bucket le=b^k counts those whose rate was below b^k; idle ones are not counted; _sum is their total rate. A snapshot per interval: plot it as is, without rate().",
		[]string{"component", "target", "operation"}, nil)
	opsDensityDesc = prometheus.NewDesc("lustre_job_ops_rate_density",
		"Job identities of the target by average operations per second over the last interval (the log-density of rates): bucket le=b^k counts those whose rate was below b^k; idle ones are not counted; _sum is their total rate. A snapshot per interval: plot it as is, without rate().",
		[]string{"component", "target", "operation"}, nil)
)

// collectSummaries sends the active counts and densities; c.mu is held.
func (c *jobstatsCollector) collectSummaries(ch chan<- prometheus.Metric) {
	for _, t := range c.order {
		ch <- prometheus.MustNewConstMetric(jobActiveDesc, prometheus.GaugeValue, float64(t.active), t.component, t.target)
		for _, h := range t.density {
			buckets := make(map[float64]uint64, len(c.bounds))
			for j, b := range c.bounds {
				buckets[b] = h.below[j]
			}
			desc := opsDensityDesc
			if h.bytes {
				desc = bytesDensityDesc
			}
			ch <- prometheus.MustNewConstHistogram(desc, h.count, h.sumRate, buckets, t.component, t.target, h.op)
		}
	}
}
