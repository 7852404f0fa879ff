// Package golden compares test output with golden files, the project's
// habit for whole outputs: a test fails at the first differing line, and
// `go test ./<pkg> -update` rewrites the files.
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path; with update set it writes got
// there instead.
func Check(tb testing.TB, path, got string, update bool) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (go test with -update creates it)", err)
	}
	if got != string(want) {
		tb.Fatalf("%s differs: %s", path, FirstDifference(string(want), got))
	}
}

// FirstDifference describes the first line where got differs from want.
func FirstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n want %q\n  got %q", i+1, w, g)
		}
	}
	return "(no line differs)"
}
