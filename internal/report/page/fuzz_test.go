package page

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/report"
)

var rawTag = regexp.MustCompile(`(?i)<\s*(script|img|iframe|object|embed|link|style|a)[\s>/]`)

// FuzzWrite: whatever the names in a report (paths, executable, targets,
// labels, insight text) hold, the page has no markup from them: no tag
// but those the page writes itself, every chart well-formed SVG.
func FuzzWrite(f *testing.F) {
	for _, s := range []string{"plain", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`, "]]><!--", "&amp;&#x3c;", "\x00\xff\xfe", "</svg><svg onload=x>", "' onmouseover='x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		uid := int64(1)
		r := &report.Report{
			Job:         report.Job{JobID: s, UID: &uid, Exe: []string{s}, Processes: 2},
			PathsHidden: false,
			App: &report.App{
				Modules:     []report.Module{{Name: s, Records: 1, BytesRead: 10, Operations: []report.Count{{Name: s, Count: 3}}, AccessSizes: &report.Histogram{Bins: []string{s}, Read: []int64{1}, Write: []int64{2}}, CommonAccess: []report.Count{{Name: s, Count: 1}}}},
				FileSystems: []report.FileSystem{{Mount: s, Type: s, BytesRead: 5}},
				Heatmaps:    []report.Heatmap{{Layer: s, Source: s, BinWidth: 1, ColumnWidth: 1, Read: []int64{1}, Write: []int64{2}, Rows: []string{s}, Cells: [][]int64{{3}}, RankBytes: []int64{3}, Signals: []report.Signal{{Name: s, Value: report.Num(1)}}}},
				TopFiles:    []report.File{{Path: s, ID: s, Modules: []string{s}, BytesRead: 1}},
				Insights:    []report.Insight{{Code: s, Level: s, Fired: true, Message: s, Recommendations: []string{s}, Files: []string{s}}},
				Logs:        []report.LogInfo{{File: s, Exe: s, Modules: []report.ModuleInfo{{Name: s}}}},
				Copies:      []string{s},
			},
			Servers:  servers(s),
			Verdicts: []report.Verdict{{Codes: []string{s}, Insight: s, Outcome: s, Why: s, App: report.Quantity{Name: s, Unit: s}}},
		}
		r.Servers.Prometheus = s
		var b bytes.Buffer
		if err := Write(&b, r); err != nil {
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
	})
}
