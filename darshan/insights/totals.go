package insights

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// MaxFiles is how many files (or records) a Ranking keeps: Drishti shows
// at most ten details per insight (DETAILS_MAX_SIZE), and keeping no more
// is what bounds Totals.
const MaxFiles = 10

// Ranked is one file (or record) of a Ranking.
type Ranked struct {
	Name  string  // the file's full path ("" when the log has no name for it)
	Value float64 // the quantity ranked
	Aux   float64 // a second quantity some triggers need (see the Ranking's doc)
}

// Ranking keeps the MaxFiles largest values of one per-file quantity, and
// how many values were offered: enough to decide "some file exceeds the
// threshold" exactly (Max), to list the worst files, and to count the files
// above a threshold exactly while fewer than MaxFiles of the kept ones
// exceed it (a lower bound otherwise, said so in the message).
type Ranking struct {
	Top []Ranked // the largest values, largest first (ties: by name)
	N   int64    // values offered (only values > 0 are)
}

// Max is the largest value offered; 0 when none. Top keeps it first: a
// field of its own would take the Totals past 1,024 bytes, into the next
// size class, for each log a sidecar holds.
func (r *Ranking) Max() float64 {
	if len(r.Top) == 0 {
		return 0
	}
	return r.Top[0].Value
}

func (r *Ranking) offer(name string, v, aux float64) {
	if !(v > 0) { // also drops NaN
		return
	}
	r.N++
	e := Ranked{name, v, aux}
	n := len(r.Top)
	if n == MaxFiles && !better(e, r.Top[n-1]) {
		return
	}
	// Its place: after the entries better than it (at most MaxFiles: a
	// scan from the end costs less than a binary search and its calls).
	i := n
	for i > 0 && !better(r.Top[i-1], e) {
		i--
	}
	if n < MaxFiles {
		r.Top = append(r.Top, Ranked{})
		n++
	}
	copy(r.Top[i+1:n], r.Top[i:n-1])
	r.Top[i] = e
}

// offerID is offer of the file or record id, named by names: the name
// (a map lookup) is looked up only when the entry may be kept. A value
// below the last kept one is not, whatever its name: offer would only
// count it.
func (r *Ranking) offerID(names map[uint64]string, id uint64, v, aux float64) {
	if !(v > 0) { // also drops NaN
		return
	}
	if n := len(r.Top); n == MaxFiles && v < r.Top[n-1].Value {
		r.N++
		return
	}
	r.offer(names[id], v, aux)
}

func better(a, b Ranked) bool {
	if a.Value != b.Value {
		return a.Value > b.Value
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Aux > b.Aux
}

// above returns how many offered values exceed th, and whether that count
// is exact (it is a lower bound when every kept value exceeds th and some
// were not kept).
func (r *Ranking) above(th float64) (n int, exact bool) {
	for _, e := range r.Top {
		if e.Value > th {
			n++
		}
	}
	return n, n < len(r.Top) || int64(len(r.Top)) == r.N
}

func (r *Ranking) merge(o *Ranking) {
	r.N += o.N
	n := r.N
	for _, e := range o.Top {
		r.offer(e.Name, e.Value, e.Aux)
	}
	r.N = n // offer counted them again
}

func (r *Ranking) clone() Ranking {
	c := *r
	c.Top = slices.Clone(r.Top)
	return c
}

// numBins is the number of Darshan's access size bins.
const numBins = 10

// Totals is what the triggers need from one log, or from the logs of one
// job (Merge). Counters are sums over records, skipping values below 0
// (darshan's "not monitored"); maxima are maxima over records. Totals does
// not depend on the thresholds: any Config can be applied to it.
//
// Its size is fixed (984 bytes on 64-bit machines) but for the Rankings,
// eleven of at most MaxFiles entries of 32 bytes plus the file's name,
// and the 8-byte node hashes of DXT logs.
type Totals struct {
	// The fields that hold pointers come first: the garbage collector
	// scans an object up to its last pointer, and a sidecar holds a
	// Totals per log.

	// Hosts are hashes of the distinct host names of the DXT records,
	// sorted: the compute nodes, when the log has DXT.
	Hosts []uint64
	// Per-file quantities, each its Ranking (Value; Aux):
	MetaTime          Ranking // POSIX records by POSIX_F_META_TIME (s; rank)
	SmallReadFiles    Ranking // POSIX files by small reads (< 1 MiB) over all their records
	SmallWriteFiles   Ranking // … writes
	SharedSmallReads  Ranking // shared POSIX files by small reads (< 1 MiB)
	SharedSmallWrites Ranking // … writes
	StragglerBytes    Ranking // shared POSIX files by |slowest−fastest rank bytes| / bytes
	StragglerTime     Ranking // shared POSIX files by |slowest−fastest rank time| / (read+write+meta time)
	WriteImbalance    Ranking // POSIX files by (max−min)/max bytes written among their rank records
	ReadImbalance     Ranking // … read
	IndepReadRecords  Ranking // MPI-IO records by independent reads (; independent reads+writes)
	IndepWriteRecords Ranking // … writes (; independent reads+writes)

	Logs int // logs added

	// Modules has bit 1<<id set for each darshan.ModuleID with data in a
	// log (a region of non-zero length).
	Modules uint64
	// HDF5Names reports an MPI-IO file named *.h5 or *.hdf5.
	HDF5Names bool

	// Bytes moved per interface.
	STDIOBytesRead, STDIOBytesWritten int64
	POSIXBytesRead, POSIXBytesWritten int64
	MPIIOBytesRead, MPIIOBytesWritten int64

	// POSIX: every record.
	Reads, Writes                   int64
	ReadBins, WriteBins             [numBins]int64 // POSIX_SIZE_{READ,WRITE}_0_100 … _1G_PLUS
	MemNotAligned, FileNotAligned   int64
	MaxByteRead, MaxByteWritten     int64 // maxima over records; -1 when no record has one
	ConsecReads, ConsecWrites       int64
	SeqReads, SeqWrites             int64
	SharedRecords                   int64 // records of files shared by every rank (rank -1)
	SharedReads, SharedWrites       int64
	SharedReadBins, SharedWriteBins [numBins]int64
	POSIXRecords                    int64
	MPIIORecords                    int64

	// MPI-IO.
	IndepReads, CollReads, SplitReads, NBReads     int64
	IndepWrites, CollWrites, SplitWrites, NBWrites int64

	// CBNodes is the cb_nodes MPI-IO hint of the job (darshan's "h"
	// metadata), 0 when not set.
	CBNodes int64

	// entries is the array the Rankings' entries lie in when one holds
	// them all (Builder.Totals, Packed.Unpack), for Unpack to reuse.
	entries []Ranked
}

// Has reports whether module m had data.
func (t *Totals) Has(m darshan.ModuleID) bool {
	return m >= 0 && m < 64 && t.Modules&(1<<uint(m)) != 0
}

// Nodes is the number of compute nodes the DXT records were written on, 0
// when the logs have no DXT.
func (t *Totals) Nodes() int { return len(t.Hosts) }

// small sums the bins of requests smaller than smallBytes (a bin edge).
func small(bins *[numBins]int64, smallBytes int64) int64 {
	var n int64
	for i, e := range sizeBinEdges {
		if e > smallBytes {
			break
		}
		n += bins[i]
	}
	return n
}

// posixIdx are the indices of the counters FromLog reads in one POSIX
// layout; -1 for a counter the layout does not record.
type posixIdx struct {
	reads, writes, bytesR, bytesW, memNA, fileNA, maxR, maxW int
	consecR, consecW, seqR, seqW, slowB, fastB               int
	readBins, writeBins                                      [numBins]int
	metaT, readT, writeT, slowT, fastT                       int
	// bins: the read bins are the ints from bins, the write bins follow
	// (every layout this package reads has them so); -1 otherwise.
	bins int
}

func intIdx(l *darshan.Layout, name string) int {
	if i := l.IntIndex(name); l.HasInt(i) {
		return i
	}
	return -1
}

func floatIdx(l *darshan.Layout, name string) int {
	if i := l.FloatIndex(name); l.HasFloat(i) {
		return i
	}
	return -1
}

var binNames = [numBins]string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"}

// layoutCache caches, per Layout, the counter indexes a Builder reads
// (the reader makes one Layout per module version, shared by every log of
// that version: a few; the cache is bounded all the same). Looking the
// indexes up by name for every log cost more than a small log's insights.
type layoutCache[T any] struct {
	mu   sync.Mutex
	m    map[*darshan.Layout]*T
	make func(*darshan.Layout) *T
}

func (c *layoutCache[T]) of(l *darshan.Layout) *T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[l]; ok {
		return p
	}
	p := c.make(l)
	if c.m == nil {
		c.m = map[*darshan.Layout]*T{}
	}
	if len(c.m) < 64 {
		c.m[l] = p
	}
	return p
}

var (
	posixIdxs = layoutCache[posixIdx]{make: newPosixIdx}
	mpiioIdxs = layoutCache[mpiioIdx]{make: newMPIIOIdx}
	stdioIdxs = layoutCache[stdioIdx]{make: newSTDIOIdx}
)

func newPosixIdx(l *darshan.Layout) *posixIdx {
	p := &posixIdx{
		reads: intIdx(l, "POSIX_READS"), writes: intIdx(l, "POSIX_WRITES"),
		bytesR: intIdx(l, "POSIX_BYTES_READ"), bytesW: intIdx(l, "POSIX_BYTES_WRITTEN"),
		memNA: intIdx(l, "POSIX_MEM_NOT_ALIGNED"), fileNA: intIdx(l, "POSIX_FILE_NOT_ALIGNED"),
		maxR: intIdx(l, "POSIX_MAX_BYTE_READ"), maxW: intIdx(l, "POSIX_MAX_BYTE_WRITTEN"),
		consecR: intIdx(l, "POSIX_CONSEC_READS"), consecW: intIdx(l, "POSIX_CONSEC_WRITES"),
		seqR: intIdx(l, "POSIX_SEQ_READS"), seqW: intIdx(l, "POSIX_SEQ_WRITES"),
		slowB: intIdx(l, "POSIX_SLOWEST_RANK_BYTES"), fastB: intIdx(l, "POSIX_FASTEST_RANK_BYTES"),
		metaT: floatIdx(l, "POSIX_F_META_TIME"), readT: floatIdx(l, "POSIX_F_READ_TIME"),
		writeT: floatIdx(l, "POSIX_F_WRITE_TIME"),
		slowT:  floatIdx(l, "POSIX_F_SLOWEST_RANK_TIME"), fastT: floatIdx(l, "POSIX_F_FASTEST_RANK_TIME"),
	}
	p.bins = -1
	contiguous := true
	for i, b := range binNames {
		p.readBins[i] = intIdx(l, "POSIX_SIZE_READ_"+b)
		p.writeBins[i] = intIdx(l, "POSIX_SIZE_WRITE_"+b)
		contiguous = contiguous && p.readBins[i] == p.readBins[0]+i && p.writeBins[i] == p.readBins[0]+numBins+i
	}
	if contiguous && p.readBins[0] >= 0 {
		p.bins = p.readBins[0]
	}
	return p
}

// iv is counter i of ints, 0 when absent or negative (not monitored).
func iv(ints []int64, i int) int64 {
	if i < 0 || ints[i] < 0 {
		return 0
	}
	return ints[i]
}

func fv(fl []float64, i int) float64 {
	if i < 0 || !(fl[i] > 0) {
		return 0
	}
	return fl[i]
}

// fileAgg is what FromLog gathers per POSIX file before ranking files.
type fileAgg struct {
	id                     uint64
	smallR, smallW         int64
	rankRecs               int
	minW, maxW, minR, maxR int64
}

// FromLog reads the records of l that the triggers need (POSIX, MPI-IO,
// STDIO, and the host names of DXT records) into Totals. A damaged log is
// an error (records read before the damage are not used).
func FromLog(l *darshan.Log) (*Totals, error) {
	b, err := NewBuilder(l)
	if err != nil {
		return nil, err
	}
	for _, m := range builderModules {
		if !b.Reads(m) {
			continue
		}
		rd := l.Records(m)
		for rd.Next() {
			b.Add(rd.Record())
		}
		if err := rd.Err(); err != nil {
			return nil, err
		}
	}
	return b.Totals(nil)
}

// builderModules are the modules whose records Totals may read, in module
// id order.
var builderModules = []darshan.ModuleID{darshan.POSIX, darshan.MPIIO, darshan.STDIO, darshan.DXTPOSIX, darshan.DXTMPIIO}

// Builder builds the Totals of a log record by record, for a caller that
// reads the log's records once for several uses (the sidecar feeds the
// same records to the signals): FromLog is NewBuilder, Add with every
// record of the modules Reads accepts, then Totals. The Totals do not
// depend on the order of the records.
type Builder struct {
	l     *darshan.Log
	t     *Totals
	mods  uint64 // bit m: Reads(m)
	hosts bool   // the DXT records are read (see Reads)

	// names names the files of the Rankings' entries: the log's, or nil
	// after WithoutNames.
	names map[uint64]string

	// s is what the Builder holds only while the log is read: taken from
	// scratchPool, given back by Totals.
	s *scratch
}

// scratch is a Builder's working memory, pooled: a small log's insights
// cost less than allocating it (and collecting it) for each log.
type scratch struct {
	// aggs gathers per POSIX file what the file-level Rankings need; ids
	// finds a file's entry.
	aggs []fileAgg
	ids  idTable
	// tops holds the Rankings' entries while the log is read, so that
	// ranking a record allocates nothing; Totals moves them into one
	// allocation.
	tops rankingTops
	// packed is where Builder.Packed writes a Packed before copying it.
	packed []byte
	// idx are the counter indexes of the last layout seen, per module.
	// They stay with the pooled scratch from one log to the next: the
	// logs a worker reads one after another have the same layouts (most
	// do), and asking the shared layout caches, under their lock, for
	// each log cost the workers more than what they looked up.
	idx layoutIdx
}

type layoutIdx struct {
	posixLayout *darshan.Layout
	posix       *posixIdx
	mpiioLayout *darshan.Layout
	mpiio       *mpiioIdx
	stdioLayout *darshan.Layout
	stdio       *stdioIdx
}

type rankingTops [numRankings][MaxFiles]Ranked

// keepAggs bounds the aggs a pooled scratch keeps after a log of many
// files, keepPacked the bytes of its Packed buffer.
const (
	keepAggs   = 4096
	keepPacked = 64 << 10
)

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// file returns the entry of file id in aggs, added when new.
func (s *scratch) file(id uint64) *fileAgg {
	k, ok := s.ids.find(id, s.aggs)
	if !ok {
		k = len(s.aggs)
		s.aggs = append(s.aggs, fileAgg{id: id})
		s.ids.insert(id, k, s.aggs)
	}
	return &s.aggs[k]
}

// clearTops clears the entries of tops that the Rankings of t hold: their
// names (the pool keeps no log's paths alive). A Builder without names
// has none to clear (clearing them was some 8 % of the CPU a small log's
// insights took).
func (b *Builder) clearTops(s *scratch, t *Totals) {
	if b.names == nil {
		return
	}
	for i, r := range t.rankings() {
		clear(s.tops[i][:len(r.Top)])
	}
}

// release gives s back to the pool, its tops cleared (clearTops).
func (s *scratch) release() {
	s.ids.reset()
	if cap(s.aggs) > keepAggs {
		s.aggs = nil
	} else {
		s.aggs = s.aggs[:0]
	}
	if cap(s.packed) > keepPacked {
		s.packed = nil // a log of thousands of DXT hosts
	}
	scratchPool.Put(s)
}

// idTable finds a file's entry in aggs by its record id: up to
// linearFiles files by a scan of aggs, beyond by a hash table of open
// addressing on the id's bits (multiply-shift by a random odd factor, so
// that no log can choose ids that collide). It costs a fraction of a map
// of the same ids, which for a log of many files was most of the time of
// its insights; and it is cleared at the cost of its size, for the next
// log.
type idTable struct {
	slots []int32 // index in aggs + 1; 0: empty
	shift uint    // 64 − log2(len(slots))
}

// linearFiles: up to this many files, a file's entry is found by a scan.
const linearFiles = 8

// keepSlots bounds the slots a pooled idTable keeps after a log of many
// files.
const keepSlots = 4 * keepAggs

var idMul = rand.Uint64() | 1

func (h *idTable) slot(id uint64) uint64 { return (id * idMul) >> h.shift }

func (h *idTable) find(id uint64, aggs []fileAgg) (int, bool) {
	if len(aggs) <= linearFiles {
		for i := range aggs {
			if aggs[i].id == id {
				return i, true
			}
		}
		return 0, false
	}
	mask := uint64(len(h.slots) - 1)
	for i := h.slot(id); ; i = (i + 1) & mask {
		k := h.slots[i]
		if k == 0 {
			return 0, false
		}
		if aggs[k-1].id == id {
			return int(k - 1), true
		}
	}
}

// insert adds id at index k of aggs (aggs[k].id == id, not in h yet).
func (h *idTable) insert(id uint64, k int, aggs []fileAgg) {
	n := len(aggs)
	if n <= linearFiles {
		return
	}
	if 2*n > len(h.slots) {
		h.grow(4 * n)
		for i := range aggs[:n-1] {
			h.put(aggs[i].id, i)
		}
	}
	h.put(id, k)
}

// grow makes at least n empty slots (a power of two).
func (h *idTable) grow(n int) {
	size := 1 << bits.Len(uint(n-1))
	if cap(h.slots) >= size {
		h.slots = h.slots[:size]
		clear(h.slots)
	} else {
		h.slots = make([]int32, size)
	}
	h.shift = uint(64 - bits.TrailingZeros(uint(size)))
}

func (h *idTable) put(id uint64, k int) {
	mask := uint64(len(h.slots) - 1)
	i := h.slot(id)
	for h.slots[i] != 0 {
		i = (i + 1) & mask
	}
	h.slots[i] = int32(k + 1)
}

func (h *idTable) reset() {
	if cap(h.slots) > keepSlots {
		h.slots = nil
		return
	}
	clear(h.slots)
	h.slots = h.slots[:0]
}

// numRankings is the number of Rankings of a Totals (see rankings).
const numRankings = 11

// moduleBit is the bit of module m in a uint64 set.
func moduleBit(m darshan.ModuleID) uint64 { return 1 << uint(m) }

// NewBuilder starts the Totals of l. It fails, as FromLog, on a log whose
// module regions claim more than the file holds: insights of part of a log
// would mislead, even when the missing module is one no trigger reads.
func NewBuilder(l *darshan.Log) (*Builder, error) {
	t := totalsPool.Get().(*Totals)
	*t = Totals{Logs: 1, MaxByteRead: -1, MaxByteWritten: -1}
	// The modules l.Modules lists, without its slice (a small log's
	// insights cost less than that allocation).
	h := &l.Header
	partial := h.Partial // h.PartialModule, inlined and read once
	for i := range h.ModuleRegions {
		reg := &h.ModuleRegions[i]
		if reg.Length == 0 && partial&(1<<uint(i)) == 0 {
			continue
		}
		id := darshan.ModuleID(i)
		if end := reg.Offset + reg.Length; end < reg.Offset || end > uint64(l.Size()) {
			totalsPool.Put(t)
			return nil, &darshan.FormatError{Log: l.Name, Region: id.String(), Offset: int64(reg.Offset),
				Err: fmt.Errorf("%w: region claims %d bytes at offset %d but the file ends after %d",
					darshan.ErrTruncated, reg.Length, reg.Offset, uint64(l.Size())-min(reg.Offset, uint64(l.Size())))}
		}
		if reg.Length != 0 && id < 64 {
			t.Modules |= 1 << uint(id)
		}
	}
	t.CBNodes = cbNodes(l.Job.Metadata)
	// The hosts serve M08–M10 alone, which a log decides only with MPI-IO
	// data and the cb_nodes hint; reading them decodes every DXT segment
	// (most of FromLog's time on a DXT log), so a log that cannot decide
	// those codes skips it (and its hosts do not join a job's in Merge).
	hosts := t.usesMPIIO() && t.CBNodes > 0
	mods := t.Modules & (moduleBit(darshan.POSIX) | moduleBit(darshan.MPIIO) | moduleBit(darshan.STDIO))
	if hosts {
		mods |= t.Modules & (moduleBit(darshan.DXTPOSIX) | moduleBit(darshan.DXTMPIIO))
	}
	b := &Builder{l: l, t: t, mods: mods, hosts: hosts, names: l.Names, s: scratchPool.Get().(*scratch)}
	for i, r := range t.rankings() {
		r.Top = b.s.tops[i][:0]
	}
	return b, nil
}

// WithoutNames makes the Totals hold no file names, as Totals.ForgetNames
// would leave them, for a caller that forgets them anyway: no name is
// looked up, and a Ranking's entries of equal value are then ordered by
// Aux alone. Where a Ranking keeps some of several equal values, the Aux
// of those kept may differ from the named Totals'; the values, and so
// every decision (Decider uses neither names nor Aux), are the same. Call
// it before Add.
func (b *Builder) WithoutNames() { b.names = nil }

// Reads reports whether the Totals read module m's records: POSIX, MPI-IO
// and STDIO when the log has them, the DXT modules when the log can decide
// the codes that need their hosts.
func (b *Builder) Reads(m darshan.ModuleID) bool {
	return m >= 0 && m < 64 && b.mods&moduleBit(m) != 0
}

// Modules is Reads of every module at once: bit 1<<m is set when Reads(m).
func (b *Builder) Modules() uint64 { return b.mods }

// Add adds record r, one of a module Reads accepts (others are ignored).
// r is not kept: a RecordReader may reuse it.
func (b *Builder) Add(r darshan.Record) {
	switch r := r.(type) {
	case *darshan.CounterRecord:
		switch r.Module {
		case darshan.POSIX:
			b.addPOSIX(r)
		case darshan.MPIIO:
			b.addMPIIO(r)
		case darshan.STDIO:
			b.addSTDIO(r)
		}
	case *darshan.DXTRecord:
		if b.hosts && r.Hostname != "" {
			b.t.Hosts = addHost(b.t.Hosts, hostHash(r.Hostname))
		}
	}
}

// hostHash is the 64-bit FNV-1a hash of a host name (hash/fnv's New64a,
// without its allocations: one per DXT record).
func hostHash(s string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

// Totals returns the Totals of the records added; err is the damage met
// reading them, which makes it FromLog's error (no Totals). The Builder is
// done with.
func (b *Builder) Totals(err error) (*Totals, error) {
	if b.s == nil {
		panic("insights: Builder.Totals called twice")
	}
	s := b.s
	b.s = nil
	if err != nil {
		b.clearTops(s, b.t)
		s.release()
		putTotals(b.t)
		return nil, err
	}
	t := b.t
	b.offerFiles(s)
	// The entries out of the scratch, into one array the Totals keeps.
	rs, n := t.rankings(), 0
	for _, r := range rs {
		n += len(r.Top)
	}
	var kept []Ranked
	if n > 0 {
		kept = make([]Ranked, 0, n)
	}
	for _, r := range rs {
		kept = append(kept, r.Top...)
	}
	b.clearTops(s, t)
	k := 0
	for _, r := range rs {
		if len(r.Top) == 0 {
			r.Top = nil
			continue
		}
		r.Top, k = kept[k:k+len(r.Top):k+len(r.Top)], k+len(r.Top)
	}
	t.entries = kept
	s.release()
	return t, nil
}

// offerFiles offers the per-file quantities of the files read to their
// Rankings, in the order the files came: a Ranking keeps the largest
// entries under an order in which only equal entries tie, whatever the
// order they are offered in.
func (b *Builder) offerFiles(s *scratch) {
	t, names := b.t, b.names
	for i := range s.aggs {
		f := &s.aggs[i]
		t.SmallReadFiles.offerID(names, f.id, float64(f.smallR), 0)
		t.SmallWriteFiles.offerID(names, f.id, float64(f.smallW), 0)
		if f.rankRecs > 0 {
			if f.maxW > 0 {
				t.WriteImbalance.offerID(names, f.id, float64(f.maxW-f.minW)/float64(f.maxW), 0)
			}
			if f.maxR > 0 {
				t.ReadImbalance.offerID(names, f.id, float64(f.maxR-f.minR)/float64(f.maxR), 0)
			}
		}
	}
}

// smallBins is the number of access size bins under 1 MiB.
var smallBins = slices.Index(sizeBinEdges[:], 1<<20) + 1

func (b *Builder) addPOSIX(r *darshan.CounterRecord) {
	x := &b.s.idx
	if r.Layout != x.posixLayout {
		x.posixLayout, x.posix = r.Layout, posixIdxs.of(r.Layout)
	}
	t, idx := b.t, x.posix
	in, fl := r.Ints, r.Floats
	t.POSIXRecords++
	reads, writes := iv(in, idx.reads), iv(in, idx.writes)
	bytesR, bytesW := iv(in, idx.bytesR), iv(in, idx.bytesW)
	t.Reads += reads
	t.Writes += writes
	t.POSIXBytesRead += bytesR
	t.POSIXBytesWritten += bytesW
	var smallR, smallW int64
	var rbins, wbins [numBins]int64
	if k := idx.bins; k >= 0 && k+2*numBins <= len(in) {
		bins := in[k : k+2*numBins]
		for i := range numBins {
			rbins[i], wbins[i] = max(bins[i], 0), max(bins[numBins+i], 0)
		}
	} else {
		for i := range numBins {
			rbins[i], wbins[i] = iv(in, idx.readBins[i]), iv(in, idx.writeBins[i])
		}
	}
	for i := range numBins {
		t.ReadBins[i] += rbins[i]
		t.WriteBins[i] += wbins[i]
	}
	if r.Rank == -1 {
		for i := range numBins {
			t.SharedReadBins[i] += rbins[i]
			t.SharedWriteBins[i] += wbins[i]
		}
	}
	for i := range smallBins {
		smallR += rbins[i]
		smallW += wbins[i]
	}
	t.MemNotAligned += iv(in, idx.memNA)
	t.FileNotAligned += iv(in, idx.fileNA)
	if idx.maxR >= 0 {
		t.MaxByteRead = max(t.MaxByteRead, in[idx.maxR])
	}
	if idx.maxW >= 0 {
		t.MaxByteWritten = max(t.MaxByteWritten, in[idx.maxW])
	}
	t.ConsecReads += iv(in, idx.consecR)
	t.ConsecWrites += iv(in, idx.consecW)
	t.SeqReads += iv(in, idx.seqR)
	t.SeqWrites += iv(in, idx.seqW)

	// The record's name is looked up only for an entry a Ranking may
	// keep (offerID): most records of a log of many files rank below.
	names := b.names
	t.MetaTime.offerID(names, r.ID, fv(fl, idx.metaT), float64(r.Rank))
	f := b.s.file(r.ID)
	f.smallR += smallR
	f.smallW += smallW
	if r.Rank == -1 {
		t.SharedRecords++
		t.SharedReads += reads
		t.SharedWrites += writes
		t.SharedSmallReads.offerID(names, r.ID, float64(smallR), 0)
		t.SharedSmallWrites.offerID(names, r.ID, float64(smallW), 0)
		if total := bytesR + bytesW; total > 0 {
			d := iv(in, idx.slowB) - iv(in, idx.fastB)
			t.StragglerBytes.offerID(names, r.ID, math.Abs(float64(d))/float64(total), 0)
		}
		if total := fv(fl, idx.writeT) + fv(fl, idx.readT) + fv(fl, idx.metaT); total > 0 {
			d := fv(fl, idx.slowT) - fv(fl, idx.fastT)
			t.StragglerTime.offerID(names, r.ID, math.Abs(d)/total, 0)
		}
	} else {
		if f.rankRecs == 0 {
			f.minW, f.maxW, f.minR, f.maxR = bytesW, bytesW, bytesR, bytesR
		} else {
			f.minW, f.maxW = min(f.minW, bytesW), max(f.maxW, bytesW)
			f.minR, f.maxR = min(f.minR, bytesR), max(f.maxR, bytesR)
		}
		f.rankRecs++
	}
}

// mpiioCounters are the MPI-IO counters Totals sums (see mpiioSums).
var mpiioCounters = [...]string{"MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_SPLIT_READS", "MPIIO_NB_READS",
	"MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES", "MPIIO_NB_WRITES",
	"MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN"}

// mpiioSums are the fields of t that sum mpiioCounters, in their order.
func (t *Totals) mpiioSums() [len(mpiioCounters)]*int64 {
	return [...]*int64{&t.IndepReads, &t.CollReads, &t.SplitReads, &t.NBReads,
		&t.IndepWrites, &t.CollWrites, &t.SplitWrites, &t.NBWrites,
		&t.MPIIOBytesRead, &t.MPIIOBytesWritten}
}

// mpiioIdx are the indexes of mpiioCounters in one MPI-IO layout (-1:
// absent).
type mpiioIdx [len(mpiioCounters)]int

func newMPIIOIdx(l *darshan.Layout) *mpiioIdx {
	var p mpiioIdx
	for i, n := range mpiioCounters {
		p[i] = intIdx(l, n)
	}
	return &p
}

func (b *Builder) addMPIIO(r *darshan.CounterRecord) {
	x := &b.s.idx
	if r.Layout != x.mpiioLayout {
		x.mpiioLayout, x.mpiio = r.Layout, mpiioIdxs.of(r.Layout)
	}
	t, idx := b.t, x.mpiio
	t.MPIIORecords++
	for i, d := range t.mpiioSums() {
		*d += iv(r.Ints, idx[i])
	}
	name := b.l.Names[r.ID]
	if strings.HasSuffix(name, ".h5") || strings.HasSuffix(name, ".hdf5") {
		t.HDF5Names = true
	}
	if b.names == nil {
		name = ""
	}
	ir, iw := iv(r.Ints, idx[0]), iv(r.Ints, idx[4])
	t.IndepReadRecords.offer(name, float64(ir), float64(ir+iw))
	t.IndepWriteRecords.offer(name, float64(iw), float64(ir+iw))
}

// stdioIdx are the indexes of STDIO_BYTES_READ and _WRITTEN in one STDIO
// layout (-1: absent).
type stdioIdx struct{ read, written int }

func newSTDIOIdx(l *darshan.Layout) *stdioIdx {
	return &stdioIdx{intIdx(l, "STDIO_BYTES_READ"), intIdx(l, "STDIO_BYTES_WRITTEN")}
}

func (b *Builder) addSTDIO(r *darshan.CounterRecord) {
	x := &b.s.idx
	if r.Layout != x.stdioLayout {
		x.stdioLayout, x.stdio = r.Layout, stdioIdxs.of(r.Layout)
	}
	b.t.STDIOBytesRead += iv(r.Ints, x.stdio.read)
	b.t.STDIOBytesWritten += iv(r.Ints, x.stdio.written)
}

func addHost(hosts []uint64, h uint64) []uint64 {
	i, found := slices.BinarySearch(hosts, h)
	if found {
		return hosts
	}
	return slices.Insert(hosts, i, h)
}

// cbNodes reads the cb_nodes hint from the job's metadata: the line
// "h=key=value;key=value…" in which darshan-runtime records the MPI-IO
// hints of the run. 0 when absent or not a positive number.
func cbNodes(meta string) int64 {
	if !strings.Contains(meta, "cb_nodes") { // most logs: one search, no split
		return 0
	}
	for line := range strings.SplitSeq(meta, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || k != "h" {
			continue
		}
		for hint := range strings.SplitSeq(v, ";") {
			hk, hv, ok := strings.Cut(hint, "=")
			if ok && strings.TrimSpace(hk) == "cb_nodes" {
				if n, err := strconv.ParseInt(strings.TrimSpace(hv), 10, 64); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return 0
}

// Merge adds Totals together: the logs of one job. Sums are summed, maxima
// taken, Rankings merged (each log's per-file values stay separate entries:
// a file's imbalance is that within one log). Nil entries are skipped; the
// inputs are not modified. Merge of nothing is an empty Totals (Logs 0).
func Merge(ts ...*Totals) *Totals {
	out := &Totals{MaxByteRead: -1, MaxByteWritten: -1}
	for _, t := range ts {
		if t == nil {
			continue
		}
		out.add(t)
	}
	return out
}

func (o *Totals) add(t *Totals) {
	o.Logs += t.Logs
	o.Modules |= t.Modules
	o.HDF5Names = o.HDF5Names || t.HDF5Names
	for _, p := range [][2]*int64{
		{&o.STDIOBytesRead, &t.STDIOBytesRead}, {&o.STDIOBytesWritten, &t.STDIOBytesWritten},
		{&o.POSIXBytesRead, &t.POSIXBytesRead}, {&o.POSIXBytesWritten, &t.POSIXBytesWritten},
		{&o.MPIIOBytesRead, &t.MPIIOBytesRead}, {&o.MPIIOBytesWritten, &t.MPIIOBytesWritten},
		{&o.Reads, &t.Reads}, {&o.Writes, &t.Writes},
		{&o.MemNotAligned, &t.MemNotAligned}, {&o.FileNotAligned, &t.FileNotAligned},
		{&o.ConsecReads, &t.ConsecReads}, {&o.ConsecWrites, &t.ConsecWrites},
		{&o.SeqReads, &t.SeqReads}, {&o.SeqWrites, &t.SeqWrites},
		{&o.SharedRecords, &t.SharedRecords}, {&o.SharedReads, &t.SharedReads}, {&o.SharedWrites, &t.SharedWrites},
		{&o.POSIXRecords, &t.POSIXRecords}, {&o.MPIIORecords, &t.MPIIORecords},
		{&o.IndepReads, &t.IndepReads}, {&o.CollReads, &t.CollReads}, {&o.SplitReads, &t.SplitReads}, {&o.NBReads, &t.NBReads},
		{&o.IndepWrites, &t.IndepWrites}, {&o.CollWrites, &t.CollWrites}, {&o.SplitWrites, &t.SplitWrites}, {&o.NBWrites, &t.NBWrites},
	} {
		*p[0] += *p[1]
	}
	for i := range numBins {
		o.ReadBins[i] += t.ReadBins[i]
		o.WriteBins[i] += t.WriteBins[i]
		o.SharedReadBins[i] += t.SharedReadBins[i]
		o.SharedWriteBins[i] += t.SharedWriteBins[i]
	}
	o.MaxByteRead = max(o.MaxByteRead, t.MaxByteRead)
	o.MaxByteWritten = max(o.MaxByteWritten, t.MaxByteWritten)
	o.CBNodes = max(o.CBNodes, t.CBNodes)
	for _, h := range t.Hosts {
		o.Hosts = addHost(o.Hosts, h)
	}
	from := t.rankings()
	for i, r := range o.rankings() {
		if r.Top == nil && r.N == 0 {
			*r = from[i].clone()
		} else {
			r.merge(from[i])
		}
	}
}

// rankings lists every Ranking of t, in one order for all Totals.
func (t *Totals) rankings() [numRankings]*Ranking {
	return [...]*Ranking{
		&t.MetaTime, &t.SmallReadFiles, &t.SmallWriteFiles, &t.SharedSmallReads, &t.SharedSmallWrites,
		&t.StragglerBytes, &t.StragglerTime, &t.WriteImbalance, &t.ReadImbalance,
		&t.IndepReadRecords, &t.IndepWriteRecords,
	}
}

// ForgetNames clears the file names the Rankings keep, for a user that
// shows no file (the sidecar keeps one Totals per log of its retention
// window: up to MaxFiles full paths per Ranking, kilobytes a log). Names
// only break ties between equal values: every count and maximum the
// triggers decide on stays exact; Insight.Files comes out empty.
func (t *Totals) ForgetNames() {
	for _, r := range t.rankings() {
		for k := range r.Top {
			r.Top[k].Name = ""
		}
	}
}

// String is a one-line description for debugging.
func (t *Totals) String() string {
	return fmt.Sprintf("insights.Totals{logs %d, POSIX %d reads %d writes, MPI-IO %d records}", t.Logs, t.Reads, t.Writes, t.MPIIORecords)
}
