package collector

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// One line per scan of a DaYu directory: the runs and files found, the
// files parsed and failed by reason, the runs still without stats; DEBUG
// when nothing changed, INFO again when the tracker writes.
func TestDayuScanLog(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(corpus.Fixtures(t, "dayu"), "yaml2023")
	copyTo := func(run, name string, data []byte) {
		t.Helper()
		if data == nil {
			var err error
			if data, err = os.ReadFile(filepath.Join(src, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(root, run), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, run, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"task_to_file.yaml", "4242_vol-data-stat-dl.yaml", "4242_vfd-data-stat-dl.yaml"} {
		copyTo("run1", name, nil)
	}
	copyTo("run1", "4243_vfd-data-stat-dl.yaml", []byte{}) // a task whose stats are empty
	copyTo("run2", "task_to_file.yaml", nil)               // a run whose tasks have not ended

	log := &logtest.Capture{}
	c := newDayuLogged(t, log.Logger(), 64, root)
	scanLines := func() []logtest.Record { return logtest.Pick(log.Next(t), "INFO", dayuScanMsg, root) }
	scan := func() {
		t.Helper()
		if err := c.watcher.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	scan()
	info := scanLines()
	if len(info) != 1 {
		t.Fatalf("%d INFO scan lines, want 1: %v", len(info), info)
	}
	info[0].Want(t, map[string]float64{"runs": 2, "files": 5, "parsed": 4, "failed": 1,
		"failed_reason.empty": 1, "waiting": 1})

	scan()
	if info := scanLines(); len(info) != 0 {
		t.Errorf("a rescan that found nothing logged at INFO: %v", info)
	}

	copyTo("run2", "4242_vol-data-stat-dl.yaml", nil)
	scan()
	info = scanLines()
	if len(info) != 1 {
		t.Fatalf("%d INFO scan lines after a new stats file, want 1", len(info))
	}
	info[0].Want(t, map[string]float64{"runs": 2, "files": 6, "parsed": 1, "failed": 0, "waiting": 0})
	if _, ok := info[0]["failed_reason"]; ok {
		t.Errorf("failed_reason without failures: %v", info[0])
	}
}
