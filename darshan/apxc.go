package darshan

import "fmt"

func init() {
	// darshan-util 3.5.0 has no log utility for APXC: its reader lives in
	// autoperf.
	register(&Module{ID: APXC, Name: "APXC", Version: 1, counters: apxcSet, NoParser: true,
		decoder: func(ver uint32, big bool, _ *Log) moduleDecoder { return newAPXCDecoder(ver, big) }})
}

// APXC module (AutoPerf Cray XC): a header record describing the machine,
// then one record per router with Aries network counters (unsigned). The
// format is autoperf's (github.com/argonne-lcf/autoperf, apxc/); darshan-util
// 3.5.0 is built without it and skips the module.

// APXCMagic is the magic number of the APXC header record ("AUTOPERF").
const APXCMagic = 'A'<<56 | 'U'<<48 | 'T'<<40 | 'O'<<32 | 'P'<<24 | 'E'<<16 | 'R'<<8 | 'F'

// APXC memory and cluster modes, indexed by the header's mode values with
// bit 31 (set when the nodes disagree) cleared.
var (
	APXCMemoryModes  = []string{"MM_UNKNOWN", "MM_FLAT", "MM_EQUAL", "MM_SPLIT", "MM_CACHE"}
	APXCClusterModes = []string{"CM_UNKNOWN", "CM_ALL2ALL", "CM_QUAD", "CM_HEMI", "CM_SNC4", "CM_SNC2"}
)

// apxcInts returns the router counters: for the 40 router tiles x_y (x 0-4,
// y 0-7) the flits of the 8 virtual channels and the row bus stalls, then
// for the 8 processor tiles 5_y two virtual channels and two stall counters.
func apxcInts() []string {
	var out []string
	d := func(i int) string { return string(rune('0' + i)) }
	for x := range 5 {
		for y := range 8 {
			tile := "APXC_AR_RTR_" + d(x) + "_" + d(y) + "_INQ_PRF_"
			for vc := range 8 {
				out = append(out, tile+"INCOMING_FLIT_VC"+d(vc))
			}
			out = append(out, tile+"ROWBUS_STALL_CNT")
		}
	}
	for y := range 8 {
		tile := "APXC_AR_RTR_PT_5_" + d(y) + "_INQ_PRF_"
		out = append(out, tile+"INCOMING_FLIT_VC0", tile+"INCOMING_FLIT_VC4",
			tile+"REQ_ROWBUS_STALL_CNT", tile+"RSP_ROWBUS_STALL_CNT")
	}
	return out
}

var apxcSet = newCounterSet(APXC, func() (ints, floats []string) { return apxcInts(), nil })

const (
	apxcHeaderSize = 16 + 7*8         // base, magic, blades, chassis, groups, modes, app id
	apxcRecordSize = 16 + 4*8 + 392*8 // base, position, counters
)

// APXCHeader is the first record of the APXC module.
type APXCHeader struct {
	Key
	Magic                   int64
	Blades, Chassis, Groups int64
	MemoryMode, ClusterMode int64 // bit 31 set: not the same on all nodes
	AppID                   uint64
}

// Clone returns a copy of h.
func (h *APXCHeader) Clone() Record { c := *h; return &c }

// APXCRecord is a per-router APXC record; its counters (Ints) are unsigned.
type APXCRecord struct {
	CounterRecord
	Group, Chassis, Blade, Node int64
}

// Clone returns a deep copy of r.
func (r *APXCRecord) Clone() Record {
	c := *r
	c.CounterRecord = r.cloneCounters()
	return &c
}

type apxcDecoder struct {
	*counterDecoder
	headerDone bool
	header     APXCHeader
	rec        APXCRecord
}

func newAPXCDecoder(ver uint32, big bool) moduleDecoder {
	return &apxcDecoder{counterDecoder: newCounterDecoder(apxcSet, ver, big, apxcRecordSize, 32, nil)}
}

func (d *apxcDecoder) next(rr *regionReader) (Record, error) {
	if !d.headerDone {
		b, err := rr.next(apxcHeaderSize)
		if err != nil {
			return nil, err
		}
		d.headerDone = true
		get := func(i int) int64 { return int64(getUint64(b[8*i:], d.big)) }
		d.header = APXCHeader{Key: base(APXC, b, d.big), Magic: get(2), Blades: get(3), Chassis: get(4),
			Groups: get(5), MemoryMode: get(6), ClusterMode: get(7), AppID: uint64(get(8))}
		return &d.header, nil
	}
	b, err := d.decode(rr)
	if err != nil {
		return nil, err
	}
	d.rec.CounterRecord = d.counterDecoder.rec
	get := func(i int) int64 { return int64(getUint64(b[16+8*i:], d.big)) }
	d.rec.Group, d.rec.Chassis, d.rec.Blade, d.rec.Node = get(0), get(1), get(2), get(3)
	return &d.rec, nil
}

func (h *APXCHeader) encode(e *encoder, headed bool) error {
	if headed {
		return fmt.Errorf("the APXC header must be the module's first record")
	}
	e.key(h.Key)
	for _, v := range []int64{h.Magic, h.Blades, h.Chassis, h.Groups, h.MemoryMode, h.ClusterMode, int64(h.AppID)} {
		e.i64(v)
	}
	return nil
}

func (r *APXCRecord) encode(e *encoder, headed bool) error {
	if !headed {
		return fmt.Errorf("an APXCHeader must come first")
	}
	e.key(r.Key)
	for _, v := range []int64{r.Group, r.Chassis, r.Blade, r.Node} {
		e.i64(v)
	}
	return e.counters(&r.CounterRecord, apxcSet)
}
