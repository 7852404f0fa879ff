package darshan

import (
	"fmt"
	"math"
)

func init() {
	register(&Module{ID: APMPI, Name: "APMPI", Version: 1, counters: apmpiSet,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newAPMPIDecoder(ver, big) },
		Describe: description(apmpiDescription)})
}

// APMPI module (AutoPerf MPI): a header record with the variance of the MPI
// time across ranks, then one record per rank with call counts, bytes and
// message size histograms (unsigned integers), and times per MPI operation.

// The MPI operations AutoPerf counts. "Transfer" operations get a call
// count, a byte total and a message size histogram; the others only a call
// count. Every operation gets total, min and max times. (Arrays: their
// lengths are constants, which APMPISyncTimes needs.)
var (
	apmpiBlockingP2P    = [...]string{"SEND", "SSEND", "RSEND", "BSEND", "RECV", "SENDRECV", "SENDRECV_REPLACE"}
	apmpiNonblockingP2P = [...]string{"ISEND", "ISSEND", "IRSEND", "IBSEND", "IRECV"}
	apmpiP2PMisc        = [...]string{"PROBE", "IPROBE", "TEST", "TESTANY", "TESTALL", "TESTSOME", "WAIT",
		"WAITANY", "WAITALL", "WAITSOME"}
	apmpiBlockingColl = [...]string{"BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "SCAN", "EXSCAN",
		"ALLGATHER", "ALLGATHERV", "REDUCE", "ALLREDUCE", "REDUCE_SCATTER", "ALLTOALL", "ALLTOALLV", "ALLTOALLW"}
	apmpiOneSidedTransfer = [...]string{"PUT", "GET", "ACCUMULATE", "GET_ACCUMULATE"}
	apmpiOneSidedSync     = [...]string{"FETCH_AND_OP", "COMPARE_AND_SWAP", "WIN_FENCE", "WIN_START",
		"WIN_COMPLETE", "WIN_POST", "WIN_WAIT", "WIN_TEST", "WIN_LOCK", "WIN_UNLOCK", "WIN_UNLOCK_ALL",
		"WIN_FLUSH", "WIN_FLUSH_ALL", "WIN_FLUSH_LOCAL", "WIN_FLUSH_LOCAL_ALL", "WIN_SYNC"}
)

// apmpiOpCount is the number of operations: those above, the barrier and
// the non-blocking barrier, and a non-blocking form of each blocking
// collective.
const apmpiOpCount = len(apmpiBlockingP2P) + len(apmpiNonblockingP2P) + len(apmpiP2PMisc) + 2 +
	2*len(apmpiBlockingColl) + len(apmpiOneSidedTransfer) + len(apmpiOneSidedSync)

// apmpiOp is an MPI operation and whether it moves data.
type apmpiOp struct {
	name     string
	transfer bool
}

// apmpiOps lists the operations in record order.
func apmpiOps() []apmpiOp {
	ops := make([]apmpiOp, 0, apmpiOpCount)
	add := func(names []string, transfer bool) {
		for _, n := range names {
			ops = append(ops, apmpiOp{"MPI_" + n, transfer})
		}
	}
	add(apmpiBlockingP2P[:], true)
	add(apmpiNonblockingP2P[:], true)
	add(apmpiP2PMisc[:], false)
	add([]string{"BARRIER"}, false)
	add([]string{"IBARRIER"}, false)
	add(apmpiBlockingColl[:], true)
	nonblocking := make([]string, len(apmpiBlockingColl))
	for i, n := range apmpiBlockingColl {
		nonblocking[i] = "I" + n
	}
	add(nonblocking, true)
	add(apmpiOneSidedTransfer[:], true)
	add(apmpiOneSidedSync[:], false)
	return ops
}

// apmpiNames are the APMPI counter names: the unsigned integer counters,
// then the floating point ones: total/min/max time per operation (222),
// sync time of the blocking collectives and barrier (16), and the two
// per-rank totals.
func apmpiNames() (ints, floats []string) {
	ops := apmpiOps()
	for _, op := range ops {
		ints = append(ints, op.name+"_CALL_COUNT")
		if op.transfer {
			ints = append(ints, op.name+"_TOTAL_BYTES")
			for _, b := range []string{"0_256", "256_1K", "1K_8K", "8K_256K", "256K_1M", "1M_PLUS"} {
				ints = append(ints, op.name+"_MSG_SIZE_AGG_"+b)
			}
		}
	}
	for _, op := range ops {
		floats = append(floats, op.name+"_TOTAL_TIME", op.name+"_MIN_TIME", op.name+"_MAX_TIME")
	}
	floats = append(floats, "MPI_BARRIER_TOTAL_SYNC_TIME")
	for _, n := range apmpiBlockingColl {
		floats = append(floats, "MPI_"+n+"_TOTAL_SYNC_TIME")
	}
	return ints, append(floats, "MPI_TOTAL_COMM_TIME", "MPI_TOTAL_COMM_SYNC_TIME")
}

var apmpiSet = newCounterSet(APMPI, apmpiNames)

// APMPI record layout.
const (
	apmpiHeaderSize   = 48 // base, magic, sync flag (+4 bytes padding), two variances
	apmpiNodeNameSize = 128
	apmpiRecordSize   = 5232 // base, 396 uint64, 222+16+2 doubles, node name
	// APMPIMagic is the magic number of the APMPI header record ("APMPI").
	APMPIMagic = 'A'<<32 | 'P'<<24 | 'M'<<16 | 'P'<<8 | 'I'
)

// APMPI counter index bounds within the record's Floats.
var (
	// APMPISyncTimes is the range of Floats holding the *_TOTAL_SYNC_TIME
	// counters, recorded only when the header's SyncFlag is set.
	APMPISyncTimes = [2]int{3 * apmpiOpCount, 3*apmpiOpCount + 1 + len(apmpiBlockingColl)}
)

// APMPIHeader is the first record of the APMPI module.
type APMPIHeader struct {
	Key
	Magic    int64
	SyncFlag uint32 // sync times were measured
	// Variances across ranks of the total MPI time and MPI sync time.
	VarianceTotalMPITime     float64
	VarianceTotalMPISyncTime float64
}

// Clone returns a copy of h.
func (h *APMPIHeader) Clone() Record { c := *h; return &c }

// APMPIRecord is a per-rank APMPI record. Its integer counters are unsigned
// (stored in Ints as their bit patterns; use Uint). Floats holds the
// per-operation times, then the sync times, then MPI_TOTAL_COMM_TIME and
// MPI_TOTAL_COMM_SYNC_TIME.
type APMPIRecord struct {
	CounterRecord
	NodeName string
}

// Clone returns a deep copy of r.
func (r *APMPIRecord) Clone() Record {
	return &APMPIRecord{CounterRecord: r.cloneCounters(), NodeName: r.NodeName}
}

type apmpiDecoder struct {
	*counterDecoder
	headerDone bool
	header     APMPIHeader
	rec        APMPIRecord
}

func newAPMPIDecoder(ver uint32, big bool) moduleDecoder {
	return &apmpiDecoder{counterDecoder: newCounterDecoder(apmpiSet, ver, big, apmpiRecordSize, 0, nil)}
}

func (d *apmpiDecoder) next(rr *regionReader) (Record, error) {
	if !d.headerDone {
		b, err := rr.next(apmpiHeaderSize)
		if err != nil {
			return nil, err
		}
		d.headerDone = true
		h := &d.header
		h.Key = base(APMPI, b, d.big)
		h.Magic = int64(getUint64(b[16:], d.big))
		h.SyncFlag = getUint32(b[24:], d.big)
		h.VarianceTotalMPITime = math.Float64frombits(getUint64(b[32:], d.big))
		h.VarianceTotalMPISyncTime = math.Float64frombits(getUint64(b[40:], d.big))
		return h, nil
	}
	b, err := d.decode(rr)
	if err != nil {
		return nil, err
	}
	d.rec.CounterRecord = d.counterDecoder.rec
	d.rec.NodeName = cString(b[apmpiRecordSize-apmpiNodeNameSize:])
	return &d.rec, nil
}

func (h *APMPIHeader) encode(e *encoder, headed bool) error {
	if headed {
		return fmt.Errorf("the APMPI header must be the module's first record")
	}
	e.key(h.Key)
	e.i64(h.Magic)
	e.u32(h.SyncFlag)
	e.u32(0) // padding
	e.f64(h.VarianceTotalMPITime)
	e.f64(h.VarianceTotalMPISyncTime)
	return nil
}

func (r *APMPIRecord) encode(e *encoder, headed bool) error {
	if !headed {
		return fmt.Errorf("an APMPIHeader must come first")
	}
	e.key(r.Key)
	if err := e.counters(&r.CounterRecord, apmpiSet); err != nil {
		return err
	}
	if err := e.str(r.NodeName, apmpiNodeNameSize); err != nil {
		return fmt.Errorf("node name: %w", err)
	}
	return nil
}

// What darshan-parser prints above the records (log_print_description).

const apmpiDescription = `
# description of APMPI counters:
#   global summary stats showing the variance across all MPI processes:
#     MPI_TOTAL_COMM_TIME_VARIANCE: variance in total communication time across all the processes.
#     MPI_TOTAL_COMM_SYNC_TIME_VARIANCE: variance in total sync time across all the processes, if enabled.
#   per-process detailed stats on the usage of various MPI routines:
#     MPI_PROCESSOR_NAME: name of the processor used by the MPI process.
#     MPI_*_CALL_COUNT: total call count for an MPI op.
#     MPI_*_TOTAL_BYTES: total bytes (i.e., cumulative across all calls) moved with an MPI op.
#     MPI_*_MSG_SIZE_AGG_*: histogram of total bytes moved for all the calls of an MPI op.
#     MPI_*_TOTAL_TIME: total time (i.e, cumulative across all calls) of an MPI op.
#     MPI_*_MIN_TIME: minimum time across all calls of an MPI op.
#     MPI_*_MAX_TIME: maximum time across all calls of an MPI op.
#     MPI_*_TOTAL_SYNC_TIME: total sync time (cumulative across all calls of an op) of an MPI op, if enabled.
#     MPI_TOTAL_COMM_TIME: total communication (MPI) time of a process across all the MPI ops.
#     MPI_TOTAL_COMM_SYNC_TIME: total sync time of a process across all the MPI ops, if enabled.
`
