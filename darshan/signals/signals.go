// Package signals computes the Darshan I/O signals v2.2 of a log read by
// package darshan, as docs/signals.md settles them: job level (sums over
// the POSIX and STDIO records), module level (per data module, over all its
// records), record level (per (module, rank, record id)) and the HEATMAP
// signals, each either a number or NA with a reason. It also writes the
// report of the command line, and keeps the compact, mergeable Summary of a
// log that the sidecar exports per job.
//
// The package is pure computation: no Prometheus, no files but the log.
package signals

import (
	"math"
	"strconv"
)

// Reason says why a signal has no value. The zero Reason, OK, means it has
// one. For every signal the reasons are checked in the order of docs/signals.md:
// NotAvailable, then NotMonitored, then the signal's own reasons.
type Reason uint8

const (
	OK             Reason = iota
	NotAvailable          // an input counter does not exist for this module version
	NotMonitored          // an input counter is -1
	NoReads               // the read count is 0
	NoWrites              // the write count is 0
	NoIO                  // reads + writes is 0
	NoReadTime            // the read time is 0
	NoWriteTime           // the write time is 0
	NoTime                // the time the signal divides by is 0
	NoBytes               // bytes read + written is 0
	NoFastestBytes        // the fastest rank moved 0 bytes
	NoFileSize            // max(MAX_BYTE_READ, MAX_BYTE_WRITTEN) + 1 ≤ 0
	NotSharedFile         // the record is not shared (rank ≠ -1)
	NoBinWidth            // the HEATMAP bin width is missing or ≤ 0
	numReasons
)

var reasonNames = [numReasons]string{
	"", "not_available", "not_monitored", "no_reads", "no_writes", "no_io", "no_read_time",
	"no_write_time", "no_time", "no_bytes", "no_fastest_bytes", "no_file_size",
	"not_shared_file", "no_bin_width",
}

// String returns the reason as the report writes it inside NA(…), or "" for OK.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "reason_" + strconv.Itoa(int(r))
}

// ParseReason returns the Reason named s (as String writes it).
func ParseReason(s string) (Reason, bool) {
	for i := NotAvailable; i < numReasons; i++ {
		if reasonNames[i] == s {
			return i, true
		}
	}
	return OK, false
}

// Value is a signal's value, or NA with a reason.
type Value struct {
	V  float64
	NA Reason // OK when V holds the value
}

// Valid reports whether the signal has a value.
func (v Value) Valid() bool { return v.NA == OK }

func num(v float64) Value { return Value{V: v} }
func na(r Reason) Value   { return Value{NA: r} }

// positive is the test of every divisor: false for 0, for negative values
// (garbage: -1 is caught before as not_monitored) and for NaN.
func positive(v float64) bool { return v > 0 }

// String formats the value as the report does: an integer without a
// fraction, another number with the fewest digits that read back to the
// same float64 (never an exponent), or NA(reason).
func (v Value) String() string { return string(v.Append(nil)) }

// Append appends the value as String formats it.
func (v Value) Append(b []byte) []byte {
	if v.NA != OK {
		b = append(b, "NA("...)
		b = append(b, v.NA.String()...)
		return append(b, ')')
	}
	x := v.V
	if x == 0 {
		return append(b, '0') // also -0
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		// Only garbage counters (a corrupt float) get here.
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, x, 'f', -1, 64)
}

// Signal names one signal of docs/signals.md.
type Signal uint8

// The signals, level by level, in the order of docs/signals.md's tables (the
// order of the report).
const (
	// Level 1, job: sums over the POSIX and STDIO records.
	TotalBytesRead Signal = iota
	TotalBytesWritten
	TotalReads
	TotalWrites

	// Level 2 (module) and level 3 (every data module record).
	ReadBW // MiB/s
	WriteBW
	ReadIOPS
	WriteIOPS
	AvgReadSize // bytes
	AvgWriteSize

	// Level 3, POSIX records only.
	SeqReadRatio
	SeqWriteRatio
	ConsecReadRatio
	ConsecWriteRatio
	SeqRatio
	ConsecRatio
	MetaOps
	MetaIntensity
	MetaFraction
	UnalignedReadRatio
	UnalignedWriteRatio
	SmallReadRatio
	SmallWriteRatio
	ReuseProxy
	RankImbalanceRatio
	BWVarianceProxy
	IsShared

	// HEATMAP records.
	TotalReadEvents
	TotalWriteEvents
	ActiveBins
	ActiveTime // seconds
	ActivitySpan
	PeakActivityBin
	PeakActivityValue
	ReadActivityEntropyNorm
	WriteActivityEntropyNorm
	Top1Share

	NumSignals
)

var signalNames = [NumSignals]string{
	"total_bytes_read", "total_bytes_written", "total_reads", "total_writes",
	"read_bw", "write_bw", "read_iops", "write_iops", "avg_read_size", "avg_write_size",
	"seq_read_ratio", "seq_write_ratio", "consec_read_ratio", "consec_write_ratio", "seq_ratio",
	"consec_ratio", "meta_ops", "meta_intensity", "meta_fraction", "unaligned_read_ratio",
	"unaligned_write_ratio", "small_read_ratio", "small_write_ratio", "reuse_proxy",
	"rank_imbalance_ratio", "bw_variance_proxy", "is_shared",
	"total_read_events", "total_write_events", "active_bins", "active_time", "activity_span",
	"peak_activity_bin", "peak_activity_value", "read_activity_entropy_norm",
	"write_activity_entropy_norm", "top1_share",
}

// String returns the signal's name in docs/signals.md ("read_bw").
func (s Signal) String() string {
	if s < NumSignals {
		return signalNames[s]
	}
	return "signal_" + strconv.Itoa(int(s))
}

// ReportName returns the name the report prints: SIGNAL_<UPPER_SNAKE>.
func (s Signal) ReportName() string { return reportNames[s] }

var reportNames = func() (out [NumSignals]string) {
	for i, n := range signalNames {
		b := []byte("SIGNAL_" + n)
		for k, c := range b {
			if c >= 'a' && c <= 'z' {
				b[k] = c - 'a' + 'A'
			}
		}
		out[i] = string(b)
	}
	return out
}()

// The signals of each level, in report order.
var (
	JobSignals    = []Signal{TotalBytesRead, TotalBytesWritten, TotalReads, TotalWrites}
	ModuleSignals = []Signal{ReadBW, WriteBW, ReadIOPS, WriteIOPS, AvgReadSize, AvgWriteSize}
	// RecordSignals are those of every data module record.
	RecordSignals = ModuleSignals
	// POSIXSignals follow RecordSignals for POSIX records.
	POSIXSignals = []Signal{SeqReadRatio, SeqWriteRatio, ConsecReadRatio, ConsecWriteRatio, SeqRatio,
		ConsecRatio, MetaOps, MetaIntensity, MetaFraction, UnalignedReadRatio, UnalignedWriteRatio,
		SmallReadRatio, SmallWriteRatio, ReuseProxy, RankImbalanceRatio, BWVarianceProxy, IsShared}
	HeatmapSignals = []Signal{TotalReadEvents, TotalWriteEvents, ActiveBins, ActiveTime, ActivitySpan,
		PeakActivityBin, PeakActivityValue, ReadActivityEntropyNorm, WriteActivityEntropyNorm, Top1Share}
)
