package collector

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre/jobstats"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// The jobstats collector exposes the per-job View that each lctl run
// leaves (package jobstats keeps the state across runs): per-target
// accounting of the job_ids read, the rate density, and the per-job
// counter families, streamed.

// Flags of the jobstats collector.
var (
	jobidNameFlag           = ""
	jobstatsTTL             = 15 * time.Minute
	jobstatsLabels          = "jobid,uid,node,exe"
	jobstatsEmitZero        = false
	jobstatsUntrustedBucket = true
)

func init() {
	register("jobstats", true, newJobstatsCollector)
	addFlags(func(a FlagGroup) {
		a.Flag("lustre.jobid-name", "The jobid_name format of the job_ids (e.g. %j:%u:%H). Default: what lctl reports as jobid_name, else %j:%u:%H; %e.%u ids are always recognized.").
			Default(jobidNameFlag).StringVar(&jobidNameFlag)
		a.Flag("lustre.jobstats.ttl", "Forget a job identity unseen for this long (its series disappear).").
			Default(jobstatsTTL.String()).DurationVar(&jobstatsTTL)
		a.Flag("lustre.jobstats.labels", "Identity labels kept on per-job series, comma-separated, from jobid,uid,gid,node,exe; dropped ones are summed, reset-safe.").
			Default(jobstatsLabels).StringVar(&jobstatsLabels)
		a.Flag("lustre.jobstats.emit-zero", "Also emit per-job series whose value is still zero.").
			Default(fmt.Sprint(jobstatsEmitZero)).BoolVar(&jobstatsEmitZero)
		a.Flag("lustre.jobstats.untrusted-bucket", `Count the traffic of discarded job_ids under jobid="_untrusted", so that per-job series sum to the target's job_stats. --no-lustre.jobstats.untrusted-bucket drops it: sums over jobs then fall short by that traffic, and only lustre_jobid_entries_total{outcome=~"discarded_.*"} tells how many entries it came from.`).
			Default(fmt.Sprint(jobstatsUntrustedBucket)).BoolVar(&jobstatsUntrustedBucket)
	})
}

type jobstatsCollector struct {
	perJob bool
}

func newJobstatsCollector(env Env) (Collector, error) {
	include, exclude := map[string]string{}, map[string]string{}
	for _, l := range jobstats.FilterLabels {
		include[l], exclude[l] = *jobstatsFilters["include-"+l], *jobstatsFilters["exclude-"+l]
	}
	if rateDensityBase < 2 {
		return nil, fmt.Errorf("--lustre.rate-density.base must be an integer > 1, not %d", rateDensityBase)
	}
	tracker, err := jobstats.New(jobstats.Config{
		JobIDName: jobidNameFlag, TTL: jobstatsTTL, Labels: strings.Split(jobstatsLabels, ","),
		EmitZero: jobstatsEmitZero, UntrustedBucket: jobstatsUntrustedBucket, MaxSeries: jobstatsMaxSeries, MaxEntries: jobstatsMaxEntries,
		Include: include, Exclude: exclude, DensityBase: rateDensityBase, Logger: env.Logger,
	})
	var cfgErr *jobstats.ConfigError
	switch {
	case errors.As(err, &cfgErr) && cfgErr.Setting == "jobid-name":
		return nil, fmt.Errorf("--lustre.%s: %w", cfgErr.Setting, cfgErr.Err)
	case errors.As(err, &cfgErr):
		return nil, fmt.Errorf("--lustre.jobstats.%s: %w", cfgErr.Setting, cfgErr.Err)
	case err != nil:
		return nil, err
	}
	if !jobstatsUntrustedBucket && env.Logger != nil {
		env.Logger.Warn("the traffic of discarded job_ids is dropped (--no-lustre.jobstats.untrusted-bucket): per-job sums will fall short of each target's job_stats")
	}
	env.lustre.TrackJobs("jobstats", tracker)
	return &jobstatsCollector{perJob: jobstatsPerJobSeries}, nil
}

var (
	jobidEntriesDesc = prometheus.NewDesc("lustre_jobid_entries_total",
		"Job stats entries read, by what their job_id turned out to be (see the README for the outcomes); discarded_* entries count under jobid=\"_untrusted\", or nowhere with --no-lustre.jobstats.untrusted-bucket.",
		[]string{"component", "target", "outcome"}, nil)
	jobstatsMalformedDesc = prometheus.NewDesc("lustre_jobstats_malformed_lines_total",
		"Lines of job_stats output that could not be parsed and were skipped; the rest of their entry was kept.",
		[]string{"component", "target"}, nil)
	jobstatsDuplicatesDesc = prometheus.NewDesc("lustre_jobstats_duplicate_entries_total",
		"Entries whose job_id was already printed for the target in the same output (damaged output); the values of a job_id's entries are summed before the increment rule.",
		[]string{"component", "target"}, nil)
	jobstatsRawSeriesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "raw_series"),
		"Raw job_ids of the target the exporter tracks.",
		[]string{"component", "target"}, nil)
	jobstatsEvictedDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "identities_evicted_total"),
		"Job identities of the target forgotten before --lustre.jobstats.ttl because more identities without raw job_ids than --lustre.jobstats.max-entries were kept (job_ids made up faster than the TTL forgets them): their series ended sooner; nothing they counted is lost.",
		[]string{"component", "target"}, nil)
	jobstatsIdentitiesDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "identities"),
		"Job identities of the target with per-job series (after label aggregation).",
		[]string{"component", "target"}, nil)
	// What the per-job series of a target add up to over their lifetimes:
	// one series per target that a job's first scrape, an eviction or a
	// fold never takes anything from, so that rate() of it is exact where
	// a sum of rates over churning job series falls short. Beside the
	// target's own stats (lustre_read_bytes_total, lustre_stats_total), it
	// tells how much of the target's traffic job_stats saw.
	jobstatsReadBytesDesc = prometheus.NewDesc("lustre_jobstats_read_bytes_total",
		"Bytes read counted in the target's job_stats: every increment of its per-job series lustre_job_read_bytes, _other and _untrusted included, since the exporter first read the target.",
		[]string{"component", "target"}, nil)
	jobstatsWriteBytesDesc = prometheus.NewDesc("lustre_jobstats_write_bytes_total",
		"Bytes written counted in the target's job_stats: every increment of its per-job series lustre_job_write_bytes, _other and _untrusted included, since the exporter first read the target.",
		[]string{"component", "target"}, nil)
	jobstatsOpsDesc = prometheus.NewDesc("lustre_jobstats_stats_total",
		"Operations counted in the target's job_stats, by operation: every increment of its per-job series lustre_job_stats, _other and _untrusted included, since the exporter first read the target.",
		[]string{"component", "target", "operation"}, nil)
	jobstatsFormatDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobstats", "jobid_name_info"),
		"The jobid_name format job_ids are read with, and where it came from (flag, lctl or default).",
		[]string{"jobid_name", "from"}, nil)
)

func (c *jobstatsCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	snap, runErr := s.Lustre()
	if snap == nil || snap.Jobs == nil {
		return runErr
	}
	v := snap.Jobs
	ch <- prometheus.MustNewConstMetric(jobstatsFormatDesc, prometheus.GaugeValue, 1, v.Format, v.FormatFrom)
	for _, t := range v.Targets {
		for o, n := range t.Outcomes {
			if n > 0 || jobid.Outcome(o) == jobid.OK {
				ch <- prometheus.MustNewConstMetric(jobidEntriesDesc, prometheus.CounterValue, float64(n), t.Component, t.Target, jobid.Outcome(o).String())
			}
		}
		ch <- prometheus.MustNewConstMetric(jobstatsMalformedDesc, prometheus.CounterValue, float64(t.Malformed), t.Component, t.Target)
		ch <- prometheus.MustNewConstMetric(jobstatsDuplicatesDesc, prometheus.CounterValue, float64(t.Duplicates), t.Component, t.Target)
		ch <- prometheus.MustNewConstMetric(jobstatsRawSeriesDesc, prometheus.GaugeValue, float64(t.RawSeries), t.Component, t.Target)
		ch <- prometheus.MustNewConstMetric(jobstatsIdentitiesDesc, prometheus.GaugeValue, float64(t.Identities), t.Component, t.Target)
		ch <- prometheus.MustNewConstMetric(jobstatsEvictedDesc, prometheus.CounterValue, float64(t.Evicted), t.Component, t.Target)
		sendJobstatsCounted(ch, t)
	}
	sendJobSummaries(ch, v)
	if c.perJob {
		s.Stream(lustreJobFamilies(v)...)
	}
	if runErr != nil {
		return runErr
	}
	return v.Err
}

// sendJobstatsCounted sends what a target's per-job series add up to. The
// bytes read and written are sent for every OST read, 0 before any entry
// printed them: a target whose job_stats stay empty (jobstats turned off,
// every entry cleaned up before a scrape saw it) then has a jobstats
// coverage of 0, where a missing series would give none and no alert.
func sendJobstatsCounted(ch chan<- prometheus.Metric, t *jobstats.TargetView) {
	if t.Counted == nil {
		return // forgotten: its series are gone
	}
	since := created(t.CountedSince, 0)
	var sentRead, sentWrite bool
	for i := range t.Ops {
		o := &t.Ops[i]
		switch o.Name {
		case "read_bytes", "write_bytes":
			if o.Sum < 0 {
				continue
			}
			desc := jobstatsReadBytesDesc
			sentRead = sentRead || o.Name == "read_bytes"
			if o.Name == "write_bytes" {
				desc, sentWrite = jobstatsWriteBytesDesc, true
			}
			ch <- counter(desc, float64(t.Counted[o.Sum]), since, t.Component, t.Target)
		default:
			ch <- counter(jobstatsOpsDesc, float64(t.Counted[o.Samples]), since, t.Component, t.Target, o.Name)
		}
	}
	if t.Component != "ost" {
		return // MDTs print bytes only from Lustre 2.14 (Data-on-MDT)
	}
	if !sentRead {
		ch <- counter(jobstatsReadBytesDesc, 0, since, t.Component, t.Target)
	}
	if !sentWrite {
		ch <- counter(jobstatsWriteBytesDesc, 0, since, t.Component, t.Target)
	}
}

// jobColumn is one value of a target's rows in a family: its slot, the
// operation label and the divisor to base units (1e6 for microseconds).
type jobColumn struct {
	slot    int
	op      string
	divisor float64
	// plainOp: op holds no byte the text format escapes, which is asked
	// once per family instead of once per sample.
	plainOp bool
}

// The per-job families. They are streamed: at tens of thousands of jobs
// they are most of the response. They read the View, which no run changes.
func lustreJobFamilies(v *jobstats.View) []exposition.Family {
	sumOf := func(name string) func(o *jobstats.Op) (int, float64) {
		return func(o *jobstats.Op) (int, float64) {
			if o.Name == name {
				return o.Sum, 1
			}
			return -1, 0
		}
	}
	samplesOf := func(name string) func(o *jobstats.Op) (int, float64) {
		return func(o *jobstats.Op) (int, float64) {
			if o.Name == name {
				return o.Samples, 1
			}
			return -1, 0
		}
	}
	return []exposition.Family{
		lustreJobFamily(v, "lustre_job_read_bytes", "Bytes the job read from the target (the sum of read_bytes).", false, sumOf("read_bytes")),
		lustreJobFamily(v, "lustre_job_write_bytes", "Bytes the job wrote to the target (the sum of write_bytes).", false, sumOf("write_bytes")),
		lustreJobFamily(v, "lustre_job_read_samples", "Read requests of the job on the target (the samples of read_bytes).", false, samplesOf("read_bytes")),
		lustreJobFamily(v, "lustre_job_write_samples", "Write requests of the job on the target (the samples of write_bytes).", false, samplesOf("write_bytes")),
		lustreJobFamily(v, "lustre_job_stats", "Operations of the job on the target, by operation (the samples of every job_stats operation but read_bytes and write_bytes).", true,
			func(o *jobstats.Op) (int, float64) {
				if o.Name == "read_bytes" || o.Name == "write_bytes" {
					return -1, 0
				}
				return o.Samples, 1
			}),
		lustreJobFamily(v, "lustre_job_operation_seconds", "Time the target spent serving the job's operations, by operation (the usecs sums of job_stats, in seconds).", true,
			func(o *jobstats.Op) (int, float64) {
				if o.Unit != lctl.UnitUsecs {
					return -1, 0
				}
				return o.Sum, 1e6
			}),
	}
}

// jobRowsPerPart is how many rows of a target one part of a per-job
// family by operation holds: enough that a part's overhead is nothing, few
// enough that the parts encoded ahead of the response take little memory.
// A family of one sample per row (the bytes and requests) takes four times
// as many: at 128 rows its parts were under the size a gzipped response
// compresses where they are encoded (exposition's minCompressedPart), and
// the goroutine that sends compressed those four families alone.
const (
	jobRowsPerPart       = 128
	jobRowsPerSinglePart = 4 * jobRowsPerPart
)

// jobTargetParts are the parts of one target in a family: its columns,
// and the number of the family's parts before its own.
type jobTargetParts struct {
	target  *jobstats.TargetView
	columns []jobColumn
	// colMask has a bit per slot of the columns, colOf their index in
	// columns by slot: a row's totals are read for the columns it has.
	colMask []uint64
	colOf   []int
	first   int
}

// lustreJobFamily builds one streamed counter family. pick returns, for an
// operation of a target, the slot it contributes and the divisor to base
// units, or -1; byOp adds the operation label. The family is cut into parts
// of a target's rows, which are encoded concurrently.
func lustreJobFamily(v *jobstats.View, name, help string, byOp bool, pick func(*jobstats.Op) (int, float64)) exposition.Family {
	var targets []jobTargetParts
	parts := 0
	rowsPerPart := jobRowsPerPart
	if !byOp {
		rowsPerPart = jobRowsPerSinglePart
	}
	for _, t := range v.Targets {
		var columns []jobColumn
		for i := range t.Ops {
			if slot, divisor := pick(&t.Ops[i]); slot >= 0 {
				op := t.Ops[i].Name
				columns = append(columns, jobColumn{slot: slot, op: op, divisor: divisor, plainOp: !exposition.NeedsEscape(op)})
			}
		}
		if len(columns) == 0 || len(t.Rows) == 0 {
			continue
		}
		// In slot order, which is the order lctl first printed the
		// operations in.
		slices.SortFunc(columns, func(a, b jobColumn) int { return a.slot - b.slot })
		tp := jobTargetParts{target: t, columns: columns, first: parts}
		last := columns[len(columns)-1].slot
		tp.colMask = make([]uint64, last>>6+1)
		tp.colOf = make([]int, last+1)
		for i, col := range columns {
			tp.colMask[col.slot>>6] |= 1 << uint(col.slot&63)
			tp.colOf[col.slot] = i
		}
		targets = append(targets, tp)
		parts += (len(t.Rows) + rowsPerPart - 1) / rowsPerPart
	}
	return exposition.Family{
		Name: name, Help: help, Type: exposition.Counter, Parts: parts,
		WritePart: func(w *exposition.Writer, part int) error {
			k, _ := slices.BinarySearchFunc(targets, part, func(tp jobTargetParts, part int) int {
				return cmp.Compare(tp.first, part)
			})
			if k == len(targets) || targets[k].first > part {
				k--
			}
			tp := &targets[k]
			t := tp.target
			start := (part - tp.first) * rowsPerPart
			// The target's labels, the same on every row of the part,
			// are rendered once; a row's own once for its samples.
			w.ResetLabels()
			w.Label("component", t.Component)
			w.Label("target", t.Target)
			targetMark := w.LabelMark()
			for r := start; r < min(start+rowsPerPart, len(t.Rows)); r++ {
				row := &t.Rows[r]
				vals := t.Values(r)
				mark := -1
				for {
					slot, v, ok := vals.Next(tp.colMask)
					if !ok {
						break
					}
					col := &tp.columns[tp.colOf[slot]]
					if mark < 0 {
						w.TruncateLabels(targetMark)
						if row.Plain {
							for k, l := range row.Key {
								w.LabelPlain(jobstats.LabelNames[k], l)
							}
						} else {
							for k, l := range row.Key {
								w.Label(jobstats.LabelNames[k], l)
							}
						}
						mark = w.LabelMark()
					}
					w.TruncateLabels(mark)
					switch {
					case !byOp:
					case col.plainOp:
						w.LabelPlain("operation", col.op)
					default:
						w.Label("operation", col.op)
					}
					var err error
					switch col.divisor {
					case 1:
						err = w.SampleUint(v, row.Created)
					case 1e6:
						err = w.SampleMicros(v, row.Created)
					default:
						err = w.SampleFloat(float64(v)/col.divisor, row.Created)
					}
					if err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}
