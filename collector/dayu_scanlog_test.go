package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/corpus"
)

// jsonLog is a log that tests read: JSON lines, DEBUG and up.
type jsonLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	read int
}

func (l *jsonLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *jsonLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// scanLines returns the scan lines of dir at level logged since the last
// call.
func (l *jsonLog) scanLines(t *testing.T, level, dir string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	data := bytes.Clone(l.buf.Bytes()[l.read:])
	l.read = l.buf.Len()
	l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if r["msg"] == dayuScanMsg && r["level"] == level && r["dir"] == dir {
			out = append(out, r)
		}
	}
	return out
}

// wantFields checks the numbers of a line; a group's are "group.key".
func wantFields(t *testing.T, line map[string]any, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		got, ok := line[k]
		if g, key, grouped := cutDot(k); grouped {
			got, ok = nil, false
			if m, isMap := line[g].(map[string]any); isMap {
				got, ok = m[key]
			}
		}
		if !ok || got != v {
			t.Errorf("%s = %v, want %v in %v", k, got, v, line)
		}
	}
}

func cutDot(k string) (string, string, bool) {
	for i := range k {
		if k[i] == '.' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

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

	log := &jsonLog{}
	c := newDayuLogged(t, log.logger(), 64, root)
	scan := func() {
		t.Helper()
		if err := c.watcher.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	scan()
	info := log.scanLines(t, "INFO", root)
	if len(info) != 1 {
		t.Fatalf("%d INFO scan lines, want 1: %v", len(info), info)
	}
	wantFields(t, info[0], map[string]float64{"runs": 2, "files": 5, "parsed": 4, "failed": 1,
		"failed_reason.empty": 1, "waiting": 1})

	scan()
	if info := log.scanLines(t, "INFO", root); len(info) != 0 {
		t.Errorf("a rescan that found nothing logged at INFO: %v", info)
	}

	copyTo("run2", "4242_vol-data-stat-dl.yaml", nil)
	scan()
	info = log.scanLines(t, "INFO", root)
	if len(info) != 1 {
		t.Fatalf("%d INFO scan lines after a new stats file, want 1", len(info))
	}
	wantFields(t, info[0], map[string]float64{"runs": 2, "files": 6, "parsed": 1, "failed": 0, "waiting": 0})
	if _, ok := info[0]["failed_reason"]; ok {
		t.Errorf("failed_reason without failures: %v", info[0])
	}
}
