package dayu

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// ranges reads {index:(first,last), …} or {"index":[first,last], …}, or
// returns what the JSON reader read straight into ranges.
func (n *node) ranges() ([]PageRange, error) {
	if n.kind == rangesNode {
		return n.pageRanges, nil
	}
	if n.kind == scalarNode && n.text == "" {
		return nil, nil
	}
	if n.kind != mapNode {
		return nil, errors.New(msgNotRanges)
	}
	out := make([]PageRange, 0, len(n.items))
	for i, it := range n.items {
		idx, err := strconv.ParseInt(strings.TrimSpace(n.keys[i]), 10, 64)
		if err != nil {
			return nil, errors.New(msgRangeIndex)
		}
		pages, err := it.ints()
		if err != nil || len(pages) != 2 {
			return nil, errors.New(msgRangePair)
		}
		out = append(out, PageRange{Index: idx, First: pages[0], Last: pages[1]})
	}
	sortRanges(out)
	return out, nil
}

// sortRanges puts ranges in I/O order: JSON maps may come in any order.
func sortRanges(rs []PageRange) {
	if !sort.SliceIsSorted(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index }) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
	}
}

// scanRanges reads a page range map straight from YAML-ish text, without
// building nodes: the VFD files are mostly these maps, and the generic path
// allocates for every number. ok is false for anything but the plain
// {i:(a,b),…} or {i:[a,b],…} shapes; the caller then takes the generic
// path. With keep false the ranges are checked and not kept (out is nil);
// kept ones are charged to p before they are made.
func scanRanges(p *parse, raw string, keep bool) (out []PageRange, ok bool, err error) {
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, false, nil
	}
	s := raw[1 : len(raw)-1]
	var charged int64
	if keep {
		n := strings.Count(s, ":")
		charged = int64(n) * costRange
		if err := p.keep(charged); err != nil {
			return nil, false, err
		}
		out = make([]PageRange, 0, n)
	}
	// Not this shape: the generic path reads it, and charges its own.
	other := func() ([]PageRange, bool, error) {
		p.kept -= charged
		return nil, false, nil
	}
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
			return other()
		}
		closer := byte(')')
		switch s[i] {
		case '(':
		case '[':
			closer = ']'
		default:
			return other()
		}
		i++
		first, ok2 := num()
		if !ok2 || !expect(',') {
			return other()
		}
		last, ok3 := num()
		if !ok3 || !expect(closer) {
			return other()
		}
		if keep {
			out = append(out, PageRange{Index: idx, First: first, Last: last})
		}
		if i < len(s) && !expect(',') {
			return other()
		}
	}
	sortRanges(out)
	return out, true, nil
}
