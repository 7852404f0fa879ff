package parsertext

import (
	"encoding/hex"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// DFS: darshan-dfs-logutils' description, record printing (the pool and
// container UUIDs take the place of the mount point) and aggregation.

// uuidString formats a UUID as libuuid's uuid_unparse (lower case).
func uuidString(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

func (d *dumper) dfsRecord(r *darshan.DFSRecord) {
	name, _, _ := d.recordName(r.Key)
	where := "UNKNOWN"
	if r.PoolUUID != ([16]byte{}) && r.ContainerUUID != ([16]byte{}) {
		where = uuidString(r.PoolUUID) + ":" + uuidString(r.ContainerUUID)
	}
	d.begin(r.Key, name, where, "N/A")
	d.counters(&r.CounterRecord)
}
