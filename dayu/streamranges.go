package dayu

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"unsafe"
)

// A VFD file's bulk is its page range maps, and one map is one line: a
// task of millions of I/Os writes a line of tens of megabytes. Such a line
// is not held: when a line is longer than the read buffer and is a range
// map of an I/O block, streamRanges reads it straight from the stream
// into ranges (or only checks it), a token at a time. It accepts what
// parseValue followed by ranges accepts, and reads the same ranges
// (FuzzDayuStreamRanges holds it to them), except plain tokens longer than
// maxRangeToken, which no number needs.

// maxRangeToken is the longest plain token of a streamed range map.
const maxRangeToken = 4096

// lineSource gives the bytes of one line: first the part already read
// (head), then the stream up to the newline, which it takes. It reads the
// stream through windows of br's buffer (Peek), given back as they are
// used (Discard), so that a line is never copied.
type lineSource struct {
	head []byte
	br   *bufio.Reader
	win  []byte // br's buffered bytes being read
	pos  int    // how many of win were read
	end  bool   // the end of the line was reached
	eof  bool   // ... and it was the end of the input, without a newline
	err  error
	tok  []byte // scratch for a token
}

// peek returns the next byte of the line; ok is false at its end.
func (s *lineSource) peek() (byte, bool) {
	if s.end {
		return 0, false
	}
	if len(s.head) > 0 {
		if s.head[0] == '\n' {
			s.head = s.head[1:]
			s.end = true
			return 0, false
		}
		return s.head[0], true
	}
	if s.pos == len(s.win) && !s.fill() {
		return 0, false
	}
	if c := s.win[s.pos]; c != '\n' {
		return c, true
	}
	s.pos++
	s.end = true
	s.br.Discard(s.pos)
	s.win, s.pos = nil, 0
	return 0, false
}

// fill gives back the window read and takes the next one; false at the
// end of the input.
func (s *lineSource) fill() bool {
	if s.br == nil {
		s.end, s.eof = true, true
		return false
	}
	s.br.Discard(s.pos)
	s.win, s.pos = nil, 0
	if _, err := s.br.Peek(1); err != nil {
		s.end, s.eof = true, true
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
		return false
	}
	s.win, _ = s.br.Peek(s.br.Buffered())
	return true
}

func (s *lineSource) skip() {
	if len(s.head) > 0 {
		s.head = s.head[1:]
		return
	}
	s.pos++
}

// fastPair reads one plain "index:(first,last)" or "index:[first,last]"
// at the source when the bytes at hand hold it whole, followed by ',' or
// '}' (not taken): the shape trackers write, read without the tokenizer.
// ok is false, and nothing is taken, for anything else.
func (s *lineSource) fastPair() (idx, first, last int64, ok bool) {
	buf := s.head
	if len(buf) == 0 {
		if s.pos == len(s.win) && !s.fill() {
			return 0, 0, 0, false
		}
		buf = s.win[s.pos:]
	}
	i := 0
	num := func() (int64, bool) {
		start := i
		if i < len(buf) && buf[i] == '-' {
			i++
		}
		digits := i
		var v int64
		for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
			v = v*10 + int64(buf[i]-'0')
			i++
		}
		if i == digits || i-digits > 18 {
			return 0, false
		}
		if buf[start] == '-' {
			v = -v
		}
		return v, true
	}
	expect := func(c byte) bool {
		if i < len(buf) && buf[i] == c {
			i++
			return true
		}
		return false
	}
	idx, ok1 := num()
	if !ok1 || !expect(':') || i >= len(buf) {
		return 0, 0, 0, false
	}
	closer := byte(')')
	switch buf[i] {
	case '(':
	case '[':
		closer = ']'
	default:
		return 0, 0, 0, false
	}
	i++
	first, ok2 := num()
	if !ok2 || !expect(',') {
		return 0, 0, 0, false
	}
	last, ok3 := num()
	if !ok3 || !expect(closer) || i >= len(buf) || (buf[i] != ',' && buf[i] != '}') {
		return 0, 0, 0, false
	}
	if len(s.head) > 0 {
		s.head = s.head[i:]
	} else {
		s.pos += i
	}
	return idx, first, last, true
}

// rest reads past what is left of the line and tells whether it is only
// white space (as strings.TrimSpace sees it).
func (s *lineSource) rest() bool {
	blank := true
	var tail []byte // non-ASCII bytes, which may be Unicode spaces
	for {
		c, ok := s.peek()
		if !ok {
			return blank && strings.TrimSpace(string(tail)) == ""
		}
		s.skip()
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
		case c >= 0x80 && len(tail) < 64:
			tail = append(tail, c)
		default:
			blank = false
		}
	}
}

func (s *lineSource) space() {
	for {
		c, ok := s.peek()
		if !ok || (c != ' ' && c != '\t') {
			return
		}
		s.skip()
	}
}

var errTokenTooLong = errors.New(msgRangePair)

// plain reads an unquoted scalar: up to one of ",:]})" or the line's end,
// trimmed (flowParser.plain). The string is valid until the next token.
func (s *lineSource) plain() (string, error) {
	s.tok = s.tok[:0]
	for {
		c, ok := s.peek()
		if !ok || strings.IndexByte(",:]})", c) >= 0 {
			return strings.TrimSpace(s.token()), nil
		}
		s.skip()
		s.tok = append(s.tok, c)
		if len(s.tok) > maxRangeToken {
			return "", errTokenTooLong
		}
	}
}

// token is the token read, as a string valid until the next one.
func (s *lineSource) token() string {
	return unsafe.String(unsafe.SliceData(s.tok), len(s.tok))
}

// quoted reads a quoted scalar after its opening quote (flowParser.quoted).
func (s *lineSource) quoted(q byte) (string, error) {
	s.tok = s.tok[:0]
	for {
		c, ok := s.peek()
		if !ok {
			return "", errUnbalanced
		}
		s.skip()
		switch {
		case c == q:
			return s.token(), nil
		case c == '\\' && q == '"':
			if c2, ok := s.peek(); ok {
				s.skip()
				s.tok = append(s.tok, c2)
				break
			}
			s.tok = append(s.tok, c)
		default:
			s.tok = append(s.tok, c)
		}
		if len(s.tok) > maxRangeToken {
			return "", errTokenTooLong
		}
	}
}

// scalar reads a plain or quoted scalar at the source.
func (s *lineSource) scalar() (string, error) {
	if c, ok := s.peek(); ok && (c == '"' || c == '\'') {
		s.skip()
		return s.quoted(c)
	}
	return s.plain()
}

// streamRanges reads a range map at src, which starts with '{', to the
// end of the line; the ranges are kept (and charged to p) when keep is
// set. On an error the rest of the line is read past, so that src.eof
// tells whether the line was the file's last.
func streamRanges(p *parse, src *lineSource, keep bool) ([]PageRange, error) {
	out, err := streamRangeMap(p, src, keep)
	if err == nil && !src.rest() {
		err = errors.New(msgTrailing)
	}
	if err != nil {
		src.rest()
		out = nil
	}
	if src.err != nil {
		return nil, readError{src.err}
	}
	sortRanges(out)
	return out, err
}

func streamRangeMap(p *parse, src *lineSource, keep bool) ([]PageRange, error) {
	src.skip() // {
	var out []PageRange
	var bad error // a pair that is not a page range: reported once the map is read
	for {
		src.space()
		c, ok := src.peek()
		if !ok {
			return nil, errUnbalanced
		}
		if c == '}' {
			src.skip()
			return out, bad
		}
		if c == ',' {
			src.skip()
			continue
		}
		if idx, first, last, ok := src.fastPair(); ok {
			if keep && bad == nil {
				if err := p.keep(costRange); err != nil {
					return nil, err
				}
				out = append(out, PageRange{Index: idx, First: first, Last: last})
			}
			continue
		}
		key, err := src.scalar()
		if err != nil {
			return nil, err
		}
		// The key's text goes with the next token: read its number now.
		idx, idxErr := strconv.ParseInt(strings.TrimSpace(key), 10, 64)
		src.space()
		if c, ok = src.peek(); !ok {
			return nil, errUnbalanced
		}
		if c != ':' {
			return nil, errors.New(msgMapNoValue)
		}
		src.skip()
		src.space()
		if c, ok = src.peek(); !ok {
			return nil, errUnbalanced
		}
		var closer byte
		switch c {
		case '[':
			closer = ']'
		case '(':
			closer = ')'
		default:
			// A scalar or a map: never a (first,last) pair. What follows
			// is not read as parseValue would read it: an error either way.
			return nil, errors.New(msgRangePair)
		}
		src.skip()
		var pages [2]int64
		n := 0 // numbers in the list
		pairOK := true
		for {
			src.space()
			c, ok := src.peek()
			if !ok {
				return nil, errUnbalanced
			}
			if c == closer {
				src.skip()
				break
			}
			if c == ',' {
				src.skip()
				continue
			}
			if c == '[' || c == '(' || c == '{' {
				return nil, errors.New(msgRangePair)
			}
			text, err := src.scalar()
			if err != nil {
				return nil, err
			}
			src.space()
			if c, ok := src.peek(); ok && c != ',' && c != closer {
				return nil, errors.New(msgBadInList)
			}
			v, err := intOf(text)
			if err != nil || text == "" {
				pairOK = false
			}
			if n < 2 {
				pages[n] = v
			}
			n++
		}
		src.space()
		if c, ok := src.peek(); ok && c != ',' && c != '}' {
			return nil, errors.New(msgBadInMap)
		}
		switch {
		case idxErr != nil:
			if bad == nil {
				bad = errors.New(msgRangeIndex)
			}
		case !pairOK || n != 2:
			if bad == nil {
				bad = errors.New(msgRangePair)
			}
		case keep && bad == nil:
			if err := p.keep(costRange); err != nil {
				return nil, err
			}
			out = append(out, PageRange{Index: idx, First: pages[0], Last: pages[1]})
		}
	}
}
