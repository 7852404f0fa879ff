package dayu

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

func renderGraphs(t *testing.T, w *Workflow, golden string) {
	t.Helper()
	for format, ext := range map[GraphFormat]string{GraphDOT: ".dot", GraphMermaid: ".mermaid.md"} {
		var b bytes.Buffer
		if err := WriteGraph(&b, w, format); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join("graph", golden+ext), b.Bytes())
	}
}

func TestDayuGraphWRFTwoStage(t *testing.T) {
	w, _, err := LoadDir(corpus.Dir(t, "dayu", "wrf-2stage-210263"), Limits{KeepRanges: true})
	if err != nil {
		t.Fatal(err)
	}
	renderGraphs(t, w, "wrf-2stage-210263")
}

func TestDayuGraphFixtures(t *testing.T) {
	for _, dir := range []string{"yaml2023", "yaml2024", "json"} {
		w, _, err := LoadDir(filepath.Join(corpus.Fixtures(t, "dayu"), dir), Limits{KeepRanges: true})
		if err != nil {
			t.Fatal(err)
		}
		renderGraphs(t, w, "fixture-"+dir)
	}
}

// TestGraphEdgesAndWeights checks the picture itself on the yaml2023
// fixture: reads point from file to stage, writes from stage to file, and
// the heaviest edge is drawn widest.
func TestDayuGraphEdgesAndWeights(t *testing.T) {
	w, _, err := LoadDir(filepath.Join(corpus.Fixtures(t, "dayu"), "yaml2023"), Limits{KeepRanges: true})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteGraph(&b, w, GraphDOT); err != nil {
		t.Fatal(err)
	}
	dot := b.String()
	// Nodes are numbered in order: s0 prepare, s1 analyze, then files as
	// edges first name them: f0 input.h5, f1 mid.h5, f2 result.h5.
	for _, want := range []string{
		`s0 [shape=box, style="rounded,filled", fillcolor="#dae8fc", label="prepare\norder 0 · pid 4242"];`,
		`f0 [shape=note, label="input.h5"];`,
		`f0 -> s0 [label="33.6 KiB, 6 ops", penwidth=4.6];`,
		`s0 -> f1 [label="67.4 KiB, 15 ops", penwidth=6.0];`,
		`f1 -> s1 [label="19.3 KiB, 11 ops", penwidth=3.5];`,
		`s1 -> f2 [label="5.3 KiB, 7 ops", penwidth=1.0];`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %s\n%s", want, dot)
		}
	}
}

func TestDayuGraphEscaping(t *testing.T) {
	w := &Workflow{Name: "odd \"run\"\nname", Stages: []*Stage{{
		Name: `st"age\x`, PID: 1, Order: -1,
		Files: []*File{{Path: "/a/we`ird \"f\".h5", Name: "we`ird \"f\".h5", HasVFD: true,
			IO: IOSet{MemDRAW: {ReadBytes: 10, ReadOps: 1}}}},
	}}}
	var dot, md bytes.Buffer
	if err := WriteGraph(&dot, w, GraphDOT); err != nil {
		t.Fatal(err)
	}
	if err := WriteGraph(&md, w, GraphMermaid); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`digraph "odd \"run\"\nname" {`, `label="st\"age\\x\npid 1"`, `label="we` + "`" + `ird \"f\".h5"`} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("DOT lacks %s:\n%s", want, dot.String())
		}
	}
	for _, want := range []string{`s0["st#quot;age\x<br/>pid 1"]`, `f0[("we#96;ird #quot;f#quot;.h5")]`, `f0 -->|"10 B, 1 ops"| s0`, "%% dataflow of odd \"run\" name"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Mermaid lacks %s:\n%s", want, md.String())
		}
	}
	if err := WriteGraph(&dot, w, "svg"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestDayuHumanBytes(t *testing.T) {
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 17682661: "16.9 MiB", 1 << 40: "1.0 TiB"} {
		if got := humanBytes(b); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", b, got, want)
		}
	}
}
