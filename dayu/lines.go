package dayu

import "strings"

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

// splitLines calls fn for every meaningful line of data, stopping at the
// first error fn returns.
func splitLines(data []byte, fn func(l line) error) error {
	// One conversion for the whole file: lines, keys and values are
	// substrings of it.
	text := string(data)
	num := 0
	for len(text) > 0 {
		num++
		var raw string
		last := false
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			raw, text = text[:i], text[i+1:]
		} else {
			raw, text, last = text, "", true
		}
		l, ok := parseLine(strings.TrimRight(raw, " \t\r"))
		if !ok {
			continue
		}
		l.num, l.last = num, last
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
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
