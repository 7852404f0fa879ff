package lnet

import (
	"errors"
	"io"
	"strings"
)

// The reader below understands the block YAML that lnetctl prints and
// nothing more: "key: value" and "key:" lines, "- " list items, plain and
// quoted scalars. It is written for lnetctl's two printers, which indent
// differently: the cYAML printer of Lustre ≤ 2.14 puts "- " at the parent's
// indentation plus 4 and the item's further keys 2 columns right of the
// dash, while libyaml (netlink, Lustre 2.15+) puts the dash at the parent key's
// column and the keys 6 columns right of it. Both come out of one rule: a
// list item's content sits at the column where the text after "- " starts.
//
// Anything it does not understand (a line without a colon, a line indented
// where no block can start, flow collections) is skipped or kept as a
// plain string; it never fails on content.

// Limits that bound memory on hostile or runaway input. lnetctl prints a
// few kilobytes; a router with a hundred NIs, well under a megabyte.
const (
	maxInput    = 16 << 20 // bytes read; the rest is drained and ignored
	maxLineLen  = 64 << 10 // longer lines are cut
	maxDepth    = 64       // deeper blocks are skipped
	maxKeyBytes = 256      // longer keys are skipped
)

// ErrTooLarge is returned with what was parsed when the output exceeds
// maxInput bytes.
var ErrTooLarge = errors.New("lnetctl output larger than 16 MiB: the rest was ignored")

// node is a parsed YAML value: a mapping (kids with keys), a sequence
// (list set, kids without keys) or a scalar (value).
type node struct {
	key   string
	value string
	list  bool
	kids  []*node
}

// get returns the child of mapping n whose key matches name (see normKey),
// or nil.
func (n *node) get(name string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.key == name {
			return k
		}
	}
	return nil
}

type line struct {
	indent int
	text   string
}

// readTree reads r to the end (or maxInput) and parses it. A read error is
// returned with the tree of what was read before it.
func readTree(r io.Reader) (*node, error) {
	lines, err := readLines(r)
	p := &parser{lines: lines}
	return p.document(), err
}

// readLines splits the input into indented, non-blank lines, dropping
// comments and document markers. The input is read whole (it is small)
// so that lines are substrings of one string instead of one copy each.
func readLines(r io.Reader) ([]line, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err == nil && len(data) > maxInput {
		data, err = data[:maxInput], ErrTooLarge
		// Let a command finish instead of blocking on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}
	text := string(data)
	lines := make([]line, 0, strings.Count(text, "\n")+1)
	for text != "" {
		raw := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			raw, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if len(raw) > maxLineLen {
			raw = raw[:maxLineLen]
		}
		if l, ok := toLine(raw); ok {
			lines = append(lines, l)
		}
	}
	return lines, err
}

func toLine(raw string) (line, bool) {
	indent := 0
	for indent < len(raw) && (raw[indent] == ' ' || raw[indent] == '\t') {
		indent++
	}
	text := strings.TrimRight(raw[indent:], " \t\r")
	if text == "" || text[0] == '#' || text == "---" || text == "..." {
		return line{}, false
	}
	return line{indent: indent, text: text}, true
}

type parser struct {
	lines []line
	i     int
	keys  map[string]string // normKey's results: keys repeat on every NI
}

func (p *parser) norm(key string) string {
	n, ok := p.keys[key]
	if !ok {
		if p.keys == nil {
			p.keys = map[string]string{}
		}
		n = normKey(key)
		p.keys[key] = n
	}
	return n
}

// document parses every block of the input into one mapping. Top-level
// sequences (not printed by lnetctl) are kept as keyless children.
func (p *parser) document() *node {
	root := &node{}
	for p.i < len(p.lines) {
		b := p.block(p.lines[p.i].indent, 0)
		if b.list {
			root.kids = append(root.kids, b)
		} else {
			root.kids = append(root.kids, b.kids...)
		}
	}
	return root
}

// block parses the mapping or sequence whose first line is the current one,
// at column ind. It always consumes at least that line.
func (p *parser) block(ind, depth int) *node {
	if isItem(p.lines[p.i].text) {
		return p.sequence(ind, depth)
	}
	return p.mapping(ind, depth)
}

func (p *parser) mapping(ind, depth int) *node {
	n := &node{}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < ind {
			break
		}
		if l.indent > ind {
			// Indented where nothing opens a block (under a scalar,
			// or garbage): not ours to read.
			p.i++
			continue
		}
		if isItem(l.text) {
			// A sequence at the mapping's own column that no "key:"
			// opened: the caller decides (mapping's first line is never
			// an item, so this loop has made progress).
			break
		}
		p.i++
		key, value, ok := splitKey(l.text)
		if !ok {
			continue
		}
		e := &node{key: p.norm(key), value: value}
		if value == "" && p.i < len(p.lines) {
			next := p.lines[p.i]
			// The value is the block below: deeper, or a sequence at
			// the key's own column (libyaml's compact style).
			if next.indent > ind || (next.indent == ind && isItem(next.text)) {
				if depth >= maxDepth {
					p.skip(ind)
				} else {
					child := p.block(next.indent, depth+1)
					e.list, e.kids = child.list, child.kids
				}
			}
		}
		n.kids = append(n.kids, e)
	}
	return n
}

func (p *parser) sequence(ind, depth int) *node {
	n := &node{list: true}
	for p.i < len(p.lines) {
		l := &p.lines[p.i]
		if l.indent < ind {
			break
		}
		if l.indent > ind {
			p.i++
			continue
		}
		if !isItem(l.text) {
			if _, _, isKey := splitKey(l.text); !isKey {
				p.i++ // garbage between items: skip it, keep the list
				continue
			}
			break // a key after the list (libyaml's compact style)
		}
		rest := strings.TrimLeft(l.text[1:], " \t")
		if rest == "" {
			// "-" alone: the item is the block below, if any.
			p.i++
			item := &node{}
			if p.i < len(p.lines) && p.lines[p.i].indent > ind && depth < maxDepth {
				item = p.block(p.lines[p.i].indent, depth+1)
			}
			n.kids = append(n.kids, item)
			continue
		}
		col := ind + len(l.text) - len(rest)
		if _, _, isMap := splitKey(rest); (isMap || isItem(rest)) && depth < maxDepth {
			// Read the item's content as a block at its own column:
			// its first line is this one, minus the dash.
			l.indent, l.text = col, rest
			n.kids = append(n.kids, p.block(col, depth+1))
			continue
		}
		p.i++
		n.kids = append(n.kids, &node{value: unquote(rest)})
	}
	return n
}

// skip consumes the lines deeper than ind.
func (p *parser) skip(ind int) {
	for p.i < len(p.lines) && p.lines[p.i].indent > ind {
		p.i++
	}
}

func isItem(text string) bool {
	return text == "-" || strings.HasPrefix(text, "- ") || strings.HasPrefix(text, "-\t")
}

// splitKey splits "key: value" at the first colon followed by a blank or
// the end of the line, outside quotes; IPv6 NIDs (2001:db8::1@tcp) have
// no such colon. The value is unquoted.
func splitKey(text string) (key, value string, ok bool) {
	rest := text
	if text[0] == '"' || text[0] == '\'' {
		end := closingQuote(text)
		if end < 0 {
			return "", "", false
		}
		key, rest = unquote(text[:end+1]), text[end+1:]
		if !strings.HasPrefix(rest, ":") || (len(rest) > 1 && rest[1] != ' ' && rest[1] != '\t') {
			return "", "", false
		}
		rest = rest[1:]
	} else {
		i := 0
		for ; i < len(text); i++ {
			if text[i] == ':' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t') {
				break
			}
		}
		if i == len(text) {
			return "", "", false
		}
		key, rest = text[:i], text[i+1:]
	}
	if strings.TrimSpace(key) == "" || len(key) > maxKeyBytes {
		return "", "", false
	}
	return key, unquote(strings.TrimSpace(rest)), true
}

// normKey folds the spellings one key has had across Lustre versions and
// printers ("no route", "no_route"; "local NI(s)") to one: lower case,
// with '_' and '-' read as spaces and runs of blanks as one space.
func normKey(k string) string {
	var b strings.Builder
	space := false
	for _, c := range strings.TrimSpace(k) {
		switch {
		case c == '_' || c == '-' || c == ' ' || c == '\t':
			space = true
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(c)
	}
	return b.String()
}

// closingQuote returns the index of the quote closing the one s starts
// with, or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++ // '' is an escaped quote
		case s[i] == q:
			return i
		}
	}
	return -1
}

// unquote returns a scalar's text: quotes removed and the common escapes
// of double-quoted scalars resolved. A scalar that is not wholly quoted is
// returned as is.
func unquote(s string) string {
	if len(s) < 2 || (s[0] != '"' && s[0] != '\'') || closingQuote(s) != len(s)-1 {
		return s
	}
	body := s[1 : len(s)-1]
	if s[0] == '\'' {
		return strings.ReplaceAll(body, "''", "'")
	}
	if !strings.Contains(body, `\`) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(body[i])
		}
	}
	return b.String()
}
