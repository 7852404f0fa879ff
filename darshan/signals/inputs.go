package signals

import "github.com/hpcio/hpcio_exporter/darshan"

// slot is one counter the signals read, in a module-independent numbering:
// the bytes, operation counts and times every data module has, then the
// POSIX counters of the access-pattern signals.
type slot uint8

const (
	sBytesRead slot = iota
	sBytesWritten
	sRead0 // the read operation counters: up to four, summed (MPI-IO)
	sRead1
	sRead2
	sRead3
	sWrite0
	sWrite1
	sWrite2
	sWrite3
	sReadTime
	sWriteTime
	sMetaTime

	// POSIX only
	sSeqReads
	sSeqWrites
	sConsecReads
	sConsecWrites
	sOpens
	sStats
	sSeeks
	sFsyncs
	sFdsyncs
	sFileNotAligned
	sSmallRead0 // the five access size bins under 1 MiB
	sSmallRead1
	sSmallRead2
	sSmallRead3
	sSmallRead4
	sSmallWrite0
	sSmallWrite1
	sSmallWrite2
	sSmallWrite3
	sSmallWrite4
	sMaxByteRead
	sMaxByteWritten
	sSlowestRankBytes
	sFastestRankBytes
	sVarianceRankBytes

	numSlots
)

// Slot groups that signals sum.
var (
	readOps    = []slot{sRead0, sRead1, sRead2, sRead3}
	writeOps   = []slot{sWrite0, sWrite1, sWrite2, sWrite3}
	times      = []slot{sReadTime, sWriteTime, sMetaTime}
	metaOps    = []slot{sOpens, sStats, sSeeks, sFsyncs, sFdsyncs}
	smallRead  = []slot{sSmallRead0, sSmallRead1, sSmallRead2, sSmallRead3, sSmallRead4}
	smallWrite = []slot{sSmallWrite0, sSmallWrite1, sSmallWrite2, sSmallWrite3, sSmallWrite4}
)

// dataModule is a module that counts bytes: the table "Data modules" of
// docs/signals.md, as counter names per slot ("" where the module has none).
type dataModule struct {
	id     darshan.ModuleID
	names  [numSlots]string
	floats uint64 // bit per slot: the counter is a floating point one
}

// DataModules are the modules with level 2 and common level 3 signals, in
// module id order (the order of the report).
var DataModules = []darshan.ModuleID{darshan.POSIX, darshan.MPIIO, darshan.H5D, darshan.PnetCDFVar, darshan.STDIO, darshan.DFS, darshan.DAOS}

var dataModuleTable = func() map[darshan.ModuleID]*dataModule {
	mk := func(id darshan.ModuleID, p string, reads, writes []string) *dataModule {
		d := &dataModule{id: id}
		d.names[sBytesRead] = p + "_BYTES_READ"
		d.names[sBytesWritten] = p + "_BYTES_WRITTEN"
		for i, n := range reads {
			d.names[sRead0+slot(i)] = p + "_" + n
		}
		for i, n := range writes {
			d.names[sWrite0+slot(i)] = p + "_" + n
		}
		d.names[sReadTime] = p + "_F_READ_TIME"
		d.names[sWriteTime] = p + "_F_WRITE_TIME"
		d.names[sMetaTime] = p + "_F_META_TIME"
		d.floats = 1<<sReadTime | 1<<sWriteTime | 1<<sMetaTime
		return d
	}
	t := map[darshan.ModuleID]*dataModule{
		darshan.POSIX: mk(darshan.POSIX, "POSIX", []string{"READS"}, []string{"WRITES"}),
		darshan.STDIO: mk(darshan.STDIO, "STDIO", []string{"READS"}, []string{"WRITES"}),
		darshan.MPIIO: mk(darshan.MPIIO, "MPIIO",
			[]string{"INDEP_READS", "COLL_READS", "SPLIT_READS", "NB_READS"},
			[]string{"INDEP_WRITES", "COLL_WRITES", "SPLIT_WRITES", "NB_WRITES"}),
		darshan.H5D: mk(darshan.H5D, "H5D", []string{"READS"}, []string{"WRITES"}),
		darshan.PnetCDFVar: mk(darshan.PnetCDFVar, "PNETCDF_VAR",
			[]string{"INDEP_READS", "COLL_READS", "NB_READS"},
			[]string{"INDEP_WRITES", "COLL_WRITES", "NB_WRITES"}),
		darshan.DFS: mk(darshan.DFS, "DFS", []string{"READS", "READXS"}, []string{"WRITES", "WRITEXS"}),
		darshan.DAOS: mk(darshan.DAOS, "DAOS",
			[]string{"ARRAY_READS", "OBJ_FETCHES", "KV_GETS"},
			[]string{"ARRAY_WRITES", "OBJ_UPDATES", "KV_PUTS"}),
	}
	p := t[darshan.POSIX]
	for s, n := range map[slot]string{
		sSeqReads: "SEQ_READS", sSeqWrites: "SEQ_WRITES", sConsecReads: "CONSEC_READS",
		sConsecWrites: "CONSEC_WRITES", sOpens: "OPENS", sStats: "STATS", sSeeks: "SEEKS",
		sFsyncs: "FSYNCS", sFdsyncs: "FDSYNCS", sFileNotAligned: "FILE_NOT_ALIGNED",
		sMaxByteRead: "MAX_BYTE_READ", sMaxByteWritten: "MAX_BYTE_WRITTEN",
		sSlowestRankBytes: "SLOWEST_RANK_BYTES", sFastestRankBytes: "FASTEST_RANK_BYTES",
		sVarianceRankBytes: "F_VARIANCE_RANK_BYTES",
	} {
		p.names[s] = "POSIX_" + n
	}
	for i, b := range []string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M"} {
		p.names[sSmallRead0+slot(i)] = "POSIX_SIZE_READ_" + b
		p.names[sSmallWrite0+slot(i)] = "POSIX_SIZE_WRITE_" + b
	}
	p.floats |= 1 << sVarianceRankBytes
	return t
}()

// IsDataModule reports whether m is one of DataModules.
func IsDataModule(m darshan.ModuleID) bool { return dataModuleTable[m] != nil }

// Inputs are the counters the signals of one data module record are
// computed from — or the sums of those counters over several records (a
// module, a job, several logs of a job).
//
// For each counter it keeps three facts, so that sums keep the NA reasons
// of docs/signals.md: seen (a record of a module that has the counter was
// added), available (one of them has the counter in its module version) and
// monitored (one of them has a value other than -1). Values of -1 are
// skipped in sums. A sum of records none of which has the counter is
// not_available, one whose records all hold -1 is not_monitored.
type Inputs struct {
	Module darshan.ModuleID
	// Records is the number of records added.
	Records int
	v       [numSlots]float64
	seen    uint64
	avail   uint64
	mon     uint64
}

// Add adds the counters of o to in (the module of in is kept).
func (in *Inputs) Add(o *Inputs) {
	for s := range numSlots {
		if o.mon&(1<<s) != 0 {
			in.v[s] += o.v[s]
		}
	}
	in.seen |= o.seen
	in.avail |= o.avail
	in.mon |= o.mon
	in.Records += o.Records
}

// BytesRead and the methods below return the sums of the monitored values
// (0 when there are none).
func (in *Inputs) BytesRead() float64    { return in.v[sBytesRead] }
func (in *Inputs) BytesWritten() float64 { return in.v[sBytesWritten] }

// Bytes returns bytes read plus bytes written, by which the sidecar chooses
// the records it exports.
func (in *Inputs) Bytes() float64 { return in.v[sBytesRead] + in.v[sBytesWritten] }

// check returns the first NA reason of inputs slots: NotAvailable when any
// of them lacks, then NotMonitored when any is -1; OK otherwise. Slots the
// module does not have (never seen) are no inputs.
func (in *Inputs) check(groups ...[]slot) Reason {
	var mask uint64
	for _, g := range groups {
		for _, s := range g {
			mask |= 1 << s
		}
	}
	mask &= in.seen
	if mask&^in.avail != 0 {
		return NotAvailable
	}
	if mask&^in.mon != 0 {
		return NotMonitored
	}
	return OK
}

// sum returns the sum of the slots' values.
func (in *Inputs) sum(group ...slot) float64 {
	var t float64
	for _, s := range group {
		t += in.v[s]
	}
	return t
}

func one(s slot) []slot { return []slot{s} }

// extractor reads the Inputs of counter records, caching the counter
// indexes of the last layout it saw (records of a module share one).
type extractor struct {
	layout *darshan.Layout
	mod    *dataModule
	index  [numSlots]int // counter index in Ints or Floats; -1 when absent
}

// inputs fills in with record r's counters and reports whether r is a
// record of a data module.
func (x *extractor) inputs(r darshan.Record, in *Inputs) bool {
	c := darshan.CountersOf(r)
	if c == nil || c.Layout == nil {
		return false
	}
	mod := dataModuleTable[c.Module]
	if mod == nil {
		return false
	}
	if c.Layout != x.layout {
		x.layout, x.mod = c.Layout, mod
		for s := range numSlots {
			x.index[s] = -1
			name := mod.names[s]
			if name == "" {
				continue
			}
			if mod.floats&(1<<s) != 0 {
				if i := c.Layout.FloatIndex(name); c.Layout.HasFloat(i) {
					x.index[s] = i
				}
			} else if i := c.Layout.IntIndex(name); c.Layout.HasInt(i) {
				x.index[s] = i
			}
		}
	}
	*in = Inputs{Module: c.Module, Records: 1}
	for s := range numSlots {
		if mod.names[s] == "" {
			continue
		}
		in.seen |= 1 << s
		i := x.index[s]
		if i < 0 {
			continue
		}
		var v float64
		if mod.floats&(1<<s) != 0 {
			if i >= len(c.Floats) {
				continue
			}
			v = c.Floats[i]
		} else {
			if i >= len(c.Ints) {
				continue
			}
			v = float64(c.Ints[i])
		}
		in.avail |= 1 << s
		if v == -1 {
			continue
		}
		in.mon |= 1 << s
		in.v[s] = v
	}
	return true
}

// RecordInputs returns the inputs of one data module record; ok is false
// for records of other modules.
func RecordInputs(r darshan.Record) (in Inputs, ok bool) {
	var x extractor
	ok = x.inputs(r, &in)
	return in, ok
}
