package page

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

var end = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// writeLog writes a log to a file of the test's directory.
func writeLog(t testing.TB, name string, data []byte, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fromLogs makes the report of logs, as the command does.
func fromLogs(t testing.TB, o report.LogOptions, paths ...string) *report.Report {
	t.Helper()
	o.Insights = insights.DefaultConfig()
	job, app, err := report.FromLogs(paths, o)
	if err != nil {
		t.Fatal(err)
	}
	return &report.Report{Schema: report.Schema, Generated: report.Time{T: end}, Job: job, App: app, PathsHidden: o.HidePaths, Verdicts: []report.Verdict{}}
}

func render(t testing.TB, r *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// servers is a servers' view as package report/prom fills it, by hand.
func servers(hostile string) *report.Servers {
	t0 := float64(end.Unix() - 60)
	var times []float64
	var rd, wr, md []report.Value
	for i := 0; i < 5; i++ {
		times = append(times, t0+float64(i)*15)
		rd = append(rd, report.Num(float64(i)*1e6))
		wr = append(wr, report.Num(float64(5-i)*2e6))
		md = append(md, report.Num(float64(i%3)*40))
	}
	wr[2] = report.Value{} // a gap
	return &report.Servers{
		Prometheus: "http://prometheus.example:9090", From: report.Time{T: end.Add(-time.Minute)}, To: report.Time{T: end},
		Window: "logs", Step: 15, Found: true, Notes: []string{"note " + hostile}, Rules: []string{"job:lustre_read_bytes:rate5m"},
		ReadBytes: report.Num(1e7), WriteBytes: report.Num(3e7), ReadRPCs: report.Num(10), WriteRPCs: report.Num(30),
		ReadPerRPC: report.Num(1e6), WritePerRPC: report.Num(1e6), MDTOps: report.Num(120), PeakMDTRate: report.Num(4),
		Rates:         report.Series{Times: times, Values: map[string][]report.Value{"read": rd, "write": wr}},
		MDTRates:      report.Series{Times: times, Values: map[string][]report.Value{"total": md}},
		MDTOperations: []report.Count{{Name: "open", Count: 80}, {Name: "close", Count: 40}},
		OSTs: []report.OST{
			{Target: "scratch-OST0000", ReadBytes: report.Num(6e6), WriteBytes: report.Num(2e7), ReadRPCs: report.Num(6), WriteRPCs: report.Num(20),
				ReadPerRPC: report.Num(1e6), WritePerRPC: report.Num(1e6), Share: report.Num(0.4), PeakShare: report.Num(0.9), Coverage: report.Num(0.8), MinCoverage: report.Num(0.5)},
			{Target: "scratch-OST0001" + hostile, ReadBytes: report.Num(4e6), WriteBytes: report.Num(1e7), Share: report.Value{NA: "no traffic"}},
		},
		MDTs:        []report.MDT{{Target: "scratch-MDT0000", Operations: report.Num(120), Coverage: report.Num(1), MinCoverage: report.Num(0.95)}},
		Alerts:      []report.Alert{{Name: "LustreJobSmallWrites", Labels: map[string]string{"jobid": "4242", "target": hostile}, First: report.Time{T: end.Add(-time.Minute)}, Last: report.Time{T: end}}},
		CoverageLow: true,
	}
}

// charts is how many charts the page of r must have, counted from the
// report's data.
func charts(r *report.Report) int {
	n := 0
	if a := r.App; a != nil {
		if len(a.Modules) > 0 {
			n += 4 // I/O cost, time split, bytes and operations by module
		}
		for _, m := range a.Modules {
			if len(m.Operations) > 0 {
				n++
			}
			if m.AccessSizes != nil {
				n++
			}
			if m.Pattern != nil {
				n++
			}
		}
		if len(a.FileSystems) > 0 {
			n++
		}
		if len(a.TopFiles) > 0 {
			n++
		}
		n += len(a.Heatmaps)
	}
	if s := r.Servers; s != nil {
		if len(s.Rates.Times) > 0 {
			n++
		}
		if len(s.MDTRates.Times) > 0 {
			n++
		}
		if len(s.OSTs) > 0 {
			n += 3 // bytes, share, bytes per RPC
		}
		if len(s.MDTOperations) > 0 {
			n++
		}
	}
	return n
}

var chartClass = regexp.MustCompile(`<svg class="chart"`)

// checkPage checks what every page must hold: every section, every chart
// (well-formed SVG with a title), nothing fetched from elsewhere and no
// script.
func checkPage(t *testing.T, r *report.Report, page string) {
	t.Helper()
	for _, id := range Sections(r) {
		if strings.Count(page, `id="`+id+`"`) != 1 {
			t.Errorf("section id %q: %d times in the page, want 1", id, strings.Count(page, `id="`+id+`"`))
		}
	}
	if got, want := len(chartClass.FindAllString(page, -1)), charts(r); got != want {
		t.Errorf("%d charts, want %d", got, want)
	}
	for _, bad := range []string{"<script", "<link", "<iframe", "<img", "src=", "href=", "url(", "@import", "@font-face"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q: it must be self-contained, without script", bad)
		}
	}
	checkSVG(t, page)
}

// checkSVG checks that each chart is well-formed XML with a <title> first
// and axis text.
func checkSVG(t *testing.T, page string) {
	t.Helper()
	rest := page
	for {
		i := strings.Index(rest, "<svg ")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "</svg>")
		if j < 0 {
			t.Fatal("unclosed <svg>")
		}
		svg := rest[i : i+j+len("</svg>")]
		rest = rest[i+j:]
		d := xml.NewDecoder(strings.NewReader(svg))
		d.Entity = map[string]string{"nbsp": "\u00a0"}
		var first string
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chart is not well-formed SVG: %v\n%.300s", err, svg)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local != "svg" && first == "" {
				first = se.Name.Local
			}
		}
		if first != "title" {
			t.Errorf("chart's first element is <%s>, want <title>: %.200s", first, svg)
		}
		if !strings.Contains(svg, `class="axis"`) && !strings.Contains(svg, `class="tick"`) {
			t.Errorf("chart without axis: %.200s", svg)
		}
	}
}

// TestSections: a page from a fixture job's log (4 ranks, POSIX, STDIO
// and a heatmap) and a servers' view has every section and chart.
func TestSections(t *testing.T) {
	data, err := darshantest.Job{JobID: 4242, UID: 1000, Exe: "/opt/app/bin/sim -n 4", End: end, Ranks: 4, Bytes: 1 << 20}.Log()
	r := fromLogs(t, report.LogOptions{}, writeLog(t, "job.darshan", data, err))
	if len(r.App.Heatmaps) == 0 || len(r.App.Modules) == 0 || len(r.App.TopFiles) == 0 {
		t.Fatalf("fixture log lacks what the test needs: %d heatmaps, %d modules, %d files", len(r.App.Heatmaps), len(r.App.Modules), len(r.App.TopFiles))
	}
	r.Servers = servers("")
	r.Verdicts = []report.Verdict{{Codes: []string{"P06"}, Insight: "small writes", App: report.Quantity{Name: "average write", Value: report.Num(4096), Unit: "bytes"},
		Server: report.Quantity{Name: "bytes per write RPC", Value: report.Num(1e6), Unit: "bytes"}, Outcome: report.Contradicts, Why: "the client aggregated the writes"}}
	page := render(t, r)
	checkPage(t, r, page)
	for _, want := range []string{"4242", "sim", "scratch-OST0000", "Coverage low", "LustreJobSmallWrites", `class="outcome contradicts"`, "the client aggregated the writes"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "No servers") || strings.Contains(page, "No application") {
		t.Error("page says a view is missing although both are there")
	}
}

// TestMissingSides: each side alone makes a page that says, in one line,
// that the other side is missing.
func TestMissingSides(t *testing.T) {
	data, err := darshantest.SmallWrites(77, end, 2000, "writer", "/scratch/small.dat")
	r := fromLogs(t, report.LogOptions{}, writeLog(t, "small.darshan", data, err))
	page := render(t, r)
	checkPage(t, r, page)
	if !strings.Contains(page, "No servers") || !strings.Contains(page, "No verdicts") {
		t.Error("page of logs alone does not say the servers' view and verdicts are missing")
	}
	if !strings.Contains(page, "P06") {
		t.Error("the small writes insight (P06) fired but is not on the page")
	}

	uid := int64(5)
	r = &report.Report{Schema: report.Schema, Job: report.Job{JobID: "4242", UID: &uid}, Servers: servers("")}
	page = render(t, r)
	checkPage(t, r, page)
	if !strings.Contains(page, "No application") {
		t.Error("page of Prometheus alone does not say the application's view is missing")
	}
	for _, id := range AppSections {
		if strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("page without logs has the application section %q", id)
		}
	}
}

// TestEscaping: file names, the executable and the servers' labels come
// from users; markup in them stays text.
func TestEscaping(t *testing.T) {
	const hostile = `<script>alert(1)</script>"'&<b>`
	data, err := darshantest.SmallWrites(78, end, 2000, "/bin/evil"+hostile, "/scratch/"+hostile+".dat")
	r := fromLogs(t, report.LogOptions{}, writeLog(t, "evil.darshan", data, err))
	r.Servers = servers(hostile)
	page := render(t, r)
	checkPage(t, r, page)
	if strings.Contains(page, "<script>") || strings.Contains(page, "<b>") {
		t.Error("markup from a file name or a label reached the page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile name is not on the page, escaped")
	}
}

// TestPathsHidden: with --no-paths, no path is on the page, even one the
// report was given by mistake; files are named by record id.
func TestPathsHidden(t *testing.T) {
	const secret = "/scratch/project-secret/output-file.dat"
	data, err := darshantest.SmallWrites(79, end, 2000, "writer", secret)
	p := writeLog(t, "s.darshan", data, err)

	r := fromLogs(t, report.LogOptions{}, p)
	if !strings.Contains(render(t, r), "output-file.dat") {
		t.Fatal("with paths, the file's path is not on the page: the test would prove nothing")
	}

	r = fromLogs(t, report.LogOptions{HidePaths: true}, p)
	page := render(t, r)
	checkPage(t, r, page)
	if strings.Contains(page, "project-secret") || strings.Contains(page, "output-file") {
		t.Error("--no-paths: a path is on the page")
	}
	if len(r.App.TopFiles) == 0 || !strings.Contains(page, r.App.TopFiles[0].ID) {
		t.Error("--no-paths: the file's record id is not on the page")
	}

	// A report that says paths are hidden but holds one anyway.
	r = fromLogs(t, report.LogOptions{}, p)
	r.PathsHidden = true
	page = render(t, r)
	if strings.Contains(page, "project-secret") {
		t.Error("PathsHidden with paths in the report: a path is on the page")
	}
}

// TestDXTLeftOut: a log whose DXT traces pass its memory budget makes a
// page that says, where the heatmap would be, that the traces were left
// out, of which log, under which budget, and the flag that draws them.
func TestDXTLeftOut(t *testing.T) {
	data, err := darshantest.Traced(end, 100_000)
	p := writeLog(t, "traced.darshan", data, err)
	r := fromLogs(t, report.LogOptions{MemoryBudget: 4 << 20}, p)
	page := render(t, r)
	checkPage(t, r, page)
	i := strings.Index(page, `id="dxt-left-out"`)
	if i < 0 {
		t.Fatal("the page does not say that the DXT traces were left out")
	}
	note := page[i:]
	note = note[:strings.Index(note, "</p>")]
	for _, want := range []string{"DXT traces left out", "traced.darshan (DXT_POSIX, a memory budget of 4" + nb + "MiB)", "--max-log-memory"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note %q lacks %q", note, want)
		}
	}
	if strings.Contains(page, "no DXT trace") || strings.Count(page, `<svg class="chart"`) != charts(r) {
		t.Error("the page says the logs have no DXT trace, or draws a heatmap")
	}
	if page := render(t, fromLogs(t, report.LogOptions{}, p)); strings.Contains(page, "dxt-left-out") || !strings.Contains(page, "Heatmap of DXT_POSIX") {
		t.Error("with the default budget: no heatmap from DXT, or a note that it was left out")
	}
}
