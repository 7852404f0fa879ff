package page

import (
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// hiddenShown is darshantest.Hidden as the page shows it: each character
// as the escape of a Go string literal, hexadecimal in capitals.
const hiddenShown = `\u202E\u202D\u202A\u202B\u202C\u200E\u200F\u2066\u2067\u2068\u2069\u061C` +
	`\x01\a\x1B\r\x7F` +
	`\u0085\u009B` +
	`\u200B\u200C\u200D\u2060\uFEFF\u00AD` +
	`\u2028\u2029`

// hidden is darshantest.CountHidden.
func hidden(s string) int { return darshantest.CountHidden(s) }

// svgOf returns the page's SVG charts, one after the other.
func svgOf(page string) string {
	var b strings.Builder
	for rest := page; ; {
		i := strings.Index(rest, "<svg ")
		if i < 0 {
			return b.String()
		}
		j := strings.Index(rest[i:], "</svg>")
		if j < 0 {
			return b.String() + rest[i:]
		}
		b.WriteString(rest[i : i+j+len("</svg>")])
		rest = rest[i+j:]
	}
}

// hostileReport is the report of darshantest.HostileLog (every string of
// the log carries darshantest.Hidden), found under a file name that
// carries it too, with a servers' view whose Prometheus labels carry it:
// what the command makes of such a job.
func hostileReport(t testing.TB) *report.Report {
	t.Helper()
	data, err := darshantest.HostileLog(end)
	r := fromLogs(t, report.LogOptions{}, writeLog(t, darshantest.HostileFileName, data, err))
	h := darshantest.Hidden
	s := servers(h)
	s.MDTs[0].Target += h
	s.MDTOperations[0].Name += h
	s.MDTRates.Values["open"+h] = s.MDTRates.Values["total"]
	s.Alerts[0].Name += h
	s.Alerts[0].Labels["fs"+h] = h
	r.Servers = s
	r.Verdicts = report.Verdicts(r.App, s)
	return r
}

// hostileShown are the hostile report's strings as the page must show
// them, and whether a chart shows them too.
var hostileShown = []struct {
	what, shown string
	chart       bool
}{
	{"file path", `/scratch/\u202Efdp.exe`, true},
	{"file path with a byte that is not UTF-8", `/scratch` + hiddenShown + `/out\xFF\n\t` + hiddenShown + `.dat`, false},
	{"executable", hiddenShown + "fdp.exe", false},
	{"library version", "3.4.7" + hiddenShown, false},
	{"mount point", "/scratch" + hiddenShown, false},
	{"file system type", "lustre" + hiddenShown, false},
	{"log file name", "job" + hiddenShown + "_id4343", false},
	{"OST", "scratch-OST0001" + hiddenShown, true},
	{"MDT", "scratch-MDT0000" + hiddenShown, false},
	{"MDT operation", "open" + hiddenShown, true},
	{"alert", "LustreJobSmallWrites" + hiddenShown, false},
}

// TestHiddenCharactersVisible: a job whose log's every string (paths,
// executable, library version, mount points and types, the log's file
// name) and whose Prometheus labels carry control, bidirectional and
// zero-width characters makes a page without one of them, in its text or
// its charts: each is shown as its escape, where the reader sees that
// something was there ("/scratch/\u202Efdp.exe", not "/scratch/exe.pdf").
func TestHiddenCharactersVisible(t *testing.T) {
	r := hostileReport(t)
	page := render(t, r)
	checkPage(t, r, page)
	svg := svgOf(page)
	t.Logf("hidden characters: %d in the page, %d in its charts", hidden(page), hidden(svg))
	if n := hidden(page); n != 0 {
		t.Errorf("%d hidden characters in the page, want 0", n)
	}
	if n := hidden(svg); n != 0 {
		t.Errorf("%d hidden characters in the charts, want 0", n)
	}
	for _, s := range hostileShown {
		if !strings.Contains(page, s.shown) {
			t.Errorf("%s: %.40q… is not on the page", s.what, s.shown)
		}
		if s.chart && !strings.Contains(svg, s.shown) {
			t.Errorf("%s: %.40q… is not in a chart", s.what, s.shown)
		}
	}
}

// TestVisibleWriter: the page's last check escapes what reached it
// unescaped, counts it, and leaves the rest (the newline, spaces the page
// writes itself such as U+00A0) alone; a sequence cut between two writes
// is escaped byte by byte, never put back together.
func TestVisibleWriter(t *testing.T) {
	var b strings.Builder
	v := &visibleWriter{w: &b}
	for _, p := range []string{"<p>a\u202eb\x1b", "\xe2\x80", "\xae</p>\n", "12\u00a0MiB ü"} {
		if n, err := v.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if want := `<p>a\u202Eb\x1B\xE2\x80\xAE</p>` + "\n12\u00a0MiB ü"; b.String() != want || v.escaped != 5 {
		t.Errorf("wrote %q, %d escaped; want %q, 5", b.String(), v.escaped, want)
	}
}
