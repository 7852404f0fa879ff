package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/alecthomas/kingpin/v2"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/report/prom"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// `hpcio_exporter report [flags] [LOG...]` writes a job's I/O report: the
// application's view from its Darshan logs (given, or found in a Darshan
// log directory by job id) and the servers' view from Prometheus, one
// self-contained HTML page or its data as JSON.
var reportCmd = kingpin.Command("report", "Write a job's I/O report: the application's view from its Darshan logs (given, or found with --darshan.dir and --jobid) and the servers' view from Prometheus (--prometheus.url with the job id), as one self-contained HTML page or as JSON.")

// reportArgs are the command's flags and arguments.
type reportArgs struct {
	logs           []string
	format         string
	output         string
	dirs           []string
	jobID          string
	promURL        string
	promConfig     string
	promTimeout    time.Duration
	from, to       reportTime
	noPaths        bool
	topFiles       int
	insightsConfig string
	budget         *logMemory
}

// maxExtendedWindow bounds the servers' window when it runs from the
// logs' start to now (the logs' own window holding none of the job's
// series): a week, longer than batch jobs run.
const maxExtendedWindow = 7 * 24 * time.Hour

// daysSearched is how far back --darshan.dir looks without --from: a
// batch job runs for days, not months, and its logs are under the day it
// started.
const daysSearched = 31

func init() {
	c := reportCmd
	a := &reportArgs{}
	c.Arg("log", "Darshan logs of one job (several logs of one job are summed; logs of different jobs are an error).").StringsVar(&a.logs)
	c.Flag("format", "html: one self-contained page (SVG charts, no script, no external file); json: the same content as data (schema "+report.Schema+").").
		Default("html").EnumVar(&a.format, "html", "json")
	c.Flag("output", "Write the report to FILE (mode 0600: it holds the job's file paths) instead of standard output; FILE is written whole or not at all (a temporary file in the same directory, renamed).").
		Short('o').PlaceHolder("FILE").StringVar(&a.output)
	c.Flag("darshan.dir", "Darshan log directory (darshan-runtime's <dir>/YYYY/M/D/ layout) to find the logs of --jobid in, by the job id in their names and headers; repeatable. The days searched are --from to --to, by default the "+strconv.Itoa(daysSearched)+" days up to now.").
		PlaceHolder("DIR").StringsVar(&a.dirs)
	c.Flag("jobid", "The batch job id: whose logs to find in --darshan.dir, and whose series to ask Prometheus for (by default, the logs' job id).").
		PlaceHolder("ID").StringVar(&a.jobID)
	c.Flag("prometheus.url", "Prometheus (or a server with its HTTP API) holding the Lustre servers' job_stats of the job: adds the servers' view.").
		PlaceHolder("URL").StringVar(&a.promURL)
	c.Flag("prometheus.config", "HTTP client configuration for --prometheus.url, as in a Prometheus scrape configuration (prometheus/common's YAML: tls_config, basic_auth, authorization, bearer_token_file, proxy_url, …).").
		PlaceHolder("FILE").StringVar(&a.promConfig)
	c.Flag("prometheus.timeout", "The longest the Prometheus queries may take, all together.").
		Default("1m").DurationVar(&a.promTimeout)
	c.Flag("from", "Start of the servers' window (and of the days --darshan.dir searches): RFC 3339 (2026-11-27T10:00:00Z) or Unix seconds. Default: the logs' start.").
		PlaceHolder("TIME").SetValue(&a.from)
	c.Flag("to", "End of the servers' window (and of the days --darshan.dir searches), as --from. Default: the logs' end (without logs, now; when Prometheus has none of the job's series while its logs ran, now, up to a week after the logs' start).").
		PlaceHolder("TIME").SetValue(&a.to)
	c.Flag("no-paths", "Leave the files' paths out of the report (the files are told apart by their record ids).").BoolVar(&a.noPaths)
	c.Flag("top-files", "How many of the files that moved the most bytes the report lists.").
		Default(strconv.Itoa(report.DefaultTopFiles)).IntVar(&a.topFiles)
	c.Flag("insights.config", "JSON file of insight thresholds overriding the defaults, as darshan insights --config (docs/insights.md).").
		PlaceHolder("FILE").StringVar(&a.insightsConfig)
	a.budget = maxLogMemoryFlagHelp(c, "The most memory reading one log may take, in bytes (256MiB, 1GiB): a log whose names and records cost more is refused (exit 1); a log whose DXT traces would pass it is read without them, and the report has no heatmap from DXT (it says so). No real log comes near the default.")
	c.Validate(func(*kingpin.CmdClause) error { return a.validate() })
	addCommand(c, func() error { return runReport(a, os.Stdout, time.Now()) })
}

// validate checks the combination of flags: what is wrong here is a usage
// error (exit 2).
func (a *reportArgs) validate() error {
	hasLogs := len(a.logs) > 0 || len(a.dirs) > 0
	switch {
	case len(a.logs) > 0 && len(a.dirs) > 0:
		return errors.New("give Darshan logs or --darshan.dir, not both")
	case len(a.dirs) > 0 && a.jobID == "":
		return errors.New("--darshan.dir needs --jobid: the job whose logs to find")
	case !hasLogs && a.promURL == "":
		return errors.New("nothing to report: give Darshan logs, --darshan.dir with --jobid, or --jobid with --prometheus.url")
	case !hasLogs && a.jobID == "":
		return errors.New("--prometheus.url without logs needs --jobid")
	case !hasLogs && !a.from.set:
		return errors.New("--prometheus.url without logs needs --from (and --to, by default now): there are no logs to take the window from")
	case a.promConfig != "" && a.promURL == "":
		return errors.New("--prometheus.config without --prometheus.url")
	case a.from.set && a.to.set && !a.to.t.After(a.from.t):
		return errors.New("--to must be after --from")
	case a.topFiles < 0:
		return errors.New("--top-files must not be negative")
	case a.promTimeout <= 0:
		return errors.New("--prometheus.timeout must be positive")
	}
	if a.jobID != "" {
		if err := checkJobID(a.jobID); err != nil {
			return err
		}
		if len(a.dirs) > 0 {
			if n, err := strconv.ParseInt(a.jobID, 10, 64); err != nil || n <= 0 {
				return fmt.Errorf("--jobid=%q: --darshan.dir finds logs by a batch job id, a positive decimal number", a.jobID)
			}
		}
	}
	return nil
}

// checkJobID refuses job ids that cannot be a job_stats jobid label.
func checkJobID(id string) error {
	if len(id) > 256 {
		return errors.New("--jobid: longer than 256 bytes")
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("--jobid=%q: a job id has no spaces or control characters", id)
		}
	}
	return nil
}

// reportTime is a --from or --to value: RFC 3339, or Unix seconds with an
// optional fraction.
type reportTime struct {
	t   time.Time
	set bool
}

func (r *reportTime) Set(s string) error {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		r.t, r.set = t, true
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > 1e11 {
		return fmt.Errorf("%q is not a time: RFC 3339 (2026-11-27T10:00:00Z) or Unix seconds", s)
	}
	sec, frac := math.Modf(x)
	r.t, r.set = time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), true
	return nil
}

func (r *reportTime) String() string {
	if !r.set {
		return ""
	}
	return r.t.Format(time.RFC3339Nano)
}

// generatedAt is when the report says it was made: now, or
// $SOURCE_DATE_EPOCH (reproducible outputs: the golden files, a site that
// compares reports).
func generatedAt(now time.Time) (time.Time, error) {
	s, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || s == "" {
		return now, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not Unix seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// runReport makes the report, renders it whole in memory, then writes it:
// a failure at any step writes nothing.
func runReport(a *reportArgs, stdout io.Writer, now time.Time) error {
	gen, err := generatedAt(now)
	if err != nil {
		return err
	}
	r, err := buildReport(a, now)
	if err != nil {
		return oneLine(err)
	}
	r.Generated = report.Time{T: gen}
	var b bytes.Buffer
	switch a.format {
	case "json":
		err = report.WriteJSON(&b, r)
	default:
		err = writeHTML(&b, r)
	}
	if err != nil {
		return oneLine(err)
	}
	if a.output == "" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	return oneLine(writeFileAtomic(a.output, b.Bytes()))
}

// oneLine keeps an error on one line of stderr (errors.Join puts each on
// its own), in its visible form: a log's or a directory's name in it, with
// control or bidirectional characters, shows them as escapes rather than
// rewriting the terminal or the epilog's syslog line.
func oneLine(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	}
	if v := labelvalue.Visible(msg); v != err.Error() {
		return errors.New(v)
	}
	return err
}

// buildReport gathers the application's view, then the servers'.
func buildReport(a *reportArgs, now time.Time) (*report.Report, error) {
	r := &report.Report{Schema: report.Schema, PathsHidden: a.noPaths, Verdicts: []report.Verdict{}}
	opts := report.LogOptions{MemoryBudget: int64(*a.budget), Insights: insights.DefaultConfig(), TopFiles: a.topFiles, HidePaths: a.noPaths}
	if a.insightsConfig != "" {
		cfg, err := insights.LoadConfig(a.insightsConfig)
		if err != nil {
			return nil, contentFree(err, a.insightsConfig)
		}
		opts.Insights = cfg
	}
	if opts.TopFiles == 0 {
		opts.TopFiles = -1 // none
	}
	logs := a.logs
	var notes []string
	if len(a.dirs) > 0 {
		to := now
		if a.to.set {
			to = a.to.t
		}
		from := to.AddDate(0, 0, -daysSearched)
		if a.from.set {
			from = a.from.t
		}
		found, err := report.FindJobLogs(a.dirs, a.jobID, from, to, int64(*a.budget))
		if err != nil {
			return nil, overBudget(err)
		}
		logs = found.Logs
		notes = found.Notes()
		for _, n := range notes {
			// A note names a directory: its visible form on a terminal
			// or in syslog (the epilog's).
			fmt.Fprintf(os.Stderr, "%s report: note: %s\n", exporterName, labelvalue.Visible(n))
		}
	}
	if len(logs) > 0 {
		job, app, err := report.FromLogs(logs, opts)
		if err != nil {
			return nil, overBudget(err)
		}
		if a.jobID != "" && job.JobID != a.jobID {
			return nil, fmt.Errorf("the logs are of job %s, not --jobid=%s", job.JobID, a.jobID)
		}
		for _, lo := range app.DXTLeftOut {
			fmt.Fprintf(os.Stderr, "%s report: note: %s: the DXT traces (%s) would pass the log's memory budget of %s: left out, the report has no heatmap from DXT; raise --max-log-memory to draw it\n",
				exporterName, labelvalue.Visible(lo.File), lo.Region, sizeString(lo.MemoryBudget))
		}
		app.Notes = append(app.Notes, notes...)
		r.Job, r.App = job, app
	}
	if a.promURL == "" {
		return r, nil
	}

	id := a.jobID
	if id == "" {
		id = r.Job.JobID
	}
	if id == jobid.SyntheticJob {
		return nil, errors.New("the logs were made outside a batch job (no job id): Prometheus has nothing to look up; leave out --prometheus.url or give --jobid")
	}
	from, to, window := a.from.t, a.to.t, "flags"
	if !a.from.set || !a.to.set {
		if r.App == nil && !a.to.set {
			to = now
		}
		if r.App != nil {
			window = "logs"
			if !a.from.set {
				from = r.Job.Start.T
			}
			if !a.to.set {
				to = r.Job.End.T
			}
		}
	}
	if !to.After(from) {
		return nil, fmt.Errorf("the window %s to %s is empty: give --from and --to", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	c, err := prom.New(a.promURL, a.promConfig)
	if err != nil {
		return nil, contentFree(err, a.promConfig)
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.promTimeout)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		return nil, err
	}
	srv, err := c.Servers(ctx, id, from, to, window)
	if err != nil {
		return nil, err
	}
	if !srv.Found && window == "logs" && !a.to.set && now.After(to) && now.Sub(from) <= maxExtendedWindow {
		// A job's logs end with their step, the job may not: a later step
		// without Darshan, or a job still running, has its traffic after
		// the last log. The servers' view then runs to now.
		ext, err := c.Servers(ctx, id, from, now, "logs_to_now")
		if err != nil {
			return nil, err
		}
		if ext.Found {
			ext.Notes = append([]string{fmt.Sprintf("Prometheus has no job_stats series of job %s while its logs ran (%s to %s): the window runs on to now, where it has some",
				id, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))}, ext.Notes...)
			srv = ext
		}
	}
	if r.App == nil && !srv.Found {
		// Without logs, a job Prometheus does not know is no report: an
		// unknown job id, or a window without its I/O.
		why := fmt.Sprintf("no job_stats series of job %s between %s and %s", id, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
		if len(srv.Notes) > 0 {
			why = srv.Notes[0]
		}
		return nil, fmt.Errorf("prometheus %s: %s", c.URL, why)
	}
	r.Servers = srv
	if r.App == nil {
		r.Job = report.Job{JobID: id, Exe: []string{}}
	}
	if r.App != nil {
		if v := report.Verdicts(r.App, srv); v != nil {
			r.Verdicts = v
		}
	}
	return r, nil
}

// quoted are the parts of a parser's message that quote its input: YAML's
// `…`, JSON's 'c', and "…" (Go's %q).
var quoted = regexp.MustCompile("`[^`]*`|'[^']*'|\"(?:[^\"\\\\]|\\\\.)*\"")

// yamlLine is a line number of a YAML error.
var yamlLine = regexp.MustCompile(`line (\d+)`)

// contentFree keeps a configuration file's parse error without what it
// quotes of the file (a key, a value, a character: a byte of a file's
// content is never in a message, which an epilog sends to syslog). A YAML
// error becomes the lines it names; the path of the file stays.
func contentFree(err error, file string) error {
	msg := err.Error()
	if strings.Contains(msg, "yaml:") {
		var lines []string
		for _, m := range yamlLine.FindAllStringSubmatch(msg, -1) {
			lines = append(lines, m[1])
		}
		where := ""
		if len(lines) > 0 {
			where = " (errors at line " + strings.Join(lines, ", ") + ")"
		}
		prefix, _, _ := strings.Cut(msg, "yaml:")
		return fmt.Errorf("%s%s is not a valid configuration%s", prefix, file, where)
	}
	msg = strings.ReplaceAll(msg, file, "\x00")
	msg = quoted.ReplaceAllString(msg, "…")
	return errors.New(strings.ReplaceAll(msg, "\x00", file))
}

// writeFileAtomic writes data to path through a temporary file in the
// same directory, synced, then renamed over path: a reader (a browser, a
// web server serving the reports) sees the old file or the new one, never
// part of one, and a failure leaves no temporary file behind.
func writeFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return fmt.Errorf("-o %s: not a file name", path)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("-o %s: not a regular file", path)
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	// Killed while the file is written (an epilog's timeout), the process
	// removes the temporary file first.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	stop := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			os.Remove(tmp)
			fmt.Fprintf(os.Stderr, "%s report: %v while writing %s: not written\n", exporterName, s, path)
			os.Exit(exitFailure)
		case <-stop:
		}
	}()
	defer func() {
		signal.Stop(sigs)
		close(stop)
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
