package page

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/browser"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// heatmapLog is the corpus log the browser test draws: E3SM-IO's, with a
// HEATMAP module, 512 ranks and several modules.
const heatmapLog = "e3sm_io_heatmap_only.darshan"

var idAttr = regexp.MustCompile(`\bid="([^"]+)"`)

// TestBrowser renders a corpus log's page in headless Chromium: the
// screenshot is not blank, the DOM after load has every section and every
// chart of the page written, and the console has no message (the page has
// no script, so any message is an error: a blocked resource, a parse
// error); the dark colour scheme is dark; the page prints to PDF. With
// HPCIO_UPDATE_SCREENSHOT=1 the screenshot goes to
// docs/images/report.png.
func TestBrowser(t *testing.T) {
	bin := browser.Require(t)
	logPath := filepath.Join(corpus.Dir(t, "darshan", "apps"), heatmapLog)
	if _, err := os.Stat(logPath); err != nil {
		t.Skipf("corpus has no %s: skipping", heatmapLog)
	}
	r := fromLogs(t, report.LogOptions{}, logPath)
	if len(r.App.Heatmaps) == 0 {
		t.Fatalf("%s gave no heatmap", heatmapLog)
	}
	page := render(t, r)
	checkPage(t, r, page)

	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	b := browser.New(bin)
	ctx := context.Background()

	res, err := b.DumpDOM(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Console) > 0 {
		t.Errorf("console messages from a page without script:\n%s", strings.Join(res.Console, "\n"))
	}
	ids := map[string]bool{}
	for _, m := range idAttr.FindAllStringSubmatch(res.DOM, -1) {
		ids[m[1]] = true
	}
	for _, id := range Sections(r) {
		if !ids[id] {
			t.Errorf("section %q not in the browser's DOM", id)
		}
	}
	if got, want := strings.Count(res.DOM, `<svg class="chart"`), strings.Count(page, `<svg class="chart"`); got != want || got == 0 {
		t.Errorf("browser's DOM has %d charts, the page %d", got, want)
	}

	// A window wide enough for the side-by-side charts, tall enough for
	// the job, the I/O cost and the module charts: what docs/ shows.
	b.Width, b.Height = 1000, 1600
	shot := filepath.Join(dir, "report.png")
	res, err = b.Screenshot(ctx, file, shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Console) > 0 {
		t.Errorf("console messages while taking the screenshot:\n%s", strings.Join(res.Console, "\n"))
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if blank, err := browser.Blank(data); err != nil || blank {
		t.Fatalf("screenshot: Blank = %v, %v", blank, err)
	}
	if l, err := browser.Luminance(data); err != nil || l < 0.6 {
		t.Errorf("light scheme: mean luminance %.2f (%v), want a light page (> 0.6)", l, err)
	}

	// The dark scheme is dark, and still draws.
	b.Dark = true
	dark := filepath.Join(dir, "dark.png")
	if _, err := b.Screenshot(ctx, file, dark); err != nil {
		t.Fatal(err)
	}
	b.Dark = false
	dd, err := os.ReadFile(dark)
	if err != nil {
		t.Fatal(err)
	}
	if blank, err := browser.Blank(dd); err != nil || blank {
		t.Errorf("dark screenshot: Blank = %v, %v", blank, err)
	}
	if l, err := browser.Luminance(dd); err != nil || l > 0.35 {
		t.Errorf("dark scheme: mean luminance %.2f (%v), want a dark page (< 0.35)", l, err)
	}

	// It prints (the print style sheet), without a console message.
	res, err = b.PrintPDF(ctx, file, filepath.Join(dir, "report.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Console) > 0 {
		t.Errorf("console messages while printing:\n%s", strings.Join(res.Console, "\n"))
	}

	if os.Getenv("HPCIO_UPDATE_SCREENSHOT") == "1" {
		out := filepath.Join(corpus.RepoRoot(), "docs", "images", "report.png")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(data))
	}
}

// TestBrowserHiddenCharacters: the hostile report's page (see
// TestHiddenCharactersVisible) as the browser has it after load: its DOM,
// text and charts, holds no control, bidirectional or zero-width
// character, and shows each one's escape.
func TestBrowserHiddenCharacters(t *testing.T) {
	bin := browser.Require(t)
	r := hostileReport(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(render(t, r)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := browser.New(bin).DumpDOM(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Console) > 0 {
		t.Errorf("console messages from a page without script:\n%s", strings.Join(res.Console, "\n"))
	}
	dom, svg := res.DOM, svgOf(res.DOM)
	if !strings.Contains(dom, `id="top-files"`) || !strings.Contains(svg, `class="chart"`) {
		t.Fatalf("the browser's DOM lacks the page's files or charts:\n%.500s", dom)
	}
	t.Logf("hidden characters in the browser's DOM: %d, %d of them in its charts", hidden(dom), hidden(svg))
	if n := hidden(dom); n != 0 {
		t.Errorf("%d hidden characters in the browser's DOM, want 0", n)
	}
	if n := hidden(svg); n != 0 {
		t.Errorf("%d hidden characters in the browser's charts, want 0", n)
	}
	for _, s := range hostileShown {
		if !strings.Contains(dom, s.shown) {
			t.Errorf("%s: its escapes are not in the browser's DOM", s.what)
		}
	}
}
