// Package labelvalue turns a string from outside (a directory name, a task
// or file name a tracker wrote) into a Prometheus label value that is safe
// to show: a terminal, a log viewer or a dashboard prints it as the plain
// text it looks like.
//
// The rule is logwatch's for Darshan executable names (exeName): a rune is
// kept when unicode.IsPrint says so, which keeps letters, marks, numbers,
// punctuation, symbols and the ASCII space, and drops
//
//   - bytes that are not UTF-8, and U+FFFD itself (so that a name cleaned
//     twice is the name cleaned once);
//   - control characters: C0 (NUL to US, which holds ESC, BEL, CR, LF, TAB),
//     DEL and C1 (U+0080 to U+009F, which holds NEL U+0085);
//   - format characters (unicode.Cf): the bidirectional marks, embeddings,
//     overrides and isolates (U+200E, U+200F, U+202A to U+202E, U+2066 to
//     U+2069), zero-width joiners and the byte order mark;
//   - every space but U+0020 (line and paragraph separators, no-break and
//     other widths), private-use, surrogate and unassigned code points.
//
// Clean then cuts the result to a number of bytes at a rune boundary. It is
// as strict as exeName; it differs only in taking the cap as an argument,
// since file names need more room than executable names.
package labelvalue

import (
	"unicode"
	"unicode/utf8"
)

// Keep tells whether Clean keeps the rune r.
func Keep(r rune) bool {
	return r != utf8.RuneError && unicode.IsPrint(r)
}

// Clean returns s without the runes Keep refuses, cut to at most maxBytes
// bytes at a rune boundary (maxBytes <= 0: no cap). A string that needs no
// change is returned as it is, without allocating.
func Clean(s string, maxBytes int) string {
	if clean(s) && (maxBytes <= 0 || len(s) <= maxBytes) {
		return s
	}
	n := len(s)
	if maxBytes > 0 {
		n = min(n, maxBytes)
	}
	out := make([]byte, 0, n)
	for _, r := range s {
		if !Keep(r) {
			continue
		}
		if maxBytes > 0 && len(out)+utf8.RuneLen(r) > maxBytes {
			break
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// clean tells whether every rune of s is kept.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			// The rest goes the slow way.
			for _, r := range s[i:] {
				if !Keep(r) {
					return false
				}
			}
			return true
		}
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
