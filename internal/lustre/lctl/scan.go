// Package lctl runs `lctl get_param` and parses what it prints.
//
// One exec serves every collector of a scrape: the output of
// `lctl get_param a b c` is the concatenation of the parameters, each
// introduced by a header line "name=" (a multi-line value follows) or
// "name=value" (a single-line value). Scan streams that output line by line
// and hands each parameter's body to the parser that asked for it; bodies
// nobody asked for are skipped without being looked at. Nothing here keeps
// the whole output in memory.
package lctl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// A SectionParser consumes the body of one parameter.
type SectionParser interface {
	// Line receives one body line without its line ending. The slice is
	// only valid during the call.
	Line(line []byte)
	// End is called once when the body ends. complete is false when the
	// output stopped in the middle of it (a killed or failed lctl): the
	// parser must then not conclude anything from what is missing.
	End(complete bool)
}

// A BlockParser is a SectionParser that also takes its body a run of
// lines at a time, straight from the read buffer: at hundreds of megabytes
// of job_stats, handing it over line by line is most of the reading
// goroutine's work. Block(lines) must do what Line does for each line of
// lines, every one of which ends in '\n', without its line ending
// (trimEOL).
type BlockParser interface {
	SectionParser
	// Block receives whole lines. The slice is only valid during the call.
	Block(lines []byte)
}

// A ChunkParser is a BlockParser that may keep the buffer Scan read its
// lines into, instead of copying them: at hundreds of megabytes of
// job_stats, the copy was a tenth of the reading goroutine's work.
type ChunkParser interface {
	BlockParser
	// TakeLines is offered whole lines, as Block is. It returns how many
	// bytes it took, a run of whole lines from the start, and keep: nil
	// when it copied what it took, else the lines among them it would
	// read where they lie, which Scan then hands to Keep with their
	// buffer. It must copy whatever else it needs of lines before it
	// returns: once Keep has the buffer, a helper may give it back for
	// another Scan to read into. Lines not taken are offered again with
	// what Scan reads after them, in this call's lines or the next's.
	// more is false when no more lines of the body can follow lines (a
	// header or the end of the output is next): all of lines must then
	// be taken.
	TakeLines(lines []byte, more bool) (taken int, keep []byte)
	// Keep receives the lines TakeLines kept and the buffer they lie in
	// (a readBuffers buffer), which is the parser's from then on, to put
	// back in readBuffers when done with it. Scan, which has moved what
	// it had not read to a buffer of its own, never touches it again.
	Keep(lines []byte, buf *[]byte)
}

// A Router returns the parser for a parameter, or nil to skip its body.
type Router func(param string) SectionParser

// readBufferSize is the size of Scan's read buffers, which ChunkParsers
// keep as their chunks: twice ConcurrentJobStatsParser's chunk size, so
// that a buffer holds a chunk and the start of the next.
const readBufferSize = 128 << 10

// readBuffers keep Scan's read buffers between runs, and between Scan and
// the ChunkParsers that keep them: a scrape would otherwise leave hundreds
// behind as garbage.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// maxLine bounds a single line. Job stats lines are a few hundred bytes;
// a longer line is cut, and the parser sees its first maxLine bytes.
const maxLine = 1 << 20

// Scan reads lctl get_param output from r until EOF and routes each
// parameter's body through route. Text before the first header belongs to
// the parameter named by unnamed (for a bare proc file or `lctl get_param
// -n`); an empty unnamed skips it. The error is that of r; the last open
// section is ended as complete only when r ended cleanly.
func Scan(r io.Reader, unnamed string, route Router) error {
	br := &lineReader{rd: r, buf: readBuffers.Get().(*[]byte)}
	defer func() { readBuffers.Put(br.buf) }()
	var (
		current SectionParser
		long    []byte // a line longer than the reader's buffer
	)
	if unnamed != "" {
		current = route(unnamed)
	}
	end := func(complete bool) {
		if current != nil {
			current.End(complete)
			current = nil
		}
	}
	for {
		if bp, ok := current.(BlockParser); ok && long == nil {
			// The whole lines buffered, up to the next header, in one
			// call; a partial line is read by readSlice below.
			buf := br.buffered()
			if last := bytes.LastIndexByte(buf, '\n'); last >= 0 {
				n := bodyLines(buf[:last+1])
				if n > 0 {
					cp, ok := bp.(ChunkParser)
					if !ok {
						bp.Block(buf[:n])
						br.discard(n)
						continue
					}
					more := n == last+1 && br.err == nil
					full := br.full()
					taken, keep := cp.TakeLines(buf[:n], more)
					if keep != nil {
						// What follows the taken lines moves to a
						// fresh buffer before the parser may give this
						// one back: read from it afterwards, it could
						// hold another Scan's output.
						cp.Keep(keep, br.handOver(taken))
					} else {
						if taken < n && full {
							// An entry longer than the buffer: the
							// parser copies it.
							bp.Block(buf[taken:n])
							taken = n
						}
						br.discard(taken)
					}
					if taken < n {
						// The parser waits for a chunk: lines are offered
						// again once the buffer is full (or the output
						// ended), not at every read, which would look at
						// the same lines once per read.
						br.fillUp()
					}
					continue
				}
			}
		}
		line, err := br.readSlice()
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long) < maxLine {
				long = append(long, line...)
			}
			continue
		}
		if long != nil {
			if len(long) < maxLine {
				long = append(long, line...)
			}
			line, long = long, nil
			if len(line) > maxLine {
				line = line[:maxLine]
			}
		}
		if len(line) > 0 {
			line = trimEOL(line)
			if name, value, ok := header(line); ok {
				end(true)
				current = route(string(name))
				if current != nil && len(value) > 0 {
					current.Line(value)
				}
			} else if current != nil {
				current.Line(line)
			}
		}
		if err != nil {
			end(err == io.EOF)
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// lineReader is a bufio.Reader cut to what Scan needs, whose buffer can be
// handed over to a ChunkParser.
type lineReader struct {
	rd   io.Reader
	buf  *[]byte // from readBuffers
	r, w int     // unread: (*buf)[r:w]
	err  error   // from rd, returned once the buffer is read
}

func (b *lineReader) buffered() []byte { return (*b.buf)[b.r:b.w] }

func (b *lineReader) discard(n int) { b.r += n }

// full reports whether the buffer holds nothing but unread bytes.
func (b *lineReader) full() bool { return b.r == 0 && b.w == len(*b.buf) }

// handOver gives the buffer away, with its first n unread bytes, and
// returns it: what follows them moves to a fresh buffer first.
func (b *lineReader) handOver(n int) *[]byte {
	old := b.buf
	b.buf = readBuffers.Get().(*[]byte)
	b.w = copy(*b.buf, (*old)[b.r+n:b.w])
	b.r = 0
	return old
}

// fill reads once more, after moving the unread bytes to the start of the
// buffer. It does nothing when the buffer is full or rd has failed.
func (b *lineReader) fill() {
	if b.err != nil {
		return
	}
	buf := *b.buf
	if b.r > 0 {
		b.w = copy(buf, buf[b.r:b.w])
		b.r = 0
	}
	// A reader that returns nothing, and no error, 100 times in a row is
	// broken (as bufio.Reader decides).
	for range 100 {
		if b.w == len(buf) {
			return
		}
		n, err := b.rd.Read(buf[b.w:])
		if n < 0 || n > len(buf)-b.w {
			b.err = errors.New("lctl: a reader returned an impossible count")
			return
		}
		b.w += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

// fillUp reads until the buffer is full or rd has failed.
func (b *lineReader) fillUp() {
	for b.err == nil && !b.full() {
		b.fill()
	}
}

// readSlice reads up to and including the next '\n', as
// bufio.Reader.ReadSlice: the line is valid until the next read; at the end
// of the output it returns what is left with the reader's error (once),
// and bufio.ErrBufferFull with a full buffer that holds no '\n'.
func (b *lineReader) readSlice() ([]byte, error) {
	searched := 0
	for {
		buf := (*b.buf)[b.r:b.w]
		if i := bytes.IndexByte(buf[searched:], '\n'); i >= 0 {
			b.r += searched + i + 1
			return buf[:searched+i+1], nil
		}
		if b.err != nil {
			err := b.err
			b.err = nil
			b.r = b.w
			return buf, err
		}
		if b.full() {
			b.r = b.w
			return buf, bufio.ErrBufferFull
		}
		searched = len(buf)
		b.fill()
	}
}

// bodyLines returns the length of the lines of buf, whole lines each ending
// in '\n', before the first header line.
func bodyLines(buf []byte) int {
	for i := 0; i < len(buf); {
		end := i + bytes.IndexByte(buf[i:], '\n') + 1
		// A header starts with a letter: most lines are ruled out by
		// their first byte.
		if isLetter(buf[i]) {
			if _, _, ok := header(trimEOL(buf[i:end])); ok {
				return i
			}
		}
		i = end
	}
	return len(buf)
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// header recognizes "name=" and "name=value" lines. A parameter name starts
// at column 0 with a letter and holds only the characters of Lustre
// parameter paths (device names, NIDs with '@', ':' and brackets); body
// lines never look like that: YAML bodies are indented or start with "- ",
// and their keys end with ':' before any '='.
func header(line []byte) (name, value []byte, ok bool) {
	if len(line) == 0 || !isLetter(line[0]) {
		return nil, nil, false
	}
	eq := bytes.IndexByte(line, '=')
	if eq <= 0 {
		return nil, nil, false
	}
	for _, c := range line[:eq] {
		if !isParamChar(c) {
			return nil, nil, false
		}
	}
	return line[:eq], line[eq+1:], true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isParamChar(c byte) bool {
	switch {
	case isLetter(c), c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '_', '-', '.', '@', ':', '[', ']', '*':
		return true
	}
	return false
}
