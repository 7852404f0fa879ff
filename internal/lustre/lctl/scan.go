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

// A Router returns the parser for a parameter, or nil to skip its body.
type Router func(param string) SectionParser

// scanReaders keep the large read buffers of Scan between runs: a scrape
// would otherwise leave one behind as garbage.
var scanReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// maxLine bounds a single line. Job stats lines are a few hundred bytes;
// a longer line is cut, and the parser sees its first maxLine bytes.
const maxLine = 1 << 20

// Scan reads lctl get_param output from r until EOF and routes each
// parameter's body through route. Text before the first header belongs to
// the parameter named by unnamed (for a bare proc file or `lctl get_param
// -n`); an empty unnamed skips it. The error is that of r; the last open
// section is ended as complete only when r ended cleanly.
func Scan(r io.Reader, unnamed string, route Router) error {
	br := scanReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		scanReaders.Put(br)
	}()
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
			// call; a partial line is read by ReadSlice below.
			buf, _ := br.Peek(br.Buffered())
			if last := bytes.LastIndexByte(buf, '\n'); last >= 0 {
				n := bodyLines(buf[:last+1])
				if n > 0 {
					bp.Block(buf[:n])
					br.Discard(n)
					continue
				}
			}
		}
		line, err := br.ReadSlice('\n')
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
