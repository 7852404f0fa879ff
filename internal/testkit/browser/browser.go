// Package browser drives a headless Chromium (Debian's chromium) on a local
// HTML file for tests: a screenshot, the DOM after load, and what the page
// wrote to the console. It runs the browser's command line modes
// (--screenshot, --dump-dom) rather than the remote debugging protocol:
// no dependency, nothing to keep in step with Chromium's versions.
//
// Each run has its own profile directory and process group, killed
// whole when the run ends or times out, so that no renderer outlives a
// test.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Candidates are the names the browser is looked for under, in order.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the browser's path: $HPCIO_CHROMIUM when set, else the first
// of Candidates on $PATH (then /usr/bin/chromium); "" when there is none.
func Find() string {
	if p := os.Getenv("HPCIO_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	for _, c := range Candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// Require returns the browser's path, or skips tb when there is none, and
// under -short: a browser run takes seconds.
func Require(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: skipping the headless Chromium test (seconds per page)")
	}
	p := Find()
	if p == "" {
		tb.Skip("headless Chromium not found (apt-get install chromium, or set HPCIO_CHROMIUM): skipping the browser test")
	}
	return p
}

// Browser runs one browser binary.
type Browser struct {
	// Path is the binary.
	Path string
	// Timeout bounds one run (default 60 s).
	Timeout time.Duration
	// Width and Height are the window's size in CSS pixels (default
	// 1100×1400).
	Width, Height int
	// Dark asks for the page's dark colour scheme (prefers-color-scheme:
	// dark), as a browser set to dark mode would.
	Dark bool
}

// New returns a Browser for the binary at path with the defaults.
func New(path string) *Browser {
	return &Browser{Path: path, Timeout: 60 * time.Second, Width: 1100, Height: 1400}
}

// Result is what one run gives.
type Result struct {
	// DOM is the document serialized after load (--dump-dom), when asked.
	DOM string
	// Console are the messages the page wrote to the console, and its
	// uncaught errors, one per line as Chromium logs them.
	Console []string
	// Stderr is the browser's whole log, for failure messages.
	Stderr string
}

// consoleLine matches Chromium's log line of a console message:
// [pid:tid:date/time:INFO:CONSOLE:1] "text", source: file:///… (1)
// (older versions: INFO:CONSOLE(1)).
var consoleLine = regexp.MustCompile(`:CONSOLE[:(]\d*\)?\] (.*)$`)

// DumpDOM loads the file and returns the DOM after load and the console.
func (b *Browser) DumpDOM(ctx context.Context, file string) (Result, error) {
	return b.run(ctx, file, "--dump-dom")
}

// Screenshot loads the file and writes a PNG of the window to out; the
// console is in the result.
func (b *Browser) Screenshot(ctx context.Context, file, out string) (Result, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return Result{}, err
	}
	res, err := b.run(ctx, file, "--screenshot="+abs)
	if err != nil {
		return res, err
	}
	if fi, err := os.Stat(abs); err != nil || fi.Size() == 0 {
		return res, fmt.Errorf("chromium wrote no screenshot to %s; its log:\n%s", abs, tail(res.Stderr, 2000))
	}
	return res, nil
}

// PrintPDF loads the file and prints it to a PDF at out, with the page's
// print style sheet (@media print).
func (b *Browser) PrintPDF(ctx context.Context, file, out string) (Result, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return Result{}, err
	}
	res, err := b.run(ctx, file, "--print-to-pdf="+abs, "--no-pdf-header-footer")
	if err != nil {
		return res, err
	}
	data, err := os.ReadFile(abs)
	if err != nil || !bytes.HasPrefix(data, []byte("%PDF-")) {
		return res, fmt.Errorf("chromium wrote no PDF to %s; its log:\n%s", abs, tail(res.Stderr, 2000))
	}
	return res, nil
}

func (b *Browser) run(ctx context.Context, file string, mode string, extra ...string) (Result, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return Result{}, err
	}
	if _, err := os.Stat(abs); err != nil {
		return Result{}, err
	}
	profile, err := os.MkdirTemp("", "hpcio-chromium-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(profile)
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w, h := b.Width, b.Height
	if w <= 0 {
		w = 1100
	}
	if h <= 0 {
		h = 1400
	}
	args := []string{
		"--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-sync", "--disable-background-networking",
		"--disable-component-update", "--mute-audio", "--hide-scrollbars",
		// Root in a container has no usable sandbox; the page is our own.
		"--no-sandbox",
		"--user-data-dir=" + profile,
		"--window-size=" + strconv.Itoa(w) + "," + strconv.Itoa(h),
		"--enable-logging=stderr", "--v=0",
	}
	if b.Dark {
		args = append(args, "--blink-settings=preferredColorScheme=0")
	}
	args = append(args, extra...)
	args = append(args, mode, "file://"+abs)
	cmd := exec.CommandContext(ctx, b.Path, args...)
	cmd.Dir = profile
	cmd.Env = append(os.Environ(), "HOME="+profile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// On timeout, the whole group: the renderers and the GPU process too.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers of the group, if any
	}
	res := Result{Stderr: stderr.String()}
	if mode == "--dump-dom" {
		res.DOM = stdout.String()
	}
	for _, l := range bytes.Split(stderr.Bytes(), []byte("\n")) {
		if m := consoleLine.FindSubmatch(l); m != nil {
			res.Console = append(res.Console, string(m[1]))
		}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("chromium did not finish within %s; its log:\n%s", timeout, tail(res.Stderr, 2000))
	}
	if err != nil {
		return res, fmt.Errorf("chromium: %v; its log:\n%s", err, tail(res.Stderr, 2000))
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Blank reports whether the PNG is all one colour (a page that drew
// nothing, or a screenshot of an empty window).
func Blank(pngData []byte) (bool, error) {
	im, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return false, err
	}
	return blank(im), nil
}

func blank(im image.Image) bool {
	b := im.Bounds()
	if b.Empty() {
		return true
	}
	r0, g0, b0, a0 := im.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := im.At(x, y).RGBA()
			if r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

// Luminance returns the PNG's mean relative luminance, 0 (black) to 1
// (white): a light page is well above one half, a dark one well below.
func Luminance(pngData []byte) (float64, error) {
	im, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		return 0, err
	}
	b := im.Bounds()
	if b.Empty() {
		return 0, errors.New("empty image")
	}
	sum := 0.0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := im.At(x, y).RGBA()
			sum += (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(bl)) / 0xffff
		}
	}
	return sum / float64(b.Dx()*b.Dy()), nil
}
