package signals

import "github.com/hpcio/hpcio_exporter/darshan"

// The formulas of levels 1 to 3 (docs/signals.md). Each signal first checks its
// inputs (not_available, then not_monitored), then its own reasons in the
// table's order, then divides. A divisor must be positive: zero is the
// reason of the table, and a negative value other than -1 (garbage; -1 is
// not_monitored) or NaN gets the same reason rather than a meaningless
// number.

const mib = 1024 * 1024

// ratio divides n by den, or returns reason when den is not positive.
func ratio(n, den float64, reason Reason) Value {
	if !positive(den) {
		return na(reason)
	}
	return num(n / den)
}

// JobSignal returns the level 1 signal s (TotalBytesRead … TotalWrites) of in,
// the sum of a job's POSIX and STDIO records.
func (in *Inputs) JobSignal(s Signal) Value {
	var g []slot
	switch s {
	case TotalBytesRead:
		g = one(sBytesRead)
	case TotalBytesWritten:
		g = one(sBytesWritten)
	case TotalReads:
		g = readOps
	case TotalWrites:
		g = writeOps
	default:
		panic("signals: not a job signal: " + s.String())
	}
	if r := in.check(g); r != OK {
		return na(r)
	}
	return num(in.sum(g...))
}

// ModuleSignal returns the level 2 signal s (ReadBW … AvgWriteSize) of in, the
// sum of a module's records: rates divide by the module's whole time
// (read + write + meta).
func (in *Inputs) ModuleSignal(s Signal) Value {
	t := in.sum(times...)
	switch s {
	case ReadBW:
		return in.rate(in.v[sBytesRead]/mib, t, NoTime, one(sBytesRead), times)
	case WriteBW:
		return in.rate(in.v[sBytesWritten]/mib, t, NoTime, one(sBytesWritten), times)
	case ReadIOPS:
		return in.rate(in.sum(readOps...), t, NoTime, readOps, times)
	case WriteIOPS:
		return in.rate(in.sum(writeOps...), t, NoTime, writeOps, times)
	case AvgReadSize, AvgWriteSize:
		return in.avgSize(s)
	}
	panic("signals: not a module signal: " + s.String())
}

// rate checks the inputs, then divides.
func (in *Inputs) rate(n, den float64, reason Reason, groups ...[]slot) Value {
	if r := in.check(groups...); r != OK {
		return na(r)
	}
	return ratio(n, den, reason)
}

func (in *Inputs) avgSize(s Signal) Value {
	if s == AvgReadSize {
		return in.rate(in.v[sBytesRead], in.sum(readOps...), NoReads, one(sBytesRead), readOps)
	}
	return in.rate(in.v[sBytesWritten], in.sum(writeOps...), NoWrites, one(sBytesWritten), writeOps)
}

// RecordSignal returns the level 3 signal s of a record with inputs in and rank
// rank: one of RecordSignals for every data module, or of POSIXSignals for
// POSIX records. Module level sums of POSIX records give the job-level
// access-pattern ratios the same way (with rank -1 for the shared-file
// signals).
func (in *Inputs) RecordSignal(s Signal, rank int64) Value {
	v := &in.v
	switch s {
	case ReadBW:
		return in.rate(v[sBytesRead]/mib, v[sReadTime], NoReadTime, one(sBytesRead), one(sReadTime))
	case WriteBW:
		return in.rate(v[sBytesWritten]/mib, v[sWriteTime], NoWriteTime, one(sBytesWritten), one(sWriteTime))
	case ReadIOPS:
		return in.rate(in.sum(readOps...), v[sReadTime], NoReadTime, readOps, one(sReadTime))
	case WriteIOPS:
		return in.rate(in.sum(writeOps...), v[sWriteTime], NoWriteTime, writeOps, one(sWriteTime))
	case AvgReadSize, AvgWriteSize:
		return in.avgSize(s)

	case SeqReadRatio:
		return in.rate(v[sSeqReads], v[sRead0], NoReads, one(sSeqReads), one(sRead0))
	case SeqWriteRatio:
		return in.rate(v[sSeqWrites], v[sWrite0], NoWrites, one(sSeqWrites), one(sWrite0))
	case ConsecReadRatio:
		return in.rate(v[sConsecReads], v[sRead0], NoReads, one(sConsecReads), one(sRead0))
	case ConsecWriteRatio:
		return in.rate(v[sConsecWrites], v[sWrite0], NoWrites, one(sConsecWrites), one(sWrite0))
	case SeqRatio:
		return in.rate(v[sSeqReads]+v[sSeqWrites], v[sRead0]+v[sWrite0], NoIO,
			[]slot{sSeqReads, sSeqWrites, sRead0, sWrite0})
	case ConsecRatio:
		return in.rate(v[sConsecReads]+v[sConsecWrites], v[sRead0]+v[sWrite0], NoIO,
			[]slot{sConsecReads, sConsecWrites, sRead0, sWrite0})
	case MetaOps:
		if r := in.check(metaOps); r != OK {
			return na(r)
		}
		return num(in.sum(metaOps...))
	case MetaIntensity:
		return in.rate(in.sum(metaOps...), v[sRead0]+v[sWrite0], NoIO, metaOps, []slot{sRead0, sWrite0})
	case MetaFraction:
		return in.rate(v[sMetaTime], in.sum(times...), NoTime, times)
	case UnalignedReadRatio:
		return in.rate(v[sFileNotAligned], v[sRead0], NoReads, one(sFileNotAligned), one(sRead0))
	case UnalignedWriteRatio:
		return in.rate(v[sFileNotAligned], v[sWrite0], NoWrites, one(sFileNotAligned), one(sWrite0))
	case SmallReadRatio:
		return in.rate(in.sum(smallRead...), v[sRead0], NoReads, smallRead, one(sRead0))
	case SmallWriteRatio:
		return in.rate(in.sum(smallWrite...), v[sWrite0], NoWrites, smallWrite, one(sWrite0))
	case ReuseProxy:
		return in.rate(v[sBytesRead], max(v[sMaxByteRead], v[sMaxByteWritten])+1, NoFileSize,
			[]slot{sBytesRead, sMaxByteRead, sMaxByteWritten})
	case RankImbalanceRatio:
		if r := in.sharedCheck(rank, sSlowestRankBytes, sFastestRankBytes); r != OK {
			return na(r)
		}
		return ratio(v[sSlowestRankBytes], v[sFastestRankBytes], NoFastestBytes)
	case BWVarianceProxy:
		if r := in.sharedCheck(rank, sVarianceRankBytes); r != OK {
			return na(r)
		}
		return num(v[sVarianceRankBytes])
	case IsShared:
		if rank == -1 {
			return num(1)
		}
		return num(0)
	}
	panic("signals: not a record signal: " + s.String())
}

// sharedCheck is the NA chain of the shared-file signals: their inputs,
// then not_shared_file, then no_bytes.
func (in *Inputs) sharedCheck(rank int64, inputs ...slot) Reason {
	if r := in.check(inputs, []slot{sBytesRead, sBytesWritten}); r != OK {
		return r
	}
	if rank != -1 {
		return NotSharedFile
	}
	if !positive(in.v[sBytesRead] + in.v[sBytesWritten]) {
		return NoBytes
	}
	return OK
}

// RecordSignalsOf returns the level 3 signals of a record of data module m,
// in report order: RecordSignals, then POSIXSignals for POSIX.
func RecordSignalsOf(m darshan.ModuleID) []Signal {
	if m == darshan.POSIX {
		return posixRecordSignals
	}
	return RecordSignals
}

var posixRecordSignals = append(append([]Signal(nil), RecordSignals...), POSIXSignals...)
