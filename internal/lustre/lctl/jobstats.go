package lctl

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"sync"
)

// OpStat is one operation of a job entry, e.g.
// "write_bytes: { samples: 861, unit: bytes, min: 24576, max: 16777216, sum: 11025514496, … }".
// min, max, sumsq and the histogram are not kept: the exporter only needs
// the two counters.
type OpStat struct {
	Op      string // interned: the same string for every occurrence
	Unit    Unit
	Samples uint64
	Sum     uint64
	HasSum  bool
}

// JobStat is one "- job_id:" entry of a job_stats parameter. Its slices are
// reused for the next entry: a handler copies what it keeps.
type JobStat struct {
	JobID        []byte  // without YAML quotes; may be empty or hold any bytes
	SnapshotTime float64 // Unix seconds of the last update; 0 when absent
	StartTime    float64 // Unix seconds the entry was created (Lustre ≥ 2.14); 0 when absent
	Ops          []OpStat
	// Malformed counts the lines of this entry that could not be parsed;
	// the rest of the entry is still valid.
	Malformed int
}

// JobStatsHandler receives the entries of one job_stats parameter.
type JobStatsHandler interface {
	Job(js *JobStat)
	// End follows the last entry; complete is false when lctl's output
	// stopped inside the parameter.
	End(complete bool, stats SectionStats)
}

// SectionStats summarizes one parameter's body.
type SectionStats struct {
	Jobs int
	// Stray counts lines that belong to no entry or are not job stats.
	Stray int
}

// JobStatsParam recognizes the job_stats parameters of OSTs
// (obdfilter.<target>.job_stats) and MDTs (mdt.<target>.job_stats) and
// returns the component ("ost" or "mdt") and the target name.
func JobStatsParam(name string) (component, target string, ok bool) {
	rest, found := strings.CutSuffix(name, ".job_stats")
	if !found {
		return "", "", false
	}
	switch {
	case strings.HasPrefix(rest, "obdfilter."):
		component, target = "ost", rest[len("obdfilter."):]
	case strings.HasPrefix(rest, "mdt."):
		component, target = "mdt", rest[len("mdt."):]
	default:
		return "", "", false
	}
	if target == "" || strings.ContainsAny(target, ".*") {
		return "", "", false
	}
	return component, target, true
}

// JobStatsParser is the SectionParser of a job_stats parameter. It reads
// every dialect from Lustre 2.10 to 2.16: quoted and unquoted job_ids, an
// empty job_id, "unit: reqs|usecs|bytes", with or without sumsq and
// "hist: {…}", values glued to their key ("max:16777216"), integer or
// "secs.nsecs" times, start_time/elapsed_time. It matches no regular
// expression and allocates nothing per line.
type JobStatsParser struct {
	h     JobStatsHandler
	job   JobStat
	open  bool // an entry is being read
	stats SectionStats
	// head holds the time keys read since the entry's job_id line, before
	// its first operation (headSnapshot…), and tainted that its job_id was
	// found to hold a line break (taint).
	head    uint8
	inOps   bool // an operation line of the entry was read
	tainted bool
	// names are the operations of the last entries by their place in an
	// entry: Lustre prints them in the same order for every job, and a
	// comparison is cheaper than the lookup of internOp.
	names []string
	// idle remembers the values of the operations that did nothing:
	// Lustre prints an operation with no samples as the same bytes for
	// every job ("{ samples: 0, unit: usecs, … }", and the unit bytes form
	// with its empty hist), and most of an OST's operation lines are such
	// (four in five in a real 2.14 server's output, three in five in the
	// simulator's). A line equal to one of them has its result, without
	// being parsed again; any other line is parsed.
	idle     [2]idleValue
	idleNext int
}

// idleValue is an operation's value text with no samples, and what
// parseOp made of it (its Op is set by the caller).
type idleValue struct {
	text []byte
	op   OpStat
}

// NewJobStatsParser returns a parser that hands each entry to h.
func NewJobStatsParser(h JobStatsHandler) *JobStatsParser {
	return &JobStatsParser{h: joinContinued(h)}
}

// The time keys Lustre prints after an entry's job_id line, in this order,
// snapshot_time always first (every version from 2.10 to 2.16).
const (
	headSnapshot uint8 = 1 << iota
	headStart
	headElapsed
)

// A job_id is whatever a job's environment and executable make it, and
// Lustre before it escaped job_ids printed them raw: a job_id holding a
// line break carries on over the next lines, which then read as lines of
// the entry, or as an entry of its own ("x\n- job_id: fake:666:n66" made
// the identity fake:666:n66 with the entry's bytes). Lustre prints
// snapshot_time right after the job_id line, then start_time and
// elapsed_time (from 2.14), then the operations; anything else before the
// first operation (an empty line, a stray line, another key, a time key
// again or out of order) is the job_id's own text, and so is an entry
// with no line but its job_id followed by another (joinContinued). Such a
// job_id gets a line break (taint): no format matches it, and its entry
// counts under "_untrusted", never as an identity its text spells.

// taint marks the entry's job_id as holding a line break.
func (p *JobStatsParser) taint() {
	if !p.tainted {
		p.tainted = true
		p.job.JobID = append(p.job.JobID, '\n')
	}
}

// beforeOps reports whether the entry's operations have not started: the
// lines read until then must be Lustre's time keys, in order.
func (p *JobStatsParser) beforeOps() bool { return p.open && !p.inOps }

// Line implements SectionParser.
func (p *JobStatsParser) Line(line []byte) {
	if p.open && p.nextOp(line) {
		return
	}
	rest := trimLeft(line)
	if len(rest) == 0 {
		if p.beforeOps() {
			p.taint()
		}
		return
	}
	if rest[0] == '-' {
		// "- job_id: …" opens an entry.
		key, value, ok := splitKey(trimLeft(rest[1:]))
		if !ok || string(key) != "job_id" {
			p.stray()
			return
		}
		p.flush()
		p.open = true
		p.job.JobID = appendJobID(p.job.JobID[:0], value)
		return
	}
	key, value, ok := splitKey(rest)
	if !ok {
		if p.beforeOps() {
			p.taint() // the job_id's own text
			return
		}
		p.stray()
		return
	}
	if !p.open {
		if string(key) != "job_stats" {
			p.stray()
		}
		return
	}
	if p.beforeOps() {
		p.checkHead(key, value)
	} else if isTimeKey(key) {
		p.taint() // Lustre prints them before the operations
	}
	switch string(key) {
	case "snapshot_time":
		if t, ok := parseSeconds(value); ok {
			p.job.SnapshotTime = t
		} else {
			p.job.Malformed++
		}
	case "start_time":
		if t, ok := parseSeconds(value); ok {
			p.job.StartTime = t
		} else {
			p.job.Malformed++
		}
	case "elapsed_time", "job_stats":
		// elapsed_time is snapshot_time - start_time.
	default:
		if len(value) == 0 || value[0] != '{' {
			// An unknown scalar key from a newer Lustre: not an operation.
			return
		}
		i := len(p.job.Ops)
		if i >= len(p.names) || string(key) != p.names[i] {
			name := internOp(key)
			if name == "" {
				p.job.Malformed++
				return
			}
			if i >= len(p.names) {
				p.names = append(p.names, make([]string, i+1-len(p.names))...)
			}
			p.names[i] = name
		}
		p.addOp(p.names[i], value)
	}
}

// nextOp reads line when it is the operation the last entries had next,
// as Lustre prints it ("  name: { … }"), and reports whether it did; Line
// reads any other line. The result is the one Line's general way gives: an
// operation's name holds no ':', and is none of the keys Line tells apart
// before the operations.
func (p *JobStatsParser) nextOp(line []byte) bool {
	i := len(p.job.Ops)
	if i >= len(p.names) {
		return false
	}
	name := p.names[i]
	end := 2 + len(name)
	if len(line) <= end || line[0] != ' ' || line[1] != ' ' || line[end] != ':' || string(line[2:end]) != name {
		return false
	}
	value := trimRight(trimLeft(line[end+1:]))
	if len(value) == 0 || value[0] != '{' {
		return false
	}
	p.addOp(name, value)
	return true
}

// checkHead taints the job_id when a line before the first operation is
// not the next of Lustre's time keys: the job_id's own text.
func (p *JobStatsParser) checkHead(key, value []byte) {
	var bit, need, never uint8
	switch string(key) {
	case "snapshot_time":
		bit, never = headSnapshot, headSnapshot|headStart|headElapsed
	case "start_time":
		bit, need, never = headStart, headSnapshot, headStart|headElapsed
	case "elapsed_time":
		bit, need, never = headElapsed, headSnapshot, headElapsed
	default:
		if len(value) > 0 && value[0] == '{' {
			// The first operation. Lustre's time keys come before it
			// (a time key after one taints, in Line).
			p.inOps = true
		} else if p.head&headSnapshot == 0 {
			// A key from a newer Lustre comes after snapshot_time.
			p.taint()
		}
		return
	}
	if p.head&need != need || p.head&never != 0 {
		p.taint()
	}
	p.head |= bit
}

func isTimeKey(key []byte) bool {
	switch string(key) {
	case "snapshot_time", "start_time", "elapsed_time":
		return true
	}
	return false
}

// addOp adds the operation name of value to the entry, or counts its line
// malformed.
func (p *JobStatsParser) addOp(name string, value []byte) {
	p.inOps = true
	i := len(p.job.Ops)
	p.job.Ops = append(p.job.Ops, OpStat{})
	if !p.parseValue(&p.job.Ops[i], name, value) {
		p.job.Ops = p.job.Ops[:i]
		p.job.Malformed++
	}
}

// parseValue parses an operation's value into op, or takes what an equal
// idle value parsed to.
func (p *JobStatsParser) parseValue(op *OpStat, name string, value []byte) bool {
	for i := range p.idle {
		if string(value) == string(p.idle[i].text) {
			*op = p.idle[i].op
			op.Op = name
			return true
		}
	}
	parsed, ok := parseOp(name, value)
	if !ok {
		return false
	}
	*op = parsed
	if parsed.Samples == 0 && len(value) <= maxIdleValue {
		e := &p.idle[p.idleNext]
		p.idleNext = (p.idleNext + 1) % len(p.idle)
		e.text = append(e.text[:0], value...)
		e.op = parsed
	}
	return true
}

// maxIdleValue bounds the idle values kept: Lustre's are about 130 bytes.
const maxIdleValue = 256

// End implements SectionParser.
func (p *JobStatsParser) End(complete bool) {
	if complete {
		p.flush()
	} else if p.open {
		// The last entry may lack operations that lctl never printed;
		// handing it on would read as counters gone to zero.
		p.open = false
		p.stats.Stray++
	}
	p.h.End(complete, p.stats)
}

func (p *JobStatsParser) stray() {
	p.stats.Stray++
	if p.open {
		p.job.Malformed++
	}
}

func (p *JobStatsParser) flush() {
	if !p.open {
		return
	}
	p.stats.Jobs++
	p.h.Job(&p.job)
	p.open, p.head, p.inOps, p.tainted = false, 0, false, false
	p.job.JobID = p.job.JobID[:0]
	p.job.Ops = p.job.Ops[:0]
	p.job.SnapshotTime, p.job.StartTime, p.job.Malformed = 0, 0, 0
}

// splitKey splits "key: value" at the first colon.
func splitKey(b []byte) (key, value []byte, ok bool) {
	i := bytes.IndexByte(b, ':')
	if i <= 0 {
		return nil, nil, false
	}
	return trimRight(b[:i]), trimRight(trimLeft(b[i+1:])), true
}

func trimLeft(b []byte) []byte {
	// Spaces eight at a time: Lustre pads keys into a column.
	i := skipSpaces(b, 0)
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[i:]
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// unquote strips the double quotes that Lustre ≥ 2.14 puts around job_ids
// holding YAML-special characters. Lustre does not escape inside them.
func unquote(b []byte) []byte {
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' {
		return b[1 : n-1]
	}
	return b
}

// appendJobID appends the job_id of a "- job_id:" line's value to dst:
// without its quotes, and with the "\xHH" escapes of a quoted one decoded,
// as Lustre 2.15 and later write every byte of a job_id that is not a
// letter, a digit or one of ".@-_:/" (a line break among them).
func appendJobID(dst, value []byte) []byte {
	quoted := len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"'
	id := unquote(value)
	if !quoted || bytes.IndexByte(id, '\\') < 0 {
		return append(dst, id...)
	}
	for i := 0; i < len(id); i++ {
		if id[i] == '\\' && i+3 < len(id) && id[i+1] == 'x' {
			if hi, ok := unhex(id[i+2]); ok {
				if lo, ok := unhex(id[i+3]); ok {
					dst = append(dst, hi<<4|lo)
					i += 3
					continue
				}
			}
		}
		dst = append(dst, id[i])
	}
	return dst
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseSeconds reads "1461772761" or "1723114647.887515895 secs.nsecs" (or
// secs.usecs) as Unix seconds.
func parseSeconds(b []byte) (float64, bool) {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	whole, frac, _ := bytes.Cut(b, []byte{'.'})
	w, ok := parseUint(whole)
	if !ok {
		return 0, false
	}
	if len(frac) > 18 {
		frac = frac[:18]
	}
	f, ok := uint64(0), true
	if len(frac) > 0 {
		if f, ok = parseUint(frac); !ok {
			return 0, false
		}
	}
	return float64(w) + float64(f)/pow10[len(frac)], true
}

var pow10 = func() (p [19]float64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// parseUint parses a non-empty run of decimal digits without overflow.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseOp reads "{ samples: 5, unit: usecs, min: 1, max: 9, sum: 20, sumsq: 90, hist: { 4K: 1 } }"
// for the operation name (interned). samples is required; a sum is kept
// when present. At 100,000 jobs it runs over a million times a scrape:
// the lines as Lustre prints them take parseOpLayout's short way, and
// anything else parseOpAny's, which defines what every line means.
func parseOp(name string, b []byte) (OpStat, bool) {
	if op, ok, known := parseOpLayout(name, b); known {
		return op, ok
	}
	return parseOpAny(name, b)
}

// parseOpLayout reads the operations as every Lustre from 2.10 to 2.16
// prints them: "{ key: value, key: value, … }", separated by spaces and
// commas, values of letters and digits, and hist's braces. known is false
// at anything else (tabs, values glued to their key, a cut line, a number
// too long to be sure of), for parseOpAny to decide; where known is true,
// the result is parseOpAny's (FuzzParseOp holds them to it). It skips the
// padding eight bytes at a time and recognizes keys by their length and
// first letters, where parseOpAny looks at every byte twice.
func parseOpLayout(name string, b []byte) (op OpStat, ok, known bool) {
	op.Op = name
	haveSamples := false
	n := len(b)
	i := 1 // past '{'
	for {
		if i >= n || b[i] != ' ' {
			return op, false, false
		}
		i = skipSpaces(b, i)
		if i >= n {
			return op, false, false
		}
		if b[i] == '}' {
			return op, haveSamples, true
		}
		// The key, by kind: Lustre's as one word with its colon, others
		// letter by letter.
		kind := fieldOther
		k := i
		if i+8 <= n {
			w := binary.LittleEndian.Uint64(b[i:])
			switch {
			case w == keySamples:
				i, kind = i+7, fieldSamples
			case w&0xffffffff == keySum:
				i, kind = i+3, fieldSum
			case w&0xffffffff == keyMin, w&0xffffffff == keyMax:
				i += 3
			case w&0xffffffffff == keyUnit:
				i, kind = i+4, fieldUnit
			case w&0xffffffffff == keyHist:
				i += 4
			case w&0xffffffffffff == keySumsq:
				i += 5
			}
		}
		if i == k {
			for i < n && (b[i]-'a' < 26 || b[i] == '_') {
				i++
			}
			if i == k || i >= n || b[i] != ':' {
				return op, false, false
			}
			switch string(b[k:i]) {
			case "samples":
				kind = fieldSamples
			case "sum":
				kind = fieldSum
			case "unit":
				kind = fieldUnit
			}
		}
		i = skipSpaces(b, i+1)
		if i >= n {
			return op, false, false
		}
		if b[i] == '{' {
			// hist: { 4K: 1, 8K: 2 } — skipped to its brace, as parseOpAny does.
			end := bytes.IndexByte(b[i:], '}')
			if end < 0 {
				return op, false, false
			}
			i += end + 1
		} else {
			v := i
			switch kind {
			case fieldSamples, fieldSum:
				var x uint64
				for i < n && b[i]-'0' < 10 {
					x = x*10 + uint64(b[i]-'0')
					i++
				}
				// 19 digits cannot overflow; more are parseOpAny's.
				if i == v || i-v > 19 {
					return op, false, false
				}
				if kind == fieldSamples {
					op.Samples, haveSamples = x, true
				} else {
					op.Sum, op.HasSum = x, true
				}
			default:
				// Mostly numbers (min, max, sumsq): their digits eight at a
				// time, then anything else a value may hold.
				i = skipDigits(b, i)
				for i < n && (b[i]-'0' < 10 || b[i]-'a' < 26 || b[i]-'A' < 26 || b[i] == '_') {
					i++
				}
				if i == v {
					return op, false, false
				}
				if kind == fieldUnit {
					op.Unit = parseUnit(b[v:i])
				}
			}
		}
		// A field ends with the comma before the next or the space
		// before the brace.
		if i < n && b[i] == ',' {
			i++
		}
	}
}

// The kinds of an operation's fields that parseOpLayout reads.
const (
	fieldOther = iota
	fieldSamples
	fieldSum
	fieldUnit
)

// The keys of an operation that parseOpLayout reads as one word, each with
// its colon, in the order of a little-endian load.
var (
	keySamples = binary.LittleEndian.Uint64([]byte("samples:"))
	keySum     = uint64(binary.LittleEndian.Uint32([]byte("sum:")))
	keyMin     = uint64(binary.LittleEndian.Uint32([]byte("min:")))
	keyMax     = uint64(binary.LittleEndian.Uint32([]byte("max:")))
	keyUnit    = binary.LittleEndian.Uint64([]byte("unit:\x00\x00\x00"))
	keyHist    = binary.LittleEndian.Uint64([]byte("hist:\x00\x00\x00"))
	keySumsq   = binary.LittleEndian.Uint64([]byte("sumsq:\x00\x00"))
)

// skipDigits returns the index of the first byte at or after i that is not
// an ASCII digit, looking at eight bytes at a time, or the start of the last
// seven bytes of b when they are all digits (the caller's loop goes on
// from there).
func skipDigits(b []byte, i int) int {
	for i+8 <= len(b) {
		// A digit xor '0' is 0–9: its high nibble is clear, and adding 6
		// to its low nibble does not carry into it; any other byte sets a
		// bit of its high nibble in one or the other.
		t := binary.LittleEndian.Uint64(b[i:]) ^ 0x3030303030303030
		if other := (t | (t&0x0f0f0f0f0f0f0f0f + 0x0606060606060606)) & 0xf0f0f0f0f0f0f0f0; other != 0 {
			return i + bits.TrailingZeros64(other)>>3
		}
		i += 8
	}
	return i
}

// skipSpaces returns the index of the first byte at or after i that is not
// a space, eight bytes at a time: Lustre pads its values into columns.
func skipSpaces(b []byte, i int) int {
	// Most runs are one space (after a comma) or none.
	if i+1 < len(b) && b[i+1] != ' ' {
		if b[i] == ' ' {
			return i + 1
		}
		return i
	}
	for i+8 <= len(b) {
		if x := binary.LittleEndian.Uint64(b[i:]) ^ 0x2020202020202020; x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// parseOpAny is parseOp for any line: it walks the line once by index.
func parseOpAny(name string, b []byte) (OpStat, bool) {
	op := OpStat{Op: name}
	haveSamples := false
	n := len(b)
	i := 1 // past '{'
	for {
		for i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == ',') {
			i++
		}
		if i == n {
			return op, false // no closing brace: a cut line
		}
		if b[i] == '}' {
			return op, haveSamples
		}
		keyStart := i
		for i < n && b[i] != ':' {
			i++
		}
		if i == n || i == keyStart {
			return op, false
		}
		keyEnd := i
		for b[keyEnd-1] == ' ' || b[keyEnd-1] == '\t' {
			keyEnd--
		}
		i++ // ':'
		for i < n && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i < n && b[i] == '{' {
			// hist: { 4K: 1, 8K: 2 } — skipped.
			end := bytes.IndexByte(b[i:], '}')
			if end < 0 {
				return op, false
			}
			i += end + 1
			continue
		}
		valueStart := i
		for i < n && b[i] != ',' && b[i] != '}' && b[i] != ' ' && b[i] != '\t' {
			i++
		}
		value := b[valueStart:i]
		switch string(b[keyStart:keyEnd]) {
		case "samples":
			v, ok := parseUint(value)
			if !ok {
				return op, false
			}
			op.Samples, haveSamples = v, true
		case "sum":
			v, ok := parseUint(value)
			if !ok {
				return op, false
			}
			op.Sum, op.HasSum = v, true
		case "unit":
			op.Unit = parseUnit(value)
		}
	}
}

// Operation names are interned so that a job entry costs no allocation per
// operation. Known names come from a fixed table; new ones (a newer Lustre)
// are added once, up to a bound that garbage cannot exhaust.
var (
	knownOps = func() map[string]string {
		m := map[string]string{}
		for _, op := range []string{
			// OST
			"read_bytes", "write_bytes", "read", "write", "getattr", "setattr", "punch", "sync",
			"destroy", "create", "statfs", "get_info", "set_info", "quotactl", "prealloc",
			// MDT
			"open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getxattr",
			"setxattr", "samedir_rename", "crossdir_rename", "parallel_rename_file",
			"parallel_rename_dir", "migrate", "fallocate", "rename_trylocks",
		} {
			m[op] = op
		}
		return m
	}()
	extraOpsMu sync.Mutex
	extraOps   = map[string]string{}
)

const maxExtraOps = 256

func internOp(b []byte) string {
	if s, ok := knownOps[string(b)]; ok {
		return s
	}
	if len(b) == 0 || len(b) > 64 {
		return ""
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return ""
		}
	}
	extraOpsMu.Lock()
	defer extraOpsMu.Unlock()
	if s, ok := extraOps[string(b)]; ok {
		return s
	}
	if len(extraOps) >= maxExtraOps {
		return ""
	}
	s := string(b)
	extraOps[s] = s
	return s
}

// joinContinued returns h behind a handler that joins an entry with no
// line but its job_id (and time keys) to the entry after it: a job_id that
// held a line break followed by "- job_id: …" (Lustre before 2.15 printed
// job_ids raw). The joined entry has the next entry's lines and a job_id
// with a line break, so that the text after the break never becomes an
// identity of its own. It sees the entries in order whatever parsed them,
// so that an entry and the one after it may be cut into two chunks
// (ConcurrentJobStatsParser).
func joinContinued(h JobStatsHandler) JobStatsHandler {
	if j, ok := h.(*continued); ok {
		return j
	}
	return &continued{h: h}
}

type continued struct {
	h JobStatsHandler
	// held is the job_id of an entry with no operation, waiting for the
	// entry after it; joined counts the entries joined to another.
	held    []byte
	holding bool
	joined  int
	js      JobStat
}

// maxJoinedID bounds a joined job_id: Lustre's are at most 32 bytes.
const maxJoinedID = 1024

func (c *continued) Job(js *JobStat) {
	if !c.holding && (len(js.Ops) > 0 || js.Malformed > 0) {
		c.h.Job(js) // nearly every entry
		return
	}
	if c.holding {
		c.joined++
		if len(c.held) < maxJoinedID {
			c.held = append(append(c.held, '\n'), js.JobID[:min(len(js.JobID), maxJoinedID)]...)
		}
		if len(js.Ops) == 0 && js.Malformed == 0 {
			return // its text goes on
		}
		c.js = *js
		c.js.JobID = c.held
		c.holding = false
		c.h.Job(&c.js)
		c.js = JobStat{}
		return
	}
	c.held = append(c.held[:0], js.JobID...)
	c.holding = true
}

func (c *continued) End(complete bool, stats SectionStats) {
	if c.holding && complete {
		// The section's last entry has no operation: its job_id's text
		// ends the section.
		c.js = JobStat{JobID: append(c.held, '\n')}
		c.h.Job(&c.js)
		c.js = JobStat{}
	} else if c.holding {
		stats.Stray++ // cut short: what it went on with is unknown
	}
	c.holding = false
	stats.Jobs -= c.joined
	c.joined = 0
	c.h.End(complete, stats)
}
