package darshan

import "strconv"

// ModuleID identifies an instrumentation module: the index of its region in
// the log header, in the numbering of format 3.41 (older logs are remapped
// when the header is read, see Header).
type ModuleID int

// The modules of darshan 3.5.0 (plus APXC, whose reader lives in autoperf),
// by their index in the log header. What this package knows of each is
// its Module, registered from its own file.
const (
	NullModule  ModuleID = iota // the example module; never has a reader
	POSIX                       // POSIX file I/O
	MPIIO                       // MPI-IO; darshan-parser calls it "MPI-IO"
	H5F                         // HDF5 files
	H5D                         // HDF5 datasets
	PnetCDFFile                 // PnetCDF files
	PnetCDFVar                  // PnetCDF variables
	BGQ                         // IBM Blue Gene/Q job data
	Lustre                      // Lustre file layouts
	STDIO                       // stdio streams
	DXTPOSIX                    // POSIX extended traces
	DXTMPIIO                    // MPI-IO extended traces
	MDHIM                       // MDHIM key/value store
	APXC                        // AutoPerf Cray XC counters
	APMPI                       // AutoPerf MPI counters
	Heatmap                     // I/O heatmaps
	DFS                         // DAOS file system
	DAOS                        // DAOS objects
)

// MaxModules is the number of module slots in a 3.41 header.
const MaxModules = 64

// Module is what this package knows of one instrumentation module: an
// entry of a table like darshan-util's mod_logutils, which the module's
// own file fills from its init function. Adding a module means adding its
// file: its id and name, the newest version of its records it reads, its
// counters and the layouts of their older versions, its record decoder
// (its record type encodes itself for the Writer), and what darshan-parser
// prints of it: the description of its counters and its --total rules.
// Package parsertext reads the table; records of a new shape also need a
// printer there.
type Module struct {
	ID ModuleID
	// Name is the module's name as darshan-util prints it ("MPI-IO",
	// "BG/Q").
	Name string
	// Version is the newest version of the module's records this package
	// reads: that of darshan 3.5.0. A region of a newer version is
	// refused with ErrModuleVersion, as darshan-util does.
	Version uint32
	// counters are the names of the counters of its current version
	// (nil when its records are not counters); old the layouts of its
	// older versions, by version; plain tells that its records are
	// CounterRecords and nothing else.
	counters *counterSet
	old      func() map[uint32]*versionLayout
	plain    bool
	// decoder returns the decoder of a region of the module written with
	// module version ver; nil when there is no reader (NULL).
	decoder func(ver uint32, big bool, l *Log) moduleDecoder
	// Describe returns darshan-parser's description of its counters for
	// module version ver.
	Describe func(ver uint32) string
	// Totals returns the rules of darshan-parser --total (made on first
	// use); nil when it does not aggregate the module.
	Totals func() *Totals
	// NoParser: darshan-util 3.5.0 has no log utility for it, and
	// darshan-parser skips it with a warning.
	NoParser bool
	// Traces: DXT traces, printed by darshan-dxt-parser, not
	// darshan-parser.
	Traces bool
	// UnsignedInts are the integer counters darshan-parser prints
	// unsigned: record ids (POSIX_RENAMED_FROM).
	UnsignedInts []string
	// Unnamed is the name darshan-parser gives a record whose id has no
	// name in the log ("(null)" unless said otherwise).
	Unnamed string
}

// modules is the table, by id.
var modules [MaxModules]*Module

// register adds a module to the table; its file calls it from init.
func register(m *Module) {
	if m.ID < 0 || m.ID >= MaxModules || modules[m.ID] != nil {
		panic("darshan: module registered twice or out of range: " + m.Name)
	}
	if m.Describe == nil {
		m.Describe = func(uint32) string { return "" }
	}
	if m.Unnamed == "" {
		m.Unnamed = "(null)"
	}
	modules[m.ID] = m
}

// description returns a Describe of a text that no version changes.
func description(text string) func(uint32) string { return func(uint32) string { return text } }

func init() {
	register(&Module{ID: NullModule, Name: "NULL", Version: 1, NoParser: true})
}

// Module returns what this package knows of the module, nil for an id it
// does not know.
func (m ModuleID) Module() *Module {
	if m < 0 || m >= MaxModules {
		return nil
	}
	return modules[m]
}

// String returns the module's name as darshan-util prints it ("MPI-IO",
// "BG/Q", …), or "<UNKNOWN>(id)" for ids past the known modules.
func (m ModuleID) String() string {
	if mod := m.Module(); mod != nil {
		return mod.Name
	}
	return "<UNKNOWN>(" + strconv.Itoa(int(m)) + ")"
}

// Known reports whether this package has a name for the module id.
func (m ModuleID) Known() bool { return m.Module() != nil }

// CurrentVersion returns the newest version of the module's record format
// that this package reads, or 0 for unknown modules.
func (m ModuleID) CurrentVersion() uint32 {
	if mod := m.Module(); mod != nil {
		return mod.Version
	}
	return 0
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

// CountersOf returns the counters of a record of a counter module (POSIX,
// MPI-IO, STDIO, H5F/H5D, PNETCDF, DFS, DAOS…: a CounterRecord, alone or
// with the module's own fields), or nil for a record of another kind
// (LUSTRE, HEATMAP, DXT, APMPI, MDHIM).
func CountersOf(r Record) *CounterRecord {
	switch r := r.(type) {
	case *CounterRecord:
		return r
	case *DatasetRecord:
		return &r.CounterRecord
	case *DFSRecord:
		return &r.CounterRecord
	case *DAOSRecord:
		return &r.CounterRecord
	}
	return nil
}
