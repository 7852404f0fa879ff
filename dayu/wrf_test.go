package dayu

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// TestWRFTwoStageDataflow is the seed document's own workflow: one process
// (pid 210263) ran run_idfeature, then run_tracksingle.
//
// Stage 1 reads the two wrfout files and nothing else; stage 2 touches exactly
// cloudid_20150506_000000.nc, cloudid_20150506_010000.nc and
// track_20150506_010000.nc, reading the two cloudid files and writing the
// track file. The cloudid files are also written, by stage 1: the VFD file
// shows them opened with H5F_ACC_TRUNC|H5F_ACC_CREAT at 1686082505 and
// 1686082530, between and after the wrfout reads and before any read of
// them, and task_to_file.yaml lists them as run_idfeature's output and
// run_tracksingle's input. SOURCES.md reads the run the same way.
//
// Every byte count below is summed by hand from 210263_vfd-data-stat-dl.yaml:
// read_bytes (or write_bytes) of DRAW + OHDR + SUPER + BTREE + LHEAP of each
// file record, and the read_cnt (write_cnt) of the same five blocks for the
// operations. The file's own file_read_cnt/file_write_cnt agree with every
// operation count.
func TestDayuWRFTwoStageDataflow(t *testing.T) {
	dir := corpus.Dir(t, "dayu", "wrf-2stage-210263")
	w, failed, err := LoadDir(dir, Limits{KeepRanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) > 0 {
		t.Fatalf("files failed: %v", failed)
	}
	const (
		wrf00   = "wrfout_rainrate_tb_zh_mh_2015-05-06_00:00:00.nc"
		wrf01   = "wrfout_rainrate_tb_zh_mh_2015-05-06_01:00:00.nc"
		cloud00 = "cloudid_20150506_000000.nc"
		cloud01 = "cloudid_20150506_010000.nc"
		track   = "track_20150506_010000.nc"
		stage1  = "run_idfeature"
		stage2  = "run_tracksingle"
	)
	want := []Edge{
		// file-1 (lines 50-95): 17647648 + 9833 + 56 + 23588 + 1536 = 17682661 B;
		// 17 + 38 + 3 + 12 + 2 = 72 ops.
		{stage1, wrf00, Read, 17682661, 72, LayerVFD},
		// file-3 (lines 148-193): 17290303 + 9833 + 56 + 23588 + 1536 = 17325316 B; 72 ops.
		{stage1, wrf01, Read, 17325316, 72, LayerVFD},
		// file-2 (lines 1-46): 7746756 + 142657 + 1344 + 92332 + 18178 = 8001267 B;
		// 52 + 474 + 28 + 122 + 53 = 729 ops.
		{stage1, cloud00, Write, 8001267, 729, LayerVFD},
		// file-4 (lines 99-144): 7578743 + 142657 + 1344 + 92332 + 18178 = 7833254 B; 729 ops.
		{stage1, cloud01, Write, 7833254, 729, LayerVFD},
		// file-5 (lines 197-242): 58978 + 21373 + 56 + 67032 + 4096 = 151535 B, 129 ops;
		// file-8 (lines 344-389): 4112 + 21373 + 56 + 67032 + 4096 = 96669 B, 124 ops;
		// together 248204 B in 253 ops.
		{stage2, cloud00, Read, 248204, 253, LayerVFD},
		// file-6 (lines 246-291): 59555 + 21373 + 56 + 67032 + 4096 = 152112 B, 129 ops;
		// file-7 (lines 393-438): 96669 B, 124 ops (as file-8); together 248781 B, 253 ops.
		{stage2, cloud01, Read, 248781, 253, LayerVFD},
		// file-9 (lines 295-340): 57119 + 48442 + 576 + 28732 + 14573 = 149442 B;
		// 20 + 140 + 12 + 43 + 26 = 241 ops.
		{stage2, track, Write, 149442, 241, LayerVFD},
	}
	if got := w.Dataflow(); !reflect.DeepEqual(got, want) {
		t.Fatalf("dataflow:\n got %+v\nwant %+v", got, want)
	}

	if len(w.Stages) != 2 {
		t.Fatalf("%d stages, want 2", len(w.Stages))
	}
	s1, s2 := w.Stages[0], w.Stages[1]
	if s1.Name != stage1 || s1.Order != 0 || s1.PID != 210263 || s2.Name != stage2 || s2.Order != 1 || s2.PID != 210263 {
		t.Fatalf("stages %s/%d/%d, %s/%d/%d", s1.Name, s1.Order, s1.PID, s2.Name, s2.Order, s2.PID)
	}

	// Stage totals, from the edges above: stage 1 reads
	// 17682661 + 17325316 = 35007977 B, of which DRAW 17647648 + 17290303 =
	// 34937951 B, and writes 8001267 + 7833254 = 15834521 B.
	io1 := s1.IO()
	if rb, ro, wb, wo := io1.Totals(); rb != 35007977 || ro != 144 || wb != 15834521 || wo != 1458 {
		t.Errorf("stage 1 totals r%d/%d w%d/%d, want r35007977/144 w15834521/1458", rb, ro, wb, wo)
	}
	if got := io1[MemDRAW].ReadBytes; got != 34937951 {
		t.Errorf("stage 1 DRAW read %d, want 34937951", got)
	}
	// Stage 2 reads 248204 + 248781 = 496985 B; its metadata reads are
	// OHDR 4 × 21373 + SUPER 4 × 56 + BTREE 4 × 67032 + LHEAP 4 × 4096 = 370228 B.
	io2 := s2.IO()
	if rb, _, wb, _ := io2.Totals(); rb != 496985 || wb != 149442 {
		t.Errorf("stage 2 totals r%d w%d, want r496985 w149442", rb, wb)
	}
	var meta int64
	for typ, m := range io2 {
		if !typ.IsData() {
			meta += m.ReadBytes
		}
	}
	if meta != 370228 {
		t.Errorf("stage 2 metadata reads %d, want 370228", meta)
	}

	// Wall time: stage 1 runs from the VFD open of file-1 (1686082481049812)
	// to the VOL close of file-3 (1686082532872441); stage 2 from the VFD
	// open of file-5 (1686082532897942) to the VOL close of file-7
	// (1686082537997426).
	if s1.Start != 1686082481049812 || s1.End != 1686082532872441 {
		t.Errorf("stage 1 spans %d..%d", s1.Start, s1.End)
	}
	if s2.Start != 1686082532897942 || s2.End != 1686082537997426 {
		t.Errorf("stage 2 spans %d..%d", s2.Start, s2.End)
	}

	// The tracker's own time: the VOL total reaches 3185 ms after the last
	// record of stage 1 (file-3's block) and 3247 ms at the end, so stage 2
	// spent 62 ms; the VFD total is 4 ms from the first block on.
	if s1.OverheadMS[LayerVOL] != 3185 || s2.OverheadMS[LayerVOL] != 62 {
		t.Errorf("VOL overhead %v / %v ms, want 3185 / 62", s1.OverheadMS[LayerVOL], s2.OverheadMS[LayerVOL])
	}
	if s1.OverheadMS[LayerVFD] != 4 || s2.OverheadMS[LayerVFD] != 0 {
		t.Errorf("VFD overhead %v / %v ms, want 4 / 0", s1.OverheadMS[LayerVFD], s2.OverheadMS[LayerVFD])
	}
}

// TestWRFStageMapDrivesTheSplit shows the split comes from the stage map:
// without it the process is one stage that reads and writes everything.
func TestDayuWRFStageMapDrivesTheSplit(t *testing.T) {
	dir := corpus.Dir(t, "dayu", "wrf-2stage-210263")
	var files []*StatsFile
	for _, name := range []string{"210263_vol-data-stat-dl.yaml", "210263_vfd-data-stat-dl.yaml"} {
		data, err := ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sf, err := ParseStats(name, data)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, sf)
	}
	w := Assemble("wrf", nil, files)
	if len(w.Stages) != 1 || w.Stages[0].Name != "task-210263" {
		t.Fatalf("without a stage map: stages %v", stageNames(w))
	}
	if n := len(w.Dataflow()); n != 7 {
		t.Errorf("without a stage map: %d edges, want the same 7 file directions", n)
	}
}

func stageNames(w *Workflow) []string {
	var out []string
	for _, s := range w.Stages {
		out = append(out, s.Name)
	}
	return out
}
