package darshan

import (
	"fmt"
	"strings"
	"sync"
)

func init() {
	register(&Module{ID: H5F, Name: "H5F", Version: 3, counters: h5fSet, old: h5fOld, plain: true,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newH5FDecoder(ver, big) },
		Describe: h5fDescription})
	register(&Module{ID: H5D, Name: "H5D", Version: 2, counters: h5dSet, old: h5dOld,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newH5DDecoder(ver, big) },
		Describe: h5dDescription})
}

// HDF5 modules: H5F (files, 3 integer and 5 floating point counters in
// version 3) and H5D (datasets, 94 and 17 in version 2, plus the record id
// of the dataset's file).

var h5fSet = newCounterSet(H5F, func() (ints, floats []string) {
	return []string{"H5F_OPENS", "H5F_FLUSHES", "H5F_USE_MPIIO"},
		[]string{"H5F_F_OPEN_START_TIMESTAMP", "H5F_F_CLOSE_START_TIMESTAMP", "H5F_F_OPEN_END_TIMESTAMP",
			"H5F_F_CLOSE_END_TIMESTAMP", "H5F_F_META_TIME"}
})

const (
	h5fRecordSize = 80 // version 3
	h5fV2Size     = 56 // 1 int, 4 floats: no FLUSHES, USE_MPIIO, F_META_TIME
	h5fV1Size     = 40 // 1 int, 2 floats: no F_CLOSE_START_TIMESTAMP, F_OPEN_END_TIMESTAMP either
)

var h5fOld = sync.OnceValue(func() map[uint32]*versionLayout {
	return map[uint32]*versionLayout{
		2: {size: h5fV2Size, nInts: 1, ints: []int{0, -1, -1}, floats: []int{0, 1, 2, 3, -1}},
		1: {size: h5fV1Size, nInts: 1, ints: []int{0, -1, -1}, floats: []int{0, -1, -1, 1, -1}},
	}
})

func newH5FDecoder(ver uint32, big bool) moduleDecoder {
	return newCounterDecoder(h5fSet, ver, big, h5fRecordSize, 0, h5fOld)
}

var h5dSet = newCounterSet(H5D, func() (ints, floats []string) {
	return concat(
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
		prefixed("H5D", timerNames...)
})

const (
	h5dRecordSize = 912 // version 2: base, file record id, 94 ints, 17 floats
	h5dV1Size     = 904 // version 1: no file record id
)

var h5dOld = sync.OnceValue(func() map[uint32]*versionLayout {
	return map[uint32]*versionLayout{
		1: {size: h5dV1Size, nInts: 94, ints: identity(94), floats: identity(17)},
	}
})

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

// What darshan-parser prints above the records (log_print_description).

func h5fDescription(ver uint32) string {
	var b strings.Builder
	b.WriteString(`
# description of HDF5 counters:
#   H5F_OPENS: HDF5 file open/create operation counts.
#   H5F_FLUSHES: HDF5 file flush operation counts.
#   H5F_USE_MPIIO: flag indicating whether MPI-IO was used to access this file.
#   H5F_F_*_START_TIMESTAMP: timestamp of first HDF5 file open/close.
#   H5F_F_*_END_TIMESTAMP: timestamp of last HDF5 file open/close.
#   H5F_F_META_TIME: cumulative time spent in HDF5 metadata operations.
`)
	if ver == 1 {
		b.WriteString(`
# WARNING: H5F module log format version 1 does not support the following counters:
# - H5F_F_CLOSE_START_TIMESTAMP
# - H5F_F_OPEN_END_TIMESTAMP
`)
	}
	if ver <= 2 {
		b.WriteString(`
# WARNING: H5F module log format version <=2 does not support the following counters:
# 	- H5F_FLUSHES
# 	- H5F_USE_MPIIO
# 	- H5F_F_META_TIME
`)
	}
	return b.String()
}

func h5dDescription(ver uint32) string {
	var b strings.Builder
	b.WriteString(`
# description of HDF5 counters:
#   H5D_OPENS: HDF5 dataset open/create operation counts.
#   H5D_READS: HDF5 dataset read operation counts.
#   H5D_WRITES: HDF5 dataset write operation counts.
#   H5D_FLUSHES: HDF5 dataset flush operation counts.
#   H5D_BYTES_*: total bytes read and written at HDF5 dataset layer.
#   H5D_RW_SWITCHES: number of times access alternated between read and write.
#   H5D_*_SELECTS: number of different access selections (regular/irregular hyperslab or points).
#   H5D_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   H5D_SIZE_*_AGG_*: histogram of H5D total access sizes for read and write operations.
#   H5D_ACCESS*_*: the four most common total accesses, in terms of size and length/stride (in last 5 dimensions).
#   H5D_ACCESS*_COUNT: count of the four most common total access sizes.
#   H5D_DATASPACE_NDIMS: number of dimensions in dataset's dataspace.
#   H5D_DATASPACE_NPOINTS: number of points in dataset's dataspace.
#   H5D_DATATYPE_SIZE: size of each dataset element.
#   H5D_CHUNK_SIZE_D*: chunk size in last 5 dimensions of dataset.
#   H5D_USE_MPIIO_COLLECTIVE: flag indicating whether MPI-IO collectives were used to access this dataset.
#   H5D_USE_DEPRECATED: flag indicating whether deprecated H5D calls were used.
#   H5D_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared datasets).
#   H5D_*_RANK_BYTES: total bytes transferred at H5D layer by the fastest and slowest ranks (for shared datasets).
#   H5D_F_*_START_TIMESTAMP: timestamp of first HDF5 dataset open/read/write/close.
#   H5D_F_*_END_TIMESTAMP: timestamp of last HDF5 datset open/read/write/close.
#   H5D_F_READ/WRITE/META_TIME: cumulative time spent in H5D read, write, or metadata operations.
#   H5D_F_MAX_*_TIME: duration of the slowest H5D read and write operations.
#   H5D_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared datasets).
#   H5D_F_VARIANCE_RANK_*: variance of total I/O time and bytes moved for all ranks (for shared datasets).
#   H5D_FILE_REC_ID: Darshan file record ID of the file the dataset belongs to.
`)
	if ver == 1 {
		b.WriteString(`
# WARNING: H5D module log format version 1 does not support the following counters:
# - H5D_FILE_REC_ID
`)
	}
	return b.String()
}
