package logwatch

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
)

// JobView is what the collector exports of one job, computed once when the
// job's logs change. Views are never modified after they are made, so a
// scrape writes them without holding any lock. NA values are not exported.
type JobView struct {
	Identity
	Logs       int     // logs summed
	Version    string  // log format version of the log that ended last
	NProcs     float64 // the largest process count of its logs
	Start, End float64 // seconds since the epoch: first start, last end

	Job     [4]signals.Value // signals.JobSignals
	Modules []ModuleView     // data modules with records, in module id order
	// POSIX holds signals.POSIXJobSignals, or is nil when the job has no
	// POSIX records.
	POSIX   []signals.Value
	Layers  []LayerView
	Records []RecordView // the largest first; empty unless records are kept

	// Insights are the job's insights that fired (level above OK), High
	// first, then by code: its logs' insights.Totals merged and evaluated
	// with the sidecar's thresholds. Nil when insights are off or none of
	// its logs could be summarized for them.
	Insights []InsightView
	// InsightLogs is the number of logs the insights cover: Logs, less
	// those whose insights could not be computed.
	InsightLogs int
	// InsightsDecided is the number of triggers the logs let decide, OK
	// ones included.
	InsightsDecided int
}

// InsightView is one insight of a job that fired. Only what is exported
// is kept, for ten thousand jobs: not the message (its numbers are the
// value and threshold) nor the files (full paths, never exported); and
// what its code alone decides (the level, the recommendation) is held once
// per code (insightCodes): 24 bytes without a pointer, which the garbage
// collector does not scan, where they took 56 it did.
type InsightView struct {
	// Value decided the trigger, held to Threshold; NaN when the trigger
	// has none (M01 has neither). P09 and P10 hold a byte offset to a byte
	// count, M09 aggregators to nodes: not every pair is a ratio.
	Value, Threshold float64
	code             uint8 // 1 + insights.CodeIndex; 0: none (a zero InsightView)
}

// Code is the insight's code (S01, P05, M01…).
func (v *InsightView) Code() string { return insightCodes.get(v.code).code }

// Level is the level of the insight, above OK: a code's, when it fires.
func (v *InsightView) Level() insights.Level { return insightCodes.get(v.code).level }

// Recommendation is the first of the trigger's recommendations: the
// general advice, the same for every job; those after it depend on the
// job (HDF5, Lustre, MPI-IO) and are in the report of `hpcio_exporter
// darshan insights`.
func (v *InsightView) Recommendation() string { return insightCodes.get(v.code).rec }

// codeInfo is what the code of a fired insight decides: its level, and
// its first recommendation (insights.Decider gives every log the same).
type codeInfo struct {
	code  string
	level insights.Level
	rec   string
}

// insightCodes holds, at 1 + insights.CodeIndex, what each code decides,
// from the first fired insight of the code's a view kept; 0 is no code.
var insightCodes codeTable

type codeTable [1 + 64]atomic.Pointer[codeInfo]

// get returns what code number n decides; nothing (no code, level OK) for
// 0, the number of a zero InsightView.
func (c *codeTable) get(n uint8) *codeInfo {
	if int(n) < len(c) {
		if x := c[n].Load(); x != nil {
			return x
		}
	}
	return &noCode
}

var noCode codeInfo

// index returns the number of in's code, adding what it decides when it is
// new; false when the code is not one of insights.Codes, or in's level or
// recommendation is not the one its code has (neither can be:
// TestInsightCodesAgree).
func (c *codeTable) index(in *insights.Insight) (uint8, bool) {
	i, ok := insights.CodeIndex(in.Code)
	if !ok {
		return 0, false
	}
	i++ // 0 is no code
	rec := ""
	if len(in.Recommendations) > 0 {
		rec = in.Recommendations[0]
	}
	x := c[i].Load()
	if x == nil {
		c[i].CompareAndSwap(nil, &codeInfo{code: in.Code, level: in.Level, rec: rec})
		x = c[i].Load()
	}
	return uint8(i), x.level == in.Level && x.rec == rec
}

// jobInsights is what a view keeps of the evaluation of a job's insights.
type jobInsights struct {
	fired   []InsightView
	decided int
	logs    int
}

// newJobInsights keeps of the insights that fired what a view exports;
// decided is the number of insights decided, OK ones included. An insight
// the code table cannot hold (it cannot be) fails the evaluation: the job
// loses its insights, counted and logged (evaluateJob), not its signals.
func newJobInsights(fired []insights.Insight, decided, logs int) jobInsights {
	out := jobInsights{decided: decided, logs: logs}
	if len(fired) > 0 {
		out.fired = make([]InsightView, len(fired))
	}
	for i := range fired {
		in := &fired[i]
		code, ok := insightCodes.index(in)
		if !ok {
			panic(fmt.Sprintf("insight %s (level %v): not a code of insights.Codes, or a level or recommendation unlike the code's", in.Code, in.Level))
		}
		out.fired[i] = InsightView{Value: in.Value, Threshold: in.Threshold, code: code}
	}
	return out
}

// Finite reports whether x is a number to export (neither NaN nor ±Inf).
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ModuleView is the level 2 of one data module.
type ModuleView struct {
	Name                    string           // as darshan-parser names it: POSIX, MPI-IO, …
	BytesRead, BytesWritten float64          // sums over the module's records
	Values                  [6]signals.Value // signals.ModuleSignals
}

// LayerView is the HEATMAP signals of one instrumented layer.
type LayerView struct {
	Name   string // POSIX, STDIO, MPIIO, …
	Width  float64
	Values signals.HeatmapValues
}

// RecordView is the level 3 of one record.
type RecordView struct {
	Module                  string // as darshan-parser names it
	Rank                    string // decimal, -1 for a shared file
	ID                      string // the record id, 16 hex digits
	BytesRead, BytesWritten float64
	Signals                 []signals.Signal // signals.RecordSignalsOf(module)
	Values                  []signals.Value
}

func newJobView(id Identity, s *signals.Summary, ins *jobInsights) *JobView {
	v := &JobView{Identity: id, Logs: s.Logs, Version: s.Version, NProcs: float64(s.NProcs), Start: s.Start, End: s.End}
	if ins != nil {
		v.Insights, v.InsightsDecided, v.InsightLogs = ins.fired, ins.decided, ins.logs
	}
	for i, sig := range signals.JobSignals {
		v.Job[i] = s.JobSignal(sig)
	}
	for i := range s.Modules {
		in := &s.Modules[i]
		mv := ModuleView{Name: in.Module.String(), BytesRead: in.BytesRead(), BytesWritten: in.BytesWritten()}
		for k, sig := range signals.ModuleSignals {
			mv.Values[k] = in.ModuleSignal(sig)
		}
		v.Modules = append(v.Modules, mv)
	}
	if s.Module(darshan.POSIX) != nil {
		v.POSIX = make([]signals.Value, len(signals.POSIXJobSignals))
		for i, sig := range signals.POSIXJobSignals {
			v.POSIX[i] = s.POSIXJobSignal(sig)
		}
	}
	for i := range s.Layers {
		l := &s.Layers[i]
		v.Layers = append(v.Layers, LayerView{Name: l.Name, Width: l.Width, Values: l.Signals()})
	}
	for i := range s.Records {
		r := &s.Records[i]
		sigs := signals.RecordSignalsOf(r.Key.Module)
		rv := RecordView{Module: r.Key.Module.String(), Rank: strconv.FormatInt(r.Key.Rank, 10),
			ID: hexID(r.Key.ID), BytesRead: r.BytesRead(), BytesWritten: r.BytesWritten(),
			Signals: sigs, Values: make([]signals.Value, len(sigs))}
		for k, sig := range sigs {
			rv.Values[k] = r.Signal(sig)
		}
		v.Records = append(v.Records, rv)
	}
	return v
}

func hexID(id uint64) string {
	s := strconv.FormatUint(id, 16)
	for len(s) < 16 {
		s = "0" + s
	}
	return s
}
