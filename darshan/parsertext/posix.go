package parsertext

import "github.com/hpcio/hpcio_exporter/darshan"

// POSIX: darshan-posix-logutils' description, record printing (the renamed
// source's record id is unsigned) and aggregation.

func posixDescription(p *printer, ver uint32) {
	p.str(`
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
		p.str(`
# WARNING: POSIX module log format version 1 has the following limitations:
# - Darshan version 3.1.0 and earlier had only partial instrumentation of stdio stream I/O functions.
#   File records with stdio counters present will be omitted from output.
#   Use darshan-logutils < 3.1.0 to retrieve those records.
`)
	}
	if ver <= 2 {
		p.str(`
# WARNING: POSIX module log format version <=2 has the following limitations:
# - No support for the following timers:
# 	- POSIX_F_CLOSE_START_TIMESTAMP
# 	- POSIX_F_OPEN_END_TIMESTAMP
`)
	}
	if ver <= 3 {
		p.str(`
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
		p.str(`
# WARNING: POSIX_OPENS counter includes both POSIX_FILENOS and POSIX_DUPS counts

# WARNING: POSIX counters related to file offsets may be incorrect if a file is simultaneously accessed by both POSIX and STDIO (e.g., using fileno())
# 	- Affected counters include: MAX_BYTE_{READ|WRITTEN}, CONSEC_{READS|WRITES}, SEQ_{READS|WRITES}, {MEM|FILE}_NOT_ALIGNED, STRIDE*_STRIDE
`)
	}
}

const posixRenamedFrom = "POSIX_RENAMED_FROM"

// posixCounters prints a POSIX record; POSIX_RENAMED_FROM is a record id
// and printed unsigned.
func (d *dumper) posixCounters(r *darshan.CounterRecord) {
	for i, n := range r.Layout.Ints {
		if n == posixRenamedFrom {
			d.uintLine(n, uint64(r.Ints[i]))
		} else {
			d.intLine(n, r.Ints[i])
		}
	}
	for i, n := range r.Layout.Floats {
		d.floatLine(n, r.Floats[i])
	}
}

func posixPlan(l *darshan.Layout) *aggPlan {
	sums := []string{"POSIX_OPENS", "POSIX_FILENOS", "POSIX_DUPS", "POSIX_READS", "POSIX_WRITES",
		"POSIX_SEEKS", "POSIX_STATS", "POSIX_MMAPS", "POSIX_FSYNCS", "POSIX_FDSYNCS",
		"POSIX_RENAME_SOURCES", "POSIX_RENAME_TARGETS", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN",
		"POSIX_CONSEC_READS", "POSIX_CONSEC_WRITES", "POSIX_SEQ_READS", "POSIX_SEQ_WRITES",
		"POSIX_RW_SWITCHES", "POSIX_MEM_NOT_ALIGNED", "POSIX_FILE_NOT_ALIGNED"}
	sums = append(sums, sizeHistogram("POSIX_SIZE_READ")...)
	sums = append(sums, sizeHistogram("POSIX_SIZE_WRITE")...)
	ints := merge(rules(intSumClamp, sums...),
		rules(intSet, posixRenamedFrom, "POSIX_MODE", "POSIX_MEM_ALIGNMENT", "POSIX_FILE_ALIGNMENT"),
		rules(intMax, "POSIX_MAX_BYTE_READ", "POSIX_MAX_BYTE_WRITTEN"),
		rules(intCommon, "POSIX_STRIDE1_STRIDE", "POSIX_ACCESS1_ACCESS"))
	return newPlan(l, ints, timerRules("POSIX", true), "POSIX")
}

// sizeHistogram names the ten access size bins of a module.
func sizeHistogram(prefix string) []string {
	var out []string
	for _, b := range []string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"} {
		out = append(out, prefix+"_"+b)
	}
	return out
}

// timerRules are the float rules POSIX, MPI-IO, DFS and DAOS share;
// variance tells whether the module has the (no longer computed) variances.
func timerRules(prefix string, variance bool) map[string]floatRule {
	f := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = prefix + "_F_" + n
		}
		return out
	}
	m := merge(rules(floatSum, f("READ_TIME", "WRITE_TIME", "META_TIME")...),
		rules(floatMinNonZero, f("OPEN_START_TIMESTAMP", "READ_START_TIMESTAMP", "WRITE_START_TIMESTAMP", "CLOSE_START_TIMESTAMP")...),
		rules(floatMax, f("OPEN_END_TIMESTAMP", "READ_END_TIMESTAMP", "WRITE_END_TIMESTAMP", "CLOSE_END_TIMESTAMP")...),
		rules(floatMaxTime, f("MAX_READ_TIME", "MAX_WRITE_TIME")...),
		rules(floatFastest, f("FASTEST_RANK_TIME")...),
		rules(floatSlowest, f("SLOWEST_RANK_TIME")...))
	if variance {
		m = merge(m, rules(floatZero, f("VARIANCE_RANK_TIME", "VARIANCE_RANK_BYTES")...))
	}
	return m
}
