package parsertext

import "github.com/hpcio/hpcio_exporter/darshan"

// STDIO: darshan-stdio-logutils' description and aggregation.

func stdioDescription(p *printer, ver uint32) {
	p.str(`
# description of STDIO counters:
#   STDIO_{OPENS|FDOPENS|WRITES|READS|SEEKS|FLUSHES} are types of operations.
#   STDIO_BYTES_*: total bytes read and written.
#   STDIO_MAX_BYTE_*: highest offset byte read and written.
#   STDIO_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared files).
#   STDIO_*_RANK_BYTES: bytes transferred by the fastest and slowest ranks (for shared files).
#   STDIO_F_*_START_TIMESTAMP: timestamp of the first call to that type of function.
#   STDIO_F_*_END_TIMESTAMP: timestamp of the completion of the last call to that type of function.
#   STDIO_F_*_TIME: cumulative time spent in different types of functions.
#   STDIO_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared files).
#   STDIO_F_VARIANCE_RANK_*: variance of total I/O time and bytes moved for all ranks (for shared files).
`)
	if ver == 1 {
		p.str(`
# WARNING: STDIO module log format version 1 has the following limitations:
# - No support for properly instrumenting fdopen operations (STDIO_FDOPENS)
`)
	}
	if ver >= 2 {
		p.str(`
# WARNING: STDIO_OPENS counter includes STDIO_FDOPENS count

# WARNING: STDIO counters related to file offsets may be incorrect if a file is simultaneously accessed by both STDIO and POSIX (e.g., using fdopen())
# 	- Affected counters include: MAX_BYTE_{READ|WRITTEN}
`)
	}
}

func stdioPlan(l *darshan.Layout) *aggPlan {
	ints := merge(rules(intSum, "STDIO_OPENS", "STDIO_FDOPENS", "STDIO_READS", "STDIO_WRITES",
		"STDIO_SEEKS", "STDIO_FLUSHES", "STDIO_BYTES_WRITTEN", "STDIO_BYTES_READ"),
		rules(intMax, "STDIO_MAX_BYTE_READ", "STDIO_MAX_BYTE_WRITTEN"))
	floats := timerRules("STDIO", true) // STDIO has no F_MAX_*_TIME; those rules match nothing
	return newPlan(l, ints, floats, "STDIO")
}
