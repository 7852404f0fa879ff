package dayu

import (
	"math"
	"sort"
	"strings"
)

// Workflow is one run of a workflow: the stats files of one directory put
// together, every stage with the files it touched.
type Workflow struct {
	// Name is the directory's base name.
	Name string
	// Stages are sorted by start time, then order, name and pid.
	Stages []*Stage
}

// Stage is one task of the workflow: one process (pid) running one named step.
// Several stages may share a name (parallel workers of one step) and, in the
// 2023 samples, several stages share one pid (steps run one after another in
// one process).
type Stage struct {
	// Name comes from the tracker's task_name, else from the stage map, else
	// it is "task-<pid>".
	Name string
	// PID is the OS process id of the task; 0 when no file said.
	PID int64
	// Order is the stage's position in the stage map; -1 without one.
	Order int
	// Files touched, sorted by open time then path.
	Files []*File
	// Start and End bound the stage's file activity, in microseconds since the
	// epoch (the tracker's clock); 0 when unknown.
	Start, End int64
	// OverheadMS is the time the tracker itself spent, per layer, in
	// milliseconds. The tracker writes a running total after each file; the
	// stage gets the increments that followed its own files.
	OverheadMS map[Layer]float64

	byPath map[string]*File   // Files by path, while assembling
	byBase map[string][]*File // Files by base name, while assembling
}

// WallSeconds is the span of the stage's file activity, or 0 when unknown.
func (s *Stage) WallSeconds() float64 {
	if s.Start == 0 || s.End < s.Start {
		return 0
	}
	return float64(s.End-s.Start) / 1e6
}

// IO sums the VFD I/O of every file of the stage per memory type.
func (s *Stage) IO() IOSet {
	total := IOSet{}
	for _, f := range s.Files {
		total.Add(f.IO)
	}
	return total
}

// DatasetsTouched counts distinct (file name, dataset name) pairs.
func (s *Stage) DatasetsTouched() int {
	seen := map[[2]string]bool{}
	for _, f := range s.Files {
		for _, d := range f.Datasets {
			seen[[2]string{f.Name, d.Name}] = true
		}
	}
	return len(seen)
}

// FilesTouched counts distinct file base names: the same file reached through
// two mount points (the ARLDM sample) counts once.
func (s *Stage) FilesTouched() int {
	seen := map[string]bool{}
	for _, f := range s.Files {
		seen[f.Name] = true
	}
	return len(seen)
}

// File is one HDF5 file as one stage used it, merged over every time the
// stage opened it and over the VOL and VFD records.
type File struct {
	// Path is the file name as the tracker wrote it (absolute in newer
	// formats); Name is its base name.
	Path, Name string
	// Intents are the H5F_ACC_* flags seen on any open, sorted.
	Intents []string
	// Size is the largest file size recorded, in bytes.
	Size int64
	// Open and Close bound the opens, microseconds since the epoch; 0 unknown.
	Open, Close int64
	// Opens counts how many times the stage opened the file (the larger of
	// the VOL and VFD counts of records).
	Opens int
	// ReadOps and WriteOps are the VFD's file_read_cnt and file_write_cnt.
	ReadOps, WriteOps int64
	// Datasets are merged by name and sorted by name.
	Datasets []*Dataset
	// IO is the VFD I/O per memory type.
	IO IOSet
	// Objects are the VOL's per-file object counters.
	Objects ObjectCounts
	// HasVOL and HasVFD tell which layers recorded the file.
	HasVOL, HasVFD bool

	byName map[string]*Dataset // Datasets by name, while assembling
}

// ObjectCounts are the VOL's counters of HDF5 objects per file.
type ObjectCounts struct {
	DatasetsCreated, DatasetsAccessed int64
	GroupsCreated, GroupsAccessed     int64
	TypesCreated, TypesAccessed       int64
}

func (o *ObjectCounts) add(p ObjectCounts) {
	o.DatasetsCreated += p.DatasetsCreated
	o.DatasetsAccessed += p.DatasetsAccessed
	o.GroupsCreated += p.GroupsCreated
	o.GroupsAccessed += p.GroupsAccessed
	o.TypesCreated += p.TypesCreated
	o.TypesAccessed += p.TypesAccessed
}

// Dataset holds the VOL fields of one dataset (see the seed document) and,
// in the JSON format, the VFD I/O the tracker attributed to it.
type Dataset struct {
	Name string
	// Start and End are the first open and last close, microseconds.
	Start, End int64
	// DTClass (H5T_class_t), DSClass (H5S_class_t), Layout (H5D_layout_t),
	// SelectType (H5S_sel_type) and AccessType (read_only, write_only, …)
	// are kept as written.
	DTClass, DSClass, Layout, SelectType, AccessType string
	StorageSize                                      int64
	Elements                                         int64
	Dimensions                                       []int64
	TypeSize                                         int64
	ReadCount, WriteCount                            int64
	// BytesRead and BytesWritten are the VOL's estimates
	// (count × storage size), not measured I/O.
	BytesRead, BytesWritten int64
	Offset                  int64
	SelectPoints            int64
	// DataPages is the [first, last] page of raw data; MetadataPages lists
	// metadata pages; AccessOrders lists when the dataset was used.
	DataPages     []int64
	MetadataPages []int64
	AccessOrders  []int64
	// IO is the VFD I/O of the dataset (JSON format only).
	IO IOSet
	// Extra keeps fields this reader does not know, as written.
	Extra map[string]string

	pages map[int64]bool // MetadataPages as a set, while assembling
}

// Layer is the HDF5 layer a tracker record comes from.
type Layer string

const (
	// LayerVOL is the Virtual Object Layer: files, datasets, objects.
	LayerVOL Layer = "vol"
	// LayerVFD is the Virtual File Driver: bytes and operations per memory type.
	LayerVFD Layer = "vfd"
)

// MemType is an HDF5 H5FD_mem_t without its H5FD_MEM_ prefix: DRAW, OHDR,
// SUPER, BTREE, LHEAP, and whatever else a tracker writes.
type MemType string

// The memory types the trackers record. DRAW is raw data; the others are
// metadata.
const (
	MemDRAW  MemType = "DRAW"
	MemOHDR  MemType = "OHDR"
	MemSUPER MemType = "SUPER"
	MemBTREE MemType = "BTREE"
	MemLHEAP MemType = "LHEAP"
)

var knownMemOrder = map[MemType]int{MemDRAW: 0, MemOHDR: 1, MemSUPER: 2, MemBTREE: 3, MemLHEAP: 4}

// IsData tells raw data (H5FD_MEM_DRAW) from metadata.
func (m MemType) IsData() bool { return m == MemDRAW }

// Kind is "data" or "metadata".
func (m MemType) Kind() string {
	if m.IsData() {
		return "data"
	}
	return "metadata"
}

// memTypeOf returns the MemType of a key such as H5FD_MEM_OHDR.
func memTypeOf(key string) (MemType, bool) {
	rest, ok := strings.CutPrefix(key, "H5FD_MEM_")
	if !ok || rest == "" {
		return "", false
	}
	// The known ones as constants: a block's type then costs no string.
	for t := range knownMemOrder {
		if string(t) == rest {
			return t, true
		}
	}
	return MemType(rest), true
}

// MemIO is the VFD I/O of one memory type.
type MemIO struct {
	ReadBytes, ReadOps   int64
	WriteBytes, WriteOps int64
	// ReadRanges and WriteRanges are the accessed pages, in I/O order.
	ReadRanges, WriteRanges []PageRange
}

// PageRange is one I/O: its index in the file's I/O sequence and its first
// and last page (address / page size).
type PageRange struct {
	Index, First, Last int64
}

func (m *MemIO) add(o *MemIO) {
	m.ReadBytes = addSat(m.ReadBytes, o.ReadBytes)
	m.ReadOps = addSat(m.ReadOps, o.ReadOps)
	m.WriteBytes = addSat(m.WriteBytes, o.WriteBytes)
	m.WriteOps = addSat(m.WriteOps, o.WriteOps)
	m.ReadRanges = append(m.ReadRanges, o.ReadRanges...)
	m.WriteRanges = append(m.WriteRanges, o.WriteRanges...)
}

// IOSet is I/O per memory type.
type IOSet map[MemType]*MemIO

// Add adds o into s.
func (s IOSet) Add(o IOSet) {
	for t, m := range o {
		s.get(t).add(m)
	}
}

func (s IOSet) get(t MemType) *MemIO {
	m := s[t]
	if m == nil {
		m = &MemIO{}
		s[t] = m
	}
	return m
}

// Types lists the memory types present: the known ones in HDF5 order, then
// the others by name.
func (s IOSet) Types() []MemType {
	out := make([]MemType, 0, len(s))
	for t := range s {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		oi, ki := knownMemOrder[out[i]]
		oj, kj := knownMemOrder[out[j]]
		switch {
		case ki && kj:
			return oi < oj
		case ki != kj:
			return ki
		}
		return out[i] < out[j]
	})
	return out
}

// Totals sums the set: bytes and operations read and written, all types.
func (s IOSet) Totals() (readBytes, readOps, writeBytes, writeOps int64) {
	for _, m := range s {
		readBytes = addSat(readBytes, m.ReadBytes)
		readOps = addSat(readOps, m.ReadOps)
		writeBytes = addSat(writeBytes, m.WriteBytes)
		writeOps = addSat(writeOps, m.WriteOps)
	}
	return
}

// addSat adds two counts that are never negative, stopping at the largest
// int64 rather than wrapping to a negative count on absurd input.
func addSat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// dropRanges forgets page ranges, which only the graph's users and tests
// look at, to keep cached models small.
func (s IOSet) dropRanges() {
	for _, m := range s {
		m.ReadRanges, m.WriteRanges = nil, nil
	}
}
