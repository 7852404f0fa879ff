package parsertext

import (
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// LUSTRE: darshan-lustre-logutils' description and record printing.

// lustreFlagNames are the LCME flags darshan-util knows, bit 0 first.
var lustreFlagNames = []string{"stale,", "prefrd,", "prefwr,", "offline,", "init,", "nosync,",
	"extension,", "parity,", "compress,", "partial,", "nocompr,", "neg,"}

// lustrePattern names a stripe pattern as darshan-util does.
func lustrePattern(v int64) string {
	switch uint64(v) {
	case 0:
		return "raid0"
	case 2:
		return "mdt"
	case 4:
		return "raid0,overstriped"
	case 8:
		return "foreign"
	}
	return "N/A"
}

// lustreFlags renders component flags as darshan-util does: the known flag
// names joined by commas in a 64-byte buffer, "0" when none is set, "N/A"
// for -1.
func lustreFlags(v int64) string {
	if v == -1 {
		return "N/A"
	}
	var s []byte
	for k, name := range lustreFlagNames {
		if uint64(v)&(1<<uint(k)) != 0 {
			s = append(s, name...)
		}
	}
	if len(s) == 0 {
		return "0"
	}
	s = s[:min(len(s), 64)] // strncat into char[64]
	return string(s[:len(s)-1])
}

func (d *dumper) lustreRecord(r *darshan.LustreRecord) {
	d.beginNamed(r.Key)
	var stripes int64
	for _, c := range r.Components {
		stripes += c.StripeCount
	}
	// As in counters: the record's lines joined by d.joint, whose last
	// prefix is cut back off.
	joint := d.joint
	b := append(d.p.buf, d.prefix...)
	b = appendCounter(append(b, "LUSTRE_NUM_COMPONENTS\t"...), int64(len(r.Components)))
	b = appendCounter(append(append(b, joint...), "LUSTRE_NUM_STRIPES\t"...), stripes)
	ost := 0
	for i, c := range r.Components {
		n := d.lustreNames(i)
		pool := c.Pool
		if pool == "" {
			pool = "N/A"
		}
		b = appendCounter(append(append(b, joint...), n.stripeSize...), c.StripeSize)
		b = appendCounter(append(append(b, joint...), n.stripeCount...), c.StripeCount)
		b = append(append(append(b, joint...), n.pattern...), lustrePattern(c.StripePattern)...)
		b = append(append(append(b, joint...), n.flags...), lustreFlags(c.Flags)...)
		b = appendCounter(append(append(b, joint...), n.extStart...), c.ExtentStart)
		b = appendCounter(append(append(b, joint...), n.extEnd...), c.ExtentEnd)
		b = appendCounter(append(append(b, joint...), n.mirrorID...), c.MirrorID)
		b = append(append(append(b, joint...), n.pool...), pool...)
		for j := int64(0); j < c.StripeCount && ost < len(r.OSTs); j++ {
			b = appendCounter(append(append(b, joint...), n.ostID(j)...), r.OSTs[ost])
			ost++
		}
	}
	d.p.buf = append(b, d.suffix...)
}

// lustreComp holds the counter names of one component of a LUSTRE record,
// "LUSTRE_COMP<i>_…" and their tab, made once per dumper rather than once
// per line.
type lustreComp struct {
	stripeSize, stripeCount, pattern, flags, extStart, extEnd, mirrorID, pool string
	prefix                                                                    string
	osts                                                                      []string // "…OST_ID_<j>"
}

func (d *dumper) lustreNames(i int) *lustreComp {
	for len(d.lustre) <= i {
		p := "LUSTRE_COMP" + strconv.Itoa(len(d.lustre)+1) + "_"
		d.lustre = append(d.lustre, &lustreComp{prefix: p,
			stripeSize: p + "STRIPE_SIZE\t", stripeCount: p + "STRIPE_COUNT\t", pattern: p + "STRIPE_PATTERN\t",
			flags: p + "FLAGS\t", extStart: p + "EXT_START\t", extEnd: p + "EXT_END\t", mirrorID: p + "MIRROR_ID\t",
			pool: p + "POOL_NAME\t"})
	}
	return d.lustre[i]
}

// ostID is the name of the component's j-th OST id (j ≥ 0) and its tab.
func (n *lustreComp) ostID(j int64) string {
	if j >= 1<<12 { // past the stripes a Lustre file has: not worth keeping
		return n.prefix + "OST_ID_" + strconv.FormatInt(j, 10) + "\t"
	}
	for int64(len(n.osts)) <= j {
		n.osts = append(n.osts, n.prefix+"OST_ID_"+strconv.Itoa(len(n.osts))+"\t")
	}
	return n.osts[j]
}
