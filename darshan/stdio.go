package darshan

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

var stdioSet = newCounterSet(STDIO, stdioInts, stdioFloats)

const (
	stdioRecordSize = 248 // version 2
	stdioV1Size     = 240 // version 1: no STDIO_FDOPENS
)

var stdioOld = map[uint32]*versionLayout{
	1: {size: stdioV1Size, nInts: 13, ints: insertAbsent(identity(13), 1, 1), floats: identity(15)},
}

func newSTDIODecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(stdioSet, ver, big, stdioRecordSize, 0, stdioOld)
}
