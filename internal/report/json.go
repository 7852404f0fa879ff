package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// WriteJSON writes the report as indented JSON, its field names stable
// within a Schema.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
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
