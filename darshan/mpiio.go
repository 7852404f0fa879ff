package darshan

import (
	"strings"
	"sync"
)

func init() {
	register(&Module{ID: MPIIO, Name: "MPI-IO", Version: 3, counters: mpiioSet, old: mpiioOld, plain: true,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newMPIIODecoder(ver, big) },
		Describe: mpiioDescription, Totals: sync.OnceValue(mpiioTotals)})
}

// MPI-IO module (darshan-parser prints it as "MPI-IO", counters as MPIIO_*):
// 51 integer and 17 floating point counters in version 3.

var mpiioInts = []string{
	"MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS", "MPIIO_INDEP_READS", "MPIIO_INDEP_WRITES",
	"MPIIO_COLL_READS", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_READS", "MPIIO_SPLIT_WRITES",
	"MPIIO_NB_READS", "MPIIO_NB_WRITES", "MPIIO_SYNCS", "MPIIO_HINTS", "MPIIO_VIEWS",
	"MPIIO_MODE", "MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN", "MPIIO_RW_SWITCHES",
	"MPIIO_MAX_READ_TIME_SIZE", "MPIIO_MAX_WRITE_TIME_SIZE",
	"MPIIO_SIZE_READ_AGG_0_100", "MPIIO_SIZE_READ_AGG_100_1K", "MPIIO_SIZE_READ_AGG_1K_10K",
	"MPIIO_SIZE_READ_AGG_10K_100K", "MPIIO_SIZE_READ_AGG_100K_1M", "MPIIO_SIZE_READ_AGG_1M_4M",
	"MPIIO_SIZE_READ_AGG_4M_10M", "MPIIO_SIZE_READ_AGG_10M_100M", "MPIIO_SIZE_READ_AGG_100M_1G",
	"MPIIO_SIZE_READ_AGG_1G_PLUS",
	"MPIIO_SIZE_WRITE_AGG_0_100", "MPIIO_SIZE_WRITE_AGG_100_1K", "MPIIO_SIZE_WRITE_AGG_1K_10K",
	"MPIIO_SIZE_WRITE_AGG_10K_100K", "MPIIO_SIZE_WRITE_AGG_100K_1M", "MPIIO_SIZE_WRITE_AGG_1M_4M",
	"MPIIO_SIZE_WRITE_AGG_4M_10M", "MPIIO_SIZE_WRITE_AGG_10M_100M", "MPIIO_SIZE_WRITE_AGG_100M_1G",
	"MPIIO_SIZE_WRITE_AGG_1G_PLUS",
	"MPIIO_ACCESS1_ACCESS", "MPIIO_ACCESS2_ACCESS", "MPIIO_ACCESS3_ACCESS", "MPIIO_ACCESS4_ACCESS",
	"MPIIO_ACCESS1_COUNT", "MPIIO_ACCESS2_COUNT", "MPIIO_ACCESS3_COUNT", "MPIIO_ACCESS4_COUNT",
	"MPIIO_FASTEST_RANK", "MPIIO_FASTEST_RANK_BYTES", "MPIIO_SLOWEST_RANK", "MPIIO_SLOWEST_RANK_BYTES",
}

var mpiioFloats = []string{
	"MPIIO_F_OPEN_START_TIMESTAMP", "MPIIO_F_READ_START_TIMESTAMP", "MPIIO_F_WRITE_START_TIMESTAMP",
	"MPIIO_F_CLOSE_START_TIMESTAMP", "MPIIO_F_OPEN_END_TIMESTAMP", "MPIIO_F_READ_END_TIMESTAMP",
	"MPIIO_F_WRITE_END_TIMESTAMP", "MPIIO_F_CLOSE_END_TIMESTAMP", "MPIIO_F_READ_TIME",
	"MPIIO_F_WRITE_TIME", "MPIIO_F_META_TIME", "MPIIO_F_MAX_READ_TIME", "MPIIO_F_MAX_WRITE_TIME",
	"MPIIO_F_FASTEST_RANK_TIME", "MPIIO_F_SLOWEST_RANK_TIME", "MPIIO_F_VARIANCE_RANK_TIME",
	"MPIIO_F_VARIANCE_RANK_BYTES",
}

var mpiioSet = newCounterSet(MPIIO, func() (ints, floats []string) {
	return mpiioInts, mpiioFloats
})

const (
	mpiioRecordSize = 560 // version 3
	mpiioV1Size     = 544 // versions 1 and 2: 15 floats
)

// Versions 1 and 2 lack F_CLOSE_START_TIMESTAMP and F_OPEN_END_TIMESTAMP.
// (Version 1's F_WRITE_START_TIMESTAMP may be wrong; the layout is the same.)
var mpiioOld = sync.OnceValue(func() map[uint32]*versionLayout {
	v := &versionLayout{size: mpiioV1Size, nInts: 51, ints: identity(51), floats: insertAbsent(identity(15), 3, 2)}
	return map[uint32]*versionLayout{1: v, 2: v}
})

func newMPIIODecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(mpiioSet, ver, big, mpiioRecordSize, 0, mpiioOld)
}

// What darshan-parser prints above the records (log_print_description).

func mpiioDescription(ver uint32) string {
	var b strings.Builder
	b.WriteString(`
# description of MPIIO counters:
#   MPIIO_INDEP_*: MPI independent operation counts.
#   MPIIO_COLL_*: MPI collective operation counts.
#   MPIIO_SPLIT_*: MPI split collective operation counts.
#   MPIIO_NB_*: MPI non blocking operation counts.
#   READS,WRITES,and OPENS are types of operations.
#   MPIIO_SYNCS: MPI file sync operation counts.
#   MPIIO_HINTS: number of times MPI hints were used.
#   MPIIO_VIEWS: number of times MPI file views were used.
#   MPIIO_MODE: MPI-IO access mode that file was opened with.
#   MPIIO_BYTES_*: total bytes read and written at MPI-IO layer.
#   MPIIO_RW_SWITCHES: number of times access alternated between read and write.
#   MPIIO_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   MPIIO_SIZE_*_AGG_*: histogram of MPI datatype total sizes for read and write operations.
#   MPIIO_ACCESS*_ACCESS: the four most common total access sizes.
#   MPIIO_ACCESS*_COUNT: count of the four most common total access sizes.
#   MPIIO_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared files).
#   MPIIO_*_RANK_BYTES: total bytes transferred at MPI-IO layer by the fastest and slowest ranks (for shared files).
#   MPIIO_F_*_START_TIMESTAMP: timestamp of first MPI-IO open/read/write/close.
#   MPIIO_F_*_END_TIMESTAMP: timestamp of last MPI-IO open/read/write/close.
#   MPIIO_F_READ/WRITE/META_TIME: cumulative time spent in MPI-IO read, write, or metadata operations.
#   MPIIO_F_MAX_*_TIME: duration of the slowest MPI-IO read and write operations.
#   MPIIO_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared files).
#   MPIIO_F_VARIANCE_RANK_*: variance of total I/O time and bytes moved for all ranks (for shared files).
`)
	if ver == 1 {
		b.WriteString(`
# WARNING: MPIIO module log format version 1 has the following limitations:
# - MPIIO_F_WRITE_START_TIMESTAMP may not be accurate.
`)
	}
	if ver <= 2 {
		b.WriteString(`
# WARNING: MPIIO module log format version <=2 does not support the following counters:
# - MPIIO_F_CLOSE_START_TIMESTAMP
# - MPIIO_F_OPEN_END_TIMESTAMP
`)
	}
	return b.String()
}

// MPI-IO sums without the -1 clamp, and skips the common access block when
// the record's first access size is 0.
func mpiioTotals() *Totals {
	sums := []string{"MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS", "MPIIO_INDEP_READS", "MPIIO_INDEP_WRITES",
		"MPIIO_COLL_READS", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_READS", "MPIIO_SPLIT_WRITES",
		"MPIIO_NB_READS", "MPIIO_NB_WRITES", "MPIIO_SYNCS", "MPIIO_HINTS", "MPIIO_VIEWS",
		"MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN", "MPIIO_RW_SWITCHES"}
	sums = append(sums, sizeHistogram("MPIIO_SIZE_READ_AGG")...)
	sums = append(sums, sizeHistogram("MPIIO_SIZE_WRITE_AGG")...)
	ints := merge(rules(IntSum, sums...), rules(IntSet, "MPIIO_MODE"),
		rules(IntCommonSkip0, "MPIIO_ACCESS1_ACCESS"))
	return &Totals{Prefix: "MPIIO", Ints: ints, Floats: timerRules("MPIIO", true)}
}
