package lctl

import (
	"bytes"
	"testing"
)

// FuzzParseOp: parseOp, which walks a line by index, reads every line as
// the first version did, which resliced it (parseOpReference, below).
func FuzzParseOp(f *testing.F) {
	for _, s := range []string{
		"{ samples: 861, unit: bytes, min: 24576, max: 16777216, sum: 11025514496, sumsq: 1, hist: { 4K: 1, 8K: 2 } }",
		"{ samples:          5, unit:  reqs }",
		"{ samples: 2, unit: usecs, min:1, max:9, sum:20 }",
		"{ samples: 1, sum: 99999999999999999999999 }",
		"{ samples: 1, hist: { 4K: 1 ",
		"{ : 1 }",
		"{samples:1}",
		"{ samples 5, unit: bytes }",
		"{ samples\t:\t3\t}",
		// Lustre 2.15's padding; values that are not only digits; keys
		// that begin as Lustre's do.
		"{ samples:       86288, unit: bytes, min:  1048576, max:  1048576, sum:      90479525888, sumsq:  94874659337535488, hist: { 1M: 86288 } }",
		"{ samples:           0, unit: usecs, min: 12ab, max: 9:9, sum:            0, sumsq: x }",
		"{ sumsq: 1, summ: 2, sum: 3, samples: 4, samplesx: 5 }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '{' {
			b = append([]byte{'{'}, b...)
		}
		got, ok := parseOp("op", bytes.Clone(b))
		want, wantOK := parseOpReference("op", bytes.Clone(b))
		if got != want || ok != wantOK {
			t.Fatalf("%q: %+v %v, want %+v %v", b, got, ok, want, wantOK)
		}
	})
}

// parseOpReference is the first parseOp, kept to check the faster one: it reads "{ samples: 5, unit: usecs, min: 1, max: 9, sum: 20, sumsq: 90, hist: { 4K: 1 } }"
// for the operation name (interned). samples is required; a sum is kept
// when present.
func parseOpReference(name string, b []byte) (OpStat, bool) {
	op := OpStat{Op: name}
	b = b[1:] // '{'
	haveSamples := false
	for {
		for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == ',') {
			b = b[1:]
		}
		if len(b) == 0 {
			return op, false // no closing brace: a cut line
		}
		if b[0] == '}' {
			return op, haveSamples
		}
		colon := bytes.IndexByte(b, ':')
		if colon <= 0 {
			return op, false
		}
		key := trimRight(b[:colon])
		b = trimLeft(b[colon+1:])
		if len(b) > 0 && b[0] == '{' {
			// hist: { 4K: 1, 8K: 2 } — skipped.
			end := bytes.IndexByte(b, '}')
			if end < 0 {
				return op, false
			}
			b = b[end+1:]
			continue
		}
		end := 0
		for end < len(b) && b[end] != ',' && b[end] != '}' && b[end] != ' ' && b[end] != '\t' {
			end++
		}
		value := b[:end]
		b = b[end:]
		switch string(key) {
		case "samples":
			v, ok := parseUint(value)
			if !ok {
				return op, false
			}
			op.Samples, haveSamples = v, true
		case "sum":
			v, ok := parseUint(value)
			if !ok {
				return op, false
			}
			op.Sum, op.HasSum = v, true
		case "unit":
			op.Unit = parseUnit(value)
		}
	}
}
