package collector

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/exposition"
	"github.com/hpcio/hpcio_exporter/jobid"
	"github.com/hpcio/hpcio_exporter/lctl"
	"github.com/hpcio/hpcio_exporter/rates"
)

// Flags of the jobstats collector.
var (
	jobidNameFlag           = ""
	jobstatsTTL             = 15 * time.Minute
	jobstatsLabels          = "jobid,uid,node,exe"
	jobstatsEmitZero        = false
	jobstatsUntrustedBucket = false
)

func init() {
	register("jobstats", true, newJobstatsCollector)
	addFlags(func(a *kingpin.Application) {
		a.Flag("lustre.jobid-name", "The jobid_name format of the job_ids (e.g. %j:%u:%H). Default: what lctl reports as jobid_name, else %j:%u:%H; %e.%u ids are always recognized.").
			Default(jobidNameFlag).StringVar(&jobidNameFlag)
		a.Flag("lustre.jobstats.ttl", "Forget a job identity unseen for this long (its series disappear).").
			Default(jobstatsTTL.String()).DurationVar(&jobstatsTTL)
		a.Flag("lustre.jobstats.labels", "Identity labels kept on per-job series, comma-separated, from jobid,uid,gid,node,exe; dropped ones are summed, reset-safe.").
			Default(jobstatsLabels).StringVar(&jobstatsLabels)
		a.Flag("lustre.jobstats.emit-zero", "Also emit per-job series whose value is still zero.").
			Default(fmt.Sprint(jobstatsEmitZero)).BoolVar(&jobstatsEmitZero)
		a.Flag("lustre.jobstats.untrusted-bucket", `Count the traffic of discarded job_ids under jobid="_untrusted" instead of dropping it.`).
			Default(fmt.Sprint(jobstatsUntrustedBucket)).BoolVar(&jobstatsUntrustedBucket)
	})
}

// UntrustedJob is the jobid of discarded ids' traffic with
// --lustre.jobstats.untrusted-bucket.
const UntrustedJob = "_untrusted"

// identityLabelNames are the identity labels in the order they are written.
var identityLabelNames = [...]string{"jobid", "uid", "gid", "node", "exe"}

// identityKey is an identity after the labels not kept were blanked.
type identityKey [len(identityLabelNames)]string

// seriesMeta is what the collector keeps per raw job_id.
type seriesMeta struct {
	resolved bool
	outcome  jobid.Outcome
}

type jobAccumulator = rates.Accumulator[identityKey, seriesMeta]
type jobGroup = rates.Group[identityKey, seriesMeta]
type jobSeries = rates.Series[identityKey, seriesMeta]
type jobIdentity = rates.Identity[identityKey]

// opSlots are the accumulator slots of one operation in one target.
type opSlots struct {
	op      string
	samples int
	sum     int // -1 when the operation has no sum (unit reqs)
	unit    lctl.Unit
}

// jobTarget is one job_stats parameter: an OST or MDT.
type jobTarget struct {
	component, target string
	group             *jobGroup
	ops               map[string]int // op name → index in opList
	opList            []opSlots
	trackAll          bool // keep every slot's increments (series cap on)
	outcomes          [jobid.NumOutcomes]uint64
	malformedLines    uint64
	duplicates        uint64
	seenThisRun       bool

	// Summaries of the latest run (jobstats_cardinality.go).
	active  int
	density []*densityHist
	visible []*jobIdentity // identities with series, when capped; nil: all
	shown   map[*jobIdentity]bool
}

type jobstatsCollector struct {
	logger   *slog.Logger
	src      *lustreSource
	keep     [len(identityLabelNames)]bool
	emitZero bool
	bucket   bool
	fixed    *jobid.Format // --lustre.jobid-name
	filter   *identityFilter
	bounds   []float64 // rate density buckets; nil when off
	// maxSeries caps identities with series per target; 0 means no cap.
	maxSeries int
	perJob    bool

	mu         sync.RWMutex
	acc        *jobAccumulator
	targets    map[string]*jobTarget // by parameter name
	order      []*jobTarget
	format     jobid.Format
	formatFrom string // flag, lctl or default
	normalizer *jobid.Normalizer
	known      *jobid.Known
	lctlFormat string // jobid_name read in the current run
	runErr     error
	badFormat  string // a jobid_name from lctl already warned about
}

func newJobstatsCollector(env Env) (Collector, error) {
	c := &jobstatsCollector{
		logger:   env.Logger,
		src:      env.lustre,
		emitZero: jobstatsEmitZero,
		bucket:   jobstatsUntrustedBucket,
		acc:      rates.New[identityKey, seriesMeta](jobstatsTTL),
		targets:  map[string]*jobTarget{},
		known:    jobid.NewKnown(),
		perJob:   jobstatsPerJobSeries,
	}
	// Increments per run feed the rate density and the series cap.
	c.acc.TrackDelta = true
	if rateDensityBase < 2 {
		return nil, fmt.Errorf("--lustre.rate-density.base must be an integer > 1, not %d", rateDensityBase)
	}
	c.bounds = densityBounds(rateDensityBase)
	if jobstatsMaxSeries < 0 {
		return nil, fmt.Errorf("--lustre.jobstats.max-series must be >= 0")
	}
	c.maxSeries = jobstatsMaxSeries
	var err error
	if c.filter, err = newIdentityFilter(); err != nil {
		return nil, err
	}
	if err := c.setLabels(jobstatsLabels); err != nil {
		return nil, err
	}
	if jobidNameFlag != "" {
		f, err := jobid.ParseFormat(jobidNameFlag)
		if err != nil {
			return nil, fmt.Errorf("--lustre.jobid-name: %w", err)
		}
		c.fixed = &f
	}
	c.setFormat()
	env.lustre.add(c)
	return c, nil
}

func (c *jobstatsCollector) setLabels(list string) error {
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		found := false
		for i, l := range identityLabelNames {
			if l == name {
				c.keep[i], found = true, true
			}
		}
		if !found {
			return fmt.Errorf("--lustre.jobstats.labels: unknown label %q (known: %s)", name, strings.Join(identityLabelNames[:], ","))
		}
	}
	return nil
}

// setFormat picks the jobid_name: the flag, else what lctl reported in this
// run, else the default. lctl reporting Lustre's own default "%e.%u" means
// the servers were never told the clients' format; the fallback covers
// "%e.%u" ids anyway, so the default primary format is kept then.
func (c *jobstatsCollector) setFormat() {
	format, from := jobid.MustParseFormat(jobid.DefaultFormat), "default"
	switch {
	case c.fixed != nil:
		format, from = *c.fixed, "flag"
	case c.lctlFormat != "" && c.lctlFormat != jobid.FallbackFormat:
		f, err := jobid.ParseFormat(c.lctlFormat)
		if err == nil {
			format, from = f, "lctl"
		} else if c.badFormat != c.lctlFormat {
			c.badFormat = c.lctlFormat
			c.logger.Warn("ignoring the jobid_name lctl reports", "jobid_name", c.lctlFormat, "err", err)
		}
	}
	if c.normalizer != nil && format.String() == c.format.String() {
		c.formatFrom = from
		return
	}
	if c.normalizer != nil {
		c.logger.Info("job_id format changed; ids seen from now on use it", "jobid_name", format.String(), "from", from)
	}
	c.format, c.formatFrom = format, from
	c.normalizer = jobid.NewNormalizer(format)
}

func (c *jobstatsCollector) lctlPatterns() []string {
	p := []string{"obdfilter.*.job_stats", "mdt.*.job_stats"}
	if c.fixed == nil {
		p = append([]string{"jobid_name"}, p...)
	}
	return p
}

func (c *jobstatsCollector) beginRun(now time.Time) {
	c.mu.Lock()
	c.acc.BeginRun(now)
	c.lctlFormat = ""
	for _, t := range c.order {
		t.seenThisRun = false
	}
}

func (c *jobstatsCollector) route(param string) lctl.SectionParser {
	if param == "jobid_name" && c.fixed == nil {
		return &valueParser{set: func(v string) { c.lctlFormat = strings.TrimSpace(v) }}
	}
	component, target, ok := lctl.JobStatsParam(param)
	if !ok {
		return nil
	}
	t, ok := c.targets[param]
	if !ok {
		t = &jobTarget{component: component, target: target, ops: map[string]int{}, trackAll: c.maxSeries > 0}
		c.targets[param] = t
		c.order = append(c.order, t)
	}
	t.group = c.acc.Group(param)
	t.seenThisRun = true
	return lctl.NewJobStatsParser(&jobTargetHandler{c: c, t: t})
}

func (c *jobstatsCollector) endRun(res runResult) {
	defer c.mu.Unlock()
	c.setFormat()
	c.resolvePending()
	c.acc.EndRun()
	c.summarize()
	seen := 0
	for _, t := range c.order {
		if t.seenThisRun {
			seen++
		}
	}
	switch {
	case res.err != nil:
		c.runErr = res.err
	case seen == 0 && res.exit != nil:
		c.runErr = fmt.Errorf("no job_stats in lctl output (is this a Lustre server with jobstats enabled?): %w", res.exit)
	case seen == 0:
		c.runErr = errors.New("no job_stats in lctl output (is this a Lustre server with jobstats enabled?)")
	default:
		c.runErr = nil
	}
}

// jobTargetHandler feeds one target's entries to the accumulator as lctl
// prints them.
type jobTargetHandler struct {
	c *jobstatsCollector
	t *jobTarget
}

func (h *jobTargetHandler) Job(js *lctl.JobStat) {
	t := h.t
	g := t.group
	s, _ := g.Observe(js.JobID, js.StartTime)
	if s == nil {
		t.duplicates++
		return
	}
	t.malformedLines += uint64(js.Malformed)
	for i := range js.Ops {
		op := &js.Ops[i]
		slots := t.slotsFor(op)
		g.Set(s, slots.samples, op.Samples)
		if slots.sum >= 0 && op.HasSum {
			g.Set(s, slots.sum, op.Sum)
		}
	}
	if s.Meta.resolved && s.Identity() != nil {
		t.outcomes[s.Meta.outcome]++
	}
}

func (h *jobTargetHandler) End(complete bool, stats lctl.SectionStats) {
	h.t.group.EndSection(complete)
	h.t.malformedLines += uint64(stats.Stray)
}

// slotsFor returns the accumulator slots of an operation, adding them the
// first time the target prints it. A sum is kept for bytes and latencies.
func (t *jobTarget) slotsFor(op *lctl.OpStat) *opSlots {
	if i, ok := t.ops[op.Op]; ok {
		return &t.opList[i]
	}
	s := opSlots{op: op.Op, samples: t.group.Slot(op.Op + " samples"), sum: -1, unit: op.Unit}
	if op.Unit == lctl.UnitBytes || op.Unit == lctl.UnitUsecs {
		s.sum = t.group.Slot(op.Op + " sum")
	}
	// Increments per run: the rate density needs the samples and the
	// bytes; folding into "_other" under a series cap needs everything.
	t.group.TrackDelta(s.samples)
	if s.sum >= 0 && (op.Unit == lctl.UnitBytes || t.trackAll) {
		t.group.TrackDelta(s.sum)
	}
	t.ops[op.Op] = len(t.opList)
	t.opList = append(t.opList, s)
	return &t.opList[len(t.opList)-1]
}

// resolvePending classifies the job_ids first seen in this run (and those
// discarded earlier that a well-formed id seen since may repair) and
// attaches them to their identities.
func (c *jobstatsCollector) resolvePending() {
	type ref struct {
		t *jobTarget
		s *jobSeries
	}
	var needContext []ref
	for _, t := range c.order {
		if !t.seenThisRun {
			continue
		}
		for _, s := range t.group.Pending() {
			if s.Meta.resolved && !s.Meta.outcome.NeedsContext() {
				t.outcomes[s.Meta.outcome]++ // discarded for good
				continue
			}
			full, outcome := c.normalizer.Normalize([]byte(s.Key), nil)
			if outcome.NeedsContext() {
				needContext = append(needContext, ref{t, s})
				continue
			}
			c.attach(t, s, full, outcome)
		}
	}
	for _, r := range needContext {
		full, outcome := c.normalizer.Normalize([]byte(r.s.Key), c.known)
		c.attach(r.t, r.s, full, outcome)
	}
	c.trimKnown()
}

func (c *jobstatsCollector) attach(t *jobTarget, s *jobSeries, full jobid.Identity, outcome jobid.Outcome) {
	s.Meta = seriesMeta{resolved: true, outcome: outcome}
	t.outcomes[outcome]++
	switch {
	case outcome.Kept() && !c.filter.allows(full):
		t.group.Resolve(s, identityKey{OtherJob}, true)
	case outcome.Kept():
		t.group.Resolve(s, c.project(full), true)
	case c.bucket:
		t.group.Resolve(s, identityKey{UntrustedJob}, true)
	}
	if outcome.Trusted() {
		c.known.Add(full)
	}
}

// trimKnown rebuilds the set of well-formed ids when cleaned-up jobs make
// up most of it, so that it does not grow with every job ever seen.
func (c *jobstatsCollector) trimKnown() {
	live := 0
	for _, t := range c.order {
		live += t.group.Len()
	}
	if c.known.Len() <= 2*live+1000 {
		return
	}
	// Trusted ids normalize the same without context: no need to keep
	// each one's identity beside its series.
	c.known = jobid.NewKnown()
	for _, t := range c.order {
		t.group.EachSeries(func(s *jobSeries) {
			if s.Meta.resolved && s.Meta.outcome.Trusted() {
				full, _ := c.normalizer.Normalize([]byte(s.Key), nil)
				c.known.Add(full)
			}
		})
	}
}

// project blanks the identity labels not kept.
func (c *jobstatsCollector) project(id jobid.Identity) identityKey {
	k := identityKey{id.Job, id.UID, id.GID, id.Node, id.Exe}
	for i := range k {
		if !c.keep[i] {
			k[i] = ""
		}
	}
	return k
}

// valueParser takes a single-value parameter such as jobid_name.
type valueParser struct {
	set  func(string)
	done bool
}

func (p *valueParser) Line(line []byte) {
	if !p.done {
		p.set(string(line))
		p.done = true
	}
}

func (p *valueParser) End(bool) {}

var (
	jobidEntriesDesc = prometheus.NewDesc("lustre_jobid_entries_total",
		"Job stats entries read, by what their job_id turned out to be (see the README for the outcomes); discarded_* entries count towards no job.",
		[]string{"component", "target", "outcome"}, nil)
	jobstatsMalformedDesc = prometheus.NewDesc("lustre_jobstats_malformed_lines_total",
		"Lines of job_stats output that could not be parsed and were skipped; the rest of their entry was kept.",
		[]string{"component", "target"}, nil)
	jobstatsDuplicatesDesc = prometheus.NewDesc("lustre_jobstats_duplicate_entries_total",
		"Entries whose job_id was already printed for the target in the same output (damaged output); only the first counts.",
		[]string{"component", "target"}, nil)
	jobstatsRawSeriesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "raw_series"),
		"Raw job_ids of the target the exporter tracks.",
		[]string{"component", "target"}, nil)
	jobstatsIdentitiesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "identities"),
		"Job identities of the target with per-job series (after label aggregation).",
		[]string{"component", "target"}, nil)
	jobstatsFormatDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "jobid_name_info"),
		"The jobid_name format job_ids are read with, and where it came from (flag, lctl or default).",
		[]string{"jobid_name", "from"}, nil)
)

func (c *jobstatsCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	runErr := c.src.refresh(s, ch)
	c.mu.RLock()
	defer c.mu.RUnlock()
	ch <- prometheus.MustNewConstMetric(jobstatsFormatDesc, prometheus.GaugeValue, 1, c.format.String(), c.formatFrom)
	for _, t := range c.order {
		for o, n := range t.outcomes {
			if n > 0 || jobid.Outcome(o) == jobid.OK {
				ch <- prometheus.MustNewConstMetric(jobidEntriesDesc, prometheus.CounterValue, float64(n), t.component, t.target, jobid.Outcome(o).String())
			}
		}
		ch <- prometheus.MustNewConstMetric(jobstatsMalformedDesc, prometheus.CounterValue, float64(t.malformedLines), t.component, t.target)
		ch <- prometheus.MustNewConstMetric(jobstatsDuplicatesDesc, prometheus.CounterValue, float64(t.duplicates), t.component, t.target)
		ch <- prometheus.MustNewConstMetric(jobstatsRawSeriesDesc, prometheus.GaugeValue, float64(t.group.Len()), t.component, t.target)
		ch <- prometheus.MustNewConstMetric(jobstatsIdentitiesDesc, prometheus.GaugeValue, float64(len(t.group.Identities())), t.component, t.target)
	}
	c.collectSummaries(ch)
	if c.perJob {
		s.Stream(c.families()...)
	}
	if runErr != nil {
		return runErr
	}
	return c.runErr
}

// The per-job families. They are streamed: at tens of thousands of jobs
// they are most of the response.
func (c *jobstatsCollector) families() []exposition.Family {
	bytesOf := func(op string) func(o *opSlots) (int, float64) {
		return func(o *opSlots) (int, float64) {
			if o.op == op {
				return o.sum, 1
			}
			return -1, 0
		}
	}
	samplesOf := func(op string) func(o *opSlots) (int, float64) {
		return func(o *opSlots) (int, float64) {
			if o.op == op {
				return o.samples, 1
			}
			return -1, 0
		}
	}
	return []exposition.Family{
		c.family("lustre_job_read_bytes", "Bytes the job read from the target (the sum of read_bytes).", false, bytesOf("read_bytes")),
		c.family("lustre_job_write_bytes", "Bytes the job wrote to the target (the sum of write_bytes).", false, bytesOf("write_bytes")),
		c.family("lustre_job_read_samples", "Read requests of the job on the target (the samples of read_bytes).", false, samplesOf("read_bytes")),
		c.family("lustre_job_write_samples", "Write requests of the job on the target (the samples of write_bytes).", false, samplesOf("write_bytes")),
		c.family("lustre_job_stats", "Operations of the job on the target, by operation (the samples of every job_stats operation but read_bytes and write_bytes).", true,
			func(o *opSlots) (int, float64) {
				if o.op == "read_bytes" || o.op == "write_bytes" {
					return -1, 0
				}
				return o.samples, 1
			}),
		c.family("lustre_job_operation_seconds", "Time the target spent serving the job's operations, by operation (the usecs sums of job_stats, in seconds).", true,
			func(o *opSlots) (int, float64) {
				if o.unit != lctl.UnitUsecs {
					return -1, 0
				}
				return o.sum, 1e6
			}),
	}
}

// family builds one streamed counter family. pick returns, for an
// operation of a target, the slot it contributes and the divisor to base
// units (1e6 for microseconds), or -1; byOp adds the operation label.
func (c *jobstatsCollector) family(name, help string, byOp bool, pick func(*opSlots) (int, float64)) exposition.Family {
	return exposition.Family{
		Name: name, Help: help, Type: exposition.Counter,
		Write: func(w *exposition.Writer) error {
			c.mu.RLock()
			defer c.mu.RUnlock()
			for _, t := range c.order {
				type slotOf struct {
					op      string
					slot    int
					divisor float64
				}
				var slots []slotOf
				for i := range t.opList {
					if slot, f := pick(&t.opList[i]); slot >= 0 {
						slots = append(slots, slotOf{t.opList[i].op, slot, f})
					}
				}
				if len(slots) == 0 {
					continue
				}
				ids := t.group.Identities()
				if t.visible != nil {
					ids = t.visible
				}
				for _, id := range ids {
					w.ResetLabels()
					w.Label("component", t.component)
					w.Label("target", t.target)
					for i, v := range id.Key {
						w.Label(identityLabelNames[i], v)
					}
					mark := w.LabelMark()
					for _, sl := range slots {
						var v uint64
						if sl.slot < len(id.Totals) {
							v = id.Totals[sl.slot]
						}
						if v == 0 && !c.emitZero {
							continue
						}
						w.TruncateLabels(mark)
						if byOp {
							w.Label("operation", sl.op)
						}
						var err error
						if sl.divisor == 1 {
							err = w.SampleUint(v, id.Created)
						} else {
							err = w.SampleFloat(float64(v)/sl.divisor, id.Created)
						}
						if err != nil {
							return err
						}
					}
				}
			}
			w.ResetLabels()
			return nil
		},
	}
}
