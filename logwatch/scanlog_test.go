package logwatch

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/darshantest"
)

// logCapture is a log that tests read: JSON lines, DEBUG and up.
type logCapture struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	read int // bytes already returned by next
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(c, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// record is one line of the log.
type record map[string]any

// next returns the records logged since the last call.
func (c *logCapture) next(t *testing.T) []record {
	t.Helper()
	c.mu.Lock()
	data := bytes.Clone(c.buf.Bytes()[c.read:])
	c.read = c.buf.Len()
	c.mu.Unlock()
	var out []record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// pick returns the records of dir with the level and message.
func pick(recs []record, level, msg, dir string) []record {
	var out []record
	for _, r := range recs {
		if r["level"] == level && r["msg"] == msg && r["dir"] == dir {
			out = append(out, r)
		}
	}
	return out
}

// num returns the number at a path of keys ("waiting", "partial"); -1
// when there is none.
func (r record) num(keys ...string) float64 {
	var v any = map[string]any(r)
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		if v, ok = m[k]; !ok {
			return -1
		}
	}
	if f, ok := v.(float64); ok {
		return f
	}
	return -1
}

// want checks the numbers of a record, by dotted path.
func (r record) want(t *testing.T, fields map[string]float64) {
	t.Helper()
	for path, want := range fields {
		if got := r.num(strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v in %v", path, got, want, r)
		}
	}
}

// oneScanLine returns the only INFO line of dir among recs, and checks
// that the others of dir, if any, are DEBUG: a Sync may follow the first
// scan, which has nothing new to say.
func oneScanLine(t *testing.T, recs []record, dir string) record {
	t.Helper()
	info := pick(recs, "INFO", scanMsg, dir)
	if len(info) != 1 {
		t.Fatalf("%d INFO scan lines for %s in %v", len(info), dir, recs)
	}
	return info[0]
}

func putLog(t *testing.T, path string, j darshantest.Job) {
	t.Helper()
	data, err := j.Log()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data)
}

func setMtime(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func startLogged(t *testing.T, c *logCapture, now time.Time, dirs ...string) (*Sidecar, *clock) {
	t.Helper()
	clk := &clock{t: now}
	s := startSidecar(t, Config{Dirs: dirs, RescanInterval: time.Hour, Retention: 24 * time.Hour,
		NoInotify: true, Now: clk.now, Logger: c.logger()})
	return s, clk
}

// Fresh logs: one INFO line with what was parsed; a rescan that finds
// nothing new is DEBUG; logs leaving the window are counted expired.
func TestScanLogFreshLogs(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	for i := range 3 {
		putLog(t, filepath.Join(root, "2026", "1", "15", "log"+string(rune('a'+i))+".darshan"),
			darshantest.Job{JobID: int64(100 + i), UID: 1000, Exe: "/bin/app", End: now.Add(-time.Hour), Bytes: 4096})
	}
	c := &logCapture{}
	s, clk := startLogged(t, c, now, root)
	syncNow(t, s)
	recs := c.next(t)
	line := oneScanLine(t, recs, root)
	line.want(t, map[string]float64{"parsed": 3, "duplicates": 0, "failed": 0, "too_old": 0, "expired": 0,
		"waiting.queued": 0, "waiting.partial": 0, "waiting.incomplete": 0})
	if _, ok := line["oldest_end"]; ok || line.num("scan") < 1 {
		t.Errorf("line %v: no oldest_end without old logs, a scan number", line)
	}
	if w := pick(recs, "WARN", archiveMsg, root); len(w) != 0 {
		t.Errorf("fresh logs called an archive: %v", w)
	}

	syncNow(t, s)
	recs = c.next(t)
	if info := pick(recs, "INFO", scanMsg, root); len(info) != 0 {
		t.Errorf("a rescan that found nothing logged at INFO: %v", info)
	}
	if debug := pick(recs, "DEBUG", scanMsg, root); len(debug) != 1 || debug[0].num("parsed") != 0 {
		t.Errorf("a rescan that found nothing: %v, want one DEBUG line", debug)
	}

	clk.set(now.Add(24 * time.Hour))
	syncNow(t, s)
	oneScanLine(t, c.next(t), root).want(t, map[string]float64{"parsed": 0, "expired": 3, "too_old": 0})
}

// An archive older than the retention window, next to a live drop
// directory: logs not even opened (modified before the window) and logs
// read that ended before it are counted too old, with the first and last
// end; the archive, and it alone, is called one once.
func TestScanLogArchive(t *testing.T) {
	archive, live := t.TempDir(), t.TempDir()
	now := time.Now().Truncate(time.Second)
	ends := []time.Time{now.Add(-30 * 24 * time.Hour), now.Add(-20 * 24 * time.Hour), now.Add(-10 * 24 * time.Hour)}
	for i, end := range ends {
		path := filepath.Join(archive, "2025", "12", string(rune('1'+i)), "old.darshan")
		putLog(t, path, darshantest.Job{JobID: int64(10 + i), UID: 1, Exe: "/bin/old", End: end, Bytes: 100})
		if i < 2 {
			setMtime(t, path, end) // cp -p: not opened
		} // the last one copied without -p: read, and found too old
	}
	// In the live directory, an old log beside a fresh one: no archive.
	putLog(t, filepath.Join(live, "fresh.darshan"), darshantest.Job{JobID: 20, UID: 1, Exe: "/bin/new", End: now.Add(-time.Minute), Bytes: 100})
	putLog(t, filepath.Join(live, "stale.darshan"), darshantest.Job{JobID: 21, UID: 1, Exe: "/bin/new", End: ends[0], Bytes: 100})
	setMtime(t, filepath.Join(live, "stale.darshan"), ends[0])

	c := &logCapture{}
	s, _ := startLogged(t, c, now, archive, live)
	snap := syncNow(t, s)
	recs := c.next(t)
	line := oneScanLine(t, recs, archive)
	line.want(t, map[string]float64{"parsed": 0, "failed": 0, "too_old": 3})
	if line["oldest_end"] != ends[0].UTC().Format(time.RFC3339) || line["newest_end"] != ends[2].UTC().Format(time.RFC3339) {
		t.Errorf("archive line %v: oldest_end %s, newest_end %s", line, ends[0].UTC().Format(time.RFC3339), ends[2].UTC().Format(time.RFC3339))
	}
	warn := pick(recs, "WARN", archiveMsg, archive)
	if len(warn) != 1 || !strings.Contains(warn[0]["msg"].(string), "--darshan.retention") ||
		warn[0].num("too_old") != 3 || warn[0]["oldest_end"] != line["oldest_end"] || warn[0].num("retention") != float64(24*time.Hour) {
		t.Errorf("archive warning: %v", warn)
	}
	oneScanLine(t, recs, live).want(t, map[string]float64{"parsed": 1, "too_old": 1})
	if w := pick(recs, "WARN", archiveMsg, live); len(w) != 0 {
		t.Errorf("the live directory called an archive: %v", w)
	}
	// Every log too old counts in darshan_logs_expired_total, opened or not.
	if snap.Expired != 4 || snap.Processed != 2 || len(snap.Jobs) != 1 {
		t.Errorf("expired %d, processed %d, jobs %d; want 4, 2, 1", snap.Expired, snap.Processed, len(snap.Jobs))
	}

	// Found once: the rescans say nothing more of them.
	syncNow(t, s)
	recs = c.next(t)
	if len(pick(recs, "INFO", scanMsg, archive))+len(pick(recs, "WARN", archiveMsg, archive)) != 0 {
		t.Errorf("rescan: %v", recs)
	}
	if snap := s.Snapshot(); snap.Expired != 4 {
		t.Errorf("rescan counted old logs again: expired %d", snap.Expired)
	}
}

// Logs under the runtime's temporary name and logs still being written
// wait: INFO once, DEBUG while nothing changes, INFO when one is renamed.
func TestScanLogWaiting(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	j := darshantest.Job{JobID: 7, UID: 1, Exe: "/bin/app", End: now.Add(-time.Minute), Bytes: 100}
	partial := filepath.Join(root, "a_id7-1_1-1-1-1_1.darshan_partial")
	putLog(t, partial, j)
	data, err := darshantest.Job{JobID: 8, UID: 1, Exe: "/bin/app", End: now.Add(-time.Minute), Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "b_id8-1_1-1-1-1_1.darshan"), append(make([]byte, 1328), data[1328:]...)) // header not written yet

	c := &logCapture{}
	s, _ := startLogged(t, c, now, root)
	syncNow(t, s)
	recs := c.next(t)
	oneScanLine(t, recs, root).want(t, map[string]float64{"parsed": 0, "failed": 0, "too_old": 0,
		"waiting.partial": 1, "waiting.incomplete": 1, "waiting.queued": 0})
	if w := pick(recs, "WARN", archiveMsg, root); len(w) != 0 {
		t.Errorf("waiting logs called an archive: %v", w)
	}

	syncNow(t, s)
	recs = c.next(t)
	if info := pick(recs, "INFO", scanMsg, root); len(info) != 0 {
		t.Errorf("nothing changed, yet INFO: %v", info)
	}
	if debug := pick(recs, "DEBUG", scanMsg, root); len(debug) != 1 || debug[0].num("waiting", "incomplete") != 1 {
		t.Errorf("nothing changed: %v, want one DEBUG line", debug)
	}

	if err := os.Rename(partial, strings.TrimSuffix(partial, "_partial")); err != nil {
		t.Fatal(err)
	}
	syncNow(t, s)
	oneScanLine(t, c.next(t), root).want(t, map[string]float64{"parsed": 1, "waiting.partial": 0, "waiting.incomplete": 1})
}

// Damaged logs are counted failed, by reason, beside the one parsed.
func TestScanLogFailures(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	j := darshantest.Job{JobID: 9, UID: 1, Exe: "/bin/app", End: now.Add(-time.Minute), Bytes: 100}
	data, err := j.Log()
	if err != nil {
		t.Fatal(err)
	}
	bad, err := darshantest.CorruptPOSIX(data)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "good.darshan"), data)
	writeFile(t, filepath.Join(root, "corrupt.darshan"), bad)
	writeFile(t, filepath.Join(root, "garbage.darshan"), append([]byte("3.41\x00\x00\x00\x00"), make([]byte, 2000)...))

	c := &logCapture{}
	s, _ := startLogged(t, c, now, root)
	syncNow(t, s)
	oneScanLine(t, c.next(t), root).want(t, map[string]float64{"parsed": 1, "failed": 2,
		"failed_reason.corrupt": 1, "failed_reason.not_darshan": 1, "failed_reason.truncated": -1, "too_old": 0})
}
