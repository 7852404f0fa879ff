package dropdir

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// reports collects what OnReport is given.
type reports struct {
	mu  sync.Mutex
	all []Report
}

func (r *reports) add(_ *Watcher, rep Report) {
	r.mu.Lock()
	r.all = append(r.all, rep)
	r.mu.Unlock()
}

// since returns the reports after the first n.
func (r *reports) since(n int) []Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Report(nil), r.all[n:]...)
}

func (r *reports) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.all)
}

// oldIn sums the old files reported for dir, and returns the first and
// last of their modification times.
func oldIn(reps []Report, dir string) (n int, oldest, newest time.Time) {
	for _, r := range reps {
		for _, d := range r.Dirs {
			if d.Dir != dir || d.Old == 0 {
				continue
			}
			if n == 0 || d.OldestOld.Before(oldest) {
				oldest = d.OldestOld
			}
			if n == 0 || d.NewestOld.After(newest) {
				newest = d.NewestOld
			}
			n += d.Old
		}
	}
	return n, oldest, newest
}

func setTimes(t *testing.T, path string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// Files modified before the retention window are reported once, with the
// first and last of their times, however often their directory is listed
// again; a file copied in later with an old time is a new one.
func TestReportOldFilesOnce(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	day := filepath.Join(root, "2025", "1", "1")
	a, b, flat := filepath.Join(day, "a.log"), filepath.Join(day, "b.log"), filepath.Join(root, "flat.log")
	write(t, a, "ok")
	write(t, b, "ok")
	write(t, flat, "ok")
	write(t, filepath.Join(root, "fresh.log"), "ok")
	setTimes(t, a, now.Add(-72*time.Hour))
	setTimes(t, b, now.Add(-50*time.Hour))
	setTimes(t, flat, now.Add(-48*time.Hour))
	setTimes(t, day, now.Add(-48*time.Hour))
	reps := &reports{}
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, Retention: 24 * time.Hour, OnReport: reps.add}, h)
	st := sync1(t, w)
	n, oldest, newest := oldIn(reps.since(0), root)
	if n != 3 || !oldest.Equal(now.Add(-72*time.Hour)) || !newest.Equal(now.Add(-48*time.Hour)) {
		t.Fatalf("old files reported: %d, %v to %v; want 3, from 72 h to 48 h ago", n, oldest, newest)
	}
	if st.Old != 3 || len(h.reads) != 1 || st.Files != 1 {
		t.Fatalf("stats %+v, reads %v: 3 old, 1 read", st, h.reads)
	}

	// The drop directory's own files are listed at every scan; a day
	// directory is listed again when something lands in it (a long job's
	// log, in the directory of the day it started).
	seen := reps.count()
	sync1(t, w)
	write(t, filepath.Join(day, "late.log"), "ok")
	sync1(t, w)
	if n, _, _ := oldIn(reps.since(seen), root); n != 0 || w.Stats().Old != 3 {
		t.Errorf("old files counted again: %d reported, %d in all", n, w.Stats().Old)
	}
	if h.count(filepath.Join(day, "late.log")) != 1 {
		t.Errorf("the new log was not read: %v", h.reads)
	}

	if runtime.GOOS != "linux" {
		return // no inode change times: only a new directory's old files count
	}
	// cp -p of an old log into a directory already listed.
	seen = reps.count()
	listed := time.Now()
	copied := filepath.Join(day, "copied.log")
	write(t, copied, "ok")
	for !ctime(t, copied).After(listed) {
		// A coarse file system clock, behind the wall clock by a tick:
		// the copy must be seen to arrive after the listing.
		time.Sleep(time.Millisecond)
		os.Chmod(copied, 0o640)
	}
	setTimes(t, copied, now.Add(-96*time.Hour))
	sync1(t, w)
	sync1(t, w)
	if n, oldest, _ := oldIn(reps.since(seen), root); n != 1 || !oldest.Equal(now.Add(-96*time.Hour)) || w.Stats().Old != 4 {
		t.Errorf("a copied old log: %d reported (from %v), %d in all; want 1, 4", n, oldest, w.Stats().Old)
	}
}

func ctime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := ctimeOf(fi)
	return c
}

// A report gives, per drop directory in the order given, the files known,
// partial and still being written, and which directories are missing.
func TestReportState(t *testing.T) {
	one, two := t.TempDir(), filepath.Join(t.TempDir(), "absent")
	write(t, filepath.Join(one, "a.log"), "ok")
	write(t, filepath.Join(one, "run", "b.log"), "wait")
	write(t, filepath.Join(one, "c.log.part"), "being written")
	reps := &reports{}
	w := start(t, Config{Dirs: []string{one, two}, NoInotify: true, OnReport: reps.add,
		Partial: func(name string) bool { return strings.HasSuffix(name, ".log.part") }}, newRecorder())
	sync1(t, w)
	all := reps.since(0)
	last := all[len(all)-1]
	if last.Scan != w.Stats().Scans || len(last.Dirs) != 2 {
		t.Fatalf("report %+v after %d scans", last, w.Stats().Scans)
	}
	d := last.Dirs[0]
	if d.Dir != one || d.Missing || d.Files != 2 || d.Incomplete != 1 || d.Partial != 1 || d.Queued != 0 || d.Old != 0 {
		t.Errorf("first directory: %+v", d)
	}
	if d := last.Dirs[1]; d.Dir != two || !d.Missing || d.Files != 0 {
		t.Errorf("missing directory: %+v", d)
	}
}

// A read that hangs (a hung file server) holds the report back one rescan
// interval at most: it comes, with the file counted queued.
func TestReportDespiteAHungRead(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.log"), "ok")
	h := newRecorder()
	h.block = make(chan struct{})
	reps := &reports{}
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, Workers: 1, RescanInterval: 20 * time.Millisecond, OnReport: reps.add}, h)
	defer close(h.block)
	waitUntil(t, "a report while the read hangs", func() bool {
		for _, r := range reps.since(0) {
			if r.Dirs[0].Queued == 1 {
				return true
			}
		}
		return false
	})
	if w.Stats().Queued != 1 {
		t.Errorf("stats %+v", w.Stats())
	}
}
