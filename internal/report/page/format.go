package page

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/report"
)

// nb is the space between a number and its unit: never a line break.
const nb = "\u00a0"

// bytesIEC writes a byte count with a binary prefix: 1.5 MiB.
func bytesIEC(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	a := math.Abs(v)
	i := 0
	for a >= 1024 && i < len(units)-1 {
		a /= 1024
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', -1, 64) + nb + "B"
	}
	return trimNum(v, 3) + nb + units[i]
}

// si writes a number with a decimal prefix (k, M, G, …), three
// significant digits.
func si(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e15:
		return trimNum(v/1e15, 3) + nb + "P"
	case a >= 1e12:
		return trimNum(v/1e12, 3) + nb + "T"
	case a >= 1e9:
		return trimNum(v/1e9, 3) + nb + "G"
	case a >= 1e6:
		return trimNum(v/1e6, 3) + nb + "M"
	case a >= 1e4:
		return trimNum(v/1e3, 3) + nb + "k"
	}
	return trimNum(v, 3)
}

// count writes an integer with thin groupings: 1 234 567.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(c)
	}
	return b.String()
}

// seconds writes a duration in seconds, readable from microseconds to days.
func seconds(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return "–"
	}
	a := math.Abs(s)
	switch {
	case a == 0:
		return "0" + nb + "s"
	case a < 1e-3:
		return trimNum(s*1e6, 3) + nb + "µs"
	case a < 1:
		return trimNum(s*1e3, 3) + nb + "ms"
	case a < 600:
		return trimNum(s, 3) + nb + "s"
	}
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	return d.String() + " (" + strconv.FormatFloat(math.Round(s), 'f', 0, 64) + nb + "s)"
}

// percent writes a ratio as a percentage.
func percent(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	if r > 0 && r < 1e-4 {
		return "<" + nb + "0.01" + nb + "%"
	}
	return trimNum(r*100, 3) + nb + "%"
}

// secondsTick writes a tick of a time axis: seconds only, short.
func secondsTick(s float64) string {
	if s >= 1 || s == 0 {
		return trimNum(s, 3) + nb + "s"
	}
	return seconds(s)
}

// trimNum writes v with about digits significant digits, without trailing
// zeros.
func trimNum(v float64, digits int) string {
	a := math.Abs(v)
	dec := 0
	if a > 0 {
		dec = digits - 1 - int(math.Floor(math.Log10(a)))
	}
	if dec < 0 {
		dec = 0
	}
	if dec > 9 {
		dec = 9
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// plain writes a number that has no unit to speak of.
func plain(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return count(int64(v))
	}
	return trimNum(v, 4)
}

// value writes a report value, or why it is missing.
func value(v report.Value, f func(float64) string) string {
	if !v.OK || math.IsNaN(v.V) || math.IsInf(v.V, 0) {
		if v.NA != "" {
			return "n/a (" + shown(v.NA) + ")"
		}
		return "n/a"
	}
	return f(v.V)
}

// utc writes a time in UTC, to the second.
func utc(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

// shorten keeps at most n characters of s, cutting out its middle: paths
// keep their start and their file name.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 5 {
		return s
	}
	head := (n - 1) / 3
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
