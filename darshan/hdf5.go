package darshan

import "fmt"

// HDF5 modules: H5F (files, 3 integer and 5 floating point counters in
// version 3) and H5D (datasets, 94 and 17 in version 2, plus the record id
// of the dataset's file).

var h5fSet = newCounterSet(H5F,
	[]string{"H5F_OPENS", "H5F_FLUSHES", "H5F_USE_MPIIO"},
	[]string{"H5F_F_OPEN_START_TIMESTAMP", "H5F_F_CLOSE_START_TIMESTAMP", "H5F_F_OPEN_END_TIMESTAMP",
		"H5F_F_CLOSE_END_TIMESTAMP", "H5F_F_META_TIME"})

const (
	h5fRecordSize = 80 // version 3
	h5fV2Size     = 56 // 1 int, 4 floats: no FLUSHES, USE_MPIIO, F_META_TIME
	h5fV1Size     = 40 // 1 int, 2 floats: no F_CLOSE_START_TIMESTAMP, F_OPEN_END_TIMESTAMP either
)

var h5fOld = map[uint32]*versionLayout{
	2: {size: h5fV2Size, nInts: 1, ints: []int{0, -1, -1}, floats: []int{0, 1, 2, 3, -1}},
	1: {size: h5fV1Size, nInts: 1, ints: []int{0, -1, -1}, floats: []int{0, -1, -1, 1, -1}},
}

func newH5FDecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(h5fSet, ver, big, h5fRecordSize, 0, h5fOld)
}

var h5dSet = newCounterSet(H5D,
	concat(
		prefixed("H5D", "OPENS", "READS", "WRITES", "FLUSHES", "BYTES_READ", "BYTES_WRITTEN",
			"RW_SWITCHES", "REGULAR_HYPERSLAB_SELECTS", "IRREGULAR_HYPERSLAB_SELECTS",
			"POINT_SELECTS", "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"),
		sizeBuckets("H5D_SIZE_READ_AGG"), sizeBuckets("H5D_SIZE_WRITE_AGG"),
		accessBlocks("H5D"),
		prefixed("H5D", "ACCESS1_COUNT", "ACCESS2_COUNT", "ACCESS3_COUNT", "ACCESS4_COUNT",
			"DATASPACE_NDIMS", "DATASPACE_NPOINTS", "DATATYPE_SIZE",
			"CHUNK_SIZE_D1", "CHUNK_SIZE_D2", "CHUNK_SIZE_D3", "CHUNK_SIZE_D4", "CHUNK_SIZE_D5",
			"USE_MPIIO_COLLECTIVE", "USE_DEPRECATED"),
		prefixed("H5D", rankCounters...)),
	prefixed("H5D", timerNames...))

const (
	h5dRecordSize = 912 // version 2: base, file record id, 94 ints, 17 floats
	h5dV1Size     = 904 // version 1: no file record id
)

var h5dOld = map[uint32]*versionLayout{
	1: {size: h5dV1Size, nInts: 94, ints: identity(94), floats: identity(17)},
}

// DatasetRecord is a record of a module whose records belong to a file
// record: H5D (datasets) and PNETCDF_VAR (variables).
type DatasetRecord struct {
	CounterRecord
	// FileRecID is the record id of the file the dataset or variable
	// belongs to; 0 in H5D version 1, which does not record it.
	FileRecID uint64
}

// Clone returns a deep copy of r.
func (r *DatasetRecord) Clone() Record {
	return &DatasetRecord{CounterRecord: r.cloneCounters(), FileRecID: r.FileRecID}
}

// datasetDecoder decodes records with a file record id after the base record.
type datasetDecoder struct {
	*counterDecoder
	rec DatasetRecord
}

func (d *datasetDecoder) next(rr *regionReader) (Record, error) {
	b, err := d.decode(rr)
	if err != nil {
		return nil, err
	}
	d.rec.CounterRecord = d.counterDecoder.rec
	d.rec.FileRecID = 0
	if d.skip == 8 {
		d.rec.FileRecID = getUint64(b[16:], d.big)
	}
	return &d.rec, nil
}

func newH5DDecoder(ver uint32, big bool) moduleDecoder {
	return &datasetDecoder{counterDecoder: newCounterDecoder(h5dSet, ver, big, h5dRecordSize, 8, h5dOld)}
}

// encode writes an H5D or PNETCDF_VAR record.
func (r *DatasetRecord) encode(e *encoder, _ bool) error {
	set := h5dSet
	switch r.Module {
	case H5D:
	case PnetCDFVar:
		set = pnetcdfVarSet
	default:
		return fmt.Errorf("%s records are not DatasetRecords", r.Module)
	}
	e.key(r.Key)
	e.u64(r.FileRecID)
	return e.counters(&r.CounterRecord, set)
}
