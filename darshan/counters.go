package darshan

import (
	"encoding/binary"
	"math"
	"sync"
)

// Layout names the counters of a module's records. Records are always
// decoded into the module's current layout (that of darshan-util 3.5.0),
// translating older module versions the way darshan-util does; the Layout
// of a log also tells which of those counters the log's module version
// actually recorded. Counters that version lacks are filled with -1 (0 for
// POSIX_RENAMED_FROM), which would otherwise read as "not monitored".
type Layout struct {
	Module  ModuleID
	Version uint32   // the module version the log was written with
	Ints    []string // names of the integer counters, in record order
	Floats  []string // names of the floating point counters, in record order

	set          *counterSet
	absentInts   []bool // nil when every counter is present
	absentFloats []bool
}

// IntIndex returns the index of the named integer counter in Ints, or -1.
func (l *Layout) IntIndex(name string) int {
	if i, ok := l.set.intIndex[name]; ok {
		return i
	}
	return -1
}

// FloatIndex returns the index of the named floating point counter in
// Floats, or -1.
func (l *Layout) FloatIndex(name string) int {
	if i, ok := l.set.floatIndex[name]; ok {
		return i
	}
	return -1
}

// HasInt reports whether the log's module version records integer counter i.
func (l *Layout) HasInt(i int) bool {
	return i >= 0 && i < len(l.Ints) && (l.absentInts == nil || !l.absentInts[i])
}

// HasFloat reports whether the log's module version records floating point
// counter i.
func (l *Layout) HasFloat(i int) bool {
	return i >= 0 && i < len(l.Floats) && (l.absentFloats == nil || !l.absentFloats[i])
}

// CounterRecord is a record made of integer and floating point counters:
// POSIX, MPI-IO, STDIO, H5F, PNETCDF_FILE and BG/Q records, and the counter
// part of the other counter modules.
type CounterRecord struct {
	Key
	Layout *Layout
	Ints   []int64
	Floats []float64
}

// Int returns the named integer counter. ok is false when the module has
// no such counter or the log's module version does not record it.
func (r *CounterRecord) Int(name string) (v int64, ok bool) {
	i := r.Layout.IntIndex(name)
	if !r.Layout.HasInt(i) {
		return 0, false
	}
	return r.Ints[i], true
}

// Float returns the named floating point counter, like Int.
func (r *CounterRecord) Float(name string) (v float64, ok bool) {
	i := r.Layout.FloatIndex(name)
	if !r.Layout.HasFloat(i) {
		return 0, false
	}
	return r.Floats[i], true
}

// Uint returns the named counter of a record whose counters are unsigned
// (APMPI, APXC), like Int.
func (r *CounterRecord) Uint(name string) (uint64, bool) {
	v, ok := r.Int(name)
	return uint64(v), ok
}

// Clone returns a deep copy of r.
func (r *CounterRecord) Clone() Record { c := r.cloneCounters(); return &c }

func (r *CounterRecord) cloneCounters() CounterRecord {
	c := *r
	c.Ints = append([]int64(nil), r.Ints...)
	c.Floats = append([]float64(nil), r.Floats...)
	return c
}

// counterSet holds a module's current counter names and their indexes.
// The names and indexes are made on first use (load), not at start-up:
// every process of the binary would otherwise build those of all 17
// modules (2,000 allocations, 0.4 ms) whether it reads a log or not.
type counterSet struct {
	module     ModuleID
	names      func() (ints, floats []string)
	once       sync.Once
	ints       []string
	floats     []string
	intIndex   map[string]int
	floatIndex map[string]int

	mu      sync.Mutex
	layouts map[layoutKey]*Layout
}

type layoutKey struct {
	ver uint32
	v   *versionLayout
}

func newCounterSet(m ModuleID, names func() (ints, floats []string)) *counterSet {
	return &counterSet{module: m, names: names}
}

// load makes the set's names and indexes, once; it returns s.
func (s *counterSet) load() *counterSet {
	s.once.Do(func() {
		s.ints, s.floats = s.names()
		s.intIndex, s.floatIndex = make(map[string]int, len(s.ints)), make(map[string]int, len(s.floats))
		for i, n := range s.ints {
			s.intIndex[n] = i
		}
		for i, n := range s.floats {
			s.floatIndex[n] = i
		}
		s.layouts = map[layoutKey]*Layout{}
	})
	return s
}

// layout returns the (cached) Layout of module version ver, whose record
// translation v describes; v is nil for the current version.
func (s *counterSet) layout(ver uint32, v *versionLayout) *Layout {
	s.load()
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.layouts[layoutKey{ver, v}]; ok {
		return l
	}
	l := &Layout{Module: s.module, Version: ver, Ints: s.ints, Floats: s.floats, set: s}
	if v != nil {
		l.absentInts = absent(v.ints, len(s.ints))
		l.absentFloats = absent(v.floats, len(s.floats))
	}
	s.layouts[layoutKey{ver, v}] = l
	return l
}

func absent(from []int, n int) []bool {
	if from == nil {
		return nil
	}
	a := make([]bool, n)
	for i, src := range from {
		a[i] = src < 0
	}
	return a
}

// versionLayout describes how an older module version's record maps onto
// the current layout: for each current counter, the index of the counter in
// the old record, or -1 when the old version lacks it. Nil slices mean "the
// same as the current layout".
type versionLayout struct {
	size   int   // bytes of one record in the log
	skip   int   // bytes between the base record and the integer counters
	nInts  int   // integer counters in the old record (the floats follow them)
	ints   []int // current index -> old index or -1
	floats []int // current index -> old index or -1
}

// fill decodes the counters of one record into r, translating from v (nil:
// the current layout). body starts at the record's integer counters.
// absentInt gives the value of the integer counters an old version lacks.
func fill(r *CounterRecord, body []byte, big bool, v *versionLayout, nInts, nFloats int, absentInt func(i int) int64) {
	if cap(r.Ints) < nInts {
		r.Ints = make([]int64, nInts)
	}
	if cap(r.Floats) < nFloats {
		r.Floats = make([]float64, nFloats)
	}
	r.Ints, r.Floats = r.Ints[:nInts], r.Floats[:nFloats]
	if v == nil {
		getInt64s(r.Ints, body, big)
		getFloat64s(r.Floats, body[8*nInts:], big)
		return
	}
	floats := body[8*v.nInts:]
	for i, src := range v.ints {
		if src < 0 {
			r.Ints[i] = absentInt(i)
		} else {
			r.Ints[i] = int64(getUint64(body[8*src:], big))
		}
	}
	for i, src := range v.floats {
		if src < 0 {
			r.Floats[i] = -1
		} else {
			r.Floats[i] = math.Float64frombits(getUint64(floats[8*src:], big))
		}
	}
}

// counterDecoder decodes fixed-size records of counters.
type counterDecoder struct {
	module    ModuleID
	set       *counterSet
	layout    *Layout
	big       bool
	size      int            // bytes of a record in the log
	skip      int            // bytes between the base record and the counters
	v         *versionLayout // nil for the current version
	absentInt func(int) int64
	// omit, when set, drops a record entirely (POSIX v1 records that hold
	// stdio data, which darshan-util cannot translate).
	omit func(body []byte) bool
	// post, when set, finishes a translated record (PnetCDF file opens).
	post func(r *CounterRecord, body []byte)
	rec  CounterRecord
}

// newCounterDecoder prepares to decode version ver of the module whose
// current record is size bytes with skip bytes before its counters. old
// maps older versions to their translation.
func newCounterDecoder(set *counterSet, ver uint32, big bool, size, skip int, old func() map[uint32]*versionLayout) *counterDecoder {
	d := &counterDecoder{module: set.module, set: set, big: big, size: size, skip: skip, absentInt: minusOne}
	if v, ok := oldLayout(old, ver); ok && ver != set.module.CurrentVersion() {
		d.v, d.size, d.skip = v, v.size, v.skip
	}
	d.layout = set.layout(ver, d.v)
	d.rec.Layout = d.layout
	return d
}

// decode cuts the next record from rr into d.rec and returns its bytes.
func (d *counterDecoder) decode(rr *regionReader) ([]byte, error) {
	for {
		b, err := rr.next(d.size)
		if err != nil {
			return nil, err
		}
		body := b[16+d.skip:]
		if d.omit != nil && d.omit(body) {
			continue
		}
		d.rec.Key = base(d.module, b, d.big)
		fill(&d.rec, body, d.big, d.v, len(d.set.ints), len(d.set.floats), d.absentInt)
		if d.post != nil && d.v != nil {
			d.post(&d.rec, body)
		}
		return b, nil
	}
}

func (d *counterDecoder) next(rr *regionReader) (Record, error) {
	if _, err := d.decode(rr); err != nil {
		return nil, err
	}
	return &d.rec, nil
}

// minusOne is the value darshan-util gives counters an old version lacks.
func minusOne(int) int64 { return -1 }

// identity returns [0, 1, …, n-1]; building block of versionLayout tables.
func identity(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// insertAbsent returns the index table that results from inserting count
// absent counters (-1) at position at of table t.
func insertAbsent(t []int, at, count int) []int {
	out := make([]int, 0, len(t)+count)
	out = append(out, t[:at]...)
	for range count {
		out = append(out, -1)
	}
	return append(out, t[at:]...)
}

func getUint64(b []byte, big bool) uint64 {
	if big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

func getUint32(b []byte, big bool) uint32 {
	if big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func getInt64s(dst []int64, b []byte, big bool) {
	b = b[:8*len(dst)]
	if big {
		for i := range dst {
			dst[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

func getFloat64s(dst []float64, b []byte, big bool) {
	b = b[:8*len(dst)]
	if big {
		for i := range dst {
			dst[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i:]))
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// base decodes the darshan_base_record that starts every record.
func base(m ModuleID, b []byte, big bool) Key {
	return Key{Module: m, ID: getUint64(b, big), Rank: int64(getUint64(b[8:], big))}
}

// sizeBuckets returns the ten access-size histogram counter names
// prefix_0_100 … prefix_1G_PLUS that several modules share.
func sizeBuckets(prefix string) []string {
	var out []string
	for _, b := range []string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"} {
		out = append(out, prefix+"_"+b)
	}
	return out
}

// accessBlocks returns the names of the four "most common access" blocks of
// the HDF5 dataset and PnetCDF variable modules: for each, the access size
// and the lengths and strides in the last five dimensions.
func accessBlocks(prefix string) []string {
	var out []string
	for i := 1; i <= 4; i++ {
		p := prefix + "_ACCESS" + string(rune('0'+i))
		out = append(out, p+"_ACCESS")
		for _, kind := range []string{"LENGTH", "STRIDE"} {
			for d := 1; d <= 5; d++ {
				out = append(out, p+"_"+kind+"_D"+string(rune('0'+d)))
			}
		}
	}
	return out
}

// concat joins name lists.
func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// prefixed returns prefix+"_"+name for each name.
func prefixed(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + "_" + n
	}
	return out
}

// timerNames are the floating point counters of the HDF5 dataset and
// PnetCDF variable modules, after their prefix.
var timerNames = []string{
	"F_OPEN_START_TIMESTAMP", "F_READ_START_TIMESTAMP", "F_WRITE_START_TIMESTAMP",
	"F_CLOSE_START_TIMESTAMP", "F_OPEN_END_TIMESTAMP", "F_READ_END_TIMESTAMP",
	"F_WRITE_END_TIMESTAMP", "F_CLOSE_END_TIMESTAMP", "F_READ_TIME", "F_WRITE_TIME",
	"F_META_TIME", "F_MAX_READ_TIME", "F_MAX_WRITE_TIME", "F_FASTEST_RANK_TIME",
	"F_SLOWEST_RANK_TIME", "F_VARIANCE_RANK_TIME", "F_VARIANCE_RANK_BYTES",
}

// rankCounters are the fastest/slowest rank counters that end the integer
// counters of most modules, after their prefix.
var rankCounters = []string{"FASTEST_RANK", "FASTEST_RANK_BYTES", "SLOWEST_RANK", "SLOWEST_RANK_BYTES"}

// oldLayout returns the translation of version ver in old (the layouts of
// a module's older versions, made on first use; nil when it has none).
func oldLayout(old func() map[uint32]*versionLayout, ver uint32) (*versionLayout, bool) {
	if old == nil {
		return nil, false
	}
	v, ok := old()[ver]
	return v, ok
}

// LayoutOf returns the counter layout of module m written with module
// version version, or nil when m's records are not made of counters
// (LUSTRE, HEATMAP, DXT_*) or the version is unknown.
func LayoutOf(m ModuleID, version uint32) *Layout {
	mod := m.Module()
	if mod == nil || mod.counters == nil || version == 0 || version > mod.Version {
		return nil
	}
	v, _ := oldLayout(mod.old, version)
	if version == mod.Version {
		v = nil
	}
	return mod.counters.layout(version, v)
}
