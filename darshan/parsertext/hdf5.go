package parsertext

// H5F and H5D: darshan-hdf5-logutils' descriptions. Their records print as
// plain counters (H5D adds H5D_FILE_REC_ID, see dumper.record).

func h5fDescription(p *printer, ver uint32) {
	p.str(`
# description of HDF5 counters:
#   H5F_OPENS: HDF5 file open/create operation counts.
#   H5F_FLUSHES: HDF5 file flush operation counts.
#   H5F_USE_MPIIO: flag indicating whether MPI-IO was used to access this file.
#   H5F_F_*_START_TIMESTAMP: timestamp of first HDF5 file open/close.
#   H5F_F_*_END_TIMESTAMP: timestamp of last HDF5 file open/close.
#   H5F_F_META_TIME: cumulative time spent in HDF5 metadata operations.
`)
	if ver == 1 {
		p.str(`
# WARNING: H5F module log format version 1 does not support the following counters:
# - H5F_F_CLOSE_START_TIMESTAMP
# - H5F_F_OPEN_END_TIMESTAMP
`)
	}
	if ver <= 2 {
		p.str(`
# WARNING: H5F module log format version <=2 does not support the following counters:
# 	- H5F_FLUSHES
# 	- H5F_USE_MPIIO
# 	- H5F_F_META_TIME
`)
	}
}

func h5dDescription(p *printer, ver uint32) {
	p.str(`
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
		p.str(`
# WARNING: H5D module log format version 1 does not support the following counters:
# - H5D_FILE_REC_ID
`)
	}
}
