package labelvalue

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"run_42", "run_42"},
		{"", ""},
		{"two words", "two words"},
		{"naïve-δ-名前", "naïve-δ-名前"},
		{"esc\x1b[31mred\x1b[0m", "esc[31mred[0m"},
		{"bel\a cr\r lf\n tab\t nul\x00 del\x7f", "bel cr lf tab nul del"},
		{"nel\u0085 c1\u009b", "nel c1"},
		{"rlo\u202ecod.exe", "rlocod.exe"},
		{"lre\u202a pdf\u202c lrm\u200e rlm\u200f", "lre pdf lrm rlm"},
		{"iso\u2066 \u2067 \u2068 \u2069", "iso   "},
		{"zwj\u200d bom\ufeff shy\u00ad", "zwj bom shy"},
		{"nbsp\u00a0ls\u2028ps\u2029", "nbsplsps"},
		{"bad\xff\xfeutf8", "badutf8"},
		{"repl\ufffd", "repl"},
		{"pua\ue000", "pua"},
	} {
		if got := Clean(tc.in, 0); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The cap is in bytes and never cuts a rune.
func TestCleanCap(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"abcdef", 4, "abcd"},
		{"ab名前", 4, "ab"},        // 名 is 3 bytes: 2+3 > 4
		{"ab名前", 5, "ab名"},       // exactly 5
		{"\x1babcdef", 3, "abc"}, // dropped runes take no room
		{"abc", 3, "abc"},
		{"abc", -1, "abc"},
	} {
		if got := Clean(tc.in, tc.max); got != tc.want {
			t.Errorf("Clean(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// A clean string comes back as it is, without an allocation.
func TestCleanNoAlloc(t *testing.T) {
	s := strings.Repeat("wrfout_2015-05-06_00:00:00.nc ", 3)
	if n := testing.AllocsPerRun(100, func() { _ = Clean(s, 128) }); n != 0 {
		t.Errorf("%v allocations for a clean string", n)
	}
}

// FuzzClean: the result is valid UTF-8, holds only kept runes (no control,
// format or bidi character), fits the cap, is a subsequence of the input's
// runes, and cleaning it again changes nothing.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"run", "a\x1bb", "\u202eexe", "\xff", "名前\u0085", "a\u2066b"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, maxBytes int) {
		maxBytes %= 300
		got := Clean(s, maxBytes)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q: not UTF-8", s, got)
		}
		if maxBytes > 0 && len(got) > maxBytes {
			t.Fatalf("Clean(%q, %d) = %q: %d bytes", s, maxBytes, got, len(got))
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError ||
				(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f {
				t.Fatalf("Clean(%q) = %q keeps %U", s, got, r)
			}
		}
		rest := s
		for _, r := range got {
			i := strings.IndexRune(rest, r)
			if i < 0 {
				t.Fatalf("Clean(%q) = %q: %U is not in the input in order", s, got, r)
			}
			rest = rest[i+utf8.RuneLen(r):]
		}
		if again := Clean(got, maxBytes); again != got {
			t.Fatalf("Clean is not idempotent: %q -> %q -> %q", s, got, again)
		}
	})
}
