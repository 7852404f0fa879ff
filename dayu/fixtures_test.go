package dayu

import (
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The fixtures are small stats files written for these tests, one workflow
// per format. Every expected number is summed by hand from the fixture.

func loadFixture(t *testing.T, name string) (*Workflow, []error) {
	t.Helper()
	w, failed, err := LoadDir(filepath.Join(corpus.Fixtures(t, "dayu"), name), Limits{KeepRanges: true})
	if err != nil {
		t.Fatal(err)
	}
	return w, failed
}

func stage(t *testing.T, w *Workflow, name string, pid int64) *Stage {
	t.Helper()
	for _, s := range w.Stages {
		if s.Name == name && s.PID == pid {
			return s
		}
	}
	t.Fatalf("no stage %s/%d among %v", name, pid, stageNames(w))
	return nil
}

// yaml2023: one process, two stages split by a stage map without pids,
// `Task:` at column 0, tuple ranges, the "ata:" typo, an unknown dataset key.
func TestDayuFixtureYAML2023(t *testing.T) {
	w, failed := loadFixture(t, "yaml2023")
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	want := []Edge{
		// file-1: 32768 + 1024 + 96 + 512 + 0 B; 2 + 2 + 1 + 1 + 0 ops.
		{"prepare", "input.h5", Read, 34400, 6, LayerVFD},
		// file-2, under "ata:": 65536 + 2048 + 192 + 1024 + 256 B; 4 + 6 + 2 + 2 + 1 ops.
		{"prepare", "mid.h5", Write, 69056, 15, LayerVFD},
		// file-3: 16384 + 2048 + 96 + 1024 + 256 B; 1 + 6 + 1 + 2 + 1 ops.
		{"analyze", "mid.h5", Read, 19808, 11, LayerVFD},
		// file-4: 4096 + 1024 + 192 + 0 + 128 B; 1 + 3 + 2 + 0 + 1 ops.
		{"analyze", "result.h5", Write, 5440, 7, LayerVFD},
	}
	if got := w.Dataflow(); !reflect.DeepEqual(got, want) {
		t.Fatalf("dataflow:\n got %+v\nwant %+v", got, want)
	}
	prep, an := stage(t, w, "prepare", 4242), stage(t, w, "analyze", 4242)
	if prep.Order != 0 || an.Order != 1 {
		t.Errorf("orders %d, %d", prep.Order, an.Order)
	}
	// Running totals VFD 2, 3 | 5, 6 and VOL 10, 25 | 31, 40.
	if !reflect.DeepEqual(prep.OverheadMS, map[Layer]float64{LayerVFD: 3, LayerVOL: 25}) ||
		!reflect.DeepEqual(an.OverheadMS, map[Layer]float64{LayerVFD: 3, LayerVOL: 15}) {
		t.Errorf("overheads %v, %v", prep.OverheadMS, an.OverheadMS)
	}
	// prepare: VFD open of input.h5 to the VOL close of mid.h5.
	if prep.WallSeconds() != 2.5 || an.WallSeconds() != 1.2 {
		t.Errorf("wall %v s, %v s; want 2.5, 1.2", prep.WallSeconds(), an.WallSeconds())
	}
	if prep.DatasetsTouched() != 2 || an.DatasetsTouched() != 2 || prep.FilesTouched() != 2 {
		t.Errorf("datasets %d, %d files %d", prep.DatasetsTouched(), an.DatasetsTouched(), prep.FilesTouched())
	}
	grid := prep.Files[0].Datasets[0]
	if grid.Name != "grid" || grid.Extra["chunk_cache_hits"] != "3" || !reflect.DeepEqual(grid.Dimensions, []int64{64, 128}) ||
		grid.Layout != "H5D_CONTIGUOUS" || grid.Offset != 2048 || !reflect.DeepEqual(grid.DataPages, []int64{0, 2}) {
		t.Errorf("dataset grid: %+v", grid)
	}
	ranges := prep.Files[0].IO[MemDRAW].ReadRanges
	if !reflect.DeepEqual(ranges, []PageRange{{3, 0, 1}, {5, 1, 2}}) {
		t.Errorf("DRAW read ranges %v", ranges)
	}
}

// yaml2023-early: the first format — "- dset:" under the record at a
// smaller indent, a file summary at indent 2, DRAW under "metadata:", no
// task blocks and a bare Total-Overhead(ms) at the end; the VOL names the
// file bare where the VFD gives its full path.
func TestDayuFixtureYAML2023Early(t *testing.T) {
	w, failed := loadFixture(t, "yaml2023-early")
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	if len(w.Stages) != 1 {
		t.Fatalf("stages %v", stageNames(w))
	}
	s := w.Stages[0]
	if s.Name != "task-5151" || s.PID != 5151 || s.Order != -1 {
		t.Fatalf("stage %s/%d/%d", s.Name, s.PID, s.Order)
	}
	if len(s.Files) != 1 || s.Files[0].Path != "/scratch/run7/raw.nc" || !s.Files[0].HasVOL || !s.Files[0].HasVFD {
		t.Fatalf("files: %+v", s.Files)
	}
	// 8200 + 544 + 96 B, 2 + 2 + 1 ops.
	want := []Edge{{"task-5151", "raw.nc", Read, 8840, 5, LayerVFD}}
	if got := w.Dataflow(); !reflect.DeepEqual(got, want) {
		t.Fatalf("dataflow %+v", got)
	}
	// DRAW counts as data although the file lists it under metadata.
	io := s.IO()
	if io[MemDRAW].ReadBytes != 8200 || io[MemOHDR].ReadBytes+io[MemSUPER].ReadBytes != 640 {
		t.Errorf("io %+v", io)
	}
	if s.DatasetsTouched() != 2 || s.OverheadMS[LayerVOL] != 12 || s.WallSeconds() != 0.9 {
		t.Errorf("datasets %d overhead %v wall %v", s.DatasetsTouched(), s.OverheadMS, s.WallSeconds())
	}
	temp := s.Files[0].Datasets[0]
	if temp.Name != "temperature" || temp.ReadCount != 2 || temp.BytesRead != 16384 || temp.Dimensions[1] != 64 {
		t.Errorf("dataset %+v", temp)
	}
}

// yaml2024: task names, "- Task:" items, datasets as a mapping, [a,b]
// ranges, a not-accessed record, records of a second pid inside one file,
// and one file reached through two mount points.
func TestDayuFixtureYAML2024(t *testing.T) {
	w, failed := loadFixture(t, "yaml2024")
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	want := []Edge{
		// prep reads back metadata: OHDR 512 + BTREE 328 B, 1 + 1 ops.
		{"prep", "samples.h5", Read, 840, 2, LayerVFD},
		// 1048576 + 3840 + 96 + 648 + 120 B; 4 + 3 + 1 + 1 + 1 ops.
		{"prep", "samples.h5", Write, 1053280, 10, LayerVFD},
		// pid 7002: 524288 + 512 + 32 + 328 = 525160 B, 5 ops;
		// pid 7003: 262144 + 32 = 262176 B, 2 ops.
		{"train", "samples.h5", Read, 787336, 7, LayerVFD},
	}
	if got := w.Dataflow(); !reflect.DeepEqual(got, want) {
		t.Fatalf("dataflow:\n got %+v\nwant %+v", got, want)
	}
	prep := stage(t, w, "prep", 7001)
	t2, t3 := stage(t, w, "train", 7002), stage(t, w, "train", 7003)
	if prep.Order != 0 || t2.Order != 1 || t3.Order != 1 {
		t.Errorf("orders %d %d %d", prep.Order, t2.Order, t3.Order)
	}
	if prep.OverheadMS[LayerVFD] != 4 || prep.OverheadMS[LayerVOL] != 9 || t2.OverheadMS[LayerVFD] != 1 || t3.OverheadMS[LayerVFD] != 2 {
		t.Errorf("overheads %v %v %v", prep.OverheadMS, t2.OverheadMS, t3.OverheadMS)
	}
	f := prep.Files[0]
	if len(prep.Files) != 1 || f.Opens != 2 || f.Size != 1053696 || len(f.Datasets) != 2 || f.Objects.DatasetsCreated != 2 {
		t.Errorf("prep file %+v", f)
	}
	if got := f.IO[MemDRAW].WriteRanges; !reflect.DeepEqual(got, []PageRange{{3, 0, 3}, {4, 4, 7}, {5, 8, 11}, {6, 12, 15}}) {
		t.Errorf("write ranges %v", got)
	}
	if prep.WallSeconds() != 2.01 {
		t.Errorf("prep wall %v", prep.WallSeconds())
	}
}

// json: the current format — data keyed by dataset, then memory type; the
// intents as one quoted string; Task-only closing element in the VOL file.
func TestDayuFixtureJSON(t *testing.T) {
	w, failed := loadFixture(t, "json")
	if len(failed) > 0 {
		t.Fatal(failed)
	}
	want := []Edge{
		// pixels DRAW 32 B in 2 ops.
		{"saveh5", "out.h5", Read, 32, 2, LayerVFD},
		// file DRAW 1024 + pixels DRAW 65536 + file SUPER 96 + pixels OHDR 3176
		// + pixels BTREE 448 B; 1 + 2 + 1 + 2 + 1 ops.
		{"saveh5", "out.h5", Write, 70280, 7, LayerVFD},
	}
	if got := w.Dataflow(); !reflect.DeepEqual(got, want) {
		t.Fatalf("dataflow:\n got %+v\nwant %+v", got, want)
	}
	s := stage(t, w, "saveh5", 8001)
	f := s.Files[0]
	if !reflect.DeepEqual(f.Intents, []string{"H5F_ACC_CREAT", "H5F_ACC_RDWR", "H5F_ACC_TRUNC"}) {
		t.Errorf("intents %q", f.Intents)
	}
	var pixels *Dataset
	for _, d := range f.Datasets {
		if d.Name == "pixels" {
			pixels = d
		}
	}
	if pixels == nil || pixels.IO[MemDRAW].WriteBytes != 65536 || pixels.IO[MemOHDR].WriteBytes != 3176 || pixels.Offset != 2048 || pixels.WriteCount != 2 {
		t.Fatalf("pixels %+v", pixels)
	}
	if got := pixels.IO[MemDRAW].ReadRanges; !reflect.DeepEqual(got, []PageRange{{2, 0, 0}, {10, 0, 0}}) {
		t.Errorf("JSON ranges come back in I/O order: %v", got)
	}
	if s.Order != 0 || s.OverheadMS[LayerVFD] != 5 || s.OverheadMS[LayerVOL] != 7 || s.DatasetsTouched() != 2 {
		t.Errorf("order %d overhead %v datasets %d", s.Order, s.OverheadMS, s.DatasetsTouched())
	}
}

// broken: half-written and malformed files fail with their reason and the
// good file of the workflow still shows.
func TestDayuFixtureBroken(t *testing.T) {
	w, failed := loadFixture(t, "broken")
	got := map[string]Reason{}
	for _, err := range failed {
		pe := err.(*ParseError)
		got[pe.File] = pe.Reason
	}
	want := map[string]Reason{
		"9002_vfd-data-stat.yaml": ReasonTruncated, // cut inside a range map
		"9003-vol_data_stat.json": ReasonTruncated, // JSON cut mid-value
		"9004_vfd-data-stat.yaml": ReasonSyntax,    // a line that is not key: value
		"9005_vfd-data-stat.yaml": ReasonEmpty,
		"9006_vfd-data-stat.yaml": ReasonTruncated, // a whole record, but no task block after it
		"notes-stat.yaml":         ReasonNotStats,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("failures %v\nwant %v", got, want)
	}
	// 4096 + 512 + 96 B, 3 ops.
	wantEdges := []Edge{{"reader", "in.h5", Read, 4704, 3, LayerVFD}}
	if edges := w.Dataflow(); !reflect.DeepEqual(edges, wantEdges) {
		t.Errorf("the good file's dataflow %+v", edges)
	}
}

// TestFixturesGolden keeps a golden summary of every fixture file and
// workflow, so a change of interpretation shows in review.
func TestDayuFixturesGolden(t *testing.T) {
	root := corpus.Fixtures(t, "dayu")
	for _, dir := range []string{"yaml2023", "yaml2023-early", "yaml2024", "json"} {
		w, failed, err := LoadDir(filepath.Join(root, dir), Limits{KeepRanges: true})
		if err != nil || len(failed) > 0 {
			t.Fatalf("%s: %v %v", dir, err, failed)
		}
		checkGolden(t, filepath.Join("fixtures", dir, "workflow.summary"), summarizeWorkflow(w))
		names, _ := filepath.Glob(filepath.Join(root, dir, "*"))
		sort.Strings(names)
		for _, p := range names {
			name := filepath.Base(p)
			if KindOf(name) != KindStats {
				continue
			}
			data, err := ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sf, err := ParseStats(name, data)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("fixtures", dir, name+".summary"), summarizeStats(sf))
		}
	}
}
