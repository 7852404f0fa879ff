package lctl

import "testing"

// BenchmarkParseOp: one operation line as Lustre 2.15 prints it, the line
// the parser reads most (over a million times a scrape at 100,000 jobs).
func BenchmarkParseOp(b *testing.B) {
	lines := [][]byte{
		[]byte("{ samples:       86288, unit: bytes, min:  1048576, max:  1048576, sum:      90479525888, sumsq:  94874659337535488, hist: { 1M: 86288 } }"),
		[]byte("{ samples:        1800, unit: usecs, min:        2, max:       24, sum:            10800, sumsq:              64800 }"),
		[]byte("{ samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }"),
	}
	for b.Loop() {
		for _, l := range lines {
			if _, ok := parseOp("read", l); !ok {
				b.Fatal("not parsed")
			}
		}
	}
}
