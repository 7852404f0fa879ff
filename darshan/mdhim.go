package darshan

import "fmt"

func init() {
	register(&Module{ID: MDHIM, Name: "MDHIM", Version: 1, counters: mdhimSet,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newMDHIMDecoder(ver, big) },
		Describe: description(mdhimDescription)})
}

// MDHIM module: MDHIM key/value store clients, 5 integer and 4 floating
// point counters, then a histogram of operations per server.

var mdhimSet = newCounterSet(MDHIM, func() (ints, floats []string) {
	return prefixed("MDHIM", "PUTS", "GETS", "PUT_MAX_SIZE", "GET_MAX_SIZE", "SERVERS"),
		prefixed("MDHIM", "F_PUT_TIMESTAMP", "F_GET_TIMESTAMP", "F_PUT_MAX_DURATION", "F_GET_MAX_DURATION")
})

const (
	// mdhimFixedSize is the record with room for one histogram entry; the
	// other MDHIM_SERVERS-1 entries follow it.
	mdhimFixedSize = 16 + 5*8 + 4*8 + 8
	mdhimServers   = 4 // index of MDHIM_SERVERS
	// maxMDHIMServers bounds the histogram as darshan-util's record buffer
	// (DEF_MOD_BUF_SIZE, 81920 bytes) does.
	maxMDHIMServers = (defModBufSize - mdhimFixedSize) / 8
)

// defModBufSize is the record buffer darshan-parser reads module records
// into; it bounds the variable-length records (Lustre, heatmap, MDHIM).
const defModBufSize = 81920

// MDHIMRecord is an MDHIM record.
type MDHIMRecord struct {
	CounterRecord
	// ServerHistogram counts the operations sent to each server
	// (MDHIM_SERVER_0 …); it has MDHIM_SERVERS entries.
	ServerHistogram []int64
}

// Clone returns a deep copy of r.
func (r *MDHIMRecord) Clone() Record {
	return &MDHIMRecord{CounterRecord: r.cloneCounters(), ServerHistogram: append([]int64(nil), r.ServerHistogram...)}
}

type mdhimDecoder struct {
	*counterDecoder
	rec MDHIMRecord
}

func newMDHIMDecoder(ver uint32, big bool) moduleDecoder {
	return &mdhimDecoder{counterDecoder: newCounterDecoder(mdhimSet, ver, big, mdhimFixedSize, 0, nil)}
}

func (d *mdhimDecoder) next(rr *regionReader) (Record, error) {
	b, err := d.decode(rr)
	if err != nil {
		return nil, err
	}
	d.rec.CounterRecord = d.counterDecoder.rec
	servers := d.rec.Ints[mdhimServers]
	if servers > maxMDHIMServers {
		return nil, causef(ErrCorrupt, "MDHIM record claims %d servers (at most %d fit a record)", servers, maxMDHIMServers)
	}
	h := d.rec.ServerHistogram[:0]
	h = append(h, int64(getUint64(b[mdhimFixedSize-8:], d.big)))
	if servers > 1 {
		more, err := rr.next(int(servers-1) * 8)
		if err != nil {
			return nil, err
		}
		for i := range int(servers - 1) {
			h = append(h, int64(getUint64(more[8*i:], d.big)))
		}
	}
	if servers < 1 {
		h = h[:0] // the fixed entry is there but not in use
	}
	d.rec.ServerHistogram = h
	return &d.rec, nil
}

// encode writes the record with MDHIM_SERVERS histogram entries (at least
// the one the fixed part has room for).
func (r *MDHIMRecord) encode(e *encoder, _ bool) error {
	if n := r.Ints[mdhimServers]; n != int64(len(r.ServerHistogram)) && !(n <= 0 && len(r.ServerHistogram) == 0) {
		return fmt.Errorf("MDHIM_SERVERS is %d but the histogram has %d entries", n, len(r.ServerHistogram))
	}
	e.key(r.Key)
	if err := e.counters(&r.CounterRecord, mdhimSet); err != nil {
		return err
	}
	if len(r.ServerHistogram) == 0 {
		e.i64(0)
	}
	for _, v := range r.ServerHistogram {
		e.i64(v)
	}
	return nil
}

// What darshan-parser prints above the records (log_print_description).

const mdhimDescription = `
# description of MDHIM counters:
#   MDHIM_PUTS: number of 'mdhim_put' function calls.
#   MDHIM_GETS: number of 'mdhim_get' function calls.
#   MDHIM_SERVERS: how many mdhim servers 
#   MDHIM_F_PUT_TIMESTAMP: timestamp of the first call to function 'mdhim_put'.
#   MDHIM_F_GET_TIMESTAMP: timestamp of the first call to function 'mdhim_get'.
#   MDHIM_SERVER_N: how many operations sent to this server
`
