package collector

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre/jobstats"
)

// What the jobstats collector does about cardinality: the rate density
// (docs/rates.md, "The rate density"), which sums up
// thousands of jobs in a few series; a cap on per-job series with the rest
// folded into jobid="_other"; and filters on the identity labels.
var (
	rateDensityBase = 10
	// jobstatsMaxSeries: twice the 10,000 jobs per target that the
	// project's figures serve with every job's series (docs/performance.md),
	// so that no load it documents is folded; a user who mints job_ids
	// then puts at most this many identities of a target into Prometheus
	// (some 80,000–180,000 series), not one per id.
	jobstatsMaxSeries = 20000
	// jobstatsMaxEntries: twice the 100,000 jobs of one server that the
	// project's figures serve (docs/performance.md); the tracker's memory
	// is then bounded before the run (docs/threat-model.md).
	jobstatsMaxEntries   = 200000
	jobstatsPerJobSeries = true
	// jobstatsFilters holds --lustre.jobstats.{include,exclude}-{jobid,uid,node}.
	jobstatsFilters = func() map[string]*string {
		m := map[string]*string{}
		for _, l := range jobstats.FilterLabels {
			m["include-"+l], m["exclude-"+l] = new(string), new(string)
		}
		return m
	}()
)

func init() {
	addFlags(func(a FlagGroup) {
		a.Flag("lustre.rate-density.base", "Base b of the job rate density: bucket le=b^k counts the identities whose average rate over the last interval was below b^k. An integer > 1.").
			Default(fmt.Sprint(rateDensityBase)).IntVar(&rateDensityBase)
		a.Flag("lustre.jobstats.max-series", "Most identities per target with per-job series, the fastest over the last interval; the others are summed, reset-safe, under jobid=\"_other\". 0: no limit (a user who makes up job_ids then makes up series).").
			Default(fmt.Sprint(jobstatsMaxSeries)).IntVar(&jobstatsMaxSeries)
		a.Flag("lustre.jobstats.max-entries", "Most job_stats entries one lctl run may print, over every target of the server: past it, reading stops, the run counts hpcio_exporter_lctl_runs_total{result=\"over_budget\"}, every Lustre collector fails and nothing of the run is published. Bounds the memory job_ids can take (about 1.2 KB per entry; docs/threat-model.md).").
			Default(fmt.Sprint(jobstatsMaxEntries)).IntVar(&jobstatsMaxEntries)
		a.Flag("lustre.jobstats.per-job-series", "Expose per-job series. Without them the rate density and the per-target metrics still summarize the jobs.").
			Default(fmt.Sprint(jobstatsPerJobSeries)).BoolVar(&jobstatsPerJobSeries)
		for _, l := range jobstats.FilterLabels {
			for _, kind := range []string{"include", "exclude"} {
				v := jobstatsFilters[kind+"-"+l]
				a.Flag("lustre.jobstats."+kind+"-"+l, fmt.Sprintf("Regular expression (anchored) on the normalized %s: identities that do not match (include) or match (exclude) get no series of their own; their traffic counts under jobid=\"_other\".", l)).
					StringVar(v)
			}
		}
	})
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

// sendJobSummaries sends the active counts and densities of a View.
func sendJobSummaries(ch chan<- prometheus.Metric, v *jobstats.View) {
	for _, t := range v.Targets {
		ch <- prometheus.MustNewConstMetric(jobActiveDesc, prometheus.GaugeValue, float64(t.Active), t.Component, t.Target)
		for _, h := range t.Density {
			buckets := make(map[float64]uint64, len(v.Bounds))
			for j, b := range v.Bounds {
				buckets[b] = h.Below[j]
			}
			desc := opsDensityDesc
			if h.Bytes {
				desc = bytesDensityDesc
			}
			ch <- histogram(desc, h.Count, h.SumRate, buckets, time.Time{}, densityBuckets(), t.Component, t.Target, h.Op)
		}
	}
}
