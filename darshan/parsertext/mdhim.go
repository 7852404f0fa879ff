package parsertext

import (
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// MDHIM: darshan-mdhim-logutils' description and record printing.

func (d *dumper) mdhimRecord(r *darshan.MDHIMRecord) {
	d.beginNamed(r.Key)
	d.counters(&r.CounterRecord)
	for i, v := range r.ServerHistogram {
		d.intLine("MDHIM_SERVER_"+strconv.Itoa(i), v)
	}
}
