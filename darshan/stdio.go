package darshan

import (
	"strings"
	"sync"
)

func init() {
	register(&Module{ID: STDIO, Name: "STDIO", Version: 2, counters: stdioSet, old: stdioOld, plain: true,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newSTDIODecoder(ver, big) },
		Describe: stdioDescription, Totals: sync.OnceValue(stdioTotals)})
}

// STDIO module: stdio streams (fopen, fread, …), 14 integer and 15 floating
// point counters in version 2.

var stdioInts = []string{
	"STDIO_OPENS", "STDIO_FDOPENS", "STDIO_READS", "STDIO_WRITES", "STDIO_SEEKS",
	"STDIO_FLUSHES", "STDIO_BYTES_WRITTEN", "STDIO_BYTES_READ", "STDIO_MAX_BYTE_READ",
	"STDIO_MAX_BYTE_WRITTEN", "STDIO_FASTEST_RANK", "STDIO_FASTEST_RANK_BYTES",
	"STDIO_SLOWEST_RANK", "STDIO_SLOWEST_RANK_BYTES",
}

var stdioFloats = []string{
	"STDIO_F_META_TIME", "STDIO_F_WRITE_TIME", "STDIO_F_READ_TIME",
	"STDIO_F_OPEN_START_TIMESTAMP", "STDIO_F_CLOSE_START_TIMESTAMP",
	"STDIO_F_WRITE_START_TIMESTAMP", "STDIO_F_READ_START_TIMESTAMP",
	"STDIO_F_OPEN_END_TIMESTAMP", "STDIO_F_CLOSE_END_TIMESTAMP",
	"STDIO_F_WRITE_END_TIMESTAMP", "STDIO_F_READ_END_TIMESTAMP",
	"STDIO_F_FASTEST_RANK_TIME", "STDIO_F_SLOWEST_RANK_TIME",
	"STDIO_F_VARIANCE_RANK_TIME", "STDIO_F_VARIANCE_RANK_BYTES",
}

var stdioSet = newCounterSet(STDIO, func() (ints, floats []string) {
	return stdioInts, stdioFloats
})

const (
	stdioRecordSize = 248 // version 2
	stdioV1Size     = 240 // version 1: no STDIO_FDOPENS
)

var stdioOld = sync.OnceValue(func() map[uint32]*versionLayout {
	return map[uint32]*versionLayout{
		1: {size: stdioV1Size, nInts: 13, ints: insertAbsent(identity(13), 1, 1), floats: identity(15)},
	}
})

func newSTDIODecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(stdioSet, ver, big, stdioRecordSize, 0, stdioOld)
}

// What darshan-parser prints above the records (log_print_description).

func stdioDescription(ver uint32) string {
	var b strings.Builder
	b.WriteString(`
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
		b.WriteString(`
# WARNING: STDIO module log format version 1 has the following limitations:
# - No support for properly instrumenting fdopen operations (STDIO_FDOPENS)
`)
	}
	if ver >= 2 {
		b.WriteString(`
# WARNING: STDIO_OPENS counter includes STDIO_FDOPENS count

# WARNING: STDIO counters related to file offsets may be incorrect if a file is simultaneously accessed by both STDIO and POSIX (e.g., using fdopen())
# 	- Affected counters include: MAX_BYTE_{READ|WRITTEN}
`)
	}
	return b.String()
}

// stdioTotals are the rules of darshan-parser --total.
func stdioTotals() *Totals {
	ints := merge(rules(IntSum, "STDIO_OPENS", "STDIO_FDOPENS", "STDIO_READS", "STDIO_WRITES",
		"STDIO_SEEKS", "STDIO_FLUSHES", "STDIO_BYTES_WRITTEN", "STDIO_BYTES_READ"),
		rules(IntMax, "STDIO_MAX_BYTE_READ", "STDIO_MAX_BYTE_WRITTEN"))
	floats := timerRules("STDIO", true) // STDIO has no F_MAX_*_TIME; those rules match nothing
	return &Totals{Prefix: "STDIO", Ints: ints, Floats: floats}
}
