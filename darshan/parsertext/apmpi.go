package parsertext

import "github.com/hpcio/hpcio_exporter/darshan"

// APMPI: autoperf's darshan-apmpi-logutils description and record printing.
// Its lines have empty name, mount and fs type columns.

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

func (d *dumper) apmpiHeader(h *darshan.APMPIHeader) {
	d.begin(h.Key, "", "", "")
	d.floatLine("MPI_TOTAL_COMM_TIME_VARIANCE", h.VarianceTotalMPITime)
	if h.SyncFlag != 0 {
		d.floatLine("MPI_TOTAL_COMM_SYNC_TIME_VARIANCE", h.VarianceTotalMPISyncTime)
	}
	d.apmpiSync = h.SyncFlag != 0
}

func (d *dumper) apmpiRecord(r *darshan.APMPIRecord) {
	d.begin(r.Key, "", "", "")
	d.strLine("MPI_PROCESSOR_NAME", r.NodeName)
	for i, n := range r.Layout.Ints {
		d.uintLine(n, uint64(r.Ints[i]))
	}
	sync := darshan.APMPISyncTimes
	for i := 0; i < sync[0]; i++ {
		d.floatLine(r.Layout.Floats[i], r.Floats[i])
	}
	if d.apmpiSync {
		for i := sync[0]; i < sync[1]; i++ {
			d.floatLine(r.Layout.Floats[i], r.Floats[i])
		}
	}
	d.floatLine(r.Layout.Floats[sync[1]], r.Floats[sync[1]])
	if d.apmpiSync {
		d.floatLine(r.Layout.Floats[sync[1]+1], r.Floats[sync[1]+1])
	}
}
