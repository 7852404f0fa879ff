package darshan

import (
	"strings"
	"sync"
)

func init() {
	register(&Module{ID: PnetCDFFile, Name: "PNETCDF_FILE", Version: 3, counters: pnetcdfFileSet, old: pnetcdfFileOld, plain: true,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newPnetCDFFileDecoder(ver, big) },
		Describe: pnetcdfFileDescription})
	register(&Module{ID: PnetCDFVar, Name: "PNETCDF_VAR", Version: 1, counters: pnetcdfVarSet,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newPnetCDFVarDecoder(ver, big) },
		Describe: description(pnetcdfVarDescription)})
}

// PnetCDF modules: PNETCDF_FILE (9 integer and 8 floating point counters in
// version 3) and PNETCDF_VAR (120 and 17 in version 1, plus the record id of
// the variable's file; a DatasetRecord).

var pnetcdfFileSet = newCounterSet(PnetCDFFile, func() (ints, floats []string) {
	return prefixed("PNETCDF_FILE", "CREATES", "OPENS", "REDEFS", "INDEP_WAITS", "COLL_WAITS", "SYNCS",
			"BYTES_READ", "BYTES_WRITTEN", "WAIT_FAILURES"),
		prefixed("PNETCDF_FILE", "F_OPEN_START_TIMESTAMP", "F_CLOSE_START_TIMESTAMP",
			"F_WAIT_START_TIMESTAMP", "F_OPEN_END_TIMESTAMP", "F_CLOSE_END_TIMESTAMP",
			"F_WAIT_END_TIMESTAMP", "F_META_TIME", "F_WAIT_TIME")
})

const (
	pnetcdfFileRecordSize = 152 // version 3
	pnetcdfFileV2Size     = 64  // INDEP_OPENS, COLL_OPENS; 4 timestamps
	pnetcdfFileV1Size     = 48  // INDEP_OPENS, COLL_OPENS; open and close timestamps
)

// Versions 1 and 2 counted independent and collective opens apart; version 3
// has their sum as PNETCDF_FILE_OPENS (the post hook adds INDEP_OPENS to the
// COLL_OPENS the table copies) and none of the other counters.
var pnetcdfFileOld = sync.OnceValue(func() map[uint32]*versionLayout {
	return map[uint32]*versionLayout{
		2: {size: pnetcdfFileV2Size, nInts: 2, ints: []int{-1, 1, -1, -1, -1, -1, -1, -1, -1},
			floats: []int{0, 1, -1, 2, 3, -1, -1, -1}},
		1: {size: pnetcdfFileV1Size, nInts: 2, ints: []int{-1, 1, -1, -1, -1, -1, -1, -1, -1},
			floats: []int{0, -1, -1, -1, 1, -1, -1, -1}},
	}
})

func newPnetCDFFileDecoder(ver uint32, big bool) moduleDecoder {
	d := newCounterDecoder(pnetcdfFileSet, ver, big, pnetcdfFileRecordSize, 0, pnetcdfFileOld)
	d.post = func(r *CounterRecord, body []byte) { r.Ints[1] += int64(getUint64(body, big)) }
	return d
}

var pnetcdfVarSet = newCounterSet(PnetCDFVar, func() (ints, floats []string) {
	return concat(
			prefixed("PNETCDF_VAR", "OPENS", "INDEP_READS", "INDEP_WRITES", "COLL_READS", "COLL_WRITES",
				"NB_READS", "NB_WRITES", "BYTES_READ", "BYTES_WRITTEN", "RW_SWITCHES"),
			apiCalls("PNETCDF_VAR_PUT_VAR", true), apiCalls("PNETCDF_VAR_GET_VAR", true),
			apiCalls("PNETCDF_VAR_IPUT_VAR", false), apiCalls("PNETCDF_VAR_IGET_VAR", false),
			apiCalls("PNETCDF_VAR_BPUT_VAR", false),
			prefixed("PNETCDF_VAR", "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"),
			sizeBuckets("PNETCDF_VAR_SIZE_READ_AGG"), sizeBuckets("PNETCDF_VAR_SIZE_WRITE_AGG"),
			accessBlocks("PNETCDF_VAR"),
			prefixed("PNETCDF_VAR", "ACCESS1_COUNT", "ACCESS2_COUNT", "ACCESS3_COUNT", "ACCESS4_COUNT",
				"NDIMS", "NPOINTS", "DATATYPE_SIZE", "IS_RECORD_VAR"),
			prefixed("PNETCDF_VAR", rankCounters...)),
		prefixed("PNETCDF_VAR", timerNames...)
})

// apiCalls names the call counters of one family of PnetCDF APIs: var,
// var1, vara, vars, varm, varn and, for the blocking ones, vard.
func apiCalls(prefix string, withVard bool) []string {
	out := []string{prefix, prefix + "1", prefix + "A", prefix + "S", prefix + "M", prefix + "N"}
	if withVard {
		out = append(out, prefix+"D")
	}
	return out
}

const pnetcdfVarRecordSize = 1120 // version 1: base, file record id, 120 ints, 17 floats

func newPnetCDFVarDecoder(ver uint32, big bool) moduleDecoder {
	return &datasetDecoder{counterDecoder: newCounterDecoder(pnetcdfVarSet, ver, big, pnetcdfVarRecordSize, 8, nil)}
}

// What darshan-parser prints above the records (log_print_description).

func pnetcdfFileDescription(ver uint32) string {
	var b strings.Builder
	b.WriteString(`
# description of PnetCDF counters:
#   PNETCDF_FILE_CREATES: PnetCDF file create operation counts.
#   PNETCDF_FILE_OPENS: PnetCDF file open operation counts.
#   PNETCDF_FILE_REDEFS: PnetCDF file re-define operation counts.
#   PNETCDF_FILE_INDEP_WAITS: PnetCDF independent file wait operation counts.
#   PNETCDF_FILE_COLL_WAITS: PnetCDF collective file wait operation counts.
#   PNETCDF_FILE_SYNCS: PnetCDF file sync operation counts.
#   PNETCDF_FILE_BYTES_READ: PnetCDF total bytes read for all file variables.
#   PNETCDF_FILE_BYTES_WRITTEN: PnetCDF total bytes written for all file variables.
#   PNETCDF_FILE_WAIT_FAILURES: PnetCDF file wait operation failure counts.
#   PNETCDF_FILE_F_*_START_TIMESTAMP: timestamp of first PnetCDF file open/close/wait operation.
#   PNETCDF_FILE_F_*_END_TIMESTAMP: timestamp of last PnetCDF file open/close/wait operation.
#   PNETCDF_FILE_F_META_TIME: Cumulative time spent in file metadata operations.
#   PNETCDF_FILE_F_WAIT_TIME: Cumulative time spent in file wait operations.
`)
	if ver == 1 {
		b.WriteString(`
# WARNING: PnetCDF file module log format version 1 does not support the following counters:
# - PNETCDF_FILE_F_CLOSE_START_TIMESTAMP
# - PNETCDF_FILE_F_OPEN_END_TIMESTAMP
`)
	}
	if ver <= 2 {
		b.WriteString(`
# WARNING: PnetCDF file module log format version <=2 does not support the following counters:
# - PNETCDF_FILE_CREATES
# - PNETCDF_FILE_REDEFS
# - PNETCDF_FILE_INDEP_WAITS
# - PNETCDF_FILE_COLL_WAITS
# - PNETCDF_FILE_SYNCS
# - PNETCDF_FILE_BYTES_READ
# - PNETCDF_FILE_BYTES_WRITTEN
# - PNETCDF_FILE_WAIT_FAILURES
# - PNETCDF_FILE_F_WAIT_START_TIMESTAMP
# - PNETCDF_FILE_F_WAIT_END_TIMESTAMP
# - PNETCDF_FILE_F_META_TIME
# - PNETCDF_FILE_F_WAIT_TIME
`)
	}
	return b.String()
}

const pnetcdfVarDescription = `
# description of PnetCDF counters:
#   PNETCDF_VAR_OPENS: PnetCDF variable define/inquire operation counts.
#   PNETCDF_VAR_INDEP_READS: PnetCDF variable independent read operation counts.
#   PNETCDF_VAR_INDEP_WRITES: PnetCDF variable independent write operation counts.
#   PNETCDF_VAR_COLL_READS: PnetCDF variable collective read operation counts.
#   PNETCDF_VAR_COLL_WRITES: PnetCDF variable collective write operation counts.
#   PNETCDF_VAR_NB_READS: PnetCDF variable nonblocking read operation counts.
#   PNETCDF_VAR_NB_WRITES: PnetCDF variable nonblocking write operation counts.
#   PNETCDF_VAR_BYTES_*: total bytes read and written at PnetCDF variable layer.
#   PNETCDF_VAR_RW_SWITCHES: number of times access alternated between read and write.
#   PNETCDF_VAR_PUT_VAR*: number of calls to ncmpi_put_var* APIs (var, var1, vara, vars, varm, varn, vard).
#   PNETCDF_VAR_GET_VAR*: number of calls to ncmpi_get_var* APIs (var, var1, vara, vars, varm, varn, vard).
#   PNETCDF_VAR_IPUT_VAR*: number of calls to ncmpi_iput_var* APIs (var, var1, vara, vars, varm, varn).
#   PNETCDF_VAR_IGET_VAR*: number of calls to ncmpi_iget_var* APIs (var, var1, vara, vars, varm, varn).
#   PNETCDF_VAR_BPUT_VAR*: number of calls to ncmpi_bput_var* APIs (var, var1, vara, vars, varm, varn).
#   PNETCDF_VAR_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   PNETCDF_VAR_SIZE_*_AGG_*: histogram of PnetCDf total access sizes for read and write operations.
#   PNETCDF_VAR_ACCESS*_*: the four most common total accesses, in terms of size and length/stride (in last 5 dimensions).
#   PNETCDF_VAR_ACCESS*_COUNT: count of the four most common total access sizes.
#   PNETCDF_VAR_NDIMS: number of dimensions in the variable.
#   PNETCDF_VAR_NPOINTS: number of points in the variable.
#   PNETCDF_VAR_DATATYPE_SIZE: size of each variable element.
#   PNETCDF_VAR_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared datasets).
#   PNETCDF_VAR_*_RANK_BYTES: total bytes transferred at PnetCDF layer by the fastest and slowest ranks (for shared datasets).
#   PNETCDF_VAR_F_*_START_TIMESTAMP: timestamp of first PnetCDF variable open/read/write/close.
#   PNETCDF_VAR_F_*_END_TIMESTAMP: timestamp of last PnetCDF variable open/read/write/close.
#   PNETCDF_VAR_F_READ/WRITE/META_TIME: cumulative time spent in PnetCDF read, write, or metadata operations.
#   PNETCDF_VAR_F_MAX_*_TIME: duration of the slowest PnetCDF read and write operations.
#   PNETCDF_VAR_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared datasets).
#   PNETCDF_VAR_F_VARIANCE_RANK_*: variance of total I/O time and bytes moved for all ranks (for shared datasets).
#   PNETCDF_VAR_FILE_REC_ID: Darshan file record ID of the file the variable belongs to.
`
