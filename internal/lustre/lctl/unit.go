package lctl

// Unit is the unit Lustre prints for a counter: bracketed in stats tables
// ("[usecs]"), after "unit:" in job_stats. One enum serves both, so that a
// collector treats a unit the same wherever it was printed.
type Unit uint8

const (
	UnitNone  Unit = iota // no unit printed
	UnitReqs              // "reqs" (and the "regs" typo of 2.10 clients): a plain count, no sum in job_stats ≤ 2.12
	UnitUsecs             // "usec", "usecs"
	UnitSecs              // "sec", "secs"
	UnitBytes             // "bytes"
	UnitPages             // "pages"
	UnitBufs              // "bufs"
	UnitOther             // anything else ("locks", "fake", …)
)

func (u Unit) String() string {
	switch u {
	case UnitReqs:
		return "reqs"
	case UnitUsecs:
		return "usecs"
	case UnitSecs:
		return "secs"
	case UnitBytes:
		return "bytes"
	case UnitPages:
		return "pages"
	case UnitBufs:
		return "bufs"
	case UnitOther:
		return "other"
	}
	return ""
}

func parseUnit(b []byte) Unit {
	switch string(b) {
	case "":
		return UnitNone
	case "reqs", "regs", "req":
		return UnitReqs
	case "usec", "usecs":
		return UnitUsecs
	case "sec", "secs":
		return UnitSecs
	case "bytes":
		return UnitBytes
	case "pages":
		return UnitPages
	case "bufs":
		return UnitBufs
	}
	return UnitOther
}
