package parsertext

import (
	"encoding/hex"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// DFS: darshan-dfs-logutils' description, record printing (the pool and
// container UUIDs take the place of the mount point) and aggregation.

const dfsDescription = `
# description of DFS counters:
#   DFS_*: DFS operation counts.
#   OPENS,GLOBAL_OPENS,LOOKUPS,DUPS,READS,READXS,WRITES,WRITEXS,GET_SIZES,PUNCHES,REMOVES,STATS are types of operations.
#   DFS_BYTES_*: total bytes read and written.
#   DFS_RW_SWITCHES: number of times access alternated between read and write.
#   DFS_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   DFS_SIZE_*_*: histogram of read and write access sizes.
#   DFS_ACCESS*_ACCESS: the four most common access sizes.
#   DFS_ACCESS*_COUNT: count of the four most common access sizes.
#   DFS_CHUNK_SIZE: DFS file chunk size.
#   DFS_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared files).
#   DFS_*_RANK_BYTES: bytes transferred by the fastest and slowest ranks (for shared files).
#   DFS_F_*_START_TIMESTAMP: timestamp of first open/read/write/close.
#   DFS_F_*_END_TIMESTAMP: timestamp of last open/read/write/close.
#   DFS_F_READ/WRITE/META_TIME: cumulative time spent in read, write, or metadata operations.
#   DFS_F_MAX_*_TIME: duration of the slowest read and write operations.
#   DFS_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared files).
`

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

func dfsPlan(l *darshan.Layout) *aggPlan {
	sums := []string{"DFS_OPENS", "DFS_GLOBAL_OPENS", "DFS_LOOKUPS", "DFS_DUPS", "DFS_READS",
		"DFS_READXS", "DFS_WRITES", "DFS_WRITEXS", "DFS_NB_READS", "DFS_NB_WRITES", "DFS_GET_SIZES",
		"DFS_PUNCHES", "DFS_REMOVES", "DFS_STATS", "DFS_BYTES_READ", "DFS_BYTES_WRITTEN", "DFS_RW_SWITCHES"}
	sums = append(sums, sizeHistogram("DFS_SIZE_READ")...)
	sums = append(sums, sizeHistogram("DFS_SIZE_WRITE")...)
	ints := merge(rules(intSumClamp, sums...), rules(intSet, "DFS_CHUNK_SIZE"),
		rules(intCommon, "DFS_ACCESS1_ACCESS"))
	return newPlan(l, ints, timerRules("DFS", false), "DFS")
}
