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
	d.intLine("LUSTRE_NUM_COMPONENTS", int64(len(r.Components)))
	d.intLine("LUSTRE_NUM_STRIPES", stripes)
	ost := 0
	for i, c := range r.Components {
		comp := "LUSTRE_COMP" + strconv.Itoa(i+1) + "_"
		d.intLine(comp+"STRIPE_SIZE", c.StripeSize)
		d.intLine(comp+"STRIPE_COUNT", c.StripeCount)
		d.strLine(comp+"STRIPE_PATTERN", lustrePattern(c.StripePattern))
		d.strLine(comp+"FLAGS", lustreFlags(c.Flags))
		d.intLine(comp+"EXT_START", c.ExtentStart)
		d.intLine(comp+"EXT_END", c.ExtentEnd)
		d.intLine(comp+"MIRROR_ID", c.MirrorID)
		pool := c.Pool
		if pool == "" {
			pool = "N/A"
		}
		d.strLine(comp+"POOL_NAME", pool)
		for j := int64(0); j < c.StripeCount && ost < len(r.OSTs); j++ {
			d.intLine(comp+"OST_ID_"+strconv.FormatInt(j, 10), r.OSTs[ost])
			ost++
		}
	}
}
