package darshan

import "io"

// DAOS module: DAOS objects, 64 integer and 15 floating point counters, then
// the pool and container UUIDs and the 128-bit object id.

var daosSet = newCounterSet(DAOS,
	concat(
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
	prefixed("DAOS", daosTimerNames...))

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
