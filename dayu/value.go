package dayu

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// node is a value as read from either format: a scalar, a list ([…] or a
// tuple (…)), or a map ({…}). Field setters take nodes, so YAML-ish and JSON
// input share one interpretation. Nodes live while their line (YAML-ish) or
// record (JSON) is read, charged to the parse's budget as held.
type node struct {
	kind   nodeKind
	text   string // scalar text, unquoted
	items  []*node
	keys   []string // map keys, parallel to items
	source string   // the raw text, for keeping unknown fields
	// ranges holds a JSON page range map read straight into ranges
	// (rangesNode; nil when the parse keeps none).
	pageRanges []PageRange
}

type nodeKind int

const (
	scalarNode nodeKind = iota
	listNode
	mapNode
	rangesNode
)

// errUnbalanced marks a flow value cut short; on a file's last line it means
// the file was cut short.
var errUnbalanced = errors.New(msgUnbalanced)

// maxFlowDepth bounds nesting so that hostile input cannot recurse deeply.
const maxFlowDepth = 16

// parseValue reads the raw text after "key:" with no budget (tests).
func parseValue(raw string) (*node, error) {
	return parseValueIn(newParse(math.MaxInt32, true), raw)
}

// parseValueIn reads the raw text after "key:" in the YAML-ish format,
// charging its nodes to p as held.
func parseValueIn(p *parse, raw string) (*node, error) {
	if raw == "" {
		return fp0(p).newNode(scalarNode, "")
	}
	fp := flowParser{s: raw, p: p}
	n, err := fp.value(0)
	if err != nil {
		return nil, err
	}
	fp.space()
	if fp.i < len(fp.s) {
		if n.kind != scalarNode {
			return nil, errors.New(msgTrailing)
		}
		// A plain scalar ends where the text ends: "a b, c" is one value.
		if n, err = fp.newNode(scalarNode, raw); err != nil {
			return nil, err
		}
	}
	n.source = raw
	return n, nil
}

type flowParser struct {
	s string
	i int
	p *parse
}

func (fp *flowParser) space() {
	for fp.i < len(fp.s) && (fp.s[fp.i] == ' ' || fp.s[fp.i] == '\t') {
		fp.i++
	}
}

// newNode charges a node to the budget before it exists.
func (fp *flowParser) newNode(kind nodeKind, text string) (*node, error) {
	if err := fp.p.hold(costNode + int64(len(text))); err != nil {
		return nil, err
	}
	n := fp.p.alloc()
	n.kind, n.text = kind, text
	return n, nil
}

func fp0(p *parse) *flowParser { return &flowParser{p: p} }

func (fp *flowParser) value(depth int) (*node, error) {
	if depth > maxFlowDepth {
		return nil, errors.New(msgTooDeep)
	}
	fp.space()
	if fp.i >= len(fp.s) {
		return fp.newNode(scalarNode, "")
	}
	switch c := fp.s[fp.i]; c {
	case '[':
		return fp.list(depth, ']')
	case '(':
		return fp.list(depth, ')')
	case '{':
		return fp.mapping(depth)
	case '"', '\'':
		s, err := fp.quoted(c)
		if err != nil {
			return nil, err
		}
		return fp.newNode(scalarNode, s)
	}
	return fp.newNode(scalarNode, fp.plain())
}

// plain reads an unquoted scalar inside or outside a collection.
func (fp *flowParser) plain() string {
	start := fp.i
	for fp.i < len(fp.s) && !strings.ContainsRune(",:]})", rune(fp.s[fp.i])) {
		fp.i++
	}
	return strings.TrimSpace(fp.s[start:fp.i])
}

func (fp *flowParser) quoted(q byte) (string, error) {
	fp.i++ // opening quote
	start := fp.i
	var b []byte // only when there is an escape
	for fp.i < len(fp.s) {
		c := fp.s[fp.i]
		fp.i++
		switch {
		case c == q:
			if b == nil {
				return fp.s[start : fp.i-1], nil
			}
			return string(b), nil
		case c == '\\' && q == '"' && fp.i < len(fp.s):
			if b == nil {
				if err := fp.p.hold(int64(len(fp.s) - start)); err != nil {
					return "", err
				}
				b = append(make([]byte, 0, len(fp.s)-start), fp.s[start:fp.i-1]...)
			}
			b = append(b, fp.s[fp.i])
			fp.i++
		default:
			if b != nil {
				b = append(b, c)
			}
		}
	}
	return "", errUnbalanced
}

// list reads [a, b, ] or (a,b); the tracker leaves a comma before the end.
func (fp *flowParser) list(depth int, closer byte) (*node, error) {
	fp.i++
	n, err := fp.newNode(listNode, "")
	if err != nil {
		return nil, err
	}
	for {
		fp.space()
		if fp.i >= len(fp.s) {
			return nil, errUnbalanced
		}
		if fp.s[fp.i] == closer {
			fp.i++
			return n, nil
		}
		if fp.s[fp.i] == ',' {
			fp.i++
			continue
		}
		item, err := fp.value(depth + 1)
		if err != nil {
			return nil, err
		}
		fp.space()
		if fp.i < len(fp.s) && fp.s[fp.i] != ',' && fp.s[fp.i] != closer {
			return nil, errors.New(msgBadInList)
		}
		n.items = append(n.items, item)
	}
}

// mapping reads {k:v, …} where v may be a tuple: {83:(0,0),89:(1,1)}.
func (fp *flowParser) mapping(depth int) (*node, error) {
	fp.i++
	n, err := fp.newNode(mapNode, "")
	if err != nil {
		return nil, err
	}
	for {
		fp.space()
		if fp.i >= len(fp.s) {
			return nil, errUnbalanced
		}
		switch fp.s[fp.i] {
		case '}':
			fp.i++
			return n, nil
		case ',':
			fp.i++
			continue
		}
		var key string
		if c := fp.s[fp.i]; c == '"' || c == '\'' {
			k, err := fp.quoted(c)
			if err != nil {
				return nil, err
			}
			key = k
		} else {
			key = fp.plain()
		}
		fp.space()
		if fp.i >= len(fp.s) {
			return nil, errUnbalanced
		}
		if fp.s[fp.i] != ':' {
			return nil, errors.New(msgMapNoValue)
		}
		fp.i++
		v, err := fp.value(depth + 1)
		if err != nil {
			return nil, err
		}
		fp.space()
		if fp.i < len(fp.s) && fp.s[fp.i] != ',' && fp.s[fp.i] != '}' {
			return nil, errors.New(msgBadInMap)
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, v)
	}
}

// String renders n compactly; for YAML-ish input it is the text as written.
func (n *node) String() string {
	if n.source != "" {
		return n.source
	}
	switch n.kind {
	case listNode:
		parts := make([]string, len(n.items))
		for i, it := range n.items {
			parts[i] = it.String()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case mapNode:
		parts := make([]string, len(n.items))
		for i, it := range n.items {
			parts[i] = n.keys[i] + ":" + it.String()
		}
		return "{" + strings.Join(parts, ",") + "}"
	case rangesNode:
		parts := make([]string, len(n.pageRanges))
		for i, r := range n.pageRanges {
			parts[i] = strconv.FormatInt(r.Index, 10) + ":[" + strconv.FormatInt(r.First, 10) + "," + strconv.FormatInt(r.Last, 10) + "]"
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return n.text
}

// size is what String's result costs, at most: for charging a kept copy.
func (n *node) size() int64 {
	if n.source != "" {
		return int64(len(n.source))
	}
	s := int64(len(n.text)) + 2
	for i, it := range n.items {
		s += it.size() + 1
		if i < len(n.keys) {
			s += int64(len(n.keys[i])) + 1
		}
	}
	return s + int64(len(n.pageRanges))*64
}

// intOf reads an integer. The tracker writes integers; a float is accepted
// and truncated, since some timers may be fractional.
func intOf(text string) (int64, error) {
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1<<63 {
		return 0, errors.New(msgNotNumber)
	}
	return int64(f), nil
}

func (n *node) int() (int64, error) {
	if n.kind != scalarNode {
		return 0, errors.New(msgCollection)
	}
	return intOf(n.text)
}

func (n *node) float() (float64, error) {
	if n.kind != scalarNode {
		return 0, errors.New(msgCollection)
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New(msgNotNumber)
	}
	return f, nil
}

func (n *node) str() string {
	if n.kind == scalarNode {
		return n.text
	}
	return n.String()
}

// ints reads a list of integers; a lone scalar is a list of one.
func (n *node) ints() ([]int64, error) {
	if n.kind == scalarNode {
		if n.text == "" {
			return nil, nil
		}
		v, err := n.int()
		return []int64{v}, err
	}
	if n.kind != listNode {
		return nil, errors.New(msgNotNumbers)
	}
	out := make([]int64, 0, len(n.items))
	for _, it := range n.items {
		v, err := it.int()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// strs reads a list of strings. The JSON tracker writes its intents as one
// string of quoted, comma-separated names ("'H5F_ACC_RDWR','H5F_ACC_TRUNC'"),
// so every item is split on commas and stripped of quotes.
func (n *node) strs() []string {
	var raw []string
	switch n.kind {
	case scalarNode:
		raw = []string{n.text}
	case listNode:
		for _, it := range n.items {
			raw = append(raw, it.str())
		}
	default:
		return nil
	}
	var out []string
	for _, r := range raw {
		for _, part := range strings.Split(r, ",") {
			part = strings.Trim(strings.TrimSpace(part), `"'`)
			if part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}
