package lnet

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// dump writes a tree compactly: {k=v, k=[a, {…}]}.
func dump(n *node) string {
	var b strings.Builder
	var walk func(n *node)
	walk = func(n *node) {
		switch {
		case n.list:
			b.WriteString("[")
			for i, k := range n.kids {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(k)
			}
			b.WriteString("]")
		case len(n.kids) > 0:
			b.WriteString("{")
			for i, k := range n.kids {
				if i > 0 {
					b.WriteString(", ")
				}
				if k.key != "" {
					b.WriteString(k.key + "=")
				}
				walk(k)
			}
			b.WriteString("}")
		default:
			b.WriteString(n.value)
		}
	}
	walk(n)
	return b.String()
}

func TestLNetReader(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"cYAML layout", "net:\n    - net type: lo\n      local NI(s):\n        - nid: 0@lo\n          status: up\n",
			"{net=[{net type=lo, local ni(s)=[{nid=0@lo, status=up}]}]}"},
		{"libyaml layout", "net:\n-     net type: lo\n      local NI(s):\n      -     nid: 0@lo\n            status: up\n",
			"{net=[{net type=lo, local ni(s)=[{nid=0@lo, status=up}]}]}"},
		{"key after a compact list", "a:\n- 1\n- 2\nb: 3\n", "{a=[1, 2], b=3}"},
		{"IPv6 values, colon keys", "nid: 2001:db8::1@tcp\n0: ib0\nx:: y\n", "{nid=2001:db8::1@tcp, 0=ib0, x:=y}"},
		{"quoted", "descr: \"a: b \\\"c\\\"\"\n'k k': 'it''s'\n\"q\": \"x\"\n", `{descr=a: b "c", k k=it's, q=x}`},
		{"key spellings", "Health_Value: 1\nno-route: 2\n  local   NI(s)  : 3\n", "{health value=1, no route=2}"},
		{"garbage and comments", "# c\n---\na: 1\nnot a key\n  deeper under a scalar: 2\nb:\n  c: 3\n...\n", "{a=1, b={c=3}}"},
		{"garbage between items", "l:\n  - 1\n  oops\n  - 2\n", "{l=[1, 2]}"},
		{"empty values", "a:\nb:\n  - \n  -\nc: {}\n", "{a=, b=[, ], c=}"},
		{"nested items", "l:\n  - - a\n    - b\n  - c\n", "{l=[[a, b], c]}"},
		{"CRLF", "a:\r\n  b: 1\r\n", "{a={b=1}}"},
		// Tabs are not YAML indentation (lnetctl indents with spaces): the
		// line is damage, and costs itself.
		{"tab", "a:\n\tb: 1\nc: 2\n", "{a=, c=2}"},
		{"cut last line", "a:\n  b: 1\n  c: \"2", "{a={b=1}}"},
		{"top-level list", "- x\n- y\n", "{[x, y]}"},
		// Lines at a column no block opens are damage: each costs the
		// line the parser stops at.
		{"dedent to an unknown column", "a:\n    b: 1\n  c: 2\n    d: 3\ne: 4\n", "{a={c=2}, e=4}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, err := readTree(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(root); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// Deep nesting is cut at maxDepth instead of recursing without bound.
func TestLNetReaderDepth(t *testing.T) {
	var b strings.Builder
	for i := range 10 * maxDepth {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
	}
	b.WriteString("after: 1\n")
	root, err := readTree(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if scalar(root.get("after")) != "1" {
		t.Errorf("the key after a deep block is lost: %.200s", dump(root))
	}
	depth := 0
	for n := root.get("k0"); n != nil && len(n.kids) > 0; n = n.kids[0] {
		depth++
	}
	if depth > maxDepth+1 {
		t.Errorf("depth %d", depth)
	}
}

// A line longer than maxLineLen is cut, not fatal, and the next line is
// read.
func TestLNetReaderLongLine(t *testing.T) {
	in := "a: " + strings.Repeat("x", 3*maxLineLen) + "\nb: 2\n"
	root, err := readTree(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(scalar(root.get("a"))); got != maxLineLen-3 {
		t.Errorf("long value cut to %d bytes", got)
	}
	if scalar(root.get("b")) != "2" {
		t.Error("line after the long one lost")
	}
}

// An output over maxInput is cut with ErrTooLarge; what came before is
// read, and the writer is drained.
func TestLNetReaderTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: parsing a document past the size limit takes seconds")
	}
	head := "statistics:\n    send_count: 5\n"
	pad := strings.Repeat("    x: 1\n", maxInput/9+10)
	r := strings.NewReader(head + pad + "tail: 1\n")
	s, err := ParseStats(r)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v", err)
	}
	if s.SendCount != v(5) {
		t.Errorf("send_count %v", s.SendCount)
	}
	if r.Len() != 0 {
		t.Errorf("%d bytes not drained", r.Len())
	}
}

// A read error (lnetctl killed) is returned with what was read before it.
func TestLNetReaderError(t *testing.T) {
	boom := errors.New("killed")
	r := io.MultiReader(strings.NewReader("statistics:\n    send_count: 5\n    recv_count: 6\n"), iotest.ErrReader(boom))
	s, err := ParseStats(r)
	if !errors.Is(err, boom) || s.SendCount != v(5) || s.RecvCount != v(6) || !s.Found {
		t.Errorf("%+v, %v", s, err)
	}
}

func TestLNetParseNumber(t *testing.T) {
	for in, want := range map[string]Value{
		"0": v(0), "-1": v(-1), "4294967296": v(4294967296), "9223372036854775807": v(9223372036854775807),
		"1.2e3": v(1200), "53029565353720": v(53029565353720), "1e19": {}, "7.5": {}, "": {},
		"not supported": {}, "inf": {}, "NaN": {}, "0x10": {}, " 12 ": v(12),
	} {
		if got := parseNumber(in); got != want {
			t.Errorf("parseNumber(%q) = %v, want %v", in, got, want)
		}
	}
}
