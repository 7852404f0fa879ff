// Package darshan reads and writes Darshan I/O characterization logs
// (formats 3.00 to 3.41) without darshan-util.
//
// # Reading
//
// Open (a path) or NewReader (any io.ReaderAt), or OpenWith and
// NewReaderWith with Options, read the header, the job record and the name
// table, as darshan_log_open, darshan_log_get_job and
// darshan_log_get_namehash do. The header is checked (magic number in
// either byte order, format version) and the module ids of formats before
// 3.20 and 3.41 are remapped to those of 3.41.
//
// Module records are read on demand, streaming, one module at a time:
//
//	l, err := darshan.Open(path)
//	…
//	rd := l.Records(darshan.POSIX)
//	for rd.Next() {
//		r := rd.Record().(*darshan.CounterRecord)
//		n, ok := r.Int("POSIX_BYTES_READ") // ok is false if the log's POSIX version lacks the counter
//		…
//	}
//	if err := rd.Err(); err != nil { … }
//
// A record is addressed by its Key (module, rank, record id); Log.Index and
// Log.ReadModule load a module's records when that is wanted. Records of
// older module versions are translated to the current layout the way
// darshan-util translates them, and each record's Layout tells which
// counters the log's module version really recorded.
//
// Regions are inflated by the package's own zlib decoder; a region of
// many streams (one per rank) of 128 KiB or more is also inflated ahead of
// the reader by helper goroutines, one per spare core (GOMAXPROCS), each
// holding one chunk's output. The bytes are those of a sequential decode;
// see README.md in this directory.
//
// Every module of darshan 3.5.0 is read, each in its own file: POSIX,
// MPI-IO, STDIO, H5F and H5D (hdf5.go), PNETCDF_FILE and PNETCDF_VAR
// (pnetcdf.go), LUSTRE, BG/Q, HEATMAP, DXT_POSIX and DXT_MPIIO (dxt.go),
// APMPI, APXC, MDHIM, DFS and DAOS.
//
// # Bad input
//
// Damaged logs give a *FormatError naming the log and the region (header,
// job, name records, or the module) and wrapping one of the Err* causes;
// records decoded before the damage are returned first. Memory is bounded
// by the file's real size: regions are clamped to the file, counts in
// records (segments, bins, stripes, servers) are checked against the
// format's limits and data is decoded as it arrives, and decompression stops
// at MaxInflateRatio times a region's compressed size plus MinInflateBound
// (ErrTooLarge). On top of that, each log has a memory budget, fixed before
// a byte of it is read (Options, DefaultMemoryBudget): the compressed and
// inflated bytes of its regions, the name table, the segments of a DXT
// record and the records ReadModule keeps are charged against it, and a
// log that would cost more is refused with a *BudgetError (ErrTooLarge)
// having cost about the budget (budget.go).
//
// A file without the magic number is ErrNotDarshan, one with it and an
// unknown format version ErrUnsupportedVersion; OpenWith reads only regular
// files (ErrNotRegular, without blocking on a FIFO). No error holds bytes
// of the file's content, so that errors can be logged whoever wrote the
// file.
//
// Where darshan-util decodes a value wrongly, this package does not: see
// README.md in this directory for the list.
//
// # Writing
//
// Writer writes format 3.41 logs, zlib-compressed, from the same record
// types; the project's fixtures and demo logs are made with it.
package darshan
