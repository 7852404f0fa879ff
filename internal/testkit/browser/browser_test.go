package browser

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func encode(t *testing.T, im image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, im); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBlank(t *testing.T) {
	im := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			im.Set(x, y, color.RGBA{250, 250, 250, 255})
		}
	}
	if b, err := Blank(encode(t, im)); err != nil || !b {
		t.Fatalf("one-colour image: Blank = %v, %v; want true", b, err)
	}
	im.Set(39, 29, color.RGBA{250, 250, 251, 255}) // the last pixel only
	if b, err := Blank(encode(t, im)); err != nil || b {
		t.Fatalf("image with one other pixel: Blank = %v, %v; want false", b, err)
	}
	if l, err := Luminance(encode(t, im)); err != nil || l < 0.9 {
		t.Fatalf("near-white image: Luminance = %v, %v; want > 0.9", l, err)
	}
	if _, err := Blank([]byte("not a png")); err == nil {
		t.Fatal("Blank of a non-PNG: no error")
	}
}

// TestChromium checks the three things the page tests rely on against the
// real browser: the DOM is the one after the page's script ran, console
// messages and uncaught errors are caught, a drawn page is not blank and
// an empty one is.
func TestChromium(t *testing.T) {
	b := New(Require(t))
	dir := t.TempDir()
	page := filepath.Join(dir, "p.html")
	const html = `<!DOCTYPE html><html><body style="background:#fff"><h1 id="x">hello</h1>
<script>document.getElementById("x").setAttribute("data-ran","yes"); console.error("boom-error"); notAFunction();</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := b.DumpDOM(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, `data-ran="yes"`) {
		t.Errorf("DOM is not the one after load:\n%s", res.DOM)
	}
	all := strings.Join(res.Console, "\n")
	if !strings.Contains(all, "boom-error") || !strings.Contains(all, "notAFunction") {
		t.Errorf("console = %q; want the console.error and the ReferenceError", res.Console)
	}

	png1 := filepath.Join(dir, "p.png")
	if _, err := b.Screenshot(ctx, page, png1); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(png1)
	if err != nil {
		t.Fatal(err)
	}
	if blank, err := Blank(data); err != nil || blank {
		t.Errorf("screenshot of a heading: Blank = %v, %v; want false", blank, err)
	}

	empty := filepath.Join(dir, "e.html")
	if err := os.WriteFile(empty, []byte(`<!DOCTYPE html><html><body style="background:#fff"></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	png2 := filepath.Join(dir, "e.png")
	res, err = b.Screenshot(ctx, empty, png2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Console) != 0 {
		t.Errorf("empty page: console = %q", res.Console)
	}
	data, err = os.ReadFile(png2)
	if err != nil {
		t.Fatal(err)
	}
	if blank, err := Blank(data); err != nil || !blank {
		t.Errorf("screenshot of an empty page: Blank = %v, %v; want true", blank, err)
	}
}

// TestSchemeAndPrint: Dark selects the page's dark colour scheme, and
// PrintPDF prints a PDF.
func TestSchemeAndPrint(t *testing.T) {
	b := New(Require(t))
	b.Width, b.Height = 300, 200
	dir := t.TempDir()
	page := filepath.Join(dir, "s.html")
	const html = `<!DOCTYPE html><html><head><style>html{background:#fff;color:#000}
@media (prefers-color-scheme:dark){html{background:#111;color:#eee}}</style></head><body><p>text</p></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lum := func(dark bool) float64 {
		b.Dark = dark
		out := filepath.Join(dir, "s.png")
		if _, err := b.Screenshot(ctx, page, out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Luminance(data)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := lum(false); l < 0.8 {
		t.Errorf("light scheme: luminance %.2f, want > 0.8", l)
	}
	if l := lum(true); l > 0.2 {
		t.Errorf("dark scheme: luminance %.2f, want < 0.2", l)
	}
	b.Dark = false
	if _, err := b.PrintPDF(ctx, page, filepath.Join(dir, "s.pdf")); err != nil {
		t.Fatal(err)
	}
}
