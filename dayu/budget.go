package dayu

import (
	"errors"
	"fmt"
	"io"
	"unsafe"
)

// What reading one tracker file may cost.
//
// A file is refused by its size before a byte is read (Limits.MaxFileBytes:
// the caller's fstat of the open file, checked in CheckSize). A file under
// the cap is read as a stream, never whole: the YAML-ish formats a line at a
// time, JSON a top-level record at a time (jsonlex.go). What the parse
// holds is charged to a budget of memFactor bytes per byte of the file (and
// memSlack for small files): the model's records, the strings and numbers
// they keep, and the line or record being read. The charges are made before
// the memory is taken, so a file that would need more than its budget fails
// (too_large) having cost at most the budget. Real files use a fraction of
// it (a record of ~1 kB of text becomes ~400 bytes of model); only hostile
// shapes (a line of "- file-1:" repeated, a list of a million zeros) reach it.
//
// The bound is on what the parse holds at once. Go's collector lets garbage
// reach about the live heap again before it runs (GOGC=100), so the heap of
// a process reading one file peaks at about twice the budget at worst
// (hostile shapes: TestDayuHostileShapesStayInBudget), and at 2.5 to 3.5
// bytes per byte for real layouts (BenchmarkDayuParseMemory's peak-B/B).
// A 32 MiB file, the default cap, thus costs at most about 256 MiB.

// DefaultMaxFileBytes is the default size cap of a tracker file: 32 MiB,
// a hundred times the largest real stats file seen (306 kB, the 9-stage
// WRF VOL stats; see the shared corpus' SOURCES.md). The sidecar reads one
// at a time, beside Darshan's logs, under one unit's MemoryMax.
const DefaultMaxFileBytes int64 = 32 << 20

const (
	// memFactor is the budget's bytes per byte of input, as charged (the
	// charges round up: real records keep about 0.75 of what they are
	// charged). Records keep up to about 2 bytes of model per byte of
	// text (BenchmarkDayuParseMemory's kept-B/B), charged up to 2.6; VFD
	// files of page ranges keep next to nothing. The factor leaves real
	// files half as much again.
	memFactor = 4
	// rangesFactor is added when page ranges are kept: a range costs 24
	// bytes for the ~10 bytes of "{83:(0,0)," it is read from.
	rangesFactor = 2
	// memSlack is the budget of every file on top of memFactor × its size:
	// a small file's first records cost more than their text.
	memSlack = 256 << 10
)

// Limits bound and shape the reading of one tracker file.
type Limits struct {
	// MaxFileBytes refuses larger files, by their size, before reading
	// (too_large); 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// KeepRanges keeps every I/O's page range (PageRange). Nothing the
	// exporter shows uses them; tests and library users that study access
	// patterns do. Without it the ranges are checked, not kept.
	KeepRanges bool
}

func (l Limits) maxBytes() int64 {
	if l.MaxFileBytes <= 0 {
		return DefaultMaxFileBytes
	}
	return l.MaxFileBytes
}

// CheckSize refuses a file of size bytes over the cap, before it is read.
func (l Limits) CheckSize(name string, size int64) error {
	if size > l.maxBytes() {
		return &ParseError{File: baseOf(name), Reason: ReasonTooLarge,
			Msg: fmt.Sprintf(msgTooLarge, size, l.maxBytes()), overCap: true}
	}
	return nil
}

// OverSizeCap tells a file refused by its size (CheckSize), which a larger
// Limits.MaxFileBytes would read, from the other too_large ones (over
// their memory budget, or grown past the cap while read).
func OverSizeCap(err error) bool {
	var pe *ParseError
	return errors.As(err, &pe) && pe.overCap
}

// errBudget is a charge over the budget; ParseStats and ParseStageMap
// report it as too_large.
var errBudget = errors.New(msgOverBudget)

// errGrew: the file grew past the size cap while it was read.
var errGrew = errors.New(msgGrew)

// Sizes charged for the model's parts: the struct, and its pointer in the
// slice that holds it with room for that slice to grow.
var (
	costEntry   = int64(unsafe.Sizeof(Entry{})) + 16
	costTask    = int64(unsafe.Sizeof(Task{})) + 16
	costDataset = int64(unsafe.Sizeof(Dataset{})) + 16
	costBlock   = int64(unsafe.Sizeof(memBlock{})) + 16
	costNode    = int64(unsafe.Sizeof(node{})) + 16 + 16 // and its key
	costRange   = int64(unsafe.Sizeof(PageRange{}))
	// A map entry, as Go's maps hold them, roughly (a slot of a group
	// with room to grow); and a new map: its header and one group of
	// eight slots (of a string key and a word: 8 × 24 + 8 bytes), as
	// Go's maps of up to eight entries are made.
	costMapEntry = int64(48)
	costMap      = int64(48 + 208)
	// An I/O type's totals in an IOSet (its slot is in the map's group).
	costMemIO = int64(unsafe.Sizeof(MemIO{}))
)

// parse is the state every reader of one file shares: its budget and
// whether page ranges are kept.
type parse struct {
	keepRanges bool
	// interned holds the short strings kept so far: a file's records
	// repeat their paths, task names and classes.
	interned map[string]string
	factor   int64 // memFactor, and rangesFactor when keeping ranges
	size     int64 // the file's size as given; grows to what was read
	limit    int64 // factor × size + memSlack
	kept     int64 // charged for what the model keeps
	temp     int64 // charged for the line or record being read

	// The nodes and texts of a line or record live in slabs that the next
	// one reuses (release), so that reading a file makes next to no
	// garbage, and the heap follows what the model keeps: what a line or
	// record keeps, its setters copy (str).
	nodes [][]node // chunks of slabNodes
	used  int      // nodes handed out since release
	text  [][]byte // chunks of slabText bytes
	tused int      // chunks of text in use; the last one's length is its use
}

const (
	slabNodes = 256
	slabText  = 16 << 10
)

// slabMark is how much of the slabs is in use.
type slabMark struct{ used, tused, tlen int }

func (p *parse) mark() slabMark {
	m := slabMark{used: p.used, tused: p.tused}
	if p.tused > 0 {
		m.tlen = len(p.text[p.tused-1])
	}
	return m
}

// rewind gives back what was taken from the slabs since m: none of it
// may be used after.
func (p *parse) rewind(m slabMark) {
	p.used, p.tused = m.used, m.tused
	if m.tused > 0 {
		p.text[m.tused-1] = p.text[m.tused-1][:m.tlen]
	}
}

// alloc returns a node from the slabs, cleared but for the room its lists
// had. It is valid until release.
func (p *parse) alloc() *node {
	c, i := p.used/slabNodes, p.used%slabNodes
	if c == len(p.nodes) {
		p.nodes = append(p.nodes, make([]node, slabNodes))
	}
	p.used++
	n := &p.nodes[c][i]
	*n = node{items: n.items[:0], keys: n.keys[:0]}
	return n
}

// intern returns b as a string in the text slabs, valid until release.
func (p *parse) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > slabText/4 {
		return string(b)
	}
	if p.tused == 0 || len(p.text[p.tused-1])+len(b) > slabText {
		if p.tused == len(p.text) {
			p.text = append(p.text, make([]byte, 0, slabText))
		}
		p.text[p.tused] = p.text[p.tused][:0]
		p.tused++
	}
	t := &p.text[p.tused-1]
	start := len(*t)
	*t = append(*t, b...)
	return unsafe.String(&(*t)[start], len(b))
}

func newParse(size int64, keepRanges bool) *parse {
	p := &parse{keepRanges: keepRanges, factor: memFactor}
	if keepRanges {
		p.factor += rangesFactor
	}
	p.grow(size)
	return p
}

// grow raises the budget when more bytes were read than the size said
// (a file still being written).
func (p *parse) grow(read int64) {
	if read > p.size {
		p.size = read
		p.limit = p.factor*read + memSlack
	}
}

// keep charges n bytes the model keeps.
func (p *parse) keep(n int64) error {
	p.kept += n
	if p.kept+p.temp > p.limit {
		return errBudget
	}
	return nil
}

// hold charges n bytes held while the current line or record is read;
// release forgets them once it is.
func (p *parse) hold(n int64) error {
	p.temp += n
	if p.kept+p.temp > p.limit {
		return errBudget
	}
	return nil
}

// release forgets the line or record read: its charges, and its nodes
// and texts, whose slabs the next one reuses.
func (p *parse) release() {
	p.temp = 0
	p.used, p.tused = 0, 0
}

// maxInterned is the longest string interned; maxInternedCount the most
// strings a parse interns.
const (
	maxInterned      = 256
	maxInternedCount = 4096
)

// str returns a copy of s, charged as kept: a kept string must not pin the
// line or buffer it was cut from. A short string seen before in the file
// is the copy made then.
func (p *parse) str(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if c, ok := p.interned[s]; ok {
		return c, nil
	}
	if err := p.keep(int64(len(s)) + 16); err != nil {
		return "", err
	}
	c := string([]byte(s))
	if len(s) <= maxInterned && len(p.interned) < maxInternedCount {
		if err := p.keep(int64(len(s)) + costMapEntry); err != nil {
			return "", err
		}
		if p.interned == nil {
			p.interned = map[string]string{}
		}
		p.interned[c] = c
	}
	return c, nil
}

// countingReader counts what was read, grows the budget with it and refuses
// to read past max bytes.
type countingReader struct {
	r    io.Reader
	p    *parse
	n    int64
	max  int64
	grew bool
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.p.grow(c.n)
	if c.n > c.max {
		c.grew = true
		return n, errGrew
	}
	return n, err
}
