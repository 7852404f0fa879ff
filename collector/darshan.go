package collector

// The darshan collector is the Darshan sidecar: it exports, per job, the
// I/O signals v2.2 (docs/signals.md) of the Darshan logs dropped in
// --darshan.dir, as gauges in base units (bytes, seconds, bytes per
// second, ratios), with the labels jobid (the batch job id, the same value
// as the Lustre jobstats jobid, so that PromQL can join the two), uid and
// exe (the executable's base name). Signals that are NA are not exported.
// The logs of one identity (the steps of a job) are summed into one job.
//
// No file path, directory or command line ever becomes a label value:
// records are labelled by module, rank and record id (the hash of the
// path), heatmaps by layer.
//
// With --darshan.insights (the default), each job's logs are also held to
// Drishti's triggers (package darshan/insights, thresholds from
// --darshan.insights-config): darshan_job_insight{code,level} is 1 for
// each trigger that fired, beside the value that decided it and the
// threshold it was held to, and darshan_insight_info carries each code's
// recommendation once per sidecar, for alerts and dashboards to look up.
//
// The finding and reading of logs is in package logwatch; this file only
// translates its views into metrics. The per-job families are streamed.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/logwatch"
)

var (
	darshanDirs           []string
	darshanRescan         = 30 * time.Second
	darshanWorkers        = 2
	darshanRetention      = 24 * time.Hour
	darshanMaxJobs        = 10000
	darshanMaxJobsPerUser = 1000
	darshanMaxSeries      = 600000
	darshanExeLabel       = true
	darshanRecords        = false
	darshanMaxRecords     = 10
	darshanInsights       = true
	darshanInsightsConfig string
	darshanStateDir       string
	// darshanMaxLogMemory reads --darshan.max-log-memory (kingpin's byte
	// sizes: 256MiB, 1GiB, 512KB, all powers of 1024).
	darshanMaxLogMemory   = func() int64 { return darshan.DefaultMemoryBudget }
	darshanNoInotify      bool // tests only
	darshanSidecarStarted func(*logwatch.Sidecar)
)

func init() {
	register("darshan", true, newDarshanCollector)
	addFlags(func(a FlagGroup) {
		a.Flag("darshan.dir", "Directory where Darshan drops its logs, searched recursively (YYYY/M/D); repeat for several. The darshan collector is off without it.").
			StringsVar(&darshanDirs)
		a.Flag("darshan.rescan-interval", "How often the Darshan directories are listed again (inotify finds local writes sooner; Lustre and NFS need the rescans).").
			Default(darshanRescan.String()).DurationVar(&darshanRescan)
		a.Flag("darshan.workers", "Darshan logs read at the same time.").
			Default(strconv.Itoa(darshanWorkers)).IntVar(&darshanWorkers)
		a.Flag("darshan.retention", "How long a job's series stay after its log's end time.").
			Default(darshanRetention.String()).DurationVar(&darshanRetention)
		a.Flag("darshan.max-jobs", "Most jobs exported; past it the user holding the most loses its job that ended first (darshan_jobs_dropped_total{reason=\"max_jobs\"}). 0: no limit.").
			Default(strconv.Itoa(darshanMaxJobs)).IntVar(&darshanMaxJobs)
		a.Flag("darshan.max-jobs-per-user", "Most jobs exported per user (the uid in the logs' headers); past it that user's job that ended first is dropped, never another user's (darshan_user_jobs_dropped_total). 0: no limit.").
			Default(strconv.Itoa(darshanMaxJobsPerUser)).IntVar(&darshanMaxJobsPerUser)
		a.Flag("darshan.max-series", "Most series of the per-job families (darshan_job_*, darshan_record_*); past it, at a scrape, the user whose jobs cost the most series loses its job that ended first (darshan_jobs_dropped_total{reason=\"max_series\"}). 0: no limit.").
			Default(strconv.Itoa(darshanMaxSeries)).IntVar(&darshanMaxSeries)
		a.Flag("darshan.exe-label", "Label Darshan jobs with exe, the executable's base name (never its path or arguments).").
			Default("true").BoolVar(&darshanExeLabel)
		a.Flag("darshan.records", "Also export the record-level signals (per file: module, rank and record id labels, never the path).").
			BoolVar(&darshanRecords)
		a.Flag("darshan.max-records-per-job", "Most records exported per job with --darshan.records, those with the most bytes first.").
			Default(strconv.Itoa(darshanMaxRecords)).IntVar(&darshanMaxRecords)
		a.Flag("darshan.insights", "Hold each job's Darshan logs to Drishti's triggers and export those that fire (darshan_job_insight).").
			Default("true").BoolVar(&darshanInsights)
		a.Flag("darshan.insights-config", "JSON file of insight thresholds, Drishti's --config format; Drishti's defaults without it. A file that does not load stops the exporter at start.").
			PlaceHolder("FILE").StringVar(&darshanInsightsConfig)
		// The flag's own type (units.Base2Bytes) stays kingpin's: read
		// through a closure, it needs no import of its package.
		maxLogMemory := a.Flag("darshan.max-log-memory", "Most memory the reading of one Darshan log may use (its inflated regions, names and records), with a unit (256MiB, 1GiB); a log over it counts darshan_logs_failed_total{reason=\"too_large\"} and is not read again until it changes. --darshan.workers logs are read at once: workers × this must stay well under the exporter's memory limit.").
			Default(fmt.Sprintf("%dMiB", darshan.DefaultMemoryBudget>>20)).Bytes()
		darshanMaxLogMemory = func() int64 { return int64(*maxLogMemory) }
		a.Flag("darshan.state-dir", "Directory (existing, writable) where the sidecar writes down the Darshan logs being read, so that a log that kills the exporter while it is read (out of memory) is skipped after the restart and counted darshan_logs_failed_total{reason=\"crashed\"}. Without it, such a log is read again at every restart. The packaged unit gives its StateDirectory=.").
			PlaceHolder("DIR").StringVar(&darshanStateDir)
	})
}

type darshanCollector struct {
	sidecar  *logwatch.Sidecar
	records  bool
	insights bool
}

func newDarshanCollector(env Env) (Collector, error) {
	// The thresholds are checked before anything else, so that a bad file
	// stops the exporter even where no drop directory is configured yet.
	var insightsCfg *insights.Config
	if darshanInsightsConfig != "" {
		cfg, err := insights.LoadConfig(darshanInsightsConfig)
		if err != nil {
			return nil, fmt.Errorf("--darshan.insights-config: %w", err)
		}
		insightsCfg = &cfg
	}
	if len(darshanDirs) == 0 {
		return nil, ErrNotConfigured
	}
	switch {
	case !darshanInsights:
		insightsCfg = nil
	case insightsCfg == nil:
		cfg := insights.DefaultConfig()
		insightsCfg = &cfg
	}
	maxRecords := 0
	if darshanRecords {
		maxRecords = max(darshanMaxRecords, 0)
	}
	budget := darshanMaxLogMemory()
	if budget <= 0 {
		return nil, fmt.Errorf("--darshan.max-log-memory must be more than 0, not %d", budget)
	}
	if darshanStateDir == "" {
		env.Logger.Info("no --darshan.state-dir: a Darshan log that kills the exporter while it is read (out of memory) will be read again after a restart")
	}
	s, err := logwatch.Start(logwatch.Config{
		Dirs: darshanDirs, RescanInterval: darshanRescan, Workers: darshanWorkers,
		Retention: darshanRetention, MaxJobs: darshanMaxJobs, MaxJobsPerUser: darshanMaxJobsPerUser,
		MaxSeries: darshanMaxSeries, SeriesOf: darshanJobSeries, ExeLabel: darshanExeLabel,
		MaxRecords: maxRecords, NoInotify: darshanNoInotify, Insights: insightsCfg,
		MemoryBudget: budget, StateDir: darshanStateDir,
		Now: env.Now, Logger: env.Logger,
	})
	if err != nil {
		return nil, err
	}
	if darshanSidecarStarted != nil {
		darshanSidecarStarted(s)
	}
	return &darshanCollector{sidecar: s, records: maxRecords > 0, insights: insightsCfg != nil}, nil
}

// Close stops the sidecar (tests; the exporter runs it until it exits).
func (c *darshanCollector) Close() error { return c.sidecar.Close() }

var (
	darshanProcessedDesc = prometheus.NewDesc("darshan_logs_processed_total",
		"Darshan logs read successfully (each version of a file once).", nil, nil)
	darshanFailedDesc = prometheus.NewDesc("darshan_logs_failed_total",
		"Darshan logs that could not be read, by reason (corrupt, truncated, incomplete, unsupported_version, not_darshan: no Darshan magic number or not a regular file, too_large: over --darshan.max-log-memory or the inflate bound, permission, symlink_owner: a link whose owner is neither root nor its target's, crashed: being read when the exporter died, io_error); each version of a file counts once.",
		[]string{"reason"}, nil)
	darshanReadBytesDesc = prometheus.NewDesc("darshan_read_bytes_total",
		"Bytes read according to the Darshan logs read, by module (POSIX, MPI-IO, STDIO, H5D, PNETCDF_VAR, DFS, DAOS; the layers overlap: MPI-IO reads are also POSIX reads).",
		[]string{"module"}, nil)
	darshanWriteBytesDesc = prometheus.NewDesc("darshan_write_bytes_total",
		"Bytes written according to the Darshan logs read, by module.", []string{"module"}, nil)
	darshanReadRetractedDesc = prometheus.NewDesc("darshan_read_bytes_retracted_total",
		"Bytes read that new versions of Darshan logs no longer report (a log rewritten with less, or by a copy of a log read elsewhere), by module: darshan_read_bytes_total counts what each version adds over the version before, never less, and less this is the bytes of the latest version of every log read.",
		[]string{"module"}, nil)
	darshanWriteRetractedDesc = prometheus.NewDesc("darshan_write_bytes_retracted_total",
		"Bytes written that new versions of Darshan logs no longer report, by module (see darshan_read_bytes_retracted_total).",
		[]string{"module"}, nil)
	darshanExpiredDesc = prometheus.NewDesc("darshan_logs_expired_total",
		"Darshan logs whose series were removed because their end time left the retention window (or that ended before it when found: read, or not opened because modified before it).", nil, nil)
	darshanDroppedDesc = prometheus.NewDesc("darshan_jobs_dropped_total",
		"Jobs dropped to stay within the sidecar's bounds, each time the job that ended first of the user holding the most, by reason: user_share (its user held more than --darshan.max-jobs-per-user), max_jobs (--darshan.max-jobs), max_series (--darshan.max-series).",
		[]string{"reason"}, nil)
	darshanUserDroppedDesc = prometheus.NewDesc("darshan_user_jobs_dropped_total",
		"Jobs of the user (the uid in the logs' headers) dropped to stay within the sidecar's bounds (darshan_jobs_dropped_total), since the user began to hold jobs; only for the users holding jobs that lost some.",
		[]string{"uid"}, nil)
	darshanJobSeriesDesc = prometheus.NewDesc("darshan_retained_series",
		"Series of the per-job families (darshan_job_*, darshan_record_*) in this scrape, at most --darshan.max-series.", nil, nil)
	darshanDuplicatesDesc = prometheus.NewDesc("darshan_logs_duplicate_total",
		"Darshan logs left out because they are copies of a log already read.", nil, nil)
	darshanWaitingDesc = prometheus.NewDesc("darshan_logs_waiting",
		"Darshan logs found but not read yet, by reason: queued (or being read), partial (still named *.darshan_partial), incomplete (empty, zero header or truncated, retried while the runtime may still be writing it).",
		[]string{"reason"}, nil)
	darshanLastScanDesc = prometheus.NewDesc("darshan_last_scan_timestamp_seconds",
		"When the Darshan directories were last listed, in seconds since the epoch.", nil, nil)
	darshanScanDurationDesc = prometheus.NewDesc("darshan_last_scan_duration_seconds",
		"How long the last listing of the Darshan directories took.", nil, nil)
	darshanJobsDesc = prometheus.NewDesc("darshan_retained_jobs",
		"Jobs whose series are exported.", nil, nil)
	darshanLogsDesc = prometheus.NewDesc("darshan_retained_logs",
		"Darshan logs summed into the exported jobs.", nil, nil)
	darshanWatchesDesc = prometheus.NewDesc("darshan_inotify_watches",
		"Darshan directories watched with inotify (the others are found by rescans only).", nil, nil)
	darshanUnlistedDesc = prometheus.NewDesc("darshan_dirs_unlisted",
		"Directories under the Darshan drop directories that the last scan did not list, by reason: permission (the exporter's user may not list it), symlink_owner (a link to it whose owner is neither root nor the directory's), io_error. Their logs are not read.",
		[]string{"reason"}, nil)
	darshanInsightsFailedDesc = prometheus.NewDesc("darshan_insights_failed_total",
		"Darshan logs read whose insights could not be computed (their signals are exported; the job's insights are those of its other logs), and evaluations of a job's insights that failed.", nil, nil)
	darshanInsightInfoDesc = prometheus.NewDesc("darshan_insight_info",
		"The general recommendation of each insight code that fired for a retained job (always 1): one series per code, not per job, for alerts and dashboards to join on code. Job-specific advice (HDF5, Lustre, MPI-IO) is in the report of `hpcio_exporter darshan insights`.",
		[]string{"code", "recommendation"}, nil)
)

func (c *darshanCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	snap := c.sidecar.Snapshot()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(darshanProcessedDesc, float64(snap.Processed))
	for _, r := range logwatch.Reasons {
		counter(darshanFailedDesc, float64(snap.Failed[r]), r)
	}
	for m, v := range snap.ReadBytes {
		counter(darshanReadBytesDesc, v, m)
	}
	for m, v := range snap.WriteBytes {
		counter(darshanWriteBytesDesc, v, m)
	}
	// Beside each module's totals, at 0 until a log shrinks.
	for m := range snap.ReadBytes {
		counter(darshanReadRetractedDesc, snap.ReadRetracted[m], m)
	}
	for m := range snap.WriteBytes {
		counter(darshanWriteRetractedDesc, snap.WriteRetracted[m], m)
	}
	counter(darshanExpiredDesc, float64(snap.Expired))
	for _, r := range logwatch.DropReasons {
		counter(darshanDroppedDesc, float64(snap.Dropped[r]), r)
	}
	for uid, n := range snap.UserDropped {
		counter(darshanUserDroppedDesc, float64(n), uid)
	}
	gauge(darshanJobSeriesDesc, float64(snap.JobSeries))
	counter(darshanDuplicatesDesc, float64(snap.Duplicates))
	for _, r := range []string{logwatch.WaitingQueued, logwatch.WaitingPartial, logwatch.WaitingIncomplete} {
		gauge(darshanWaitingDesc, float64(snap.Waiting[r]), r)
	}
	if !snap.LastScan.IsZero() {
		gauge(darshanLastScanDesc, float64(snap.LastScan.UnixNano())/1e9)
		gauge(darshanScanDurationDesc, snap.ScanDuration.Seconds())
	}
	gauge(darshanJobsDesc, float64(snap.RetainedJobs))
	gauge(darshanLogsDesc, float64(snap.RetainedLogs))
	gauge(darshanWatchesDesc, float64(snap.InotifyWatches))
	for _, r := range dropdir.UnlistedReasons {
		gauge(darshanUnlistedDesc, float64(snap.UnlistedDirs[r]), r)
	}
	if c.insights {
		counter(darshanInsightsFailedDesc, float64(snap.InsightsFailed))
		for _, r := range insightRecommendations(snap.Jobs) {
			gauge(darshanInsightInfoDesc, 1, r.code, r.text)
		}
	}
	if len(snap.Jobs) > 0 {
		s.Stream(darshanJobFamilies(snap.Jobs, c.records, c.insights)...)
	}
	return nil
}

type recommendation struct{ code, text string }

// insightRecommendations returns, for each code that fired for a retained
// job, its general recommendation (the first), from the first job in
// identity order: the text of a code depends on the sidecar's version,
// not on the job, but for M09's, which names the job's node count. At most
// one per code: the alerts look it up by code.
func insightRecommendations(jobs []*logwatch.JobView) []recommendation {
	seen := map[string]bool{}
	var out []recommendation
	for _, v := range jobs {
		for i := range v.Insights {
			in := &v.Insights[i]
			code := in.Code()
			if seen[code] {
				continue
			}
			seen[code] = true
			if rec := in.Recommendation(); rec != "" {
				out = append(out, recommendation{code, rec})
			}
		}
	}
	return out
}
