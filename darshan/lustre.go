package darshan

import (
	"fmt"
	"io"
)

func init() {
	register(&Module{ID: Lustre, Name: "LUSTRE", Version: 2,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newLustreDecoder(ver, big) },
		Describe: description(lustreDescription)})
}

// LUSTRE module: the layout of files on Lustre. Version 2 records a list of
// layout components (PFL) and the OSTs of each; version 1 recorded a single
// striping, which is read as one component, like darshan-util does.

// LustreComponent is one component of a Lustre file layout.
type LustreComponent struct {
	StripeSize    int64
	StripeCount   int64
	StripePattern int64 // 0 raid0, 2 mdt, 4 overstriped, 8 foreign; -1 unknown (v1)
	Flags         int64 // LCME flags; -1 unknown (v1)
	ExtentStart   int64
	ExtentEnd     int64 // -1 means end of file
	MirrorID      int64 // -1 unknown (v1)
	Pool          string
}

// LustreRecord is a LUSTRE record.
type LustreRecord struct {
	Key
	Components []LustreComponent
	// OSTs holds the OST ids of all components, component after component
	// (StripeCount ids each).
	OSTs []int64
	// Version 1 only (-1 in version 2): the file system's OST and MDT counts
	// and the file's starting OST, which darshan-parser does not print.
	OSTCount, MDTCount, StripeOffset int64
}

// Clone returns a deep copy of r.
func (r *LustreRecord) Clone() Record {
	c := *r
	c.Components = append([]LustreComponent(nil), r.Components...)
	c.OSTs = append([]int64(nil), r.OSTs...)
	return &c
}

// LustreComponentCounters names the counters of a layout component the way
// darshan-parser prints them, with the component number after "LUSTRE_COMP"
// (LUSTRE_COMP1_STRIPE_SIZE, …).
var LustreComponentCounters = []string{
	"LUSTRE_COMP_STRIPE_SIZE", "LUSTRE_COMP_STRIPE_COUNT", "LUSTRE_COMP_STRIPE_PATTERN",
	"LUSTRE_COMP_FLAGS", "LUSTRE_COMP_EXT_START", "LUSTRE_COMP_EXT_END", "LUSTRE_COMP_MIRROR_ID",
}

const (
	lustreFixedSize = 32       // base, num_comps, num_stripes
	lustreCompSize  = 7*8 + 16 // counters and a 16-byte pool name
	lustreV1Size    = 7 * 8    // base, OSTS, MDTS, STRIPE_OFFSET, STRIPE_SIZE, STRIPE_WIDTH
)

type lustreDecoder struct {
	ver uint32
	big bool
	rec LustreRecord
}

func newLustreDecoder(ver uint32, big bool) moduleDecoder { return &lustreDecoder{ver: ver, big: big} }

func (d *lustreDecoder) next(rr *regionReader) (Record, error) {
	if d.ver == 1 {
		return d.nextV1(rr)
	}
	b, err := rr.next(lustreFixedSize)
	if err != nil {
		return nil, err
	}
	r := &d.rec
	r.Key = base(Lustre, b, d.big)
	r.OSTCount, r.MDTCount, r.StripeOffset = -1, -1, -1
	comps, stripes := int64(getUint64(b[16:], d.big)), int64(getUint64(b[24:], d.big))
	// darshan-parser reads a record into a DEF_MOD_BUF_SIZE buffer ("enough
	// for 10K OSTs"); larger or negative counts are damage.
	if comps < 0 || stripes < 0 || comps > defModBufSize/lustreCompSize || stripes > defModBufSize/8 ||
		lustreFixedSize+comps*lustreCompSize+stripes*8 > defModBufSize {
		return nil, causef(ErrCorrupt, "LUSTRE record claims %d components and %d stripes", comps, stripes)
	}
	body, err := rr.next(int(comps*lustreCompSize + stripes*8))
	if err != nil {
		return nil, atRecordEnd(err)
	}
	r.Components = r.Components[:0]
	for i := range int(comps) {
		c := body[i*lustreCompSize:]
		comp := LustreComponent{
			StripeSize: int64(getUint64(c, d.big)), StripeCount: int64(getUint64(c[8:], d.big)),
			StripePattern: int64(getUint64(c[16:], d.big)), Flags: int64(getUint64(c[24:], d.big)),
			ExtentStart: int64(getUint64(c[32:], d.big)), ExtentEnd: int64(getUint64(c[40:], d.big)),
			MirrorID: int64(getUint64(c[48:], d.big)), Pool: cString(c[56:72]),
		}
		// The runtime marks unused component slots with a stripe size of -1;
		// darshan-util stops at the first one and recounts the stripes.
		if comp.StripeSize == -1 {
			break
		}
		r.Components = append(r.Components, comp)
	}
	var used int64
	for _, c := range r.Components {
		used += max(c.StripeCount, 0)
	}
	used = min(used, stripes)
	osts := body[comps*lustreCompSize:]
	r.OSTs = r.OSTs[:0]
	for i := range int(used) {
		r.OSTs = append(r.OSTs, int64(getUint64(osts[8*i:], d.big)))
	}
	return r, nil
}

// nextV1 reads a version 1 record: one striping, STRIPE_WIDTH OSTs.
func (d *lustreDecoder) nextV1(rr *regionReader) (Record, error) {
	b, err := rr.next(lustreV1Size)
	if err != nil {
		return nil, err
	}
	r := &d.rec
	r.Key = base(Lustre, b, d.big)
	get := func(i int) int64 { return int64(getUint64(b[8*i:], d.big)) }
	r.OSTCount, r.MDTCount, r.StripeOffset = get(2), get(3), get(4)
	size, width := get(5), get(6)
	if width < 0 || width > (defModBufSize-lustreV1Size)/8 {
		return nil, causef(ErrCorrupt, "LUSTRE record claims a stripe width of %d", width)
	}
	r.Components = append(r.Components[:0], LustreComponent{StripeSize: size, StripeCount: width,
		StripePattern: -1, Flags: -1, ExtentStart: 0, ExtentEnd: -1, MirrorID: -1})
	osts, err := rr.next(int(width) * 8)
	if err != nil {
		return nil, atRecordEnd(err)
	}
	r.OSTs = r.OSTs[:0]
	for i := range int(width) {
		r.OSTs = append(r.OSTs, int64(getUint64(osts[8*i:], d.big)))
	}
	return r, nil
}

// atRecordEnd turns a clean end of data met inside a record into damage.
func atRecordEnd(err error) error {
	if err == io.EOF {
		return causef(ErrTruncated, "data ends inside a record")
	}
	return err
}

// encode writes a version 2 record; the OST ids must be those of the
// components' stripe counts.
func (r *LustreRecord) encode(e *encoder, _ bool) error {
	var stripes int64
	for _, c := range r.Components {
		stripes += c.StripeCount
	}
	if stripes != int64(len(r.OSTs)) {
		return fmt.Errorf("components have %d stripes but %d OST ids are given", stripes, len(r.OSTs))
	}
	e.key(r.Key)
	e.i64(int64(len(r.Components)))
	e.i64(stripes)
	for _, c := range r.Components {
		for _, v := range []int64{c.StripeSize, c.StripeCount, c.StripePattern, c.Flags, c.ExtentStart, c.ExtentEnd, c.MirrorID} {
			e.i64(v)
		}
		if err := e.str(c.Pool, 16); err != nil {
			return fmt.Errorf("pool name: %w", err)
		}
	}
	for _, v := range r.OSTs {
		e.i64(v)
	}
	return nil
}

// What darshan-parser prints above the records (log_print_description).

const lustreDescription = `
# description of LUSTRE counters:
#   LUSTRE_NUM_COMPONENTS: number of instrumented components in the Lustre layout.
#   LUSTRE_NUM_STRIPES: number of active stripes in the Lustre layout components.
#   LUSTRE_COMP*_STRIPE_SIZE: stripe size for this file layout component in bytes.
#   LUSTRE_COMP*_STRIPE_COUNT: number of OSTs over which the file layout component is striped.
#   LUSTRE_COMP*_STRIPE_PATTERN: pattern (e.g., raid0, mdt, overstriped) for this file layout component.
#   LUSTRE_COMP*_FLAGS: captured flags (e.g. init, prefwr, stale) for this file layout component.
#   LUSTRE_COMP*_EXT_START: starting file extent for this file layout component.
#   LUSTRE_COMP*_EXT_END: ending file extent for this file layout component (-1 means EOF).
#   LUSTRE_COMP*_MIRROR_ID: mirror ID for this file layout component, if mirrors are enabled.
#   LUSTRE_COMP*_POOL_NAME: Lustre OST pool used for this file layout component.
#   LUSTRE_COMP*_OST_ID_*: indices of OSTs over which this file layout component is striped.
`
