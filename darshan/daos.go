package darshan

import (
	"io"
	"sync"
)

func init() {
	register(&Module{ID: DAOS, Name: "DAOS", Version: 1, counters: daosSet,
		// Its record layout changed before 3.4.7 without a version bump:
		// the decoder needs the library version of the log.
		decoder: func(ver uint32, big bool, l *Log) moduleDecoder {
			return newDAOSDecoder(ver, big, l.Job.LibVersion())
		},
		Describe: description(daosDescription), Totals: sync.OnceValue(daosTotals)})
}

// DAOS module: DAOS objects, 64 integer and 15 floating point counters, then
// the pool and container UUIDs and the 128-bit object id.

var daosSet = newCounterSet(DAOS, func() (ints, floats []string) {
	return concat(
			prefixed("DAOS", "OBJ_OPENS", "OBJ_FETCHES", "OBJ_UPDATES", "OBJ_PUNCHES",
				"OBJ_DKEY_PUNCHES", "OBJ_AKEY_PUNCHES", "OBJ_DKEY_LISTS", "OBJ_AKEY_LISTS",
				"OBJ_RECX_LISTS", "ARRAY_OPENS", "ARRAY_READS", "ARRAY_WRITES", "ARRAY_GET_SIZES",
				"ARRAY_SET_SIZES", "ARRAY_STATS", "ARRAY_PUNCHES", "ARRAY_DESTROYS", "KV_OPENS",
				"KV_GETS", "KV_PUTS", "KV_REMOVES", "KV_LISTS", "KV_DESTROYS", "NB_OPS",
				"BYTES_READ", "BYTES_WRITTEN", "RW_SWITCHES", "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"),
			sizeBuckets("DAOS_SIZE_READ"), sizeBuckets("DAOS_SIZE_WRITE"),
			prefixed("DAOS", "ACCESS1_ACCESS", "ACCESS2_ACCESS", "ACCESS3_ACCESS", "ACCESS4_ACCESS",
				"ACCESS1_COUNT", "ACCESS2_COUNT", "ACCESS3_COUNT", "ACCESS4_COUNT",
				"OBJ_OTYPE", "ARRAY_CELL_SIZE", "ARRAY_CHUNK_SIZE"),
			prefixed("DAOS", rankCounters...)),
		prefixed("DAOS", daosTimerNames...)
})

const (
	daosRecordSize = 696 // base, 64 ints, 15 floats, two UUIDs, object id
	// daosPreReleaseSize is the record of the DAOS module in development
	// builds before darshan 3.4.7: the same version number (1) but no
	// DAOS_NB_OPS counter. darshan-util reads such a region as 696-byte
	// records and prints garbage; this reader tells the two layouts apart by
	// the region's length.
	daosPreReleaseSize = 688
	daosNBOps          = 23 // index of DAOS_NB_OPS
)

// daosPreRelease translates the layout before DAOS_NB_OPS existed.
var daosPreRelease = &versionLayout{size: daosPreReleaseSize, nInts: 63,
	ints: insertAbsent(identity(63), daosNBOps, 1), floats: identity(15)}

// DAOSRecord is a DAOS object record.
type DAOSRecord struct {
	CounterRecord
	PoolUUID      [16]byte
	ContainerUUID [16]byte
	OIDHi, OIDLo  uint64 // the 128-bit object id
}

// Clone returns a deep copy of r.
func (r *DAOSRecord) Clone() Record {
	c := *r
	c.CounterRecord = r.cloneCounters()
	return &c
}

type daosDecoder struct {
	ver     uint32
	big     bool
	oldLib  bool            // the runtime predates darshan 3.4.7
	counter *counterDecoder // chosen once the region's layout is known
	rec     DAOSRecord
}

func newDAOSDecoder(ver uint32, big bool, libVer string) moduleDecoder {
	return &daosDecoder{ver: ver, big: big, oldLib: versionBefore(libVer, 3, 4, 7)}
}

func (d *daosDecoder) next(rr *regionReader) (Record, error) {
	if d.counter == nil {
		d.counter = newCounterDecoder(daosSet, d.ver, d.big, daosRecordSize, 0, nil)
		if isPreReleaseDAOS(rr, d.oldLib) {
			c := d.counter
			c.v, c.size = daosPreRelease, daosPreReleaseSize
			c.layout = daosSet.layout(d.ver, daosPreRelease)
			c.rec.Layout = c.layout
		}
	}
	b, err := d.counter.decode(rr)
	if err != nil {
		return nil, err
	}
	d.rec.CounterRecord = d.counter.rec
	tail := b[len(b)-48:]
	d.rec.PoolUUID = uuid(tail[:16], d.big)
	d.rec.ContainerUUID = uuid(tail[16:32], d.big)
	d.rec.OIDHi = getUint64(tail[32:], d.big)
	d.rec.OIDLo = getUint64(tail[40:], d.big)
	return &d.rec, nil
}

// isPreReleaseDAOS reads the whole DAOS region into the window (DAOS regions
// are small: one record per object and rank) and reports whether its length
// fits 688-byte records but not 696-byte ones. When the region is damaged
// its length proves nothing, and the runtime version decides.
func isPreReleaseDAOS(rr *regionReader, oldLib bool) bool {
	n := 0
	for !rr.atEndAfter(n) {
		n += 64 << 10
	}
	if rr.err != io.EOF {
		return oldLib
	}
	total := rr.w - rr.r
	return total%daosRecordSize != 0 && total%daosPreReleaseSize == 0
}

// versionBefore reports whether the darshan version v ("3.4.6",
// "3.4.5-pre1", …) is older than major.minor.patch; false when v is unknown.
func versionBefore(v string, major, minor, patch int) bool {
	var parts [3]int
	i := 0
	for k := range parts {
		start := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			parts[k] = parts[k]*10 + int(v[i]-'0')
			i++
		}
		if i == start {
			return k > 0 && less(parts, [3]int{major, minor, patch})
		}
		if i < len(v) && v[i] == '.' {
			i++
		} else {
			return less(parts, [3]int{major, minor, patch})
		}
	}
	return less(parts, [3]int{major, minor, patch})
}

func less(a, b [3]int) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

func (r *DAOSRecord) encode(e *encoder, _ bool) error {
	e.key(r.Key)
	if err := e.counters(&r.CounterRecord, daosSet); err != nil {
		return err
	}
	e.uuid(r.PoolUUID)
	e.uuid(r.ContainerUUID)
	e.u64(r.OIDHi)
	e.u64(r.OIDLo)
	return nil
}

// What darshan-parser prints above the records (log_print_description).

const daosDescription = `
# description of DAOS counters:
#   DAOS_*: DAOS operation counts.
#   OBJ_OPENS,OBJ_FETCHES,OBJ_UPDATES,OBJ_PUNCHES,OBJ_DKEY_PUNCHES,OBJ_AKEY_PUNCHES,OBJ_DKEY_LISTS,OBJ_AKEY_LISTS,OBJ_RECX_LISTS are types of DAOS object operations.
#   ARRAY_OPENS,ARRAY_READS,ARRAY_WRITES,ARRAY_GET_SIZES,ARRAY_SET_SIZES,ARRAY_STATS,ARRAY_PUNCHES,ARRAY_DESTROYS are types of DAOS array operations
#   KV_OPENS,KV_GETS,KV_PUTS,KV_REMOVES,KV_LISTS,KV_DESTROYS are types of DAOS kv operations
#   DAOS_BYTES_*: total bytes read and written using all DAOS object APIs.
#   DAOS_RW_SWITCHES: number of times access alternated between read and write.
#   DAOS_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   DAOS_SIZE_*_*: histogram of read and write access sizes.
#   DAOS_ACCESS*_ACCESS: the four most common access sizes.
#   DAOS_ACCESS*_COUNT: count of the four most common access sizes.
#   DAOS_OBJ_OTYPE: DAOS otype value for the object.
#   DAOS_ARRAY_CELL_SIZE: the cell size for DAOS array objects
#   DAOS_ARRAY_CHUNK_SIZE: the chunk size for DAOS array objects
#   DAOS_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared objects).
#   DAOS_*_RANK_BYTES: bytes transferred by the fastest and slowest ranks (for shared objects).
#   DAOS_F_*_START_TIMESTAMP: timestamp of first open/read/write/close.
#   DAOS_F_*_END_TIMESTAMP: timestamp of last open/read/write/close.
#   DAOS_F_READ/WRITE/META_TIME: cumulative time spent in read, write, or metadata operations.
#   DAOS_F_MAX_*_TIME: duration of the slowest read and write operations.
#   DAOS_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared objects).
`

// DAOS aggregates like DFS; darshan-util forgot DAOS_NB_OPS, which stays 0.
func daosTotals() *Totals {
	sums := []string{"DAOS_OBJ_OPENS", "DAOS_OBJ_FETCHES", "DAOS_OBJ_UPDATES", "DAOS_OBJ_PUNCHES",
		"DAOS_OBJ_DKEY_PUNCHES", "DAOS_OBJ_AKEY_PUNCHES", "DAOS_OBJ_DKEY_LISTS", "DAOS_OBJ_AKEY_LISTS",
		"DAOS_OBJ_RECX_LISTS", "DAOS_ARRAY_OPENS", "DAOS_ARRAY_READS", "DAOS_ARRAY_WRITES",
		"DAOS_ARRAY_GET_SIZES", "DAOS_ARRAY_SET_SIZES", "DAOS_ARRAY_STATS", "DAOS_ARRAY_PUNCHES",
		"DAOS_ARRAY_DESTROYS", "DAOS_KV_OPENS", "DAOS_KV_GETS", "DAOS_KV_PUTS", "DAOS_KV_REMOVES",
		"DAOS_KV_LISTS", "DAOS_KV_DESTROYS", "DAOS_BYTES_READ", "DAOS_BYTES_WRITTEN", "DAOS_RW_SWITCHES"}
	sums = append(sums, sizeHistogram("DAOS_SIZE_READ")...)
	sums = append(sums, sizeHistogram("DAOS_SIZE_WRITE")...)
	ints := merge(rules(IntSumClamp, sums...),
		rules(IntSet, "DAOS_OBJ_OTYPE", "DAOS_ARRAY_CELL_SIZE", "DAOS_ARRAY_CHUNK_SIZE"),
		rules(IntCommon, "DAOS_ACCESS1_ACCESS"))
	return &Totals{Prefix: "DAOS", Ints: ints, Floats: timerRules("DAOS", false)}
}
