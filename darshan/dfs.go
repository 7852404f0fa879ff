package darshan

import "sync"

func init() {
	register(&Module{ID: DFS, Name: "DFS", Version: 1, counters: dfsSet,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newDFSDecoder(ver, big) },
		Describe: description(dfsDescription), Totals: sync.OnceValue(dfsTotals)})
}

// DFS module: files of the DAOS file system, 52 integer and 15 floating
// point counters, then the pool and container UUIDs.

var dfsSet = newCounterSet(DFS, func() (ints, floats []string) {
	return concat(
			prefixed("DFS", "OPENS", "GLOBAL_OPENS", "LOOKUPS", "DUPS", "READS", "READXS", "WRITES",
				"WRITEXS", "NB_READS", "NB_WRITES", "GET_SIZES", "PUNCHES", "REMOVES", "STATS",
				"BYTES_READ", "BYTES_WRITTEN", "RW_SWITCHES", "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"),
			sizeBuckets("DFS_SIZE_READ"), sizeBuckets("DFS_SIZE_WRITE"),
			prefixed("DFS", "ACCESS1_ACCESS", "ACCESS2_ACCESS", "ACCESS3_ACCESS", "ACCESS4_ACCESS",
				"ACCESS1_COUNT", "ACCESS2_COUNT", "ACCESS3_COUNT", "ACCESS4_COUNT", "CHUNK_SIZE"),
			prefixed("DFS", rankCounters...)),
		prefixed("DFS", daosTimerNames...)
})

// daosTimerNames are the floating point counters of DFS and DAOS records.
var daosTimerNames = timerNames[:15]

const dfsRecordSize = 584 // base, 52 ints, 15 floats, two 16-byte UUIDs

// DFSRecord is a DFS file record.
type DFSRecord struct {
	CounterRecord
	PoolUUID      [16]byte
	ContainerUUID [16]byte
}

// Clone returns a deep copy of r.
func (r *DFSRecord) Clone() Record {
	c := *r
	c.CounterRecord = r.cloneCounters()
	return &c
}

type dfsDecoder struct {
	*counterDecoder
	rec DFSRecord
}

func newDFSDecoder(ver uint32, big bool) moduleDecoder {
	return &dfsDecoder{counterDecoder: newCounterDecoder(dfsSet, ver, big, dfsRecordSize, 0, nil)}
}

func (d *dfsDecoder) next(rr *regionReader) (Record, error) {
	b, err := d.decode(rr)
	if err != nil {
		return nil, err
	}
	d.rec.CounterRecord = d.counterDecoder.rec
	uuids := b[dfsRecordSize-32:]
	d.rec.PoolUUID = uuid(uuids[:16], d.big)
	d.rec.ContainerUUID = uuid(uuids[16:], d.big)
	return &d.rec, nil
}

// uuid returns a 16-byte UUID; darshan-util swaps all 16 bytes of UUIDs
// written on a machine of the other byte order.
func uuid(b []byte, big bool) [16]byte {
	var u [16]byte
	copy(u[:], b)
	if big {
		for i, j := 0, 15; i < j; i, j = i+1, j-1 {
			u[i], u[j] = u[j], u[i]
		}
	}
	return u
}

func (r *DFSRecord) encode(e *encoder, _ bool) error {
	e.key(r.Key)
	if err := e.counters(&r.CounterRecord, dfsSet); err != nil {
		return err
	}
	e.uuid(r.PoolUUID)
	e.uuid(r.ContainerUUID)
	return nil
}

// What darshan-parser prints above the records (log_print_description).

const dfsDescription = `
# description of DFS counters:
#   DFS_*: DFS operation counts.
#   OPENS,GLOBAL_OPENS,LOOKUPS,DUPS,READS,READXS,WRITES,WRITEXS,GET_SIZES,PUNCHES,REMOVES,STATS are types of operations.
#   DFS_BYTES_*: total bytes read and written.
#   DFS_RW_SWITCHES: number of times access alternated between read and write.
#   DFS_MAX_*_TIME_SIZE: size of the slowest read and write operations.
#   DFS_SIZE_*_*: histogram of read and write access sizes.
#   DFS_ACCESS*_ACCESS: the four most common access sizes.
#   DFS_ACCESS*_COUNT: count of the four most common access sizes.
#   DFS_CHUNK_SIZE: DFS file chunk size.
#   DFS_*_RANK: rank of the processes that were the fastest and slowest at I/O (for shared files).
#   DFS_*_RANK_BYTES: bytes transferred by the fastest and slowest ranks (for shared files).
#   DFS_F_*_START_TIMESTAMP: timestamp of first open/read/write/close.
#   DFS_F_*_END_TIMESTAMP: timestamp of last open/read/write/close.
#   DFS_F_READ/WRITE/META_TIME: cumulative time spent in read, write, or metadata operations.
#   DFS_F_MAX_*_TIME: duration of the slowest read and write operations.
#   DFS_F_*_RANK_TIME: fastest and slowest I/O time for a single rank (for shared files).
`

// dfsTotals are the rules of darshan-parser --total.
func dfsTotals() *Totals {
	sums := []string{"DFS_OPENS", "DFS_GLOBAL_OPENS", "DFS_LOOKUPS", "DFS_DUPS", "DFS_READS",
		"DFS_READXS", "DFS_WRITES", "DFS_WRITEXS", "DFS_NB_READS", "DFS_NB_WRITES", "DFS_GET_SIZES",
		"DFS_PUNCHES", "DFS_REMOVES", "DFS_STATS", "DFS_BYTES_READ", "DFS_BYTES_WRITTEN", "DFS_RW_SWITCHES"}
	sums = append(sums, sizeHistogram("DFS_SIZE_READ")...)
	sums = append(sums, sizeHistogram("DFS_SIZE_WRITE")...)
	ints := merge(rules(IntSumClamp, sums...), rules(IntSet, "DFS_CHUNK_SIZE"),
		rules(IntCommon, "DFS_ACCESS1_ACCESS"))
	return &Totals{Prefix: "DFS", Ints: ints, Floats: timerRules("DFS", false)}
}
