package dayu

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// node is a value as read from either format: a scalar, a list ([…] or a
// tuple (…)), or a map ({…}). Field setters take nodes, so YAML-ish and JSON
// input share one interpretation.
type node struct {
	kind   nodeKind
	text   string // scalar text, unquoted
	items  []*node
	keys   []string // map keys, parallel to items
	source string   // the raw text, for keeping unknown fields
}

type nodeKind int

const (
	scalarNode nodeKind = iota
	listNode
	mapNode
)

// errUnbalanced marks a flow value cut short; on a file's last line it means
// the file was cut short.
var errUnbalanced = errors.New("unbalanced brackets or quotes")

// maxFlowDepth bounds nesting so that hostile input cannot recurse deeply.
const maxFlowDepth = 16

// parseValue reads the raw text after "key:" in the YAML-ish format.
func parseValue(raw string) (*node, error) {
	if raw == "" {
		return &node{kind: scalarNode}, nil
	}
	p := flowParser{s: raw}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		if n.kind != scalarNode {
			return nil, fmt.Errorf("text after closing bracket: %q", clip(raw[p.i:]))
		}
		// A plain scalar ends where the text ends: "a b, c" is one value.
		n = &node{kind: scalarNode, text: raw}
	}
	n.source = raw
	return n, nil
}

type flowParser struct {
	s string
	i int
}

func (p *flowParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *flowParser) value(depth int) (*node, error) {
	if depth > maxFlowDepth {
		return nil, errors.New("values nested too deep")
	}
	p.space()
	if p.i >= len(p.s) {
		return &node{kind: scalarNode}, nil
	}
	switch c := p.s[p.i]; c {
	case '[', '(':
		return p.list(depth, map[byte]byte{'[': ']', '(': ')'}[c])
	case '{':
		return p.mapping(depth)
	case '"', '\'':
		s, err := p.quoted(c)
		return &node{kind: scalarNode, text: s}, err
	}
	return &node{kind: scalarNode, text: p.plain()}, nil
}

// plain reads an unquoted scalar inside or outside a collection.
func (p *flowParser) plain() string {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",:]})", rune(p.s[p.i])) {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i])
}

func (p *flowParser) quoted(q byte) (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return b.String(), nil
		case c == '\\' && q == '"' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", errUnbalanced
}

// list reads [a, b, ] or (a,b); the tracker leaves a comma before the end.
func (p *flowParser) list(depth int, closer byte) (*node, error) {
	p.i++
	n := &node{kind: listNode}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, errUnbalanced
		}
		if p.s[p.i] == closer {
			p.i++
			return n, nil
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != closer {
			return nil, fmt.Errorf("unexpected %q in list", p.s[p.i])
		}
		n.items = append(n.items, item)
	}
}

// mapping reads {k:v, …} where v may be a tuple: {83:(0,0),89:(1,1)}.
func (p *flowParser) mapping(depth int) (*node, error) {
	p.i++
	n := &node{kind: mapNode}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil, errUnbalanced
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			return n, nil
		case ',':
			p.i++
			continue
		}
		var key string
		if c := p.s[p.i]; c == '"' || c == '\'' {
			k, err := p.quoted(c)
			if err != nil {
				return nil, err
			}
			key = k
		} else {
			key = p.plain()
		}
		p.space()
		if p.i >= len(p.s) {
			return nil, errUnbalanced
		}
		if p.s[p.i] != ':' {
			return nil, fmt.Errorf("map key %q without a value", clip(key))
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != '}' {
			return nil, fmt.Errorf("unexpected %q in map", p.s[p.i])
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, v)
	}
}

// fromJSON turns a value decoded with UseNumber into a node. Map keys are
// sorted so that output does not depend on Go's map order.
func fromJSON(v any, depth int) (*node, error) {
	if depth > 64 {
		return nil, errors.New("values nested too deep")
	}
	switch v := v.(type) {
	case nil:
		return &node{kind: scalarNode}, nil
	case string:
		return &node{kind: scalarNode, text: v}, nil
	case json.Number:
		return &node{kind: scalarNode, text: v.String()}, nil
	case bool:
		return &node{kind: scalarNode, text: strconv.FormatBool(v)}, nil
	case []any:
		n := &node{kind: listNode}
		for _, e := range v {
			c, err := fromJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		}
		return n, nil
	case map[string]any:
		n := &node{kind: mapNode}
		for _, k := range sortedKeys(v) {
			c, err := fromJSON(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k)
			n.items = append(n.items, c)
		}
		return n, nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
	}
	return n.text
}

// int reads an integer. The tracker writes integers; a float is accepted and
// truncated, since some timers may be fractional.
func (n *node) int() (int64, error) {
	if n.kind != scalarNode {
		return 0, errors.New("expected a number, got a collection")
	}
	if v, err := strconv.ParseInt(n.text, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1<<63 {
		return 0, fmt.Errorf("expected a number, got %q", clip(n.text))
	}
	return int64(f), nil
}

func (n *node) float() (float64, error) {
	if n.kind != scalarNode {
		return 0, errors.New("expected a number, got a collection")
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("expected a number, got %q", clip(n.text))
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
		return nil, errors.New("expected a list of numbers")
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

// clip shortens text quoted in error messages.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
