package collector

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre/jobstats"
)

// What the jobstats collector does about cardinality: the rate density
// (docs/rates.md, "The rate density"), which sums up
// thousands of jobs in a few series; a cap on per-job series with the rest
// folded into jobid="_other"; and filters on the identity labels.
var (
	rateDensityBase      = 10
	jobstatsMaxSeries    = 0
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
		a.Flag("lustre.jobstats.max-series", "Most identities per target with per-job series, the fastest over the last interval; the others are summed, reset-safe, under jobid=\"_other\". 0: no limit.").
			Default(fmt.Sprint(jobstatsMaxSeries)).IntVar(&jobstatsMaxSeries)
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
			ch <- prometheus.MustNewConstHistogram(desc, h.Count, h.SumRate, buckets, t.Component, t.Target, h.Op)
		}
	}
}
