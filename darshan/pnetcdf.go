package darshan

// PnetCDF modules: PNETCDF_FILE (9 integer and 8 floating point counters in
// version 3) and PNETCDF_VAR (120 and 17 in version 1, plus the record id of
// the variable's file; a DatasetRecord).

var pnetcdfFileSet = newCounterSet(PnetCDFFile,
	prefixed("PNETCDF_FILE", "CREATES", "OPENS", "REDEFS", "INDEP_WAITS", "COLL_WAITS", "SYNCS",
		"BYTES_READ", "BYTES_WRITTEN", "WAIT_FAILURES"),
	prefixed("PNETCDF_FILE", "F_OPEN_START_TIMESTAMP", "F_CLOSE_START_TIMESTAMP",
		"F_WAIT_START_TIMESTAMP", "F_OPEN_END_TIMESTAMP", "F_CLOSE_END_TIMESTAMP",
		"F_WAIT_END_TIMESTAMP", "F_META_TIME", "F_WAIT_TIME"))

const (
	pnetcdfFileRecordSize = 152 // version 3
	pnetcdfFileV2Size     = 64  // INDEP_OPENS, COLL_OPENS; 4 timestamps
	pnetcdfFileV1Size     = 48  // INDEP_OPENS, COLL_OPENS; open and close timestamps
)

// Versions 1 and 2 counted independent and collective opens apart; version 3
// has their sum as PNETCDF_FILE_OPENS (the post hook adds INDEP_OPENS to the
// COLL_OPENS the table copies) and none of the other counters.
var pnetcdfFileOld = map[uint32]*versionLayout{
	2: {size: pnetcdfFileV2Size, nInts: 2, ints: []int{-1, 1, -1, -1, -1, -1, -1, -1, -1},
		floats: []int{0, 1, -1, 2, 3, -1, -1, -1}},
	1: {size: pnetcdfFileV1Size, nInts: 2, ints: []int{-1, 1, -1, -1, -1, -1, -1, -1, -1},
		floats: []int{0, -1, -1, -1, 1, -1, -1, -1}},
}

func newPnetCDFFileDecoder(ver uint32, big bool) moduleDecoder {
	d := newCounterDecoder(pnetcdfFileSet, ver, big, pnetcdfFileRecordSize, 0, pnetcdfFileOld)
	d.post = func(r *CounterRecord, body []byte) { r.Ints[1] += int64(getUint64(body, big)) }
	return d
}

var pnetcdfVarSet = newCounterSet(PnetCDFVar,
	concat(
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
	prefixed("PNETCDF_VAR", timerNames...))

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
