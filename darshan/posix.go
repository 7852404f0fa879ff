package darshan

import (
	"strings"
	"sync"
)

func init() {
	register(&Module{ID: POSIX, Name: "POSIX", Version: 4, counters: posixSet, old: posixOld, plain: true,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newPOSIXDecoder(ver, big) },
		Describe: posixDescription, Totals: sync.OnceValue(posixTotals),
		// POSIX_RENAMED_FROM is the record id of a rename's source.
		UnsignedInts: []string{"POSIX_RENAMED_FROM"}})
}

// POSIX module: one record per file and rank (rank -1 for a file shared by
// all ranks), 69 integer and 17 floating point counters in version 4.

var posixInts = []string{
	"POSIX_OPENS", "POSIX_FILENOS", "POSIX_DUPS", "POSIX_READS", "POSIX_WRITES",
	"POSIX_SEEKS", "POSIX_STATS", "POSIX_MMAPS", "POSIX_FSYNCS", "POSIX_FDSYNCS",
	"POSIX_RENAME_SOURCES", "POSIX_RENAME_TARGETS", "POSIX_RENAMED_FROM", "POSIX_MODE",
	"POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_READ", "POSIX_MAX_BYTE_WRITTEN",
	"POSIX_CONSEC_READS", "POSIX_CONSEC_WRITES", "POSIX_SEQ_READS", "POSIX_SEQ_WRITES",
	"POSIX_RW_SWITCHES", "POSIX_MEM_NOT_ALIGNED", "POSIX_MEM_ALIGNMENT",
	"POSIX_FILE_NOT_ALIGNED", "POSIX_FILE_ALIGNMENT", "POSIX_MAX_READ_TIME_SIZE",
	"POSIX_MAX_WRITE_TIME_SIZE",
	"POSIX_SIZE_READ_0_100", "POSIX_SIZE_READ_100_1K", "POSIX_SIZE_READ_1K_10K",
	"POSIX_SIZE_READ_10K_100K", "POSIX_SIZE_READ_100K_1M", "POSIX_SIZE_READ_1M_4M",
	"POSIX_SIZE_READ_4M_10M", "POSIX_SIZE_READ_10M_100M", "POSIX_SIZE_READ_100M_1G",
	"POSIX_SIZE_READ_1G_PLUS",
	"POSIX_SIZE_WRITE_0_100", "POSIX_SIZE_WRITE_100_1K", "POSIX_SIZE_WRITE_1K_10K",
	"POSIX_SIZE_WRITE_10K_100K", "POSIX_SIZE_WRITE_100K_1M", "POSIX_SIZE_WRITE_1M_4M",
	"POSIX_SIZE_WRITE_4M_10M", "POSIX_SIZE_WRITE_10M_100M", "POSIX_SIZE_WRITE_100M_1G",
	"POSIX_SIZE_WRITE_1G_PLUS",
	"POSIX_STRIDE1_STRIDE", "POSIX_STRIDE2_STRIDE", "POSIX_STRIDE3_STRIDE", "POSIX_STRIDE4_STRIDE",
	"POSIX_STRIDE1_COUNT", "POSIX_STRIDE2_COUNT", "POSIX_STRIDE3_COUNT", "POSIX_STRIDE4_COUNT",
	"POSIX_ACCESS1_ACCESS", "POSIX_ACCESS2_ACCESS", "POSIX_ACCESS3_ACCESS", "POSIX_ACCESS4_ACCESS",
	"POSIX_ACCESS1_COUNT", "POSIX_ACCESS2_COUNT", "POSIX_ACCESS3_COUNT", "POSIX_ACCESS4_COUNT",
	"POSIX_FASTEST_RANK", "POSIX_FASTEST_RANK_BYTES", "POSIX_SLOWEST_RANK", "POSIX_SLOWEST_RANK_BYTES",
}

var posixFloats = []string{
	"POSIX_F_OPEN_START_TIMESTAMP", "POSIX_F_READ_START_TIMESTAMP", "POSIX_F_WRITE_START_TIMESTAMP",
	"POSIX_F_CLOSE_START_TIMESTAMP", "POSIX_F_OPEN_END_TIMESTAMP", "POSIX_F_READ_END_TIMESTAMP",
	"POSIX_F_WRITE_END_TIMESTAMP", "POSIX_F_CLOSE_END_TIMESTAMP", "POSIX_F_READ_TIME",
	"POSIX_F_WRITE_TIME", "POSIX_F_META_TIME", "POSIX_F_MAX_READ_TIME", "POSIX_F_MAX_WRITE_TIME",
	"POSIX_F_FASTEST_RANK_TIME", "POSIX_F_SLOWEST_RANK_TIME", "POSIX_F_VARIANCE_RANK_TIME",
	"POSIX_F_VARIANCE_RANK_BYTES",
}

var posixSet = newCounterSet(POSIX, func() (ints, floats []string) {
	return posixInts, posixFloats
})

const (
	posixRenamedFrom = 12  // POSIX_RENAMED_FROM: a record id, so "absent" is 0, not -1
	posixRecordSize  = 704 // version 4
	posixV1FopenInt  = 6   // version 1 stdio counter (fopens) that makes a record untranslatable
	posixV3Size      = 664 // 64 ints, 17 floats
	posixV2Size      = 648 // 64 ints, 15 floats
	posixV1Size      = 680 // 68 ints, 15 floats
)

// posixOld translates the older POSIX versions, as darshan-posix-logutils:
//   - v3 lacks FILENOS, DUPS (after OPENS) and RENAME_SOURCES, RENAME_TARGETS,
//     RENAMED_FROM (before MODE);
//   - v2 also lacks F_CLOSE_START_TIMESTAMP and F_OPEN_END_TIMESTAMP;
//   - v1 also had four stdio counters at integer 6-9, which are dropped.
var posixOld = sync.OnceValue(func() map[uint32]*versionLayout {
	v3ints := insertAbsent(insertAbsent(identity(64), 1, 2), 10, 3)
	v2floats := insertAbsent(identity(15), 3, 2)
	v1ints := make([]int, len(v3ints))
	for i, src := range v3ints {
		if src >= posixV1FopenInt {
			src += 4 // skip the dropped stdio counters
		}
		v1ints[i] = src
	}
	return map[uint32]*versionLayout{
		3: {size: posixV3Size, nInts: 64, ints: v3ints, floats: identity(17)},
		2: {size: posixV2Size, nInts: 64, ints: v3ints, floats: v2floats},
		1: {size: posixV1Size, nInts: 68, ints: v1ints, floats: v2floats},
	}
})

func newPOSIXDecoder(ver uint32, big bool) moduleDecoder {
	d := newCounterDecoder(posixSet, ver, big, posixRecordSize, 0, posixOld)
	d.absentInt = func(i int) int64 {
		if i == posixRenamedFrom {
			return 0
		}
		return -1
	}
	if ver == 1 {
		// darshan-util omits v1 records that carry stdio data (fopens > 0).
		d.omit = func(body []byte) bool { return int64(getUint64(body[8*posixV1FopenInt:], big)) > 0 }
	}
	return d
}

// What darshan-parser prints above the records (log_print_description).

func posixDescription(ver uint32) string {
	var b strings.Builder
	b.WriteString(`
# description of POSIX counters:
#   POSIX_*: posix operation counts.
#   READS,WRITES,OPENS,SEEKS,STATS,MMAPS,SYNCS,FILENOS,DUPS are types of operations.
#   POSIX_RENAME_SOURCES/TARGETS: total count file was source or target of a rename operation
#   POSIX_RENAMED_FROM: Darshan record ID of the first rename source, if file was a rename target
#   POSIX_MODE: mode that file was opened in.
#   POSIX_BYTES_*: total bytes read and written.
#   POSIX_MAX_BYTE_*: highest offset byte read and written.
#   POSIX_CONSEC_*: number of exactly adjacent reads and writes.
#   POSIX_SEQ_*: number of reads and writes from increasing offsets.
#   POSIX_RW_SWITCHES: number of times access alternated between read and write.
#   POSIX_*_ALIGNMENT: memory and file alignment.
#   POSIX_*_NOT_ALIGNED: number of reads and writes that were not aligned.
#   POSIX_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   POSIX_SIZE_*_*: histogram of read and write access sizes.
#   POSIX_STRIDE*_STRIDE: the four most common strides detected.
#   POSIX_STRIDE*_COUNT: count of the four most common strides.
#   POSIX_ACCESS*_ACCESS: the four most common access sizes.
#   POSIX_ACCESS*_COUNT: count of the four most common access sizes.
#   POSIX_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared files).
#   POSIX_*_RANK_BYTES: bytes transferred by the fastest and slowest ranks (for shared files).
#   POSIX_F_*_START_TIMESTAMP: timestamp of first open/read/write/close.
#   POSIX_F_*_END_TIMESTAMP: timestamp of last open/read/write/close.
#   POSIX_F_READ/WRITE/META_TIME: cumulative time spent in read, write, or metadata operations.
#   POSIX_F_MAX_*_TIME: duration of the slowest read and write operations.
#   POSIX_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared files).
#   POSIX_F_VARIANCE_RANK_*: variance of total I/O time and bytes moved for all ranks (for shared files).
`)
	if ver == 1 {
		b.WriteString(`
# WARNING: POSIX module log format version 1 has the following limitations:
# - Darshan version 3.1.0 and earlier had only partial instrumentation of stdio stream I/O functions.
#   File records with stdio counters present will be omitted from output.
#   Use darshan-logutils < 3.1.0 to retrieve those records.
`)
	}
	if ver <= 2 {
		b.WriteString(`
# WARNING: POSIX module log format version <=2 has the following limitations:
# - No support for the following timers:
# 	- POSIX_F_CLOSE_START_TIMESTAMP
# 	- POSIX_F_OPEN_END_TIMESTAMP
`)
	}
	if ver <= 3 {
		b.WriteString(`
# WARNING: POSIX module log format version <=3 has the following limitations:
# - No support for the following counters to properly instrument dup, fileno, and rename operations:
# 	- POSIX_FILENOS
# 	- POSIX_DUPS
# 	- POSIX_RENAME_SOURCES
# 	- POSIX_RENAME_TARGETS
# 	- POSIX_RENAMED_FROM
`)
	}
	if ver >= 4 {
		b.WriteString(`
# WARNING: POSIX_OPENS counter includes both POSIX_FILENOS and POSIX_DUPS counts

# WARNING: POSIX counters related to file offsets may be incorrect if a file is simultaneously accessed by both POSIX and STDIO (e.g., using fileno())
# 	- Affected counters include: MAX_BYTE_{READ|WRITTEN}, CONSEC_{READS|WRITES}, SEQ_{READS|WRITES}, {MEM|FILE}_NOT_ALIGNED, STRIDE*_STRIDE
`)
	}
	return b.String()
}

// posixTotals are the rules of darshan-parser --total.
func posixTotals() *Totals {
	sums := []string{"POSIX_OPENS", "POSIX_FILENOS", "POSIX_DUPS", "POSIX_READS", "POSIX_WRITES",
		"POSIX_SEEKS", "POSIX_STATS", "POSIX_MMAPS", "POSIX_FSYNCS", "POSIX_FDSYNCS",
		"POSIX_RENAME_SOURCES", "POSIX_RENAME_TARGETS", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN",
		"POSIX_CONSEC_READS", "POSIX_CONSEC_WRITES", "POSIX_SEQ_READS", "POSIX_SEQ_WRITES",
		"POSIX_RW_SWITCHES", "POSIX_MEM_NOT_ALIGNED", "POSIX_FILE_NOT_ALIGNED"}
	sums = append(sums, sizeHistogram("POSIX_SIZE_READ")...)
	sums = append(sums, sizeHistogram("POSIX_SIZE_WRITE")...)
	ints := merge(rules(IntSumClamp, sums...),
		rules(IntSet, "POSIX_RENAMED_FROM", "POSIX_MODE", "POSIX_MEM_ALIGNMENT", "POSIX_FILE_ALIGNMENT"),
		rules(IntMax, "POSIX_MAX_BYTE_READ", "POSIX_MAX_BYTE_WRITTEN"),
		rules(IntCommon, "POSIX_STRIDE1_STRIDE", "POSIX_ACCESS1_ACCESS"))
	return &Totals{Prefix: "POSIX", Ints: ints, Floats: timerRules("POSIX", true)}
}
