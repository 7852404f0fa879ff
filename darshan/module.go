package darshan

import "strconv"

// ModuleID identifies an instrumentation module: the index of its region in
// the log header, in the numbering of format 3.41 (older logs are remapped
// when the header is read, see Header).
type ModuleID int

// The modules of darshan 3.5.0 (plus APXC, whose reader lives in autoperf).
const (
	NullModule   ModuleID = iota // the example module; never has a reader
	POSIX                        // POSIX file I/O
	MPIIO                        // MPI-IO; darshan-parser calls it "MPI-IO"
	H5F                          // HDF5 files
	H5D                          // HDF5 datasets
	PnetCDFFile                  // PnetCDF files
	PnetCDFVar                   // PnetCDF variables
	BGQ                          // IBM Blue Gene/Q job data
	Lustre                       // Lustre file layouts
	STDIO                        // stdio streams
	DXTPOSIX                     // POSIX extended traces
	DXTMPIIO                     // MPI-IO extended traces
	MDHIM                        // MDHIM key/value store
	APXC                         // AutoPerf Cray XC counters
	APMPI                        // AutoPerf MPI counters
	Heatmap                      // I/O heatmaps
	DFS                          // DAOS file system
	DAOS                         // DAOS objects
	knownModules                 // number of module ids this package knows
)

// MaxModules is the number of module slots in a 3.41 header.
const MaxModules = 64

var moduleNames = [knownModules]string{
	"NULL", "POSIX", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR",
	"BG/Q", "LUSTRE", "STDIO", "DXT_POSIX", "DXT_MPIIO", "MDHIM", "APXC",
	"APMPI", "HEATMAP", "DFS", "DAOS",
}

// String returns the module's name as darshan-util prints it ("MPI-IO",
// "BG/Q", …), or "<UNKNOWN>(id)" for ids past the known modules.
func (m ModuleID) String() string {
	if m >= 0 && m < knownModules {
		return moduleNames[m]
	}
	return "<UNKNOWN>(" + strconv.Itoa(int(m)) + ")"
}

// Known reports whether this package has a name for the module id.
func (m ModuleID) Known() bool { return m >= 0 && m < knownModules }

// moduleVersions are the newest module versions this package reads: those of
// darshan 3.5.0 (and autoperf for APXC). A region written with a newer
// version is refused with ErrModuleVersion, as darshan-util does.
var moduleVersions = [knownModules]uint32{
	NullModule: 1, POSIX: 4, MPIIO: 3, H5F: 3, H5D: 2, PnetCDFFile: 3,
	PnetCDFVar: 1, BGQ: 2, Lustre: 2, STDIO: 2, DXTPOSIX: 2, DXTMPIIO: 3,
	MDHIM: 1, APXC: 1, APMPI: 1, Heatmap: 1, DFS: 1, DAOS: 1,
}

// CurrentVersion returns the newest version of the module's record format
// that this package reads, or 0 for unknown modules.
func (m ModuleID) CurrentVersion() uint32 {
	if !m.Known() {
		return 0
	}
	return moduleVersions[m]
}

// Key addresses a record: a module, a rank (-1 for a record shared by all
// ranks) and a record id (the hash of the record's name, see RecordID).
// The same file has one record per rank when it is not shared, so a record
// id alone is not a key.
type Key struct {
	Module ModuleID
	Rank   int64
	ID     uint64
}

// RecordKey returns the key itself; every record type embeds a Key.
func (k Key) RecordKey() Key { return k }

// Record is one decoded module record. The concrete types are
// *CounterRecord, *DatasetRecord, *DFSRecord, *DAOSRecord, *MDHIMRecord,
// *LustreRecord, *HeatmapRecord, *DXTRecord, *APMPIHeader, *APMPIRecord,
// *APXCHeader and *APXCRecord.
type Record interface {
	RecordKey() Key
	// Clone returns a deep copy; RecordReader reuses the record it returns.
	Clone() Record
	// encode appends the record in the current version of its module's
	// format; headed tells whether the region already has a record.
	encode(e *encoder, headed bool) error
}
