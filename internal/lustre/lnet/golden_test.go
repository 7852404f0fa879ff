package lnet

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// parseFile parses a file with the parser its name calls for, and returns
// the result as indented JSON; "" when no parser applies.
func parseFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var v any
	name := strings.ToLower(filepath.ToSlash(path))
	base := filepath.Base(name)
	switch {
	case strings.Contains(base, "net_show") || strings.Contains(base, "net-show") || strings.Contains(base, "lnet_net"):
		v, err = ParseNetShow(f)
	case strings.Contains(base, "stats") && (strings.Contains(base, "lnetctl") || strings.Contains(base, "lnet")):
		v, err = ParseStats(f)
	case strings.HasSuffix(name, "/lnet/stats"):
		v, err = ParseProcStats(f)
	case strings.HasSuffix(name, "/lnet/lnet_memused"):
		var m Value
		m, err = ParseMemused(f)
		v = map[string]Value{"lnet_memused": m}
	default:
		return ""
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out) + "\n"
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, got, *update)
}

// Every lnet file of the project's fixtures, parsed, against its golden.
func TestLNetFixturesGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(corpus.Fixtures(t, "lustre"), "lnet-*.txt"))
	if err != nil || len(paths) < 7 {
		t.Fatalf("lnet fixtures: %v, %d files", err, len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			got := parseFile(t, p)
			if got == "" {
				t.Fatalf("no parser for %s", p)
			}
			checkGolden(t, filepath.Join("testdata", "fixtures", strings.TrimSuffix(filepath.Base(p), ".txt")+".json"), got)
		})
	}
}

// Every lnet file of the shared corpus, parsed, against its golden. A new
// lnet file in the corpus without a parser fails the test, so that it is
// looked at.
func TestLNetCorpusGolden(t *testing.T) {
	dir := corpus.Dir(t, "lustre")
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(strings.ToLower(path), "lnet") {
			return err
		}
		if strings.HasSuffix(path, ".json") {
			return nil // lustrefs-exporter's JSON rendering of lnetctl output, not lnetctl's
		}
		rel, _ := filepath.Rel(dir, path)
		t.Run(rel, func(t *testing.T) {
			got := parseFile(t, path)
			if got == "" {
				t.Fatalf("no parser for corpus file %s", rel)
			}
			n++
			checkGolden(t, filepath.Join("testdata", "corpus", strings.ReplaceAll(rel, string(filepath.Separator), "__")+".json"), got)
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("the corpus has no lnet file")
	}
}
