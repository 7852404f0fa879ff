package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// What the report reads of each module's counter records beyond what
// package signals keeps: operation counts (PyDarshan's plot_opcounts), the
// request size histogram and the most common sizes, the time split, and
// what darshan-util's accumulator derives (file categories, the
// performance estimate by the slowest rank).

// modSpec describes the counters of one module.
type modSpec struct {
	id     darshan.ModuleID
	prefix string
	ops    []opSpec
	// hist is the prefix of the request size bins ("" without), one for
	// reads and one for writes.
	histRead, histWrite string
	// access: the module has ACCESS1..4_ACCESS and _COUNT.
	access bool
	// accum: darshan-util has an accumulator for the module (file
	// categories and performance estimate), as PyDarshan uses.
	accum bool
	// file: its records are files (not datasets or variables), for the
	// top files and the file count.
	file bool
}

// opSpec is one operation: its label and the counters summed for it.
type opSpec struct {
	name     string
	counters []string
}

func ops(pairs ...string) []opSpec {
	var out []opSpec
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, opSpec{name: pairs[i], counters: []string{pairs[i+1]}})
	}
	return out
}

// modSpecs are the modules the report reads, in module id order.
var modSpecs = []*modSpec{
	{id: darshan.POSIX, prefix: "POSIX", histRead: "POSIX_SIZE_READ", histWrite: "POSIX_SIZE_WRITE", access: true, accum: true, file: true,
		ops: append(ops("Read", "POSIX_READS", "Write", "POSIX_WRITES", "Open", "POSIX_OPENS", "Stat", "POSIX_STATS",
			"Seek", "POSIX_SEEKS", "Mmap", "POSIX_MMAPS"), opSpec{"Fsync", []string{"POSIX_FSYNCS", "POSIX_FDSYNCS"}})},
	{id: darshan.MPIIO, prefix: "MPIIO", histRead: "MPIIO_SIZE_READ_AGG", histWrite: "MPIIO_SIZE_WRITE_AGG", access: true, accum: true, file: true,
		ops: ops("Ind. Read", "MPIIO_INDEP_READS", "Ind. Write", "MPIIO_INDEP_WRITES", "Ind. Open", "MPIIO_INDEP_OPENS",
			"Col. Read", "MPIIO_COLL_READS", "Col. Write", "MPIIO_COLL_WRITES", "Col. Open", "MPIIO_COLL_OPENS",
			"NB Read", "MPIIO_NB_READS", "NB Write", "MPIIO_NB_WRITES", "Sync", "MPIIO_SYNCS")},
	{id: darshan.H5F, prefix: "H5F", file: true,
		ops: ops("H5F Open", "H5F_OPENS", "H5F Flush", "H5F_FLUSHES")},
	{id: darshan.H5D, prefix: "H5D", histRead: "H5D_SIZE_READ_AGG", histWrite: "H5D_SIZE_WRITE_AGG", access: true,
		ops: ops("H5D Read", "H5D_READS", "H5D Write", "H5D_WRITES", "H5D Open", "H5D_OPENS", "H5D Flush", "H5D_FLUSHES")},
	{id: darshan.PnetCDFFile, prefix: "PNETCDF_FILE", file: true,
		ops: append([]opSpec{{"File Open", []string{"PNETCDF_FILE_OPENS", "PNETCDF_FILE_CREATES"}}},
			ops("File Sync", "PNETCDF_FILE_SYNCS", "File Ind Waits", "PNETCDF_FILE_INDEP_WAITS", "File Coll Waits", "PNETCDF_FILE_COLL_WAITS")...)},
	{id: darshan.PnetCDFVar, prefix: "PNETCDF_VAR", histRead: "PNETCDF_VAR_SIZE_READ_AGG", histWrite: "PNETCDF_VAR_SIZE_WRITE_AGG", access: true,
		ops: ops("Var Ind Read", "PNETCDF_VAR_INDEP_READS", "Var Ind Write", "PNETCDF_VAR_INDEP_WRITES", "Var Open", "PNETCDF_VAR_OPENS",
			"Var Coll Read", "PNETCDF_VAR_COLL_READS", "Var Coll Write", "PNETCDF_VAR_COLL_WRITES",
			"Var NB Read", "PNETCDF_VAR_NB_READS", "Var NB Write", "PNETCDF_VAR_NB_WRITES")},
	{id: darshan.STDIO, prefix: "STDIO", accum: true, file: true,
		ops: ops("Read", "STDIO_READS", "Write", "STDIO_WRITES", "Open", "STDIO_OPENS", "Seek", "STDIO_SEEKS", "Flush", "STDIO_FLUSHES")},
	{id: darshan.DFS, prefix: "DFS", histRead: "DFS_SIZE_READ", histWrite: "DFS_SIZE_WRITE", access: true, accum: true, file: true,
		ops: ops("Read", "DFS_READS", "Readx", "DFS_READXS", "Write", "DFS_WRITES", "Writex", "DFS_WRITEXS", "Open", "DFS_OPENS",
			"GlobalOpen", "DFS_GLOBAL_OPENS", "Lookup", "DFS_LOOKUPS", "GetSize", "DFS_GET_SIZES", "Punch", "DFS_PUNCHES",
			"Remove", "DFS_REMOVES", "Stat", "DFS_STATS")},
	{id: darshan.DAOS, prefix: "DAOS", histRead: "DAOS_SIZE_READ", histWrite: "DAOS_SIZE_WRITE", access: true, accum: true, file: true,
		ops: ops("ObjFetch", "DAOS_OBJ_FETCHES", "ObjUpdate", "DAOS_OBJ_UPDATES", "ObjOpen", "DAOS_OBJ_OPENS",
			"ObjPunch", "DAOS_OBJ_PUNCHES", "ObjDkeyPunch", "DAOS_OBJ_DKEY_PUNCHES", "ObjAkeyPunch", "DAOS_OBJ_AKEY_PUNCHES",
			"ObjDkeyList", "DAOS_OBJ_DKEY_LISTS", "ObjAkeyList", "DAOS_OBJ_AKEY_LISTS", "ObjRecxList", "DAOS_OBJ_RECX_LISTS",
			"ArrRead", "DAOS_ARRAY_READS", "ArrWrite", "DAOS_ARRAY_WRITES", "ArrOpen", "DAOS_ARRAY_OPENS",
			"ArrGetSize", "DAOS_ARRAY_GET_SIZES", "ArrSetSize", "DAOS_ARRAY_SET_SIZES", "ArrStat", "DAOS_ARRAY_STATS",
			"ArrPunch", "DAOS_ARRAY_PUNCHES", "ArrDestroy", "DAOS_ARRAY_DESTROYS",
			"KVGet", "DAOS_KV_GETS", "KVPut", "DAOS_KV_PUTS", "KVOpen", "DAOS_KV_OPENS",
			"KVRemove", "DAOS_KV_REMOVES", "KVList", "DAOS_KV_LISTS", "KVDestroy", "DAOS_KV_DESTROYS")},
}

var sizeBinSuffixes = []string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"}

// index holds a layout's counter indexes for one module spec (-1: the
// log's module version lacks the counter).
type index struct {
	layout                                *darshan.Layout
	ops                                   [][]int
	histRead, histWrite                   [10]int
	accessSize, accessCount               [4]int
	bytesRead, bytesWritten               int
	maxByteRead, maxByteWritten           int
	readTime, writeTime, metaTime         int // floats
	slowestTime                           int // float
	reads, writes, seqR, seqW, conR, conW int
}

func newIndex(s *modSpec, l *darshan.Layout) *index {
	in := func(name string) int {
		if i := l.IntIndex(name); l.HasInt(i) {
			return i
		}
		return -1
	}
	fl := func(name string) int {
		if i := l.FloatIndex(name); l.HasFloat(i) {
			return i
		}
		return -1
	}
	x := &index{layout: l}
	for _, o := range s.ops {
		var is []int
		for _, c := range o.counters {
			is = append(is, in(c))
		}
		x.ops = append(x.ops, is)
	}
	for b, suf := range sizeBinSuffixes {
		x.histRead[b], x.histWrite[b] = -1, -1
		if s.histRead != "" {
			x.histRead[b], x.histWrite[b] = in(s.histRead+"_"+suf), in(s.histWrite+"_"+suf)
		}
	}
	for k := range 4 {
		x.accessSize[k], x.accessCount[k] = -1, -1
		if s.access {
			n := strconv.Itoa(k + 1)
			x.accessSize[k], x.accessCount[k] = in(s.prefix+"_ACCESS"+n+"_ACCESS"), in(s.prefix+"_ACCESS"+n+"_COUNT")
		}
	}
	p := s.prefix + "_"
	x.bytesRead, x.bytesWritten = in(p+"BYTES_READ"), in(p+"BYTES_WRITTEN")
	x.maxByteRead, x.maxByteWritten = in(p+"MAX_BYTE_READ"), in(p+"MAX_BYTE_WRITTEN")
	x.readTime, x.writeTime, x.metaTime = fl(p+"F_READ_TIME"), fl(p+"F_WRITE_TIME"), fl(p+"F_META_TIME")
	x.slowestTime = fl(p + "F_SLOWEST_RANK_TIME")
	x.reads, x.writes = in(p+"READS"), in(p+"WRITES")
	x.seqR, x.seqW, x.conR, x.conW = in(p+"SEQ_READS"), in(p+"SEQ_WRITES"), in(p+"CONSEC_READS"), in(p+"CONSEC_WRITES")
	return x
}

// iv is a monitored integer counter: 0 when absent or negative (-1 is
// darshan's "not monitored").
func iv(c *darshan.CounterRecord, i int) int64 {
	if i < 0 || i >= len(c.Ints) || c.Ints[i] < 0 {
		return 0
	}
	return c.Ints[i]
}

// fv is a monitored floating point counter, as iv.
func fv(c *darshan.CounterRecord, i int) float64 {
	if i < 0 || i >= len(c.Floats) || !(c.Floats[i] >= 0) || math.IsInf(c.Floats[i], 1) {
		return 0
	}
	return c.Floats[i]
}

// modAcc sums one module's records over the logs of the job.
type modAcc struct {
	spec                    *modSpec
	records                 int
	bytesRead, bytesWritten float64
	time                    TimeSplit
	ops                     []int64
	histRead, histWrite     [10]int64
	access                  map[int64]int64
	pattern                 Pattern
	hasHist, hasPattern     bool

	// darshan-util's accumulator, per file across logs, and the
	// performance estimate summed over logs.
	files                map[uint64]*fileAcc
	perf                 Perf
	maxOffsetUnsupported bool
	logRank              map[int64]*[3]float64 // this log's per-rank time: total, meta, rw
	logShared            float64
	logBytes             int64
	x                    *index
}

// fileAcc is one file of a module (darshan-util's file_hash_entry).
type fileAcc struct {
	read, written int64
	maxOffset     int64
	nprocs        int64 // -1: shared by all
}

func newModAcc(s *modSpec) *modAcc {
	return &modAcc{spec: s, ops: make([]int64, len(s.ops)), access: map[int64]int64{}, files: map[uint64]*fileAcc{}}
}

// add adds one record of the module.
func (m *modAcc) add(r darshan.Record, c *darshan.CounterRecord) {
	if m.x == nil || m.x.layout != c.Layout {
		m.x = newIndex(m.spec, c.Layout)
	}
	x := m.x
	m.records++
	br, bw := iv(c, x.bytesRead), iv(c, x.bytesWritten)
	m.bytesRead += float64(br)
	m.bytesWritten += float64(bw)
	rt, wt, mt := fv(c, x.readTime), fv(c, x.writeTime), fv(c, x.metaTime)
	m.time.Read += rt
	m.time.Write += wt
	m.time.Meta += mt
	for i, is := range x.ops {
		for _, j := range is {
			m.ops[i] += iv(c, j)
		}
	}
	if m.spec.histRead != "" {
		for b := range 10 {
			if x.histRead[b] >= 0 || x.histWrite[b] >= 0 {
				m.hasHist = true
			}
			m.histRead[b] += iv(c, x.histRead[b])
			m.histWrite[b] += iv(c, x.histWrite[b])
		}
	}
	for k := range 4 {
		if size, n := iv(c, x.accessSize[k]), iv(c, x.accessCount[k]); n > 0 && x.accessSize[k] >= 0 && c.Ints[x.accessSize[k]] >= 0 {
			m.access[size] += n
		}
	}
	if x.seqR >= 0 {
		m.hasPattern = true
		p := &m.pattern
		p.Reads += iv(c, x.reads)
		p.Writes += iv(c, x.writes)
		p.SequentialReads += iv(c, x.seqR)
		p.SequentialWrites += iv(c, x.seqW)
		p.ConsecutiveReads += iv(c, x.conR)
		p.ConsecutiveWrites += iv(c, x.conW)
	}
	if !m.spec.accum {
		return
	}
	// darshan_log_record_metrics_*: the bytes, the largest offset, and
	// the I/O time (a shared record's is its slowest rank's).
	k := c.Key
	m.logBytes += br + bw
	if k.Rank < 0 {
		m.logShared += fv(c, x.slowestTime)
	} else {
		t := m.logRank[k.Rank]
		if t == nil {
			t = new([3]float64)
			m.logRank[k.Rank] = t
		}
		t[0] += rt + wt + mt
		t[1] += mt
		t[2] += rt + wt
	}
	f := m.files[k.ID]
	if f == nil {
		f = &fileAcc{}
		m.files[k.ID] = f
	}
	f.read += br
	f.written += bw
	if x.maxByteRead < 0 && x.maxByteWritten < 0 {
		m.maxOffsetUnsupported = true
	} else {
		f.maxOffset = max(f.maxOffset, iv(c, x.maxByteRead), iv(c, x.maxByteWritten))
	}
	switch {
	case k.Rank < 0 || f.nprocs < 0:
		f.nprocs = -1
	default:
		f.nprocs++
	}
}

// startLog begins a log's share of the performance estimate.
func (m *modAcc) startLog() {
	m.logRank = map[int64]*[3]float64{}
	m.logShared, m.logBytes = 0, 0
}

// endLog adds the log's estimate (darshan_accumulator_emit): the slowest
// rank on its unique files plus the slowest rank of each shared file.
func (m *modAcc) endLog() {
	var slowest [3]float64
	ranks := make([]int64, 0, len(m.logRank))
	for r := range m.logRank {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks) // the lowest rank wins ties, as darshan-util's loop
	for _, r := range ranks {
		if t := m.logRank[r]; t[0] > slowest[0] {
			slowest = *t
		}
	}
	m.perf.Bytes += m.logBytes
	m.perf.SlowestUniqueTime += slowest[0]
	m.perf.SlowestRankMetaTime += slowest[1]
	m.perf.SlowestSharedTime += m.logShared
	m.logRank = nil
}

// module returns the module's part of the report; nprocs is the job's
// process count.
func (m *modAcc) module(nprocs int64) Module {
	out := Module{Name: m.spec.id.String(), Records: m.records, BytesRead: m.bytesRead, BytesWritten: m.bytesWritten,
		Time: m.time, Signals: []Signal{}, CommonAccess: []Count{}, FileCounts: []FileCount{}}
	if nprocs > 0 {
		n := float64(nprocs)
		out.IOCost = TimeSplit{Read: m.time.Read / n, Write: m.time.Write / n, Meta: m.time.Meta / n}
	}
	for i, o := range m.spec.ops {
		out.Operations = append(out.Operations, Count{Name: o.name, Count: m.ops[i]})
	}
	if m.hasHist {
		out.AccessSizes = &Histogram{Bins: SizeBins, Read: m.histRead[:], Write: m.histWrite[:]}
	}
	if m.hasPattern {
		p := m.pattern
		out.Pattern = &p
	}
	// PyDarshan's common access table: the ACCESS blocks of every record
	// summed by size, the four largest counts (ties: the smaller size).
	type sc struct{ size, n int64 }
	var all []sc
	for s, n := range m.access {
		all = append(all, sc{s, n})
	}
	slices.SortFunc(all, func(a, b sc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.size, b.size)) })
	for _, e := range all[:min(4, len(all))] {
		out.CommonAccess = append(out.CommonAccess, Count{Name: strconv.FormatInt(e.size, 10), Count: e.n})
	}
	if m.spec.accum {
		out.FileCounts = m.fileCounts()
		p := m.perf
		p.Time = p.SlowestUniqueTime + p.SlowestSharedTime
		if p.Time > 0 {
			p.BytesPerSecond = Num(float64(p.Bytes) / p.Time)
		} else {
			p.BytesPerSecond = Value{NA: "no_time"}
		}
		out.Perf = &p
	}
	return out
}

// fileCategories are darshan-util's, in its order.
var fileCategories = []string{"total", "read_only", "write_only", "read_write", "unique", "shared", "partially_shared"}

// fileCounts classifies the module's files as darshan_accumulator_emit
// does: unique when one rank's record has it, shared when a record of all
// ranks (rank -1) has it, partially shared otherwise.
func (m *modAcc) fileCounts() []FileCount {
	cats := make([]FileCount, len(fileCategories))
	for i := range cats {
		cats[i].Category = fileCategories[i]
	}
	ids := make([]uint64, 0, len(m.files))
	for id := range m.files {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		f := m.files[id]
		inc := func(c *FileCount) {
			c.Files++
			c.BytesRead += f.read
			c.BytesWritten += f.written
			if m.maxOffsetUnsupported || c.MaxOffset < 0 {
				c.MaxOffset = -1
			} else {
				c.MaxOffset = max(c.MaxOffset, f.maxOffset)
			}
		}
		inc(&cats[0])
		switch {
		case f.read > 0 && f.written == 0:
			inc(&cats[1])
		case f.written > 0 && f.read == 0:
			inc(&cats[2])
		case f.written > 0 && f.read > 0:
			inc(&cats[3])
		}
		switch {
		case f.nprocs == 1:
			inc(&cats[4])
		case f.nprocs < 0:
			inc(&cats[5])
		default:
			inc(&cats[6])
		}
	}
	return cats
}
