package lctl

import "bytes"

// Single-value parameters ("memused=5969573401", "osd-ldiskfs.fs-OST0000.
// kbytesfree=3875693364", "osp.fs-OST0000-osc-MDT0000.active=1") and short
// texts (health_check, version).

// ValueParser is the SectionParser of a single-value parameter: it keeps
// the first non-blank line.
type ValueParser struct {
	buf   [64]byte // a number, or the start of what was printed instead
	n     int
	lines int
	done  func(v *Value, complete bool)
}

// Value is what a single-value parameter printed.
type Value struct {
	// Text is the first non-blank line, trimmed and cut to 64 bytes; it is
	// only valid during the done call.
	Text []byte
	// Lines counts the non-blank lines: more than one is not a single value.
	Lines int
}

// Number reads Text as a non-negative integer or decimal ("1", "0.5").
// Anything else ("not supported", "N/A", an error message) is not a number.
func (v *Value) Number() (float64, bool) {
	if v.Lines != 1 {
		return 0, false
	}
	return ParseNumber(v.Text)
}

// ParseNumber reads a non-negative decimal number without exponent.
func ParseNumber(b []byte) (float64, bool) {
	whole, frac, hasFrac := bytes.Cut(b, []byte{'.'})
	w, ok := parseUint(whole)
	if !ok {
		return 0, false
	}
	if !hasFrac {
		return float64(w), true
	}
	if len(frac) > 18 {
		frac = frac[:18]
	}
	f, ok := parseUint(frac)
	if !ok {
		return 0, false
	}
	return float64(w) + float64(f)/pow10[len(frac)], true
}

// NewValueParser returns a parser that hands the value to done.
func NewValueParser(done func(v *Value, complete bool)) *ValueParser {
	return &ValueParser{done: done}
}

// Line implements SectionParser.
func (p *ValueParser) Line(line []byte) {
	line = trimRight(trimLeft(line))
	if len(line) == 0 {
		return
	}
	p.lines++
	if p.lines == 1 {
		p.n = copy(p.buf[:], line)
	}
}

// End implements SectionParser.
func (p *ValueParser) End(complete bool) {
	p.done(&Value{Text: p.buf[:p.n], Lines: p.lines}, complete)
	p.n, p.lines = 0, 0
}

// TextParser is the SectionParser of a short text parameter (health_check,
// version): it keeps up to maxTextLines lines of up to maxTextLine bytes.
type TextParser struct {
	lines [][]byte
	more  bool
	done  func(lines [][]byte, truncated, complete bool)
}

const (
	maxTextLines = 16
	maxTextLine  = 256
)

// NewTextParser returns a parser that hands the non-blank lines to done;
// truncated tells that more lines were printed than kept.
func NewTextParser(done func(lines [][]byte, truncated, complete bool)) *TextParser {
	return &TextParser{done: done}
}

// Line implements SectionParser.
func (p *TextParser) Line(line []byte) {
	line = trimRight(trimLeft(line))
	if len(line) == 0 {
		return
	}
	if len(p.lines) == maxTextLines {
		p.more = true
		return
	}
	if len(line) > maxTextLine {
		line = line[:maxTextLine]
	}
	p.lines = append(p.lines, append([]byte(nil), line...))
}

// End implements SectionParser.
func (p *TextParser) End(complete bool) {
	p.done(p.lines, p.more, complete)
	p.lines, p.more = p.lines[:0], false
}

// Health reads health_check: "healthy" when every device is, else lines
// such as "device fs-OST0000 reported unhealthy", "NOT HEALTHY" or "LBUG".
// known is false for an empty text.
func Health(lines [][]byte) (healthy, known bool) {
	if len(lines) == 0 {
		return false, false
	}
	return len(lines) == 1 && string(lines[0]) == "healthy", true
}

// Version reads the version parameter: "2.15.3" (2.12 and later), or
// before that "lustre: 2.10.1" followed by "kernel: …" and "build: …"
// lines. It returns the version and the build string ("" when absent).
func Version(lines [][]byte) (version, build string, ok bool) {
	if len(lines) == 0 {
		return "", "", false
	}
	for _, l := range lines {
		key, value, hasKey := splitKey(l)
		switch {
		case !hasKey && version == "" && len(lines) == 1:
			version = string(l)
		case hasKey && string(key) == "lustre":
			version = string(value)
		case hasKey && string(key) == "build":
			build = string(value)
		}
	}
	if !validVersion(version) {
		return "", "", false
	}
	if !validVersion(build) {
		build = ""
	}
	return version, build, true
}

// validVersion accepts what Lustre puts in versions and build strings
// (2.14.0_ddn133, 2.8.2_6.chaos, 2.15.3-RC1-1.el8), never anything that would
// make a strange label.
func validVersion(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '+' || c == '~') {
			return false
		}
	}
	return true
}
