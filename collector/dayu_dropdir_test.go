package collector

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// What the dayu collector takes from the drop-directory watcher: a bound on
// all the files kept together, the crash memory of the files being read,
// and every workflow directory exported even when two share a label.

// copyDayuRun copies fixtures/dayu/json into dir/name and returns the
// total size of its files.
func copyDayuRun(t *testing.T, dir, name string) int64 {
	t.Helper()
	src := filepath.Join(corpus.Fixtures(t, "dayu"), "json")
	run := filepath.Join(dir, name)
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		total += int64(len(data))
	}
	return total
}

// Files kept past --dayu.max-total-size are refused before they are read
// (total_size, logged with the bound), the bytes kept never pass it, and a
// refused file is read once there is room and it changes.
func TestDayuTotalSizeBound(t *testing.T) {
	root := t.TempDir()
	one := copyDayuRun(t, root, "run1")
	copyDayuRun(t, root, "run2")
	setFlag(t, &dayuMaxFileSize, 4096)
	setFlag(t, &dayuMaxTotalSize, one+one/2) // one run and half of the other
	log := &logtest.Capture{}
	c := newDayuLogged(t, log.Logger(), 64, root)
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	refused, ok := dayuSample(t, text, `dayu_files_failed_total{reason="total_size"}`)
	if !ok || refused < 1 {
		t.Fatalf("no file refused by the total: %v", refused)
	}
	kept, _ := dayuSample(t, text, "dayu_files_kept_bytes")
	if kept <= 0 || kept > float64(one+one/2) {
		t.Errorf("dayu_files_kept_bytes %v, want within (0, %d]", kept, one+one/2)
	}
	lines := 0
	for _, r := range log.Next(t) {
		if r["msg"] == "skipping DaYu tracker file" && r["reason"] == "total_size" {
			lines++
			if r.Num("max_total_size") != float64(one+one/2) {
				t.Errorf("the line does not give the bound: %v", r)
			}
		}
	}
	if lines != int(refused) {
		t.Errorf("%d lines for %v files refused", lines, refused)
	}

	// run1 goes away: its room is free; run2's refused files are read when
	// they change (each version is handed over once).
	if err := os.RemoveAll(filepath.Join(root, "run1")); err != nil {
		t.Fatal(err)
	}
	if _, err := dayuScrape(t, c); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	entries, _ := os.ReadDir(filepath.Join(root, "run2"))
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(root, "run2", e.Name()), later, later); err != nil {
			t.Fatal(err)
		}
	}
	text, err = dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	dayuWant(t, text, `dayu_workflow_tracker_files{workflow="run2"}`, float64(len(entries)))
	dayuWant(t, text, "dayu_files_kept_bytes", float64(one))
	dayuWant(t, text, `dayu_files_failed_total{reason="total_size"}`, refused)
}

// Two workflow directories whose names are one label once cleaned are
// both exported, the second with a suffix, and said once.
func TestDayuWorkflowLabelClash(t *testing.T) {
	root := t.TempDir()
	copyDayuRun(t, root, "run")
	copyDayuRun(t, root, "run\x1b")
	log := &logtest.Capture{}
	c := newDayuLogged(t, log.Logger(), 64, root)
	for range 2 {
		text, err := dayuScrape(t, c)
		if err != nil {
			t.Fatal(err)
		}
		dayuWant(t, text, `dayu_workflow_tracker_files{workflow="run"}`, 4)
		dayuWant(t, text, `dayu_workflow_tracker_files{workflow="run~2"}`, 4)
	}
	n := 0
	for _, r := range log.Next(t) {
		if strings.HasPrefix(r["msg"].(string), "two workflow directories with one name") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the clash said %d times, want once", n)
	}
}

// A file being read when the exporter died is skipped after the restart,
// counted crashed and said once; the run's other files are read. The crash
// is the state file as the watcher wrote it while the file was read, put
// back before a new collector starts on the same directories.
func TestDayuCrashedFileSkipped(t *testing.T) {
	root := t.TempDir()
	copyDayuRun(t, root, "run1")
	// A stats file of some 20 MB (a long page-range map): read for long
	// enough that the state file can be seen holding it.
	var b bytes.Buffer
	b.WriteString(`[{"file-1": {"file_name": "/x/big.h5", "task_name": "big-1", "open_time": 1720000000000000, "close_time": 1720000003000000, "file_read_cnt": 1, "file_write_cnt": 1, "io_bytes": 1, "file_size": 1, "data":[{"file": {"H5FD_MEM_DRAW": {"read_bytes": 0, "read_cnt": 0, "read_ranges": {}, "write_bytes": 1, "write_cnt": 1, "write_ranges": {`)
	for i := 0; b.Len() < 20<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"`)
		b.WriteString(strings.Repeat("7", 6))
		b.WriteString(`":[0,0]`)
	}
	b.WriteString(`}}}}]}, "Task": {"task_name": "big-1", "task_id": 1}}]`)
	big := filepath.Join(root, "run1", "9999-vfd_data_stat.json")
	if err := os.WriteFile(big, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	setFlag(t, &dayuStateDir, state)
	setFlag(t, &dayuMaxFileSize, 64<<20)
	stateFile := filepath.Join(state, dayuStateFileName)

	// The first life: watch the state file while the big file is read.
	seen := make(chan []byte, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if data, err := os.ReadFile(stateFile); err == nil && bytes.Contains(data, []byte("9999-vfd_data_stat.json")) {
				seen <- data
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	first := newDayuLogged(t, slog.New(slog.DiscardHandler), 64, root)
	if _, err := dayuScrape(t, first); err != nil {
		t.Fatal(err)
	}
	close(stop)
	var crash []byte
	select {
	case crash = <-seen:
	case <-time.After(time.Second):
		t.Skip("the state file was never seen holding the big file while it was read (too fast here)")
	}
	first.Close()
	if err := os.WriteFile(stateFile, crash, 0o600); err != nil {
		t.Fatal(err)
	}

	// The second life: the big file is skipped, the rest is read.
	log := &logtest.Capture{}
	second := newDayuLogged(t, log.Logger(), 64, root)
	for range 2 {
		text, err := dayuScrape(t, second)
		if err != nil {
			t.Fatal(err)
		}
		dayuWant(t, text, `dayu_files_failed_total{reason="crashed"}`, 1)
		dayuWant(t, text, `dayu_workflow_tracker_files{workflow="run1"}`, 4)
	}
	n := 0
	for _, r := range log.Next(t) {
		if r["msg"] == "skipping DaYu tracker file" {
			n++
			if r["reason"] != "crashed" || r["file"] != big {
				t.Errorf("unexpected line %v", r)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d lines about the crashed file, want 1", n)
	}
}
