// Package lnet reads what lnetctl prints: `lnetctl net show -v 4` (local
// networks and NIs with their status, interfaces, message counts, health
// statistics and tunables) and `lnetctl stats show` (LNet's global
// counters), plus the older debugfs files lnet/stats and lnet/lnet_memused.
//
// lnetctl prints YAML, with indentation that differs between Lustre
// versions and sections that come and go with the version and -v level.
// The reader here is tolerant: unknown keys are skipped, missing sections
// and fields are reported as absent, and content never makes a parse
// fail; only reading the input can.
//
// The package does not import Prometheus: the lnet collector turns these
// values into metrics.
package lnet

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Value is one number lnetctl printed. OK is false when the field was
// absent or not an integer.
type Value struct {
	N  int64
	OK bool
}

// MarshalJSON writes the number, or null when absent (golden files).
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.OK {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, v.N, 10), nil
}

func (v Value) String() string {
	if !v.OK {
		return "absent"
	}
	return strconv.FormatInt(v.N, 10)
}

// number reads a scalar node as an integer.
func number(n *node) Value {
	if n == nil || n.list || len(n.kids) > 0 {
		return Value{}
	}
	return parseNumber(n.value)
}

// parseNumber accepts what lnetctl's printers produce for a number:
// decimal integers, and integral values printed as floats ("%.0f", "%e"),
// which cYAML uses above INT_MAX.
func parseNumber(s string) Value {
	s = strings.TrimSpace(s)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Value{N: i, OK: true}
	}
	if s == "" || !(s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '+') {
		return Value{} // "inf", "nan", "0x..": not lnetctl's
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return Value{}
	}
	return Value{N: int64(f), OK: true}
}

// scalar returns a scalar node's text, "" for anything else.
func scalar(n *node) string {
	if n == nil || n.list || len(n.kids) > 0 {
		return ""
	}
	return n.value
}

// labelSafe tells whether s can be a label value as is: the names here
// (NIDs, networks, interfaces, tunables) are short printable words.
func labelSafe(s string) bool {
	if s == "" || len(s) > 256 || !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// Error is an error lnetctl reported in its YAML output, such as
//
//	show:
//	    - net:
//	          errno: -100
//	          descr: "cannot get networks: Network is down"
type Error struct {
	Command string `json:"command"` // "show"
	Entity  string `json:"entity"`  // "net", "statistics"
	Errno   int64  `json:"errno"`
	Descr   string `json:"descr"`
}

func (e *Error) Error() string {
	what := strings.TrimSpace(e.Command + " " + e.Entity)
	if what != "" {
		what += ": "
	}
	return fmt.Sprintf("%s%s (errno %d)", what, e.Descr, e.Errno)
}

// findError looks for a mapping with errno and descr keys and a non-zero
// errno ("errno: 0, descr: success" is not an error), skipping the key
// skip (the section of data, which holds no error blocks).
func findError(root *node, skip string) *Error {
	for _, top := range root.kids {
		if top.key == skip {
			continue
		}
		if e := findErrorIn(top, top.key, top.key, 0); e != nil {
			return e
		}
	}
	return nil
}

func findErrorIn(n *node, command, entity string, depth int) *Error {
	if depth > maxDepth {
		return nil
	}
	if errno := number(n.get("errno")); errno.OK && errno.N != 0 && !n.list {
		e := &Error{Command: command, Errno: errno.N, Descr: scalar(n.get("descr"))}
		if entity != command {
			e.Entity = entity
		}
		return e
	}
	for _, k := range n.kids {
		sub := entity
		if k.key != "" {
			sub = k.key
		}
		if e := findErrorIn(k, command, sub, depth+1); e != nil {
			return e
		}
	}
	return nil
}
