package lctl

import "bytes"

// brw_stats (osd-*.*.brw_stats) is a set of histograms, each printed as
//
//	                           read      |     write
//	pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %
//	32:		         0   0   0   |    1   0   0
//	1K:		         0   0   0   | 25000  99 100
//
// after a header that is "snapshot_time: <t> (secs.nsecs)" before Lustre
// 2.15, and "snapshot_time: <t> secs.nsecs" followed by start_time and
// elapsed_time from 2.15 (and in EXAScaler 2.14). Lustre prints the rows
// from the first to the last non-empty bucket.
//
// Two kinds of buckets exist (lustre/osd-*/osd_lproc.c, display_brw_stats):
// linear ones, where row i counts the events whose value was exactly i and
// the last row (31) also counts every larger value; and log2 ones, where the
// row labelled L (with K = 2^10, M = 2^20) counts the values v with
// L/2 < v ≤ L, so that L is an inclusive upper bound.

// BrwKind names a brw_stats histogram.
type BrwKind uint8

const (
	BrwUnknown            BrwKind = iota // a title this parser does not know
	BrwPagesPerRPC                       // "pages per bulk r/w": pages per RPC, log2
	BrwDiscontiguousPages                // "discontiguous pages" per RPC, linear
	BrwDiscontiguousBlock                // "discontiguous blocks" per RPC, linear
	BrwFragmentedIOs                     // "disk fragmented I/Os" per RPC, linear
	BrwIOsInFlight                       // "disk I/Os in flight" when an I/O starts, linear
	BrwIOTime                            // "I/O time (1/1000s)": milliseconds, log2
	BrwIOSize                            // "disk I/O size": bytes, log2
	BrwBlockMaps                         // "block maps msec" (EXAScaler): milliseconds, log2
)

// Log2 reports whether the rows' labels are log2 upper bounds rather than
// exact linear values.
func (k BrwKind) Log2() bool {
	switch k {
	case BrwPagesPerRPC, BrwIOTime, BrwIOSize, BrwBlockMaps:
		return true
	}
	return false
}

func (k BrwKind) String() string {
	switch k {
	case BrwPagesPerRPC:
		return "pages per bulk r/w"
	case BrwDiscontiguousPages:
		return "discontiguous pages"
	case BrwDiscontiguousBlock:
		return "discontiguous blocks"
	case BrwFragmentedIOs:
		return "disk fragmented I/Os"
	case BrwIOsInFlight:
		return "disk I/Os in flight"
	case BrwIOTime:
		return "I/O time (1/1000s)"
	case BrwIOSize:
		return "disk I/O size"
	case BrwBlockMaps:
		return "block maps msec"
	}
	return "unknown"
}

// brwKind recognizes a title; a title glued to its unit column (a longer
// name than Lustre's 22 columns) is recognized by its beginning.
func brwKind(title []byte) BrwKind {
	for k := BrwPagesPerRPC; k <= BrwBlockMaps; k++ {
		if string(title) == k.String() {
			return k
		}
	}
	for k := BrwPagesPerRPC; k <= BrwBlockMaps; k++ {
		if bytes.HasPrefix(title, []byte(k.String()+" ")) {
			return k
		}
	}
	return BrwUnknown
}

// BrwLinearOverflow is the last row of a linear histogram, which also counts
// every larger value (OBD_HIST_MAX - 1).
const BrwLinearOverflow = 31

// BrwRow is one row: its label as a number (K and M expanded as powers of
// 1024) and the read and write counts.
type BrwRow struct {
	Bucket      uint64
	Read, Write uint64
}

// BrwHist is one histogram of a brw_stats parameter.
type BrwHist struct {
	Kind BrwKind
	Rows []BrwRow
}

// BrwStats is the body of one brw_stats parameter. Its slices are reused
// by the parser: a handler copies what it keeps.
type BrwStats struct {
	SnapshotTime float64
	StartTime    float64 // 0 before 2.15
	Hists        []BrwHist
	// Malformed counts lines that could not be read.
	Malformed int
}

// BrwStatsParser is the SectionParser of a brw_stats parameter.
type BrwStatsParser struct {
	st   BrwStats
	done func(st *BrwStats, complete bool)
}

// NewBrwStatsParser returns a parser that hands the parameter to done when
// it ends.
func NewBrwStatsParser(done func(st *BrwStats, complete bool)) *BrwStatsParser {
	return &BrwStatsParser{done: done}
}

// Line implements SectionParser.
func (p *BrwStatsParser) Line(line []byte) {
	rest := trimLeft(line)
	if len(rest) == 0 {
		return
	}
	switch c := rest[0]; {
	case c >= '0' && c <= '9':
		p.row(rest)
	case len(rest) < len(line):
		// The indented column header ("read | write").
	case bytes.IndexByte(rest, '|') > 0:
		// A title: the histogram's name, then its unit columns, separated
		// by at least two spaces ("%-22s %-5s").
		title := rest
		if i := bytes.Index(rest, []byte("  ")); i > 0 {
			title = rest[:i]
		}
		p.st.Hists = append(p.st.Hists, BrwHist{Kind: brwKind(trimRight(title)), Rows: p.reuseRows()})
	default:
		key, value, ok := splitKey(rest)
		if !ok {
			p.st.Malformed++
			return
		}
		t, ok := parseSeconds(bytes.TrimPrefix(value, []byte{'('}))
		switch {
		case string(key) == "snapshot_time" && ok:
			p.st.SnapshotTime = t
		case string(key) == "start_time" && ok:
			p.st.StartTime = t
		case string(key) == "elapsed_time" && ok:
		default:
			p.st.Malformed++
		}
	}
}

// reuseRows returns the row slice a previous run left in the next
// histogram's place, emptied.
func (p *BrwStatsParser) reuseRows() []BrwRow {
	n := len(p.st.Hists)
	if n < cap(p.st.Hists) {
		return p.st.Hists[:n+1][n].Rows[:0]
	}
	return nil
}

// row reads "1K:\t\t   0   0   0   | 25000  99 100".
func (p *BrwStatsParser) row(b []byte) {
	if len(p.st.Hists) == 0 {
		p.st.Malformed++
		return
	}
	colon := bytes.IndexByte(b, ':')
	bar := bytes.IndexByte(b, '|')
	if colon <= 0 || bar < colon {
		p.st.Malformed++
		return
	}
	bucket, ok := parseBucket(b[:colon])
	read, _ := nextField(b[colon+1 : bar])
	write, _ := nextField(b[bar+1:])
	r, okR := parseUint(read)
	w, okW := parseUint(write)
	if !ok || !okR || !okW {
		p.st.Malformed++
		return
	}
	h := &p.st.Hists[len(p.st.Hists)-1]
	h.Rows = append(h.Rows, BrwRow{Bucket: bucket, Read: r, Write: w})
}

// parseBucket reads a row label: "32", "1K", "4M", "2G".
func parseBucket(b []byte) (uint64, bool) {
	shift := 0
	if n := len(b); n > 0 {
		switch b[n-1] {
		case 'K', 'k':
			shift = 10
		case 'M', 'm':
			shift = 20
		case 'G', 'g':
			shift = 30
		}
		if shift > 0 {
			b = b[:n-1]
		}
	}
	v, ok := parseUint(b)
	if !ok || v > (1<<63)>>shift {
		return 0, false
	}
	return v << shift, true
}

// End implements SectionParser.
func (p *BrwStatsParser) End(complete bool) {
	p.done(&p.st, complete)
	p.st = BrwStats{Hists: p.st.Hists[:0]}
}
