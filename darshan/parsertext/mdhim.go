package parsertext

import (
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// MDHIM: darshan-mdhim-logutils' description and record printing.

const mdhimDescription = `
# description of MDHIM counters:
#   MDHIM_PUTS: number of 'mdhim_put' function calls.
#   MDHIM_GETS: number of 'mdhim_get' function calls.
#   MDHIM_SERVERS: how many mdhim servers 
#   MDHIM_F_PUT_TIMESTAMP: timestamp of the first call to function 'mdhim_put'.
#   MDHIM_F_GET_TIMESTAMP: timestamp of the first call to function 'mdhim_get'.
#   MDHIM_SERVER_N: how many operations sent to this server
`

func (d *dumper) mdhimRecord(r *darshan.MDHIMRecord) {
	d.beginNamed(r.Key)
	d.counters(&r.CounterRecord)
	for i, v := range r.ServerHistogram {
		d.intLine("MDHIM_SERVER_"+strconv.Itoa(i), v)
	}
}
