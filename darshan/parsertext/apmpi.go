package parsertext

import "github.com/hpcio/hpcio_exporter/darshan"

// APMPI: autoperf's darshan-apmpi-logutils description and record printing.
// Its lines have empty name, mount and fs type columns.

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
