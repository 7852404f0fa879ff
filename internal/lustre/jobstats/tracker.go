package jobstats

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/rates"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// seriesMeta is what the tracker keeps per raw job_id: 0 until the id is
// resolved, then its outcome plus one. One byte, so that a raw series
// takes 96 bytes, not 112 (rates.Series).
type seriesMeta uint8

func resolvedAs(o jobid.Outcome) seriesMeta { return seriesMeta(o) + 1 }

func (m seriesMeta) resolved() bool { return m != 0 }

// outcome is the resolved id's outcome.
func (m seriesMeta) outcome() jobid.Outcome { return jobid.Outcome(m - 1) }

type (
	accumulator = rates.Accumulator[Key, seriesMeta]
	group       = rates.Group[Key, seriesMeta]
	series      = rates.Series[Key, seriesMeta]
	identity    = rates.Identity[Key]
)

// opSlots are the accumulator slots of one operation in one target.
type opSlots struct {
	op      string
	samples int
	sum     int // -1 when the operation has no sum (unit reqs)
	unit    lctl.Unit
}

// target is one job_stats parameter: an OST or MDT.
type target struct {
	component, target string
	// group holds the target's raw series and identities. The accumulator
	// forgets a group unseen for the TTL (a target failed over to the
	// partner server); ops and opList index its slots, so they go with it.
	group  *group
	ops    map[string]int // op name → index in opList
	opList []opSlots
	// byPlace maps an operation's place in an entry to its index in
	// opList, as last seen: Lustre prints the operations of every entry in
	// the same order, and checking the guess is cheaper than the map.
	byPlace  []int
	trackAll bool // keep every slot's increments (series cap on)

	// Counters since the tracker started; they survive the group.
	outcomes       [jobid.NumOutcomes]uint64
	malformedLines uint64
	duplicates     uint64 // entries of a job_id already printed in the output
	dupsLogged     bool
	evicted        uint64 // identities forgotten before their TTL (evictIdle)
	seenThisRun    bool

	// Summaries of the latest run (cardinality.go).
	active  int
	density []Density
	visible []*identity // identities with series, when capped; nil: all
	shown   map[*identity]bool
	// recheck are the series counted under "_untrusted" for lack of
	// context: each run tries to repair them again with the well-formed
	// ids known since, those of its own output included. They are held
	// (rates.Group.Hold): their increments of a run count where the end of
	// the run puts them, under the job if the output repairs them.
	recheck []*series
	// lastSnapshot is the latest snapshot_time of the run's entries: the
	// server's clock when the tracker first read the target.
	lastSnapshot float64
}

// Tracker keeps the per-job state of one Lustre server across lctl runs.
// Its methods are called by one run at a time, in the order BeginRun,
// SetJobIDName and Target (as lctl prints the parameters), EndRun.
type Tracker struct {
	logger    *slog.Logger
	keep      [len(LabelNames)]bool
	emitZero  bool
	bucket    bool
	fixed     *jobid.Format // Config.JobIDName
	filter    *filter
	bounds    []float64 // rate density buckets; nil when off
	maxSeries int
	entries   entryBudget

	acc        *accumulator
	targets    map[string]*target // by parameter name
	order      []*target
	format     jobid.Format
	formatFrom string // flag, lctl or default
	normalizer *jobid.Normalizer
	known      *jobid.Known
	lctlFormat string // jobid_name read in the current run
	badFormat  string // a jobid_name from lctl already warned about
	// evictLogged: evictIdle has logged its first eviction.
	evictLogged bool

	// spare are arenas of Views no one reads any more (Recycle).
	spareMu sync.Mutex
	spare   []*arena
	// dataSize is the size of the totals of the View published last.
	dataSize int
}

// New returns a Tracker, or an error naming the setting that is wrong.
func New(cfg Config) (*Tracker, error) {
	t := &Tracker{
		logger:    cfg.Logger,
		emitZero:  cfg.EmitZero,
		bucket:    cfg.UntrustedBucket,
		acc:       rates.New[Key, seriesMeta](cfg.TTL),
		targets:   map[string]*target{},
		known:     jobid.NewKnown(),
		maxSeries: cfg.MaxSeries,
		entries:   entryBudget{max: cfg.MaxEntries},
	}
	if t.logger == nil {
		t.logger = slog.New(slog.DiscardHandler)
	}
	// Increments per run feed the rate density and the series cap.
	t.acc.TrackDelta = true
	switch {
	case cfg.DensityBase == 1 || cfg.DensityBase < 0:
		return nil, &ConfigError{"rate-density.base", fmt.Errorf("must be an integer > 1, not %d", cfg.DensityBase)}
	case cfg.DensityBase > 1:
		t.bounds = densityBounds(cfg.DensityBase)
	}
	if cfg.MaxSeries < 0 {
		return nil, &ConfigError{"max-series", errors.New("must be >= 0")}
	}
	if cfg.MaxEntries < 0 {
		return nil, &ConfigError{"max-entries", errors.New("must be >= 0")}
	}
	var err error
	if t.filter, err = newFilter(cfg.Include, cfg.Exclude); err != nil {
		return nil, err
	}
	if t.keep, err = keptLabels(cfg.Labels); err != nil {
		return nil, err
	}
	if cfg.JobIDName != "" {
		f, err := jobid.ParseFormat(cfg.JobIDName)
		if err != nil {
			return nil, &ConfigError{"jobid-name", err}
		}
		t.fixed = &f
	}
	t.setFormat()
	return t, nil
}

// Patterns are the get_param patterns the tracker needs: the job_stats of
// OSTs and MDTs, and jobid_name unless the format is fixed.
func (t *Tracker) Patterns() []string {
	p := []string{"obdfilter.*.job_stats", "mdt.*.job_stats"}
	if t.fixed == nil {
		p = append([]string{"jobid_name"}, p...)
	}
	return p
}

// WantsJobIDName reports whether the tracker reads lctl's jobid_name.
func (t *Tracker) WantsJobIDName() bool { return t.fixed == nil }

// setFormat picks the jobid_name: the configured one, else what lctl
// reported in this run, else the default. lctl reporting Lustre's own
// default "%e.%u" means the servers were never told the clients' format;
// the fallback covers "%e.%u" ids anyway, so the default primary format is
// kept then.
func (t *Tracker) setFormat() {
	format, from := jobid.MustParseFormat(jobid.DefaultFormat), "default"
	switch {
	case t.fixed != nil:
		format, from = *t.fixed, "flag"
	case t.lctlFormat != "" && t.lctlFormat != jobid.FallbackFormat:
		f, err := jobid.ParseFormat(t.lctlFormat)
		if err == nil {
			format, from = f, "lctl"
		} else if t.badFormat != t.lctlFormat {
			t.badFormat = t.lctlFormat
			t.logger.Warn("ignoring the jobid_name lctl reports", "jobid_name", t.lctlFormat, "err", err)
		}
	}
	if t.normalizer != nil && format.String() == t.format.String() {
		t.formatFrom = from
		return
	}
	if t.normalizer != nil {
		t.logger.Info("job_id format changed; ids seen from now on use it", "jobid_name", format.String(), "from", from)
	}
	t.format, t.formatFrom = format, from
	t.normalizer = jobid.NewNormalizer(format)
}

// entryBudget counts the entries of a run against Config.MaxEntries. Only
// the handlers count, one entry at a time (the parsers deliver them in
// order); over is read by the goroutine that reads lctl's output.
type entryBudget struct {
	max, used int
	over      atomic.Bool
}

// take counts one entry, and reports whether it is within the budget.
func (b *entryBudget) take() bool {
	if b.max > 0 && b.used >= b.max {
		b.over.Store(true)
		return false
	}
	b.used++
	return true
}

// OverBudget reports whether the current run has met more entries than
// Config.MaxEntries: those past it were not looked at, and the run must be
// ended as failed (EndRun with an error), which keeps nothing it made. It
// is safe to call while the entries are delivered.
func (t *Tracker) OverBudget() bool { return t.entries.over.Load() }

// MaxEntries is Config.MaxEntries.
func (t *Tracker) MaxEntries() int { return t.entries.max }

// BeginRun starts the observations of one lctl run at now.
func (t *Tracker) BeginRun(now time.Time) {
	t.entries.used = 0
	t.entries.over.Store(false)
	t.acc.BeginRun(now)
	t.lctlFormat = ""
	for _, tg := range t.order {
		tg.seenThisRun = false
		tg.lastSnapshot = 0
	}
}

// SetJobIDName takes the value of lctl's jobid_name parameter.
func (t *Tracker) SetJobIDName(v string) {
	if t.fixed == nil {
		t.lctlFormat = strings.TrimSpace(v)
	}
}

// Target returns the handler of a job_stats parameter's entries, or nil
// when param is not one.
func (t *Tracker) Target(param string) lctl.JobStatsHandler {
	component, name, ok := lctl.JobStatsParam(param)
	if !ok {
		return nil
	}
	tg, ok := t.targets[param]
	if !ok {
		tg = &target{component: component, target: name, trackAll: t.maxSeries > 0}
		t.targets[param] = tg
		t.order = append(t.order, tg)
	}
	if g := t.acc.Group(param); g != tg.group {
		// New, or forgotten since: its slots start over.
		tg.group, tg.ops, tg.opList, tg.byPlace, tg.shown = g, map[string]int{}, nil, nil, nil
		tg.recheck = nil
	}
	tg.seenThisRun = true
	return &targetHandler{t: tg, budget: &t.entries}
}

// targetHandler feeds one target's entries to the accumulator as lctl
// prints them.
type targetHandler struct {
	t      *target
	budget *entryBudget
}

func (h *targetHandler) Job(js *lctl.JobStat) {
	if !h.budget.take() {
		return // the run fails: nothing more to keep of it
	}
	t := h.t
	g := t.group
	t.lastSnapshot = max(t.lastSnapshot, js.SnapshotTime)
	s, first := g.Observe(js.JobID, js.StartTime)
	// A job_id printed again in the same output (damaged output): its
	// values add to the first entry's (internal/mechanism/rates/dups.go), whichever comes
	// first; the entry counts as a duplicate, not once more by outcome.
	dup := s.Entries() > 1
	if dup {
		t.duplicates++
	}
	if js.Malformed > 0 || len(js.Ops) < len(t.opList) {
		// An operation left out (Lustre prints them all): a later entry of
		// the same job_id must not add to a value this one did not give.
		g.Partial(s)
	}
	if first {
		// Room for its non-zero values: one allocation for the series.
		n := 0
		for i := range js.Ops {
			n += boolInt(js.Ops[i].Samples != 0) + boolInt(js.Ops[i].Sum != 0)
		}
		s.Reserve(n)
	}
	t.malformedLines += uint64(js.Malformed)
	for i := range js.Ops {
		op := &js.Ops[i]
		slots := t.slotsFor(op, i)
		g.Set(s, slots.samples, op.Samples)
		if slots.sum >= 0 && op.HasSum {
			g.Set(s, slots.sum, op.Sum)
		}
	}
	if !dup && s.Meta.resolved() && s.Identity() != nil {
		t.outcomes[s.Meta.outcome()]++
	}
}

func (h *targetHandler) End(complete bool, stats lctl.SectionStats) {
	h.t.group.EndSection(complete)
	h.t.malformedLines += uint64(stats.Stray)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// slotsFor returns the accumulator slots of the operation at place in an
// entry, adding them the first time the target prints it. A sum is kept for
// bytes and latencies.
func (t *target) slotsFor(op *lctl.OpStat, place int) *opSlots {
	if place < len(t.byPlace) {
		if i := t.byPlace[place]; t.opList[i].op == op.Op {
			return &t.opList[i]
		}
	}
	i, ok := t.ops[op.Op]
	if !ok {
		i = t.addOp(op)
	}
	if place >= len(t.byPlace) {
		t.byPlace = append(t.byPlace, make([]int, place+1-len(t.byPlace))...)
	}
	t.byPlace[place] = i
	return &t.opList[i]
}

// addOp adds the slots of an operation and returns its index in opList.
func (t *target) addOp(op *lctl.OpStat) int {
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
	return len(t.opList) - 1
}

// EndRun closes the run and publishes its View. runErr is the run's
// failure, exit lctl's non-zero exit after a whole output: with either, a
// run that met no job_stats parameter says why in View.Err.
//
// A run that failed (runErr: killed, over its budget, unreadable) keeps
// none of the raw job_ids it met first: they are forgotten before any is
// classified, so that an output cut short, however many ids it printed,
// costs no memory beyond the run, and its ids count whole when a complete
// output shows them. What known ids counted in it stays counted.
func (t *Tracker) EndRun(runErr, exit error) *View {
	if runErr != nil || t.OverBudget() {
		t.acc.ForgetBorn()
	}
	t.setFormat()
	t.resolvePending()
	t.acc.EndRun()
	t.evictIdle()
	t.summarize()
	seen := 0
	for _, tg := range t.order {
		if tg.seenThisRun {
			seen++
		}
		if tg.duplicates > 0 && !tg.dupsLogged {
			// Once per target: lustre_jobstats_duplicate_entries_total
			// counts them from then on.
			tg.dupsLogged = true
			t.logger.Warn("job_stats printed a job_id more than once for a target (damaged output); the entries of each job_id are summed",
				"component", tg.component, "target", tg.target, "entries", tg.duplicates)
		}
	}
	var err error
	switch {
	case runErr != nil || seen > 0:
	case exit != nil:
		err = fmt.Errorf("no job_stats in lctl output (is this a Lustre server with jobstats enabled?): %w", exit)
	default:
		err = errors.New("no job_stats in lctl output (is this a Lustre server with jobstats enabled?)")
	}
	return t.publish(err)
}

// evictIdle bounds the identities kept without a raw series (jobs gone
// from job_stats, kept for the TTL so that their counters go on if they
// come back) to Config.MaxEntries over the server: job_ids made up faster
// than the TTL forgets them would otherwise grow the tracker past any
// bound, a run's budget notwithstanding. Those seen longest ago go first;
// "_other" and "_untrusted" never do.
func (t *Tracker) evictIdle() {
	if t.entries.max <= 0 {
		return
	}
	evicted := t.acc.EvictIdle(t.entries.max, func(id *identity) bool { return !aggregate(id) })
	total := 0
	for param, n := range evicted {
		if tg := t.targets[param]; tg != nil {
			tg.evicted += uint64(n)
		}
		total += n
	}
	if total > 0 && !t.evictLogged {
		t.evictLogged = true
		t.logger.Warn("job identities without raw series forgotten before --lustre.jobstats.ttl: more of them than --lustre.jobstats.max-entries (job_ids made up faster than the TTL forgets them); their series end sooner, nothing they counted is lost (hpcio_exporter_jobstats_identities_evicted_total counts them from now on)",
			"evicted", total, "max_entries", t.entries.max)
	}
}

// resolvePending classifies the job_ids first seen in this run (and those
// discarded earlier that a well-formed id seen since may repair) and
// attaches them to their identities.
func (t *Tracker) resolvePending() {
	type ref struct {
		t *target
		s *series
	}
	var needContext []ref
	for _, tg := range t.order {
		if !tg.seenThisRun {
			continue
		}
		if tg.group.CreatedFloor == 0 {
			// The first run of the target (or its return after being
			// forgotten): the jobs already there make counters that start
			// now, as far as anyone reading them can tell.
			tg.group.CreatedFloor = tg.lastSnapshot
		}
		for _, s := range tg.group.Pending() {
			if s.Meta.resolved() && !s.Meta.outcome().NeedsContext() {
				tg.outcomes[s.Meta.outcome()]++ // discarded for good
				continue
			}
			full, outcome := t.normalizer.Normalize([]byte(s.Key), nil)
			if outcome.NeedsContext() {
				needContext = append(needContext, ref{tg, s})
				continue
			}
			t.attach(tg, s, full, outcome)
		}
	}
	for _, r := range needContext {
		full, outcome := t.normalizer.Normalize([]byte(r.s.Key), t.known)
		t.attach(r.t, r.s, full, outcome)
	}
	for _, tg := range t.order {
		if tg.seenThisRun && tg.group != nil {
			t.repairUntrusted(tg)
		}
	}
	t.trimKnown()
}

func (t *Tracker) attach(tg *target, s *series, full jobid.Identity, outcome jobid.Outcome) {
	s.Meta = resolvedAs(outcome)
	tg.outcomes[outcome]++
	switch {
	case outcome.Kept() && !t.filter.allows(full):
		tg.group.Resolve(s, Key{OtherJob}, true)
	case outcome.Kept():
		tg.group.Resolve(s, t.project(full), true)
	case t.bucket:
		tg.group.Resolve(s, Key{UntrustedJob}, true)
		if outcome.NeedsContext() {
			tg.recheck = append(tg.recheck, s)
			tg.group.Hold(s, true)
		}
	}
	if outcome.Trusted() {
		t.known.Add(full)
	}
}

// repairUntrusted moves the series of tg counted under "_untrusted" that
// the well-formed ids known now (this output's among them) repair to their
// jobs, for what they count from this output on: their increments of the
// run were held until now. Those not repaired count this run's increments
// under "_untrusted" (rates.Accumulator.EndRun). A series not in this
// run's output is given up: if it comes back, it is new.
func (t *Tracker) repairUntrusted(tg *target) {
	run := t.acc.Run()
	kept := tg.recheck[:0]
	for _, s := range tg.recheck {
		if !s.SeenIn(run) {
			tg.group.Hold(s, false)
			continue
		}
		full, outcome := t.normalizer.Normalize([]byte(s.Key), t.known)
		switch {
		case !outcome.Kept():
			kept = append(kept, s)
			continue
		case t.filter.allows(full):
			tg.group.Rebind(s, t.project(full))
		default:
			tg.group.Rebind(s, Key{OtherJob})
		}
		s.Meta = resolvedAs(outcome)
	}
	clear(tg.recheck[len(kept):])
	tg.recheck = kept
}

// trimKnown rebuilds the set of well-formed ids when cleaned-up jobs make
// up most of it, so that it does not grow with every job ever seen.
func (t *Tracker) trimKnown() {
	live := 0
	for _, tg := range t.order {
		if tg.group != nil {
			live += tg.group.Len()
		}
	}
	if t.known.Len() <= 2*live+1000 {
		return
	}
	// Trusted ids normalize the same without context: no need to keep
	// each one's identity beside its series.
	t.known = jobid.NewKnown()
	for _, tg := range t.order {
		if tg.group == nil {
			continue
		}
		tg.group.EachSeries(func(s *series) {
			if s.Meta.resolved() && s.Meta.outcome().Trusted() {
				full, _ := t.normalizer.Normalize([]byte(s.Key), nil)
				t.known.Add(full)
			}
		})
	}
}

// project blanks the identity labels not kept.
func (t *Tracker) project(id jobid.Identity) Key {
	k := Key{id.Job, id.UID, id.GID, id.Node, id.Exe}
	for i := range k {
		if !t.keep[i] {
			k[i] = ""
		}
	}
	return k
}
