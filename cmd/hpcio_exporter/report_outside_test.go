package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/browser"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// svgOf returns a page's SVG charts, one after the other.
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

// TestReportHiddenCharacters: `report` on a log whose every string (the
// executable, the library version, mount points and types, file paths,
// and the log's own file name) carries control, bidirectional and
// zero-width characters. The page, its charts and the DOM a browser makes
// of it hold none of them: each is shown as its escape
// ("/scratch/\u202Efdp.exe", not "/scratch/exe.pdf"). The JSON holds the
// strings themselves, each such character as a \u escape.
func TestReportHiddenCharacters(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	h := darshantest.Hidden
	data, err := darshantest.HostileLog(reportEnd)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), darshantest.HostileFileName)
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	htmlFile := filepath.Join(t.TempDir(), "report.html")
	_, errOut, status := runReportBinary(t, bin, "-o", htmlFile, log)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, errOut)
	}
	b, err := os.ReadFile(htmlFile)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	t.Logf("hidden characters: %d in the page, %d in its charts (U+202E: %d, %d)", darshantest.CountHidden(page), darshantest.CountHidden(svgOf(page)),
		strings.Count(page, "\u202e"), strings.Count(svgOf(page), "\u202e"))
	if n := darshantest.CountHidden(page); n != 0 {
		t.Errorf("%d hidden characters in the page", n)
	}
	for _, want := range []string{`/scratch/\u202Efdp.exe`, `\u202E\u202D\u202A\u202B\u202C\u200E\u200F\u2066\u2067\u2068\u2069\u061C\x01\a\x1B\r\x7F\u0085\u009B\u200B\u200C\u200D\u2060\uFEFF\u00AD\u2028\u2029fdp.exe`} {
		if !strings.Contains(page, want) || !strings.Contains(svgOf(page), `/scratch/\u202Efdp.exe`) {
			t.Errorf("%.40q… is not on the page, or the file's path not in its chart", want)
		}
	}

	t.Run("browser", func(t *testing.T) {
		chromium := browser.Require(t)
		res, err := browser.New(chromium).DumpDOM(context.Background(), htmlFile)
		if err != nil {
			t.Fatal(err)
		}
		dom := res.DOM
		t.Logf("hidden characters in the browser's DOM: %d, %d in its charts (U+202E: %d, %d)", darshantest.CountHidden(dom), darshantest.CountHidden(svgOf(dom)),
			strings.Count(dom, "\u202e"), strings.Count(svgOf(dom), "\u202e"))
		if n := darshantest.CountHidden(dom); n != 0 || !strings.Contains(dom, `/scratch/\u202Efdp.exe`) {
			t.Errorf("%d hidden characters in the browser's DOM, or it lacks the path's escape", n)
		}
	})

	out, errOut, status := runReportBinary(t, bin, "--format=json", log)
	if status != exitOK {
		t.Fatalf("JSON: status %d: %s", status, errOut)
	}
	t.Logf("hidden characters in the JSON: %d", darshantest.CountHidden(out))
	if n := darshantest.CountHidden(out); n != 0 {
		t.Errorf("%d hidden characters in the JSON", n)
	}
	var r struct {
		Job struct {
			Exe []string `json:"exe"`
		} `json:"job"`
		App struct {
			Logs []struct {
				File       string `json:"file"`
				LibVersion string `json:"library_version"`
			} `json:"logs"`
			FileSystems []struct {
				Mount string `json:"mount"`
				Type  string `json:"type"`
			} `json:"file_systems"`
			TopFiles []struct {
				Path string `json:"path"`
			} `json:"top_files"`
		} `json:"application"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Job.Exe, []string{h + "fdp.exe"}) || r.App.Logs[0].File != darshantest.HostileFileName || r.App.Logs[0].LibVersion != "3.4.7"+h {
		t.Errorf("the JSON's strings are not the log's: exe %q, file %q, library %q", r.Job.Exe, r.App.Logs[0].File, r.App.Logs[0].LibVersion)
	}
	if !slices.ContainsFunc(r.App.TopFiles, func(f struct {
		Path string `json:"path"`
	}) bool {
		return f.Path == darshantest.HostilePath
	}) {
		t.Errorf("the JSON's top files %q lack %q", r.App.TopFiles, darshantest.HostilePath)
	}
	if !slices.ContainsFunc(r.App.FileSystems, func(fs struct {
		Mount string `json:"mount"`
		Type  string `json:"type"`
	}) bool {
		return fs.Mount == "/scratch"+h && fs.Type == "lustre"+h
	}) {
		t.Errorf("the JSON's file systems %q lack the mount point", r.App.FileSystems)
	}
}

// TestReportDXTOverBudget: a log whose DXT traces pass --max-log-memory,
// which `darshan signals` and `darshan insights` read, makes a report
// (exit 0) without the heatmap from DXT, that says so: a note on
// standard error, one on the page where the heatmap would be, and in the
// JSON (application.dxt_left_out); everything else is the report made
// with a budget that holds the traces.
func TestReportDXTOverBudget(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	data, err := darshantest.Traced(reportEnd, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "traced.darshan")
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const budget = "--max-log-memory=4MiB"
	for _, cmd := range [][]string{{"darshan", "signals"}, {"darshan", "insights"}} {
		if _, errOut, status := runBinary(t, bin, append(cmd, budget, log)...); status != exitOK {
			t.Fatalf("%s %s: status %d: %s", strings.Join(cmd, " "), budget, status, errOut)
		}
	}

	whole, errOut, status := runReportBinary(t, bin, "--format=json", log)
	if status != exitOK || errOut != "" {
		t.Fatalf("the default budget: status %d: %s", status, errOut)
	}
	out, errOut, status := runReportBinary(t, bin, "--format=json", budget, log)
	t.Logf("report %s: exit %d, stderr %q", budget, status, errOut)
	if status != exitOK {
		t.Fatalf("report %s: status %d, want 0: %s", budget, status, errOut)
	}
	if want := "hpcio_exporter report: note: traced.darshan: the DXT traces (DXT_POSIX) would pass the log's memory budget of 4MiB: left out, the report has no heatmap from DXT; raise --max-log-memory to draw it\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	var w, r map[string]any
	if err := json.Unmarshal([]byte(whole), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	wa, ra := w["application"].(map[string]any), r["application"].(map[string]any)
	if hm, _ := wa["heatmaps"].([]any); len(hm) != 1 {
		t.Fatalf("the default budget: %d heatmaps, want the one from DXT", len(hm))
	}
	if hm, _ := ra["heatmaps"].([]any); len(hm) != 0 {
		t.Errorf("%s: %d heatmaps, want none", budget, len(hm))
	}
	left, _ := json.Marshal(ra["dxt_left_out"])
	if want := `[{"file":"traced.darshan","memory_budget_bytes":4194304,"region":"DXT_POSIX"}]`; string(left) != want {
		t.Errorf("dxt_left_out %s, want %s", left, want)
	}
	delete(wa, "heatmaps")
	delete(ra, "heatmaps")
	delete(wa, "dxt_left_out")
	delete(ra, "dxt_left_out")
	a, _ := json.Marshal(w)
	b, _ := json.Marshal(r)
	if string(a) != string(b) {
		t.Error("the report without the traces differs from the whole one beyond its heatmap")
	}

	page, _, status := runReportBinary(t, bin, budget, log)
	if status != exitOK || !strings.Contains(page, `id="dxt-left-out"`) || !strings.Contains(page, "--max-log-memory") {
		t.Errorf("the page (status %d) does not say that the DXT traces were left out", status)
	}
}

// TestReportHiddenCharactersInErrors: the one line a refused log leaves on
// standard error names it in its visible form: a file name's escape
// sequences and bidirectional characters cannot rewrite a terminal or the
// epilog's syslog line.
func TestReportHiddenCharactersInErrors(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	data, err := darshantest.HostileLog(reportEnd)
	if err != nil {
		t.Fatal(err)
	}
	if data, err = darshantest.CorruptPOSIX(data); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), darshantest.HostileFileName)
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runReportBinary(t, bin, log)
	if status != exitFailure || out != "" {
		t.Fatalf("a damaged log: status %d, %d bytes out", status, len(out))
	}
	t.Logf("stderr: %d hidden characters", darshantest.CountHidden(errOut))
	if n := darshantest.CountHidden(errOut); n != 0 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `job\u202E\u202D`) {
		t.Errorf("stderr %q: %d hidden characters, or not one line naming the log's escapes", errOut, n)
	}
}
