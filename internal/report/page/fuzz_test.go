package page

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

var rawTag = regexp.MustCompile(`(?i)<\s*(script|img|iframe|object|embed|link|style|a)[\s>/]`)

// FuzzWrite: whatever the strings of a report hold (paths, executable,
// targets, labels, insight text: every string field, slice element and
// map key of the Report, set by filled), the page has no markup from them
// (no tag but those the page writes itself, every chart well-formed SVG)
// and no character that hides itself or reorders the text around it: each
// string reached the page through shown, so that the page's last check
// (visibleOutput) had nothing to escape.
func FuzzWrite(f *testing.F) {
	for _, s := range []string{"plain", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`, "]]><!--", "&amp;&#x3c;", "\x00\xff\xfe", "</svg><svg onload=x>", "' onmouseover='x",
		darshantest.Hidden, "/scratch/\u202efdp.exe", "a\\u202Eb\\", "\n\t\u2028", "\U000e0001\ue000\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := filled(s)
		var b bytes.Buffer
		escaped, err := write(&b, r)
		if err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if m := rawTag.FindString(page); m != "" && !strings.HasPrefix(strings.ToLower(m), "<style>") {
			t.Fatalf("page holds a tag from a name: %q", m)
		}
		if strings.Count(page, "<style>") != 1 {
			t.Fatal("a name opened a <style>")
		}
		if strings.Count(page, "<svg ") != strings.Count(page, "</svg>") {
			t.Fatal("unbalanced <svg>")
		}
		checkSVG(t, page)
		if n := hidden(page); n != 0 {
			t.Fatalf("%d hidden characters in the page of %q", n, s)
		}
		if escaped != 0 {
			t.Fatalf("%d characters of %q reached the page without shown", escaped, s)
		}
	})
}

// filled returns a report whose every string (field, slice element, map
// key and value) is s, with one element in every slice and map, every
// pointer set, every number 1 and every flag true but PathsHidden: each
// string the page may print is s, whatever fields the Report gains.
func filled(s string) *report.Report {
	r := &report.Report{}
	fill(reflect.ValueOf(r).Elem(), s)
	r.PathsHidden = false
	return r
}

func fill(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), s)
	case reflect.Slice:
		sl := reflect.MakeSlice(v.Type(), 1, 1)
		fill(sl.Index(0), s)
		v.Set(sl)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, s)
		fill(e, s)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s)
			}
		}
	}
}

// TestFilledReachesThePage: filled's strings do reach the page, each
// shown: FuzzWrite's checks are about them, not about a page that left
// them out.
func TestFilledReachesThePage(t *testing.T) {
	const marker = "zq\u202ex"
	page := render(t, filled(marker))
	if n := strings.Count(page, `zq\u202Ex`); n < 50 {
		t.Errorf("the report's strings are shown %d times on the page, want many more", n)
	}
}
