package logwatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// oneScanLine returns the only INFO line of dir among recs, and checks
// that the others of dir, if any, are DEBUG: a Sync may follow the first
// scan, which has nothing new to say.
func oneScanLine(t *testing.T, recs []logtest.Record, dir string) logtest.Record {
	t.Helper()
	info := logtest.Pick(recs, "INFO", scanMsg, dir)
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

func startLogged(t *testing.T, c *logtest.Capture, now time.Time, dirs ...string) (*Sidecar, *clock) {
	t.Helper()
	clk := &clock{t: now}
	s := startSidecar(t, Config{Dirs: dirs, RescanInterval: time.Hour, Retention: 24 * time.Hour,
		NoInotify: true, Now: clk.now, Logger: c.Logger()})
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
	c := &logtest.Capture{}
	s, clk := startLogged(t, c, now, root)
	syncNow(t, s)
	recs := c.Next(t)
	line := oneScanLine(t, recs, root)
	line.Want(t, map[string]float64{"parsed": 3, "duplicates": 0, "failed": 0, "too_old": 0, "expired": 0,
		"waiting.queued": 0, "waiting.partial": 0, "waiting.incomplete": 0})
	if _, ok := line["oldest_end"]; ok || line.Num("scan") < 1 {
		t.Errorf("line %v: no oldest_end without old logs, a scan number", line)
	}
	if w := logtest.Pick(recs, "WARN", archiveMsg, root); len(w) != 0 {
		t.Errorf("fresh logs called an archive: %v", w)
	}

	syncNow(t, s)
	recs = c.Next(t)
	if info := logtest.Pick(recs, "INFO", scanMsg, root); len(info) != 0 {
		t.Errorf("a rescan that found nothing logged at INFO: %v", info)
	}
	if debug := logtest.Pick(recs, "DEBUG", scanMsg, root); len(debug) != 1 || debug[0].Num("parsed") != 0 {
		t.Errorf("a rescan that found nothing: %v, want one DEBUG line", debug)
	}

	clk.set(now.Add(24 * time.Hour))
	syncNow(t, s)
	oneScanLine(t, c.Next(t), root).Want(t, map[string]float64{"parsed": 0, "expired": 3, "too_old": 0})
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

	c := &logtest.Capture{}
	s, _ := startLogged(t, c, now, archive, live)
	snap := syncNow(t, s)
	recs := c.Next(t)
	line := oneScanLine(t, recs, archive)
	line.Want(t, map[string]float64{"parsed": 0, "failed": 0, "too_old": 3})
	if line["oldest_end"] != ends[0].UTC().Format(time.RFC3339) || line["newest_end"] != ends[2].UTC().Format(time.RFC3339) {
		t.Errorf("archive line %v: oldest_end %s, newest_end %s", line, ends[0].UTC().Format(time.RFC3339), ends[2].UTC().Format(time.RFC3339))
	}
	warn := logtest.Pick(recs, "WARN", archiveMsg, archive)
	if len(warn) != 1 || !strings.Contains(warn[0]["msg"].(string), "--darshan.retention") ||
		warn[0].Num("too_old") != 3 || warn[0]["oldest_end"] != line["oldest_end"] || warn[0].Num("retention") != float64(24*time.Hour) {
		t.Errorf("archive warning: %v", warn)
	}
	oneScanLine(t, recs, live).Want(t, map[string]float64{"parsed": 1, "too_old": 1})
	if w := logtest.Pick(recs, "WARN", archiveMsg, live); len(w) != 0 {
		t.Errorf("the live directory called an archive: %v", w)
	}
	// Every log too old counts in darshan_logs_expired_total, opened or not.
	if snap.Expired != 4 || snap.Processed != 2 || len(snap.Jobs) != 1 {
		t.Errorf("expired %d, processed %d, jobs %d; want 4, 2, 1", snap.Expired, snap.Processed, len(snap.Jobs))
	}

	// Found once: the rescans say nothing more of them.
	syncNow(t, s)
	recs = c.Next(t)
	if len(logtest.Pick(recs, "INFO", scanMsg, archive))+len(logtest.Pick(recs, "WARN", archiveMsg, archive)) != 0 {
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

	c := &logtest.Capture{}
	s, _ := startLogged(t, c, now, root)
	syncNow(t, s)
	recs := c.Next(t)
	oneScanLine(t, recs, root).Want(t, map[string]float64{"parsed": 0, "failed": 0, "too_old": 0,
		"waiting.partial": 1, "waiting.incomplete": 1, "waiting.queued": 0})
	if w := logtest.Pick(recs, "WARN", archiveMsg, root); len(w) != 0 {
		t.Errorf("waiting logs called an archive: %v", w)
	}

	syncNow(t, s)
	recs = c.Next(t)
	if info := logtest.Pick(recs, "INFO", scanMsg, root); len(info) != 0 {
		t.Errorf("nothing changed, yet INFO: %v", info)
	}
	if debug := logtest.Pick(recs, "DEBUG", scanMsg, root); len(debug) != 1 || debug[0].Num("waiting", "incomplete") != 1 {
		t.Errorf("nothing changed: %v, want one DEBUG line", debug)
	}

	if err := os.Rename(partial, strings.TrimSuffix(partial, "_partial")); err != nil {
		t.Fatal(err)
	}
	syncNow(t, s)
	oneScanLine(t, c.Next(t), root).Want(t, map[string]float64{"parsed": 1, "waiting.partial": 0, "waiting.incomplete": 1})
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

	c := &logtest.Capture{}
	s, _ := startLogged(t, c, now, root)
	syncNow(t, s)
	oneScanLine(t, c.Next(t), root).Want(t, map[string]float64{"parsed": 1, "failed": 2,
		"failed_reason.corrupt": 1, "failed_reason.not_darshan": 1, "failed_reason.truncated": -1, "too_old": 0})
}
