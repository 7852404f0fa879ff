package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// ARCHITECTURE.md names every package of the module, as `path/of/package`.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := corpus.RepoRoot()
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), "`"+filepath.ToSlash(rel)+"`") {
			t.Errorf("ARCHITECTURE.md does not name package %s", rel)
		}
	}
}
