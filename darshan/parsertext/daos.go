package parsertext

import (
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// DAOS: darshan-daos-logutils' description, record printing (the object id
// takes the place of the name, the pool and container UUIDs that of the
// mount point) and aggregation.

const daosDescription = `
# description of DAOS counters:
#   DAOS_*: DAOS operation counts.
#   OBJ_OPENS,OBJ_FETCHES,OBJ_UPDATES,OBJ_PUNCHES,OBJ_DKEY_PUNCHES,OBJ_AKEY_PUNCHES,OBJ_DKEY_LISTS,OBJ_AKEY_LISTS,OBJ_RECX_LISTS are types of DAOS object operations.
#   ARRAY_OPENS,ARRAY_READS,ARRAY_WRITES,ARRAY_GET_SIZES,ARRAY_SET_SIZES,ARRAY_STATS,ARRAY_PUNCHES,ARRAY_DESTROYS are types of DAOS array operations
#   KV_OPENS,KV_GETS,KV_PUTS,KV_REMOVES,KV_LISTS,KV_DESTROYS are types of DAOS kv operations
#   DAOS_BYTES_*: total bytes read and written using all DAOS object APIs.
#   DAOS_RW_SWITCHES: number of times access alternated between read and write.
#   DAOS_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   DAOS_SIZE_*_*: histogram of read and write access sizes.
#   DAOS_ACCESS*_ACCESS: the four most common access sizes.
#   DAOS_ACCESS*_COUNT: count of the four most common access sizes.
#   DAOS_OBJ_OTYPE: DAOS otype value for the object.
#   DAOS_ARRAY_CELL_SIZE: the cell size for DAOS array objects
#   DAOS_ARRAY_CHUNK_SIZE: the chunk size for DAOS array objects
#   DAOS_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared objects).
#   DAOS_*_RANK_BYTES: bytes transferred by the fastest and slowest ranks (for shared objects).
#   DAOS_F_*_START_TIMESTAMP: timestamp of first open/read/write/close.
#   DAOS_F_*_END_TIMESTAMP: timestamp of last open/read/write/close.
#   DAOS_F_READ/WRITE/META_TIME: cumulative time spent in read, write, or metadata operations.
#   DAOS_F_MAX_*_TIME: duration of the slowest read and write operations.
#   DAOS_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared objects).
`

func (d *dumper) daosRecord(r *darshan.DAOSRecord) {
	oid := strconv.FormatUint(r.OIDHi, 10) + "." + strconv.FormatUint(r.OIDLo, 10)
	d.begin(r.Key, oid, uuidString(r.PoolUUID)+":"+uuidString(r.ContainerUUID), "N/A")
	d.counters(&r.CounterRecord)
}

// DAOS aggregates like DFS; darshan-util forgot DAOS_NB_OPS, which stays 0.
func daosPlan(l *darshan.Layout) *aggPlan {
	sums := []string{"DAOS_OBJ_OPENS", "DAOS_OBJ_FETCHES", "DAOS_OBJ_UPDATES", "DAOS_OBJ_PUNCHES",
		"DAOS_OBJ_DKEY_PUNCHES", "DAOS_OBJ_AKEY_PUNCHES", "DAOS_OBJ_DKEY_LISTS", "DAOS_OBJ_AKEY_LISTS",
		"DAOS_OBJ_RECX_LISTS", "DAOS_ARRAY_OPENS", "DAOS_ARRAY_READS", "DAOS_ARRAY_WRITES",
		"DAOS_ARRAY_GET_SIZES", "DAOS_ARRAY_SET_SIZES", "DAOS_ARRAY_STATS", "DAOS_ARRAY_PUNCHES",
		"DAOS_ARRAY_DESTROYS", "DAOS_KV_OPENS", "DAOS_KV_GETS", "DAOS_KV_PUTS", "DAOS_KV_REMOVES",
		"DAOS_KV_LISTS", "DAOS_KV_DESTROYS", "DAOS_BYTES_READ", "DAOS_BYTES_WRITTEN", "DAOS_RW_SWITCHES"}
	sums = append(sums, sizeHistogram("DAOS_SIZE_READ")...)
	sums = append(sums, sizeHistogram("DAOS_SIZE_WRITE")...)
	ints := merge(rules(intSumClamp, sums...),
		rules(intSet, "DAOS_OBJ_OTYPE", "DAOS_ARRAY_CELL_SIZE", "DAOS_ARRAY_CHUNK_SIZE"),
		rules(intCommon, "DAOS_ACCESS1_ACCESS"))
	return newPlan(l, ints, timerRules("DAOS", false), "DAOS")
}
