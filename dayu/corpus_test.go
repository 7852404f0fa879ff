package dayu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// corpusWorkflows lists the workflow directories of the shared DaYu corpus.
func corpusWorkflows(t *testing.T) (root string, dirs []string) {
	t.Helper()
	root = corpus.Dir(t, "dayu")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("no workflow directories in %s", root)
	}
	return root, dirs
}

// TestCorpusFilesParse reads every file of every corpus workflow, in all
// three formats, and compares a summary of each with its golden file.
func TestDayuCorpusFilesParse(t *testing.T) {
	root, dirs := corpusWorkflows(t)
	for _, dir := range dirs {
		files, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			t.Run(dir+"/"+name, func(t *testing.T) {
				data, err := ReadFile(filepath.Join(root, dir, name))
				if err != nil {
					t.Fatal(err)
				}
				switch KindOf(name) {
				case KindStats:
					sf, err := ParseStats(name, data)
					if err != nil {
						t.Fatalf("corpus file does not parse: %v", err)
					}
					checkGolden(t, filepath.Join("corpus", dir, name+".summary"), summarizeStats(sf))
				case KindStageMap:
					m, err := ParseStageMap(name, data)
					if err != nil {
						t.Fatalf("corpus stage map does not parse: %v", err)
					}
					checkGolden(t, filepath.Join("corpus", dir, name+".summary"), summarizeStageMap(m))
				default:
					t.Fatalf("corpus file %s is neither a stats file nor a stage map by its name", name)
				}
			})
		}
	}
}

// TestCorpusWorkflows assembles every corpus workflow and compares the model
// and its dataflow with golden files.
func TestDayuCorpusWorkflows(t *testing.T) {
	root, dirs := corpusWorkflows(t)
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			w, failed, err := LoadDir(filepath.Join(root, dir), Limits{KeepRanges: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range failed {
				t.Errorf("corpus file failed: %v", f)
			}
			if len(w.Stages) == 0 || len(w.Dataflow()) == 0 {
				t.Fatalf("workflow %s has %d stages and %d edges", dir, len(w.Stages), len(w.Dataflow()))
			}
			checkGolden(t, filepath.Join("corpus", dir, "workflow.summary"), summarizeWorkflow(w))
		})
	}
}

// TestCorpusFormats checks that the reader recognizes each generation of
// output that SOURCES.md tells apart.
func TestDayuCorpusFormats(t *testing.T) {
	root := corpus.Dir(t, "dayu")
	for _, tc := range []struct {
		file   string
		format Format
		layer  Layer
	}{
		{"wrf-2stage-210263/210263_vol-data-stat-dl.yaml", FormatYAML2023, LayerVOL},
		{"wrf-2stage-210263/210263_vfd-data-stat-dl.yaml", FormatYAML2023, LayerVFD},
		{"wrf-9stage-1p9f9s/5904_vfd-data-stat-dl.yaml", FormatYAML2023, LayerVFD},
		{"wrf-2proc-2p2f/25138_data-stat-dl.yaml", FormatYAML2023, LayerVOL},
		{"arldm-vistsis-2024/1126849-vol_data_stat.yaml", FormatYAML2024, LayerVOL},
		{"ddmd-12p4s-2024/141057_vfd-data-stat.yaml", FormatYAML2024, LayerVFD},
		{"json-format-vist/271485-vfd_data_stat.json", FormatJSON, LayerVFD},
		{"json-format-vist/271485-vol_data_stat.json", FormatJSON, LayerVOL},
	} {
		data, err := ReadFile(filepath.Join(root, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		sf, err := ParseStats(tc.file, data)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if sf.Format != tc.format || sf.Layer != tc.layer {
			t.Errorf("%s: format %s layer %s, want %s %s", tc.file, sf.Format, sf.Layer, tc.format, tc.layer)
		}
	}
}

// TestCorpusTypoAndTuples pins two quirks of the 2023 files: the 9-stage
// VFD files spell "data:" as "ata:", and ranges are {index:(first,last)}.
func TestDayuCorpusTypoAndTuples(t *testing.T) {
	root := corpus.Dir(t, "dayu")
	data, err := ReadFile(filepath.Join(root, "wrf-9stage-1p9f9s/98522_vfd-data-stat-dl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sf, err := ParseStats("98522_vfd-data-stat-dl.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	// First record, trackstats_sparse_…nc: "ata:" then DRAW read_bytes 66073
	// read_cnt 22, as the file says on its lines 10-13.
	e := sf.Entries[0]
	draw := e.IO[MemDRAW]
	if e.Path != "trackstats_sparse_20150506.0000_20150506.0800.nc" || draw == nil || draw.ReadBytes != 66073 || draw.ReadOps != 22 {
		t.Fatalf("first record %q DRAW %+v; want trackstats_sparse DRAW read 66073 B in 22 ops", e.Path, draw)
	}
	if len(draw.ReadRanges) != 22 {
		t.Errorf("DRAW read ranges: %d, want one per op (22)", len(draw.ReadRanges))
	}
	if e.PID != 98522 {
		t.Errorf("pid %d, want 98522 from the task block", e.PID)
	}
}
