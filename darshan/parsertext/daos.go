package parsertext

import (
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// DAOS: darshan-daos-logutils' description, record printing (the object id
// takes the place of the name, the pool and container UUIDs that of the
// mount point) and aggregation.

func (d *dumper) daosRecord(r *darshan.DAOSRecord) {
	oid := strconv.FormatUint(r.OIDHi, 10) + "." + strconv.FormatUint(r.OIDLo, 10)
	d.begin(r.Key, oid, uuidString(r.PoolUUID)+":"+uuidString(r.ContainerUUID), "N/A")
	d.counters(&r.CounterRecord)
}
