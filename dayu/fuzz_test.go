package dayu

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// seedFiles adds every fixture and, when the shared corpus is there, every
// corpus file of the given kind as fuzz seeds.
func seedFiles(f *testing.F, kind FileKind) {
	f.Helper()
	var dirs []string
	for _, root := range []string{corpus.Fixtures(f, "dayu"), corpusRoot()} {
		if root == "" {
			continue
		}
		subs, _ := os.ReadDir(root)
		for _, s := range subs {
			if s.IsDir() {
				dirs = append(dirs, filepath.Join(root, s.Name()))
			}
		}
	}
	for _, dir := range dirs {
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			if KindOf(n.Name()) != kind {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, n.Name()))
			if err == nil {
				f.Add(n.Name(), data)
			}
		}
	}
}

// corpusRoot is the DaYu corpus directory, or "" without the shared corpus;
// fuzz seeding must not skip.
func corpusRoot() string {
	root := corpus.Root()
	if root == "" {
		return ""
	}
	return filepath.Join(root, "corpus", "dayu")
}

func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error is not a *ParseError: %v", err)
	}
	for _, r := range Reasons {
		if pe.Reason == r {
			// No byte of the file in the message: only the reader's words.
			checkMessage(t, pe.Msg)
			return
		}
	}
	t.Fatalf("unknown reason %q", pe.Reason)
}

// FuzzParseStats feeds the reader anything: it must not panic, must fail
// only with a *ParseError of a known reason, and what it accepts must
// assemble and draw.
func FuzzDayuParseStats(f *testing.F) {
	seedFiles(f, KindStats)
	f.Add("1_vfd-data-stat.yaml", []byte("- file-1:\n  - dset:\n   ata:\n- H5FD_MEM_DRAW: {1:(0,\n"))
	f.Add("1-vol_data_stat.json", []byte(`[{"file-1":{"file_name":"a","datasets":{"dset_name":"d"}},"Task":{"task_id":1}}]`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		sf, err := ParseStats(name, data)
		if err != nil {
			checkParseError(t, err)
			return
		}
		if len(sf.Entries) == 0 {
			t.Fatal("accepted a file without records")
		}
		for _, e := range sf.Entries {
			if e.Path == "" {
				t.Fatal("kept a record without a file name")
			}
			rb, ro, wb, wo := e.IO.Totals()
			if rb < 0 || ro < 0 || wb < 0 || wo < 0 {
				t.Fatalf("negative I/O %d %d %d %d", rb, ro, wb, wo)
			}
		}
		w := Assemble("fuzz", nil, []*StatsFile{sf})
		for _, e := range w.Dataflow() {
			if e.Bytes < 0 || e.Ops < 0 || (e.Bytes == 0 && e.Ops == 0) {
				t.Fatalf("bad edge %+v", e)
			}
		}
		for _, format := range []GraphFormat{GraphDOT, GraphMermaid} {
			if err := WriteGraph(io.Discard, w, format); err != nil {
				t.Fatal(err)
			}
		}
		sf.DropPageRanges()
	})
}

// FuzzParseStageMap does the same for stage maps, and assembles the map
// with a fixture so that the stage walk sees hostile file lists.
func FuzzDayuParseStageMap(f *testing.F) {
	seedFiles(f, KindStageMap)
	f.Add("task_to_file.yaml", []byte("a-1:\n  input:\n  - x\n  output: [\"y\",]\n0: b\n"))
	stats := fixtureStats(f, "yaml2023")
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		m, err := ParseStageMap(name, data)
		if err != nil {
			checkParseError(t, err)
			return
		}
		if len(m.Stages) == 0 {
			t.Fatal("accepted a map without stages")
		}
		w := Assemble("fuzz", []*StageMap{m}, stats)
		if len(w.Stages) == 0 {
			t.Fatal("lost the stages of the fixture")
		}
		_ = w.Dataflow()
	})
}

func fixtureStats(tb testing.TB, dir string) []*StatsFile {
	tb.Helper()
	root := filepath.Join(corpus.Fixtures(tb, "dayu"), dir)
	names, err := os.ReadDir(root)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*StatsFile
	for _, n := range names {
		if KindOf(n.Name()) != KindStats {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, n.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		sf, err := ParseStats(n.Name(), data)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, sf)
	}
	return out
}

// FuzzScanRanges: whenever the fast range scanner accepts a value, the
// generic reader must read the same ranges from it.
func FuzzDayuScanRanges(f *testing.F) {
	for _, s := range []string{"{83:(0,0),89:(1,166)}", "{1:[0,0],4:[33,33]}", "{}", "{1:(0,0),}", "{-1:(2,-3)}", "{1:(0,0)2:(1,1)}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fast, ok, err := scanRanges(newParse(1<<20, true), raw, true)
		if err != nil || !ok {
			return
		}
		// Checked and not kept: the same verdict, nothing kept.
		if none, ok2, _ := scanRanges(newParse(1<<20, false), raw, false); !ok2 || none != nil {
			t.Fatalf("%q: kept %v, %v without keeping", raw, none, ok2)
		}
		n, err := parseValue(raw)
		if err != nil {
			t.Fatalf("scanRanges accepted %q, parseValue: %v", raw, err)
		}
		slow, err := n.ranges()
		if err != nil {
			t.Fatalf("scanRanges accepted %q, ranges: %v", raw, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: fast %v, generic %v", raw, fast, slow)
		}
		for i := range fast {
			if fast[i] != slow[i] {
				t.Fatalf("%q: fast %v, generic %v", raw, fast, slow)
			}
		}
	})
}
