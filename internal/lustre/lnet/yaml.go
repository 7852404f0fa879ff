package lnet

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// lnetctl prints YAML: cYAML's printer before Lustre 2.15, libyaml's
// (netlink) since, each with its own indentation. go.yaml.in/yaml reads
// both. What it cannot read is damage — a line cut by a killed lnetctl, a
// stray line — and costs that line only: the reader drops the line the
// parser stopped at and parses again, a bounded number of times, so that
// what is intact is still read.

// Limits that bound memory and time on hostile or runaway input. lnetctl
// prints a few kilobytes; a router with a hundred NIs, well under a
// megabyte.
const (
	maxInput    = 16 << 20 // bytes read; the rest is drained and ignored
	maxLineLen  = 64 << 10 // longer lines are cut
	maxDepth    = 64       // deeper blocks are dropped
	maxKeyBytes = 256      // longer keys are dropped
	maxRepairs  = 16       // damaged lines dropped before giving up
)

// ErrTooLarge is returned with what was parsed when the output exceeds
// maxInput bytes.
var ErrTooLarge = errors.New("lnetctl output larger than 16 MiB: the rest was ignored")

// node is a parsed YAML value: a mapping (kids with keys), a sequence
// (list set, kids without keys) or a scalar (value). Keys are normalized
// (normKey).
type node struct {
	key   string
	value string
	list  bool
	kids  []*node
}

// get returns the child of mapping n whose key matches name (see normKey),
// or nil: the first, when damaged output repeats a key.
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

// readTree reads r to the end (or maxInput) and parses it. A read error is
// returned with the tree of what was read before it. Content never makes
// an error: what cannot be read is left out.
func readTree(r io.Reader) (*node, error) {
	lines, err := readLines(r)
	for range maxRepairs + 1 {
		var doc yaml.Node
		perr := unmarshal(strings.Join(lines, "\n"), &doc)
		if perr == nil {
			t := &converter{keys: map[string]string{}}
			return t.document(&doc), err
		}
		i := errorLine(perr) - 1
		if i < 0 || i >= len(lines) {
			break
		}
		lines = append(lines[:i], lines[i+1:]...)
	}
	return &node{}, err
}

// readLines reads the input whole (it is small), and splits it into lines
// cut to maxLineLen.
func readLines(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err == nil && len(data) > maxInput {
		data, err = data[:maxInput], ErrTooLarge
		// Let a command finish instead of blocking on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if len(l) > maxLineLen {
			lines[i] = l[:maxLineLen]
		}
	}
	return lines, err
}

// unmarshal parses YAML into a node tree, turning a panic of the parser on
// input it was not made for into an error, as a bad scrape must not take
// the process down.
func unmarshal(text string, doc *yaml.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("yaml: parser panic: %v", p)
		}
	}()
	return yaml.Unmarshal([]byte(text), doc)
}

// errorLine returns the line a parse error names ("yaml: line 6: …"), or
// 0.
func errorLine(err error) int {
	_, rest, ok := strings.Cut(err.Error(), "line ")
	if !ok {
		return 0
	}
	digits, _, _ := strings.Cut(rest, ":")
	n, _ := strconv.Atoi(digits)
	return n
}

// converter turns the parser's tree into nodes.
type converter struct {
	keys map[string]string // normKey's results: keys repeat on every NI
}

// document returns the top-level mapping; a top-level sequence (lnetctl
// prints none) is kept as a keyless child.
func (c *converter) document(doc *yaml.Node) *node {
	root := &node{}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return root
	}
	top := c.value(doc.Content[0], 0)
	if top.list {
		root.kids = []*node{top}
	} else {
		root.kids = top.kids
	}
	return root
}

func (c *converter) value(y *yaml.Node, depth int) *node {
	n := &node{}
	if depth > maxDepth {
		return n
	}
	switch y.Kind {
	case yaml.ScalarNode:
		n.value = y.Value
	case yaml.SequenceNode:
		n.list = true
		for _, item := range y.Content {
			n.kids = append(n.kids, c.value(item, depth+1))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" || len(k.Value) > maxKeyBytes {
				continue
			}
			e := c.value(y.Content[i+1], depth+1)
			e.key = c.norm(k.Value)
			n.kids = append(n.kids, e)
		}
	}
	// Aliases are not followed: lnetctl prints none, and following them
	// is how a small document becomes a huge one.
	return n
}

func (c *converter) norm(key string) string {
	n, ok := c.keys[key]
	if !ok {
		n = normKey(key)
		c.keys[key] = n
	}
	return n
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
