package darshan

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// sampleLog describes a log to write: job data, names and records.
type sampleLog struct {
	job     Job
	exe     string
	mounts  []Mount
	names   []string
	records []Record
	partial uint64
}

// write writes the sample with a Writer configured by opts.
func (s *sampleLog) write(t testing.TB, opts func(*Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job, w.Exe, w.Mounts, w.Partial = s.job, s.exe, s.mounts, s.partial
	for _, n := range s.names {
		w.AddName(n)
	}
	if opts != nil {
		opts(w)
	}
	for _, r := range s.records {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// sampler draws counter values that look like a log's: mostly small
// counts, some -1 (not monitored), some large.
type sampler struct{ r *rand.Rand }

func newSampler(seed uint64) *sampler { return &sampler{rand.New(rand.NewPCG(seed, 0x5eed))} }

func (s *sampler) int() int64 {
	switch s.r.IntN(10) {
	case 0:
		return -1
	case 1:
		return s.r.Int64() >> s.r.IntN(40)
	case 2, 3:
		return 0
	}
	return int64(s.r.IntN(5000))
}

func (s *sampler) float() float64 {
	switch s.r.IntN(8) {
	case 0:
		return -1
	case 1:
		return 0
	}
	return s.r.Float64() * 100
}

func (s *sampler) counters(m ModuleID, key Key) CounterRecord {
	l := LayoutOf(m, m.CurrentVersion())
	r := CounterRecord{Key: key, Layout: l, Ints: make([]int64, len(l.Ints))}
	if len(l.Floats) > 0 { // a reader gives nil for no counters
		r.Floats = make([]float64, len(l.Floats))
	}
	for i := range r.Ints {
		r.Ints[i] = s.int()
	}
	for i := range r.Floats {
		r.Floats[i] = s.float()
	}
	return r
}

func (s *sampler) segments(n int) []Segment {
	out := make([]Segment, n)
	t := s.r.Float64()
	for i := range out {
		d := s.r.Float64() / 100
		out[i] = Segment{Offset: int64(s.r.IntN(1 << 30)), Length: int64(s.r.IntN(1 << 20)),
			Start: t, End: t + d, PthreadID: uint64(140000000000000 + s.r.IntN(4))}
		t += d
	}
	return out
}

// allModulesSample has records of every module this package writes, on a
// 4-rank job with two files.
func allModulesSample(seed uint64) *sampleLog {
	s := newSampler(seed)
	files := []string{"/scratch/run/out.dat", "/home/user/in.h5"}
	log := &sampleLog{
		job: Job{UID: 1000, StartTime: 1700000000, StartNsec: 123456789, EndTime: 1700000100, EndNsec: 987654321,
			NProcs: 4, JobID: 42, Metadata: "lib_ver=3.5.0\nh=romio_no_indep_rw=true;cb_nodes=4\n"},
		exe:    "/opt/app/bin/sim -n 4 --out /scratch/run",
		mounts: []Mount{{Path: "/", Type: "ext4"}, {Path: "/scratch", Type: "lustre"}, {Path: "/home", Type: "nfs"}},
		names:  append(files, "heatmap:POSIX", "heatmap:STDIO", "/dataset/temperature", "temperature"),
	}
	id := func(name string) uint64 { return RecordID(name) }
	var recs []Record
	for _, m := range []ModuleID{POSIX, MPIIO, STDIO, H5F, PnetCDFFile, BGQ} {
		for rank := int64(-1); rank < 1; rank++ {
			c := s.counters(m, Key{Module: m, Rank: rank, ID: id(files[0])})
			recs = append(recs, &c)
		}
	}
	recs = append(recs,
		&DatasetRecord{CounterRecord: s.counters(H5D, Key{H5D, -1, id("/dataset/temperature")}), FileRecID: id(files[1])},
		&DatasetRecord{CounterRecord: s.counters(PnetCDFVar, Key{PnetCDFVar, 2, id("temperature")}), FileRecID: id(files[0])},
		&LustreRecord{Key: Key{Lustre, -1, id(files[0])}, OSTCount: -1, MDTCount: -1, StripeOffset: -1,
			Components: []LustreComponent{
				{StripeSize: 1 << 20, StripeCount: 2, StripePattern: 0, Flags: 16, ExtentStart: 0, ExtentEnd: 1 << 26, MirrorID: 0, Pool: "flash"},
				{StripeSize: 4 << 20, StripeCount: 3, StripePattern: 4, Flags: 0x12, ExtentStart: 1 << 26, ExtentEnd: -1, MirrorID: 0},
			},
			OSTs: []int64{7, 8, 1, 2, 3}},
		&DXTRecord{Key: Key{DXTPOSIX, 0, id(files[0])}, Hostname: "nid00042", Writes: s.segments(5), Reads: s.segments(3), HasThreads: true},
		&DXTRecord{Key: Key{DXTMPIIO, 1, id(files[0])}, Hostname: "nid00043", Writes: s.segments(2), Reads: nil, HasThreads: true},
		&MDHIMRecord{CounterRecord: mdhimCounters(s, id("mdhim-db"), 3), ServerHistogram: []int64{5, 0, 9}},
		&APXCHeader{Key: Key{APXC, -1, 0}, Magic: APXCMagic, Blades: 4, Chassis: 2, Groups: 1, MemoryMode: 4, ClusterMode: 2 | 1<<31, AppID: 77},
		&APXCRecord{CounterRecord: s.counters(APXC, Key{APXC, 0, 11}), Group: 0, Chassis: 1, Blade: 2, Node: 3},
		&APMPIHeader{Key: Key{APMPI, -1, 0}, Magic: APMPIMagic, SyncFlag: 1, VarianceTotalMPITime: 0.25, VarianceTotalMPISyncTime: 0.125},
		&APMPIRecord{CounterRecord: s.counters(APMPI, Key{APMPI, 0, 9}), NodeName: "nid00042"},
		&HeatmapRecord{Key: Key{Heatmap, 0, id("heatmap:POSIX")}, BinWidth: 0.1,
			ReadBins: []int64{0, 4096, 0, 1 << 20}, WriteBins: []int64{8192, 0, 0, 0}},
		&HeatmapRecord{Key: Key{Heatmap, 0, id("heatmap:STDIO")}, BinWidth: 0.1,
			ReadBins: []int64{1, 2, 3, 4}, WriteBins: []int64{5, 6, 7, 8}},
		&DFSRecord{CounterRecord: s.counters(DFS, Key{DFS, -1, id(files[0])}),
			PoolUUID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, ContainerUUID: [16]byte{0xaa, 0xbb}},
		&DAOSRecord{CounterRecord: s.counters(DAOS, Key{DAOS, -1, 1234}),
			PoolUUID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, ContainerUUID: [16]byte{0xaa, 0xbb},
			OIDHi: 947445769040480705, OIDLo: 6371},
	)
	log.records = recs
	return log
}

// mdhimCounters makes MDHIM counters with MDHIM_SERVERS = servers.
func mdhimCounters(s *sampler, id uint64, servers int64) CounterRecord {
	c := s.counters(MDHIM, Key{MDHIM, 0, id})
	c.Ints[mdhimServers] = servers
	return c
}
