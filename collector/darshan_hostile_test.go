package collector

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/logwatch"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// --darshan.max-log-memory reaches the reader: a log of 4 MiB of names is
// too_large under 1 MiB and read under the default; --darshan.state-dir
// gets the sidecar's state file.
func TestDarshanCollectorBudgetAndState(t *testing.T) {
	dir := t.TempDir()
	end := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	if err := os.WriteFile(filepath.Join(dir, "a.darshan"), darshanLog(t, darshantest.Job{JobID: 1, UID: 1000, Exe: "/bin/a", End: end, Bytes: 10}), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: 1000, JobID: 2, StartTime: end.Unix() - 60, EndTime: end.Unix(), NProcs: 1}
	for i := range 4 << 10 {
		w.AddNameID(uint64(i+1), fmt.Sprintf("/scratch/%d/%s", i, strings.Repeat("n", 1000)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "names.darshan"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		budget              int64
		tooLarge, processed float64
	}{{1 << 20, 1, 1}, {darshan.DefaultMemoryBudget, 0, 2}} {
		state := t.TempDir()
		setFlag(t, &darshanMaxLogMemory, func() int64 { return c.budget })
		setFlag(t, &darshanStateDir, state)
		r, sc := darshanTestRegistry(t, dir, end.Add(time.Hour), false)
		syncSidecar(t, sc)
		text := darshanScrape(t, r)
		if got := value(t, text, `darshan_logs_failed_total{reason="too_large"}`); got != c.tooLarge {
			t.Errorf("budget %d: too_large %g, want %g", c.budget, got, c.tooLarge)
		}
		if got := value(t, text, "darshan_logs_processed_total"); got != c.processed {
			t.Errorf("budget %d: processed %g, want %g", c.budget, got, c.processed)
		}
		if _, err := os.Stat(filepath.Join(state, logwatch.StateFileName)); err != nil {
			t.Errorf("no state file: %v", err)
		}
		for _, reason := range []string{"permission", "symlink_owner", "io_error"} {
			if got := value(t, text, `darshan_dirs_unlisted{reason="`+reason+`"}`); got != 0 {
				t.Errorf("dirs unlisted %s: %g", reason, got)
			}
		}
	}
	setFlag(t, &darshanMaxLogMemory, func() int64 { return 0 })
	onlyCollectors(t, "darshan")
	if _, err := NewRegistry(Env{Logger: testLogger(t)}); err == nil || !strings.Contains(err.Error(), "--darshan.max-log-memory") {
		t.Errorf("a budget of 0: %v", err)
	}
}
