package parsertext

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// Golden outputs of the project's own fixtures (fixtures/darshan), so that
// the printers are tested without the shared corpus. `go test
// ./darshan/parsertext -run Golden -update` rewrites testdata/; review the
// diff: the corpus conformance test is what shows the text is darshan-parser's.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var printers = map[output]func(w, warn io.Writer, l *darshan.Log) error{dumpOut: Dump, totalOut: Total, dxtOut: DXT}

func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(corpus.Fixtures(t, "darshan"), "*.darshan"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures (%v)", err)
	}
	for _, path := range paths {
		l, err := darshan.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for out, print := range printers {
			var got, warn bytes.Buffer
			if err := print(&got, &warn, l); err != nil {
				t.Errorf("%s (%s): %v", filepath.Base(path), out, err)
			}
			if warn.Len() > 0 {
				got.WriteString("--- warnings\n")
				got.Write(warn.Bytes())
			}
			name := strings.TrimSuffix(filepath.Base(path), ".darshan")
			if name == "big_endian" {
				// the records of all_modules written big-endian: the same text
				// but for the compressed region sizes
				name = "all_modules"
			}
			golden := filepath.Join("testdata", name+"."+string(out)+".txt")
			if name != strings.TrimSuffix(filepath.Base(path), ".darshan") {
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if w, g := withoutSizes(string(want)), withoutSizes(got.String()); w != g {
					t.Errorf("big_endian (%s) differs from %s:\n%s", out, golden, firstDifference(w, g))
				}
				continue
			}
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from %s:\n%s", out, golden, firstDifference(string(want), got.String()))
			}
		}
		l.Close()
	}
}

// TestDamageReported checks that the printers report damage after printing
// what they could.
func TestDamageReported(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "darshan"), "all_modules.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:len(data)-100] // into the last region (DAOS)
	l, err := darshan.NewReader(bytes.NewReader(cut), int64(len(cut)), "cut")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = Dump(&out, nil, l)
	var fe *darshan.FormatError
	if !errors.As(err, &fe) || fe.Region != "DAOS" || !errors.Is(err, darshan.ErrTruncated) {
		t.Errorf("Dump error %v, want a truncated DAOS region", err)
	}
	if !strings.Contains(out.String(), "# DFS module data") || !strings.Contains(out.String(), "DFS\t-1\t") {
		t.Error("the modules before the damage are not printed")
	}
}

// FuzzDump runs the three printers on arbitrary logs: no panics.
func FuzzDump(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "darshan", "*.darshan"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, _ := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "fuzz")
		if l == nil {
			return
		}
		for _, print := range printers {
			print(io.Discard, io.Discard, l)
		}
	})
}

// withoutSizes drops the lines that give compressed region sizes.
func withoutSizes(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.Contains(line, "bytes (compressed)") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
