package dayu

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unsafe"
)

// The tracker's "YAML" is written with printf and is not YAML: blocks at the
// wrong indentation, `Task:` at column 0 between list items, `{83:(0,0)}`
// tuples. No YAML library reads all of it, so this reader splits the text
// into lines of (indentation, list dash, key, value) and leaves the meaning
// to the callers, which know the keys.

// line is one non-blank, non-comment line.
type line struct {
	num    int // 1-based
	indent int // columns before the content, the dash included
	dash   bool
	key    string // "" for a bare scalar such as a list item
	hasKey bool
	value  string // raw text after "key:", trimmed
	last   bool   // the file's last line, without a final newline
}

// readError is a failure of the reader under the parse (the file system),
// not of the text.
type readError struct{ err error }

func (e readError) Error() string { return msgReadFailed }
func (e readError) Unwrap() error { return e.err }

// longLineFunc may take a line longer than the read buffer from the stream
// itself, rather than have it put together: l is the line as far as head
// (its first bytes, read) goes, and br holds the rest. It returns whether
// it took the line (to its newline, which it reads, or to the end of the
// input: last) and the line's error.
type longLineFunc func(l line, head []byte, br *bufio.Reader) (took, last bool, err error)

// splitLines calls fn for every meaningful line read from br, stopping at
// the first error fn returns. firstLine is the number of the first line br
// holds. A line is held (and charged to p) only while fn reads it: what fn
// keeps, it copies. long, if set, is offered every line longer than br's
// buffer first.
func splitLines(br *bufio.Reader, p *parse, firstLine int, fn func(l line) error, long longLineFunc) error {
	num := firstLine - 1
	var held []byte // a line longer than br's buffer, being put together
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) && held == nil && long != nil {
			if l, ok := parseLine(unsafe.String(unsafe.SliceData(chunk), len(chunk))); ok {
				l.num = num + 1
				took, last, err := long(l, chunk, br)
				if took {
					num++
					if err != nil {
						return err
					}
					p.release()
					if last {
						return nil
					}
					continue
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if err := p.hold(int64(len(chunk))); err != nil {
				return err
			}
			held = append(held, chunk...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errGrew) {
				return err
			}
			return readError{err}
		}
		if len(chunk) == 0 && len(held) == 0 {
			return nil // the end, after a final newline
		}
		last := err != nil // io.EOF: no newline after this line
		if held != nil {
			chunk = append(held, chunk...)
			held = nil
		}
		num++
		if err := p.hold(int64(len(chunk))); err != nil {
			return err
		}
		// The line is taken as a string without a copy: fn copies what it
		// keeps (the parse's str and its setters), and the bytes stay as
		// they are until fn returns (br is not read meanwhile; a long
		// line's buffer is not used again).
		raw := strings.TrimRight(unsafe.String(unsafe.SliceData(chunk), len(chunk)), "\n")
		l, ok := parseLine(strings.TrimRight(raw, " \t\r"))
		if ok {
			l.num, l.last = num, last
			if err := fn(l); err != nil {
				return err
			}
		}
		p.release()
		if last {
			return nil
		}
	}
}

// skipSpace reads past the white space at the start of a file and returns
// the first byte after it (not consumed) and the number of newlines read
// past; ok is false when the file holds nothing else.
func skipSpace(br *bufio.Reader) (first byte, newlines int, ok bool, err error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, newlines, false, nil
			}
			if errors.Is(err, errGrew) {
				return 0, newlines, false, err
			}
			return 0, newlines, false, readError{err}
		}
		switch c {
		case '\n':
			newlines++
		case ' ', '\t', '\r', '\v', '\f':
		default:
			br.UnreadByte()
			return c, newlines, true, nil
		}
	}
}

// parseLine splits one line; ok is false for blank lines and comments.
func parseLine(s string) (l line, ok bool) {
	content := strings.TrimLeft(s, " \t")
	if content == "" || content[0] == '#' {
		return line{}, false
	}
	l.indent = len(s) - len(content)
	if content == "-" || strings.HasPrefix(content, "- ") {
		l.dash = true
		content = strings.TrimLeft(content[1:], " \t")
		if content == "" {
			return l, true
		}
	}
	l.key, l.value, l.hasKey = splitKey(content)
	if !l.hasKey {
		l.value = content
	}
	return l, true
}

// splitKey finds "key: value" or "key:". Keys never start with a quote or a
// bracket, which keeps a quoted file name such as "…_00:00:00.nc" whole.
func splitKey(s string) (key, value string, ok bool) {
	if s == "" || strings.ContainsRune(`"'[{(`, rune(s[0])) {
		return "", "", false
	}
	if i := strings.Index(s, ": "); i > 0 {
		return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+2:]), true
	}
	if strings.HasSuffix(s, ":") && len(s) > 1 {
		return strings.TrimSpace(s[:len(s)-1]), "", true
	}
	return "", "", false
}
