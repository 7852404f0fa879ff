package darshan

// DFS module: files of the DAOS file system, 52 integer and 15 floating
// point counters, then the pool and container UUIDs.

var dfsSet = newCounterSet(DFS,
	concat(
		prefixed("DFS", "OPENS", "GLOBAL_OPENS", "LOOKUPS", "DUPS", "READS", "READXS", "WRITES",
			"WRITEXS", "NB_READS", "NB_WRITES", "GET_SIZES", "PUNCHES", "REMOVES", "STATS",
			"BYTES_READ", "BYTES_WRITTEN", "RW_SWITCHES", "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"),
		sizeBuckets("DFS_SIZE_READ"), sizeBuckets("DFS_SIZE_WRITE"),
		prefixed("DFS", "ACCESS1_ACCESS", "ACCESS2_ACCESS", "ACCESS3_ACCESS", "ACCESS4_ACCESS",
			"ACCESS1_COUNT", "ACCESS2_COUNT", "ACCESS3_COUNT", "ACCESS4_COUNT", "CHUNK_SIZE"),
		prefixed("DFS", rankCounters...)),
	prefixed("DFS", daosTimerNames...))

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
