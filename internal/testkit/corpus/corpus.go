// Package corpus locates the shared corpus of real Lustre, Darshan and DaYu
// outputs for tests. The corpus lives beside the repository, in
// ../shared/corpus, and is never copied into it; tests that need it skip
// with a clear message when it is absent.
package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the shared directory (../shared beside the repository, or
// $HPCIO_SHARED), or "" when there is none.
func Root() string {
	if d := os.Getenv("HPCIO_SHARED"); d != "" {
		if isDir(d) {
			return d
		}
		return ""
	}
	repo := RepoRoot()
	if repo == "" {
		return ""
	}
	d := filepath.Join(filepath.Dir(repo), "shared")
	if isDir(d) {
		return d
	}
	return ""
}

// RepoRoot returns the directory holding go.mod, found by walking up from
// the working directory, or "".
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns shared/corpus/<elem...>, or skips tb when it does not exist.
func Dir(tb testing.TB, elem ...string) string {
	tb.Helper()
	root := Root()
	rel := filepath.Join(append([]string{"corpus"}, elem...)...)
	if root == "" {
		tb.Skipf("shared corpus not found (../shared beside the repository, or $HPCIO_SHARED): skipping test on %s", rel)
	}
	d := filepath.Join(root, rel)
	if _, err := os.Stat(d); err != nil {
		tb.Skipf("shared corpus has no %s: skipping", rel)
	}
	return d
}

// Fixtures returns the repository's fixtures/<elem...> directory.
func Fixtures(tb testing.TB, elem ...string) string {
	tb.Helper()
	repo := RepoRoot()
	if repo == "" {
		tb.Fatal("cannot find the repository root (go.mod) from the working directory")
	}
	return filepath.Join(append([]string{repo, "fixtures"}, elem...)...)
}

// LargestDarshanLog returns the largest Darshan log of the corpus under
// darshan/<elem...> (every folder below darshan/ without elem), or skips tb
// when there is none: the input of the benchmarks and bounds that want the
// heaviest real log.
func LargestDarshanLog(tb testing.TB, elem ...string) string {
	tb.Helper()
	dir := Dir(tb, append([]string{"darshan"}, elem...)...)
	pattern := filepath.Join(dir, "*.darshan")
	if len(elem) == 0 {
		pattern = filepath.Join(dir, "*", "*.darshan")
	}
	logs, _ := filepath.Glob(pattern)
	best, size := "", int64(-1)
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		tb.Skipf("no Darshan log in the corpus' %s: skipping", filepath.Join(append([]string{"darshan"}, elem...)...))
	}
	return best
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
