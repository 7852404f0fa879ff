package dayu

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A JSON reader that builds nodes from a stream, a value at a time, charging
// each to the parse's budget before it is made. The tracker's JSON is one
// array of records; the stats reader takes the records one by one and
// forgets each once read, so a file is never held whole, and a generic
// decode (encoding/json into maps, 22 times the file) is never made. Page
// range maps inside an H5FD_MEM_* block, the bulk of a VFD file, go straight
// into PageRange values (or are checked and dropped) without nodes.
//
// It accepts what encoding/json accepts (RFC 8259), with one difference:
// strings keep bytes that are not UTF-8 as they are (encoding/json turns
// them into U+FFFD); label values are cleaned later in any case.
// FuzzDayuJSON holds it to encoding/json.

// maxJSONDepth bounds nesting so that hostile input cannot recurse deeply.
const maxJSONDepth = 64

type jsonReader struct {
	br   *bufio.Reader
	p    *parse
	line int
	buf  []byte // scratch for a string or number being read
}

var errJSONCut = errors.New(msgJSONCut)

func (j *jsonReader) syntax() error {
	return &ParseError{Line: j.line, Reason: ReasonSyntax, Msg: msgJSONSyntax}
}

// ioErr turns a failed read into the parse's error: the end of the input
// inside a value is a document cut short.
func (j *jsonReader) ioErr(err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return &ParseError{Line: j.line, Reason: ReasonTruncated, Msg: msgJSONCut}
	case errors.Is(err, errGrew):
		return err
	}
	return readError{err}
}

func (j *jsonReader) next() (byte, error) {
	c, err := j.br.ReadByte()
	if err != nil {
		return 0, j.ioErr(err)
	}
	if c == '\n' {
		j.line++
	}
	return c, nil
}

// peek returns the next byte that is not white space, without taking it.
func (j *jsonReader) peek() (byte, error) {
	for {
		b, err := j.br.Peek(1)
		if err != nil {
			return 0, j.ioErr(err)
		}
		switch b[0] {
		case ' ', '\t', '\r':
		case '\n':
			j.line++
		default:
			return b[0], nil
		}
		j.br.ReadByte()
	}
}

// end checks that only white space follows the document.
func (j *jsonReader) end() error {
	_, err := j.peek()
	var pe *ParseError
	if errors.As(err, &pe) && pe.Reason == ReasonTruncated {
		return nil // io.EOF: nothing after the value
	}
	if err != nil {
		return err
	}
	return &ParseError{Line: j.line, Reason: ReasonSyntax, Msg: msgJSONTrailing}
}

func (j *jsonReader) newNode(kind nodeKind, text string) (*node, error) {
	if err := j.p.hold(costNode + int64(len(text))); err != nil {
		return nil, err
	}
	n := j.p.alloc()
	n.kind, n.text = kind, text
	return n, nil
}

// value reads one value. parentKey is the key the value is under in its
// map ("" elsewhere): it tells an I/O block, whose page range maps are
// read straight into ranges.
func (j *jsonReader) value(depth int, parentKey string) (*node, error) {
	if depth > maxJSONDepth {
		return nil, &ParseError{Line: j.line, Reason: ReasonSyntax, Msg: msgTooDeep}
	}
	c, err := j.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '{':
		return j.object(depth, parentKey)
	case c == '[':
		return j.array(depth)
	case c == '"':
		j.br.ReadByte()
		s, err := j.str()
		if err != nil {
			return nil, err
		}
		return j.newNode(scalarNode, s)
	case c == '-' || (c >= '0' && c <= '9'):
		s, err := j.number()
		if err != nil {
			return nil, err
		}
		return j.newNode(scalarNode, s)
	case c == 't':
		return j.literal("true", "true")
	case c == 'f':
		return j.literal("false", "false")
	case c == 'n':
		return j.literal("null", "")
	}
	return nil, j.syntax()
}

func (j *jsonReader) literal(word, text string) (*node, error) {
	for i := 0; i < len(word); i++ {
		c, err := j.next()
		if err != nil {
			return nil, err
		}
		if c != word[i] {
			return nil, j.syntax()
		}
	}
	return j.newNode(scalarNode, text)
}

func (j *jsonReader) object(depth int, parentKey string) (*node, error) {
	j.br.ReadByte() // {
	n, err := j.newNode(mapNode, "")
	if err != nil {
		return nil, err
	}
	c, err := j.peek()
	if err != nil {
		return nil, err
	}
	if c == '}' {
		j.br.ReadByte()
		return n, nil
	}
	inMem := strings.HasPrefix(parentKey, "H5FD_MEM_")
	for {
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		if c != '"' {
			return nil, j.syntax()
		}
		j.br.ReadByte()
		key, err := j.str()
		if err != nil {
			return nil, err
		}
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		if c != ':' {
			return nil, j.syntax()
		}
		j.br.ReadByte()
		var v *node
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		if inMem && c == '{' && (key == "read_ranges" || key == "write_ranges") {
			v, err = j.ranges()
		} else {
			v, err = j.value(depth+1, key)
		}
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, v)
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		j.br.ReadByte()
		switch c {
		case '}':
			return n, nil
		case ',':
		default:
			return nil, j.syntax()
		}
	}
}

func (j *jsonReader) array(depth int) (*node, error) {
	j.br.ReadByte() // [
	n, err := j.newNode(listNode, "")
	if err != nil {
		return nil, err
	}
	c, err := j.peek()
	if err != nil {
		return nil, err
	}
	if c == ']' {
		j.br.ReadByte()
		return n, nil
	}
	for {
		v, err := j.value(depth+1, "")
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, v)
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		j.br.ReadByte()
		switch c {
		case ']':
			return n, nil
		case ',':
		default:
			return nil, j.syntax()
		}
	}
}

// ranges reads {"index":[first,last], …} into a rangesNode: kept (and
// charged) when the parse keeps ranges, else only checked. A value of
// another shape is the error the generic path would give.
func (j *jsonReader) ranges() (*node, error) {
	j.br.ReadByte() // {
	n, err := j.newNode(rangesNode, "")
	if err != nil {
		return nil, err
	}
	keep := j.p.keepRanges
	c, err := j.peek()
	if err != nil {
		return nil, err
	}
	if c == '}' {
		j.br.ReadByte()
		return n, nil
	}
	for {
		held, slab := j.p.temp, j.p.mark() // the key and value below are gone once read
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		if c != '"' {
			return nil, j.syntax()
		}
		j.br.ReadByte()
		key, err := j.str()
		if err != nil {
			return nil, err
		}
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		if c != ':' {
			return nil, j.syntax()
		}
		j.br.ReadByte()
		v, err := j.value(maxJSONDepth-2, "") // [first,last]: two levels at most
		if err != nil {
			return nil, err
		}
		idx, err := intOf(strings.TrimSpace(key))
		if err != nil || strings.ContainsAny(key, ".eE") {
			return nil, rangeErr(msgRangeIndex)
		}
		pages, err := v.ints()
		if err != nil || len(pages) != 2 || v.kind != listNode {
			return nil, rangeErr(msgRangePair)
		}
		if keep {
			if err := j.p.keep(costRange); err != nil {
				return nil, err
			}
			n.pageRanges = append(n.pageRanges, PageRange{Index: idx, First: pages[0], Last: pages[1]})
		}
		j.p.temp = held
		j.p.rewind(slab)
		if c, err = j.peek(); err != nil {
			return nil, err
		}
		j.br.ReadByte()
		switch c {
		case '}':
			sortRanges(n.pageRanges)
			return n, nil
		case ',':
		default:
			return nil, j.syntax()
		}
	}
}

func rangeErr(msg string) error {
	return fieldErr("read_ranges", errors.New(msg))
}

// str reads a string after its opening quote.
func (j *jsonReader) str() (string, error) {
	j.buf = j.buf[:0]
	for {
		c, err := j.next()
		if err != nil {
			return "", err
		}
		switch {
		case c == '"':
			if err := j.p.hold(int64(len(j.buf))); err != nil {
				return "", err
			}
			return j.p.intern(j.buf), nil
		case c < 0x20:
			return "", j.syntax()
		case c == '\\':
			if err := j.escape(); err != nil {
				return "", err
			}
		default:
			j.buf = append(j.buf, c)
		}
		if len(j.buf)&0xfff == 0 {
			if err := j.held(); err != nil {
				return "", err
			}
		}
	}
}

// held checks that the string or number being read still fits the budget.
func (j *jsonReader) held() error {
	if j.p.kept+j.p.temp+int64(len(j.buf)) > j.p.limit {
		return errBudget
	}
	return nil
}

func (j *jsonReader) escape() error {
	c, err := j.next()
	if err != nil {
		return err
	}
	switch c {
	case '"', '\\', '/':
		j.buf = append(j.buf, c)
	case 'b':
		j.buf = append(j.buf, '\b')
	case 'f':
		j.buf = append(j.buf, '\f')
	case 'n':
		j.buf = append(j.buf, '\n')
	case 'r':
		j.buf = append(j.buf, '\r')
	case 't':
		j.buf = append(j.buf, '\t')
	case 'u':
		r, err := j.hex4()
		if err != nil {
			return err
		}
		if utf16.IsSurrogate(r) {
			// A pair is two escapes; a lone half is U+FFFD, as
			// encoding/json has it.
			if b, err := j.br.Peek(2); err == nil && b[0] == '\\' && b[1] == 'u' {
				j.br.Discard(2)
				r2, err := j.hex4()
				if err != nil {
					return err
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					j.buf = utf8.AppendRune(j.buf, d)
					return nil
				}
				j.buf = utf8.AppendRune(j.buf, utf8.RuneError)
				r = r2
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			} else {
				r = utf8.RuneError
			}
		}
		j.buf = utf8.AppendRune(j.buf, r)
	default:
		return j.syntax()
	}
	return nil
}

func (j *jsonReader) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		c, err := j.next()
		if err != nil {
			return 0, err
		}
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, j.syntax()
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// number reads a number as RFC 8259 writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (j *jsonReader) number() (string, error) {
	j.buf = j.buf[:0]
	for {
		b, err := j.br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return "", j.ioErr(err)
		}
		c := b[0]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		j.br.ReadByte()
		j.buf = append(j.buf, c)
		if len(j.buf)&0xfff == 0 {
			if err := j.held(); err != nil {
				return "", err
			}
		}
	}
	if err := j.p.hold(int64(len(j.buf))); err != nil {
		return "", err
	}
	if !validNumber(j.buf) {
		return "", j.syntax()
	}
	return j.p.intern(j.buf), nil
}

func validNumber(s []byte) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
