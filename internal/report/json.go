package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
)

// WriteJSON writes the report as indented JSON, its field names stable
// within a Schema. A string from a log or from Prometheus is the string
// itself, not the page's visible form of it: a program reads the path the
// job opened. Every character the page shows as an escape (the runes
// labelvalue.Keep refuses: controls, bidirectional and zero-width
// characters, …) is written as a JSON \u escape, so that the JSON read in
// a terminal hides or reorders nothing either and decodes to the same
// string. A byte that is not UTF-8, which JSON cannot hold, is U+FFFD
// (encoding/json's rule).
func WriteJSON(w io.Writer, r *Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(escapeHidden(b.Bytes()))
	return err
}

// escapeHidden writes each rune of encoded JSON that labelvalue.Keep
// refuses as a \u escape (two for a rune past U+FFFF). encoding/json has
// escaped the C0 controls already; the others can only be inside strings,
// the JSON around them being ASCII, where the escape means the same rune.
// JSON without one is returned as it is.
func escapeHidden(p []byte) []byte {
	var out []byte
	done := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf && c != 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if labelvalue.Keep(r) {
			i += size
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(p)+64)
		}
		out = append(out, p[done:i]...)
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = appendU(appendU(out, r1), r2)
		} else {
			out = appendU(out, r)
		}
		i += size
		done = i
	}
	if out == nil {
		return p
	}
	return append(out, p[done:]...)
}

// appendU appends the JSON escape \uhhhh of a UTF-16 code unit.
func appendU(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// appendFloat appends a finite number as JSON: integers without a
// fraction, others with the fewest digits that read back the same.
func appendFloat(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	if a := math.Abs(v); a < 1e21 && a >= 1e-6 {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
