package labelvalue

import (
	"unicode/utf8"
)

// Visible returns the visible form of an outside string, for a page, a
// chart or a terminal that shows it to a person: the string as it is but
// for the runes Keep refuses, each written as the escape of a Go string
// literal, so that the reader sees that something was there and what.
// Clean drops those runes, which suits a label value; a page must not,
// since a path with a hidden character is another path than the one it
// looks like ("/scratch/\u202Efdp.exe" reads "/scratch/exe.pdf" when
// U+202E is drawn rather than shown).
//
// The escapes, hexadecimal in capitals:
//
//   - \a \b \f \n \r \t \v for those controls;
//   - \xHH for the other C0 controls, DEL, and each byte that is not
//     UTF-8;
//   - \uHHHH and \UHHHHHHHH for every other rune Keep refuses: C1
//     controls, format characters (bidirectional controls, zero-width
//     characters, the soft hyphen, the byte order mark), spaces other than
//     U+0020, line and paragraph separators, private-use, surrogate and
//     unassigned code points, and U+FFFD itself;
//   - \\ for the backslash, so that the visible form tells every string
//     apart: a name that holds the six characters `\u202E` shows as
//     `\\u202E`, one that holds U+202E as `\u202E`.
//
// A string that needs no escape is returned as it is, without allocating.
func Visible(s string) string {
	if visible(s) {
		return s
	}
	return string(AppendVisible(make([]byte, 0, len(s)+16), s))
}

// AppendVisible appends the visible form of s (see Visible) to dst.
func AppendVisible(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendHex(append(dst, `\x`...), uint32(c), 2)
		case r == '\\':
			dst = append(dst, `\\`...)
		case Keep(r):
			dst = append(dst, s[i:i+size]...)
		default:
			dst = appendEscape(dst, r)
		}
		i += size
	}
	return dst
}

// appendEscape appends the escape of a rune Keep refuses.
func appendEscape(dst []byte, r rune) []byte {
	switch r {
	case '\a':
		return append(dst, `\a`...)
	case '\b':
		return append(dst, `\b`...)
	case '\f':
		return append(dst, `\f`...)
	case '\n':
		return append(dst, `\n`...)
	case '\r':
		return append(dst, `\r`...)
	case '\t':
		return append(dst, `\t`...)
	case '\v':
		return append(dst, `\v`...)
	}
	switch {
	case r < utf8.RuneSelf:
		return appendHex(append(dst, `\x`...), uint32(r), 2)
	case r <= 0xFFFF:
		return appendHex(append(dst, `\u`...), uint32(r), 4)
	}
	return appendHex(append(dst, `\U`...), uint32(r), 8)
}

// appendHex appends v as n hexadecimal digits in capitals.
func appendHex(dst []byte, v uint32, n int) []byte {
	const digits = "0123456789ABCDEF"
	for k := n - 1; k >= 0; k-- {
		dst = append(dst, digits[v>>(4*uint(k))&0xF])
	}
	return dst
}

// visible tells whether s is its own visible form.
func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			for _, r := range s[i:] {
				if r == '\\' || !Keep(r) {
					return false
				}
			}
			return true
		}
		if c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
