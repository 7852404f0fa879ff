package labelvalue

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"run_42", "run_42"},
		{"", ""},
		{"naïve-δ-名前 x", "naïve-δ-名前 x"},
		{"/scratch/\u202efdp.exe", `/scratch/\u202Efdp.exe`},
		{"lre\u202a pdf\u202c lrm\u200e rlm\u200f alm\u061c", `lre\u202A pdf\u202C lrm\u200E rlm\u200F alm\u061C`},
		{"iso\u2066\u2067\u2068\u2069", `iso\u2066\u2067\u2068\u2069`},
		{"bel\a bs\b ff\f lf\n cr\r tab\t vt\v nul\x00 esc\x1b del\x7f", `bel\a bs\b ff\f lf\n cr\r tab\t vt\v nul\x00 esc\x1B del\x7F`},
		{"nel\u0085 csi\u009b", `nel\u0085 csi\u009B`},
		{"zw\u200b\u200c\u200d\u2060 bom\ufeff shy\u00ad", `zw\u200B\u200C\u200D\u2060 bom\uFEFF shy\u00AD`},
		{"nbsp\u00a0ls\u2028ps\u2029", `nbsp\u00A0ls\u2028ps\u2029`},
		{"bad\xff\xfeutf8", `bad\xFF\xFEutf8`},
		{"repl\ufffd pua\ue000 tag\U000e0001", `repl\uFFFD pua\uE000 tag\U000E0001`},
		{`C:\u202E`, `C:\\u202E`},
		{`"quoted"`, `"quoted"`},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A string that is its own visible form comes back as it is, without an
// allocation.
func TestVisibleNoAlloc(t *testing.T) {
	s := strings.Repeat("/scratch/wrfout_2015-05-06_00:00:00.nc 名前 ", 3)
	if n := testing.AllocsPerRun(100, func() { _ = Visible(s) }); n != 0 {
		t.Errorf("%v allocations for a string without escapes", n)
	}
}

// FuzzVisible: the visible form is valid UTF-8 without a control, format,
// separator or other rune Keep refuses, it keeps every rune Keep keeps, in
// order, and it reads back, as a Go string literal, to the string itself:
// two strings never look the same.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"run", "a\x1bb", "\u202eexe", "\xff", "名前\u0085", "a\u2066b", `a\u202eb`, "\\\u202e", "\U000e0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Visible(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Visible(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if !Keep(r) || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("Visible(%q) = %q holds %U", s, got, r)
			}
		}
		back, err := strconv.Unquote(`"` + strings.ReplaceAll(got, `"`, `\"`) + `"`)
		if err != nil || back != s {
			t.Fatalf("Visible(%q) = %q reads back as %q (%v)", s, got, back, err)
		}
		if Visible(s) != string(AppendVisible(nil, s)) {
			t.Fatalf("Visible and AppendVisible differ on %q", s)
		}
	})
}
