package dayu

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ranges reads {index:(first,last), …} or {"index":[first,last], …}.
func (n *node) ranges() ([]PageRange, error) {
	if n.kind == scalarNode && n.text == "" {
		return nil, nil
	}
	if n.kind != mapNode {
		return nil, errors.New("expected a map of page ranges")
	}
	out := make([]PageRange, 0, len(n.items))
	for i, it := range n.items {
		idx, err := strconv.ParseInt(strings.TrimSpace(n.keys[i]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("page range index %q is not a number", clip(n.keys[i]))
		}
		pages, err := it.ints()
		if err != nil || len(pages) != 2 {
			return nil, fmt.Errorf("page range %d is not a (first,last) pair", idx)
		}
		out = append(out, PageRange{Index: idx, First: pages[0], Last: pages[1]})
	}
	// JSON maps come back sorted as strings; I/O order is numeric.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// scanRanges reads a page range map straight from YAML-ish text, without
// building nodes: the VFD files are mostly these maps, and the generic path
// allocates for every number. ok is false for anything but the plain
// {i:(a,b),…} or {i:[a,b],…} shapes; the caller then takes the generic path.
func scanRanges(raw string) (out []PageRange, ok bool) {
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	out = make([]PageRange, 0, strings.Count(s, ":"))
	i := 0
	num := func() (int64, bool) {
		start := i
		if i < len(s) && s[i] == '-' {
			i++
		}
		digits := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == digits || i-start > 18 {
			return 0, false
		}
		v, err := strconv.ParseInt(s[start:i], 10, 64)
		return v, err == nil
	}
	expect := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	for i < len(s) {
		idx, ok1 := num()
		if !ok1 || !expect(':') || i >= len(s) {
			return nil, false
		}
		closer := byte(')')
		switch s[i] {
		case '(':
		case '[':
			closer = ']'
		default:
			return nil, false
		}
		i++
		first, ok2 := num()
		if !ok2 || !expect(',') {
			return nil, false
		}
		last, ok3 := num()
		if !ok3 || !expect(closer) {
			return nil, false
		}
		out = append(out, PageRange{Index: idx, First: first, Last: last})
		if i < len(s) && !expect(',') {
			return nil, false
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, true
}
