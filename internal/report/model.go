// Package report builds the I/O report of one job: what its Darshan logs
// say the application asked for (the application's view), what the Lustre
// servers counted for the same job id through Prometheus (the servers'
// view, filled by package report/prom), and, where both are there, whether
// the servers confirm or contradict each insight (docs/sidecar.md, "What
// the servers confirm or contradict"). The Report is plain data: its JSON is
// the command's --format=json, and package report/page draws it as one
// self-contained HTML page.
//
// The numbers of the application's view are those of `darshan signals` and
// `darshan insights`: the logs are summarized with signals.Summarize and
// signals.Merge, their insights with insights.FromLog, insights.Merge and
// insights.Evaluate, as the sidecar does; what those packages do not keep
// (operation counts, access sizes, per-file bytes, the heatmap by rank) is
// read from the same records in one more pass.
package report

import (
	"math"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/signals"
)

// Schema names the version of the JSON layout; it changes when a field is
// renamed or removed (new fields may be added within a version).
const Schema = "hpcio_exporter.report/v1"

// Report is one job's report.
type Report struct {
	Schema string `json:"schema"`
	// Generated is when the report was made.
	Generated Time `json:"generated"`
	Job       Job  `json:"job"`
	// PathsHidden tells that file paths were left out (--no-paths).
	PathsHidden bool `json:"paths_hidden"`
	// App is the application's view, nil without logs.
	App *App `json:"application"`
	// Servers is the servers' view, nil without Prometheus.
	Servers *Servers `json:"servers"`
	// Verdicts hold each insight that fired against the servers' numbers;
	// empty unless both views are there.
	Verdicts []Verdict `json:"verdicts"`
}

// Job identifies the job and its run.
type Job struct {
	// JobID is the batch job id in decimal, or "_nojob" for logs made
	// outside a batch job (the sidecar's jobid label).
	JobID string `json:"jobid"`
	// UID is the user id of the logs; nil with Prometheus alone.
	UID *int64 `json:"uid"`
	// Exe holds the executables' base names, in the order of the logs
	// (one per distinct name).
	Exe []string `json:"exe"`
	// Processes is the largest process count of the logs.
	Processes int64 `json:"processes"`
	// Start and End are the earliest start and the latest end of the
	// logs; RunTime their difference in seconds.
	Start   *Time   `json:"start"`
	End     *Time   `json:"end"`
	RunTime float64 `json:"run_time_seconds"`
}

// Time is a point in time: JSON's RFC 3339 in UTC with the Unix seconds
// beside it, for programs that compute with it.
type Time struct {
	T time.Time
}

// MarshalJSON writes {"rfc3339": "…", "unix": seconds}.
func (t Time) MarshalJSON() ([]byte, error) {
	b := []byte(`{"rfc3339":"`)
	b = t.T.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","unix":`...)
	b = appendFloat(b, float64(t.T.UnixNano())/1e9)
	return append(b, '}'), nil
}

// unixTime converts seconds since the epoch, with a fraction, to a Time.
func unixTime(s float64) Time {
	sec, frac := math.Modf(s)
	return Time{T: time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()}
}

// Value is a number that may be missing: a signal that is NA (with the
// reason), or a quantity the logs or the servers do not give.
type Value struct {
	V  float64
	OK bool
	// NA is why there is no value, when there is a reason to tell.
	NA string
}

// Num returns a present value.
func Num(v float64) Value { return Value{V: v, OK: true} }

// fromSignal converts a signal value.
func fromSignal(v signals.Value) Value {
	if !v.Valid() {
		return Value{NA: v.NA.String()}
	}
	return Num(v.V)
}

// MarshalJSON writes the number, or null.
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.OK || math.IsNaN(v.V) || math.IsInf(v.V, 0) {
		return []byte("null"), nil
	}
	return appendFloat(nil, v.V), nil
}

// Signal is one signal of docs/signals.md with its value.
type Signal struct {
	Name  string `json:"signal"`
	Value Value  `json:"value"`
	// NA is the reason the value is null ("" when it is not).
	NA string `json:"na,omitempty"`
}

func signalOf(s signals.Signal, v signals.Value) Signal {
	out := Signal{Name: s.String(), Value: fromSignal(v)}
	if !v.Valid() {
		out.NA = v.NA.String()
	}
	return out
}

// App is the application's view: the job's Darshan logs.
type App struct {
	Logs []LogInfo `json:"logs"`
	// Copies are logs given or found that hold the same log as another
	// (same job, times, command line and bytes): not summed again, as the
	// sidecar does.
	Copies []string `json:"copies_not_summed"`
	// JobSignals are the level 1 signals; POSIXSignals the job-level
	// access-pattern signals of the POSIX records.
	JobSignals   []Signal `json:"job_signals"`
	POSIXSignals []Signal `json:"posix_job_signals"`
	// Modules are the data modules (and H5F, PNETCDF_FILE) with records,
	// in module id order.
	Modules []Module `json:"modules"`
	// FileSystems is the data access by file system (mount point), most
	// bytes first.
	FileSystems []FileSystem `json:"file_systems"`
	// Heatmaps are one per instrumented layer (HEATMAP module), or from
	// the DXT traces when no log has a HEATMAP module.
	Heatmaps []Heatmap `json:"heatmaps"`
	// DXTLeftOut are the DXT regions the report did not read because
	// reading them would pass their log's memory budget (--max-log-memory),
	// where the DXT heatmaps come from. The report then has no heatmap from
	// DXT, of any log of the job (one of some of its logs' traces would
	// show their time as idle); nothing else it holds reads the traces, as
	// `darshan signals` and `darshan insights` do not. Empty when every
	// trace it needed was read.
	DXTLeftOut []LeftOut `json:"dxt_left_out"`
	// Files counts the distinct files with a record; TopFiles are those
	// that moved the most bytes.
	Files    int    `json:"files"`
	TopFiles []File `json:"top_files"`
	// Insights are every trigger the logs decided (fired or not), as
	// `darshan insights --format=json` lists them; InsightsUndecided the
	// codes the logs could not decide.
	Insights          []Insight `json:"insights"`
	InsightsUndecided []string  `json:"insights_undecided"`
	// Notes say what was found beside the logs read (logs still being
	// written, directories that could not be listed), for the reader to
	// know what the report may lack.
	Notes []string `json:"notes"`
}

// LogInfo is one log summed into the report.
type LogInfo struct {
	// File is the log's base name.
	File       string       `json:"file"`
	Version    string       `json:"format_version"`
	LibVersion string       `json:"library_version"`
	Exe        string       `json:"exe"`
	Processes  int64        `json:"processes"`
	Start      Time         `json:"start"`
	End        Time         `json:"end"`
	RunTime    float64      `json:"run_time_seconds"`
	Modules    []ModuleInfo `json:"modules"`
}

// LeftOut is a region of a log the report left out, and why.
type LeftOut struct {
	// File is the log's base name; Region the module (DXT_POSIX,
	// DXT_MPIIO).
	File   string `json:"file"`
	Region string `json:"region"`
	// MemoryBudget is the log's memory budget in bytes, which reading the
	// region would pass.
	MemoryBudget int64 `json:"memory_budget_bytes"`
}

// ModuleInfo is a module region of a log (PyDarshan's module table).
type ModuleInfo struct {
	Name    string `json:"module"`
	Version uint32 `json:"version"`
	// Bytes is the region's compressed size.
	Bytes uint64 `json:"bytes"`
	// Partial: the runtime ran out of memory for this module's records.
	Partial bool `json:"partial"`
}

// Module is what the job did through one instrumentation module.
type Module struct {
	Name    string `json:"module"`
	Records int    `json:"records"`
	// BytesRead and BytesWritten are the sums of the records' counters
	// (-1, not monitored, skipped).
	BytesRead    float64 `json:"bytes_read"`
	BytesWritten float64 `json:"bytes_written"`
	// Signals are the module-level signals (data modules only).
	Signals []Signal `json:"signals"`
	// Time is the read, write and metadata time summed over records, in
	// seconds of all processes; IOCost the same divided by the job's
	// processes (PyDarshan's I/O cost: the average process' time).
	Time   TimeSplit `json:"time_seconds"`
	IOCost TimeSplit `json:"io_cost_seconds_per_process"`
	// Operations are the module's operation counts (PyDarshan's, by name).
	Operations []Count `json:"operations"`
	// AccessSizes is the histogram of request sizes, when the module
	// counts them.
	AccessSizes *Histogram `json:"access_sizes"`
	// CommonAccess holds the most common request sizes (at most four).
	CommonAccess []Count `json:"common_access_sizes"`
	// Pattern is the POSIX access pattern: sequential and consecutive
	// operations beside all of them.
	Pattern *Pattern `json:"pattern,omitempty"`
	// FileCounts are PyDarshan's file count summary, Perf its estimate of
	// the I/O performance; both nil for modules darshan-util has no
	// accumulator for.
	FileCounts []FileCount `json:"file_counts"`
	Perf       *Perf       `json:"performance"`
}

// TimeSplit is time in seconds by kind of operation.
type TimeSplit struct {
	Read  float64 `json:"read"`
	Write float64 `json:"write"`
	Meta  float64 `json:"meta"`
}

// Count is a number of something named: an operation, or requests of a
// size (Name is the size in bytes, in decimal).
type Count struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// Histogram is the request size histogram of a module, Darshan's ten bins.
type Histogram struct {
	Bins  []string `json:"bins"`
	Read  []int64  `json:"read"`
	Write []int64  `json:"write"`
}

// SizeBins are Darshan's request size bins, as PyDarshan labels them.
var SizeBins = []string{"0-100", "101-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+"}

// Pattern is the POSIX access pattern of the job.
type Pattern struct {
	Reads             int64 `json:"reads"`
	Writes            int64 `json:"writes"`
	SequentialReads   int64 `json:"sequential_reads"`
	SequentialWrites  int64 `json:"sequential_writes"`
	ConsecutiveReads  int64 `json:"consecutive_reads"`
	ConsecutiveWrites int64 `json:"consecutive_writes"`
}

// FileCount is a category of files of a module (darshan-util's
// accumulator: all, read-only, write-only, read/write, unique, shared,
// partially shared).
type FileCount struct {
	Category     string `json:"category"`
	Files        int64  `json:"files"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
	// MaxOffset is the largest offset accessed in one of the files (-1:
	// the module does not record offsets).
	MaxOffset int64 `json:"max_offset"`
}

// Perf is darshan-util's estimate of a module's I/O performance: the bytes
// over the time of the slowest rank on its own files plus the slowest
// rank's time on each shared file. For several logs, the logs' times are
// added (steps of a job run one after another).
type Perf struct {
	Bytes               int64   `json:"bytes"`
	SlowestUniqueTime   float64 `json:"slowest_rank_unique_files_seconds"`
	SlowestSharedTime   float64 `json:"slowest_rank_shared_files_seconds"`
	Time                float64 `json:"time_by_slowest_seconds"`
	BytesPerSecond      Value   `json:"bytes_per_second_by_slowest"`
	SlowestRankMetaTime float64 `json:"slowest_rank_meta_seconds"`
}

// FileSystem is the data access under one mount point (PyDarshan's data
// access by category), from the POSIX and STDIO records.
type FileSystem struct {
	// Mount is the mount point from the logs' mount table, or the path's
	// first component when no mount holds it ("/" for files at the root).
	Mount        string `json:"mount"`
	Type         string `json:"type"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
	FilesRead    int    `json:"files_read"`
	FilesWritten int    `json:"files_written"`
}

// Heatmap is the bytes moved over time, by rank, in one layer.
type Heatmap struct {
	// Layer is POSIX, MPIIO, STDIO, … (HEATMAP records) or DXT_POSIX,
	// DXT_MPIIO (traces).
	Layer  string `json:"layer"`
	Source string `json:"source"` // "HEATMAP" or "DXT"
	// Start is when bin 0 starts; BinWidth its width in seconds.
	Start    Time    `json:"start"`
	BinWidth float64 `json:"bin_width_seconds"`
	// Read and Write are the bytes per bin, all ranks together.
	Read  []int64 `json:"read_bytes"`
	Write []int64 `json:"write_bytes"`
	// Rows are groups of ranks (one rank each for small jobs), Columns
	// groups of bins: the matrix the picture draws, Cells[row][column]
	// the bytes read and written.
	Rows        []string  `json:"rows"`
	ColumnWidth float64   `json:"column_width_seconds"`
	Cells       [][]int64 `json:"cells"`
	// RankBytes are the bytes each row moved over the run.
	RankBytes []int64 `json:"row_bytes"`
	// Signals are the HEATMAP signals of the layer (HEATMAP only).
	Signals []Signal `json:"signals"`
}

// File is one of the files that moved the most bytes.
type File struct {
	// Path is "" with --no-paths; ID is the record id (the hash of the
	// path) in hexadecimal, so that files stay apart without their paths.
	Path         string   `json:"path,omitempty"`
	ID           string   `json:"id"`
	Modules      []string `json:"modules"`
	BytesRead    int64    `json:"bytes_read"`
	BytesWritten int64    `json:"bytes_written"`
	// Ranks is the number of per-rank records; Shared that a record of
	// all ranks (rank -1) exists.
	Ranks  int  `json:"ranks"`
	Shared bool `json:"shared"`
}

// Insight is one trigger's outcome, in `darshan insights --format=json`'s
// schema.
type Insight struct {
	Code            string   `json:"code"`
	Level           string   `json:"level"`
	Fired           bool     `json:"fired"`
	Value           Value    `json:"value"`
	Threshold       Value    `json:"threshold"`
	Count           Value    `json:"count"`
	CountThreshold  Value    `json:"count_threshold"`
	Message         string   `json:"message"`
	Recommendations []string `json:"recommendations"`
	Files           []string `json:"files"`
}

// Servers is the servers' view: what Prometheus holds for the job id.
type Servers struct {
	// Prometheus is the server's URL (without credentials).
	Prometheus string `json:"prometheus"`
	From       Time   `json:"from"`
	To         Time   `json:"to"`
	// Window says where the window comes from: "logs" (the logs' start
	// and end), "logs_to_now" (the logs' start to now: Prometheus had none
	// of the job's series while its logs ran, but has since) or "flags"
	// (--from, --to).
	Window string  `json:"window"`
	Step   float64 `json:"step_seconds"`
	// Found tells whether Prometheus has any job_stats series of the job
	// in the window; Note says what is missing, when something is.
	Found bool     `json:"found"`
	Notes []string `json:"notes"`
	// Rules lists the recording rules of deploy/ that answered; the other
	// numbers come from the raw series.
	Rules []string `json:"recording_rules_used"`

	// Totals over the window, all targets.
	ReadBytes   Value `json:"read_bytes"`
	WriteBytes  Value `json:"write_bytes"`
	ReadRPCs    Value `json:"read_rpcs"`
	WriteRPCs   Value `json:"write_rpcs"`
	ReadPerRPC  Value `json:"bytes_per_read_rpc"`
	WritePerRPC Value `json:"bytes_per_write_rpc"`
	MDTOps      Value `json:"mdt_operations"`
	// PeakMDTRate is the job's highest MDT operation rate over 5 minutes.
	PeakMDTRate Value `json:"peak_mdt_operations_per_second"`

	// Rates are the job's bytes per second over the window; MDTRates its
	// metadata operations per second.
	Rates    Series `json:"rates"`
	MDTRates Series `json:"mdt_rates"`
	// MDTOperations are the MDT operations by type over the window.
	MDTOperations []Count `json:"mdt_operations_by_type"`
	OSTs          []OST   `json:"osts"`
	MDTs          []MDT   `json:"mdts"`
	Alerts        []Alert `json:"alerts"`
	// CoverageLow tells that job_stats missed more than a tenth of the
	// traffic of one of the job's targets while it ran (the threshold of
	// LustreJobstatsCoverageLow): the per-job numbers are low by as much.
	CoverageLow bool `json:"coverage_low"`
}

// Series are values over time, at the same timestamps (Unix seconds).
type Series struct {
	Times  []float64          `json:"timestamps"`
	Values map[string][]Value `json:"values"`
}

// OST is what the job did on one OST over the window.
type OST struct {
	Target      string `json:"target"`
	ReadBytes   Value  `json:"read_bytes"`
	WriteBytes  Value  `json:"write_bytes"`
	ReadRPCs    Value  `json:"read_rpcs"`
	WriteRPCs   Value  `json:"write_rpcs"`
	ReadPerRPC  Value  `json:"bytes_per_read_rpc"`
	WritePerRPC Value  `json:"bytes_per_write_rpc"`
	// Share is the job's bytes over all the OST's bytes in the window;
	// PeakShare its largest share over 5 minutes.
	Share     Value `json:"share"`
	PeakShare Value `json:"peak_share"`
	// Coverage is the share of the OST's bytes its job_stats saw in the
	// window; MinCoverage the lowest over 5 minutes.
	Coverage    Value `json:"jobstats_coverage"`
	MinCoverage Value `json:"min_jobstats_coverage"`
}

// MDT is what the job did on one MDT over the window.
type MDT struct {
	Target      string `json:"target"`
	Operations  Value  `json:"operations"`
	Coverage    Value  `json:"jobstats_coverage"`
	MinCoverage Value  `json:"min_jobstats_coverage"`
}

// Alert is an alert that fired for the job (ALERTS{jobid=…}), or on one of
// its targets (LustreJobstatsCoverageLow).
type Alert struct {
	Name   string            `json:"alertname"`
	Labels map[string]string `json:"labels"`
	// First and Last are the first and last evaluation that saw it firing
	// in the window (at the resolution of the query's step).
	First Time `json:"first"`
	Last  Time `json:"last"`
}

// Verdict is whether the servers confirm an insight that fired.
type Verdict struct {
	// Codes are the insight codes (that fired) the verdict holds.
	Codes   []string `json:"codes"`
	Insight string   `json:"insight"`
	// App and Server are the two numbers set side by side, with their
	// units; Outcome is "confirms", "contradicts", "inconclusive" or
	// "no_data" (the servers counted nothing to hold it against), or
	// "not_comparable" (job_stats have nothing for it).
	App     Quantity `json:"application"`
	Server  Quantity `json:"servers"`
	Outcome string   `json:"outcome"`
	// Why says what the outcome means for this job.
	Why string `json:"why"`
}

// Quantity is a named number with its unit.
type Quantity struct {
	Name  string `json:"name"`
	Value Value  `json:"value"`
	Unit  string `json:"unit"`
}

// Verdict outcomes.
const (
	Confirms      = "confirms"
	Contradicts   = "contradicts"
	Inconclusive  = "inconclusive"
	NoData        = "no_data"
	NotComparable = "not_comparable"
)

// Fired returns the codes of the insights that fired, in the order of
// Insights (by level, High first, then code): the codes `darshan insights`
// reports.
func (a *App) Fired() []string {
	out := []string{}
	for _, in := range a.Insights {
		if in.Fired {
			out = append(out, in.Code)
		}
	}
	return out
}
