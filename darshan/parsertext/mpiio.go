package parsertext

import "github.com/hpcio/hpcio_exporter/darshan"

// MPI-IO: darshan-mpiio-logutils' description and aggregation.

func mpiioDescription(p *printer, ver uint32) {
	p.str(`
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
		p.str(`
# WARNING: MPIIO module log format version 1 has the following limitations:
# - MPIIO_F_WRITE_START_TIMESTAMP may not be accurate.
`)
	}
	if ver <= 2 {
		p.str(`
# WARNING: MPIIO module log format version <=2 does not support the following counters:
# - MPIIO_F_CLOSE_START_TIMESTAMP
# - MPIIO_F_OPEN_END_TIMESTAMP
`)
	}
}

// MPI-IO sums without the -1 clamp, and skips the common access block when
// the record's first access size is 0.
func mpiioPlan(l *darshan.Layout) *aggPlan {
	sums := []string{"MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS", "MPIIO_INDEP_READS", "MPIIO_INDEP_WRITES",
		"MPIIO_COLL_READS", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_READS", "MPIIO_SPLIT_WRITES",
		"MPIIO_NB_READS", "MPIIO_NB_WRITES", "MPIIO_SYNCS", "MPIIO_HINTS", "MPIIO_VIEWS",
		"MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN", "MPIIO_RW_SWITCHES"}
	sums = append(sums, sizeHistogram("MPIIO_SIZE_READ_AGG")...)
	sums = append(sums, sizeHistogram("MPIIO_SIZE_WRITE_AGG")...)
	ints := merge(rules(intSum, sums...), rules(intSet, "MPIIO_MODE"),
		rules(intCommonSkip0, "MPIIO_ACCESS1_ACCESS"))
	return newPlan(l, ints, timerRules("MPIIO", true), "MPIIO")
}
