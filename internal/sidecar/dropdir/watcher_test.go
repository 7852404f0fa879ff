package dropdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// recorder is a Handler that writes down what it is given. A file whose
// content starts with "wait" is Waiting, with "bad" Failed.
type recorder struct {
	mu    sync.Mutex
	reads map[string]int
	gone  []string
	block chan struct{} // when set, Read waits for it
}

func newRecorder() *recorder { return &recorder{reads: map[string]int{}} }

func (r *recorder) Read(path string) (os.FileInfo, Status) {
	if r.block != nil {
		<-r.block
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, Done
	}
	data, _ := os.ReadFile(path)
	r.mu.Lock()
	r.reads[path]++
	r.mu.Unlock()
	switch {
	case strings.HasPrefix(string(data), "wait"):
		return fi, Waiting
	case strings.HasPrefix(string(data), "bad"):
		return fi, Failed
	case strings.HasPrefix(string(data), "panic"):
		panic("a reader bug")
	}
	return fi, Done
}

func (r *recorder) Gone(path string) {
	r.mu.Lock()
	r.gone = append(r.gone, path)
	r.mu.Unlock()
}

func (r *recorder) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads[path]
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, cfg Config, h Handler) *Watcher {
	t.Helper()
	if cfg.RescanInterval == 0 {
		cfg.RescanInterval = time.Hour
	}
	if cfg.Wanted == nil {
		cfg.Wanted = func(name string) bool { return strings.HasSuffix(name, ".log") }
	}
	w, err := Start(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func sync1(t *testing.T, w *Watcher) Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return w.Stats()
}

// Each version of a wanted file is read once; files still being written
// are read again at every scan; a vanished file is Gone; partial names
// wait and are never read.
func TestFileLifecycle(t *testing.T) {
	root := t.TempDir()
	h := newRecorder()
	a, b, c := filepath.Join(root, "a.log"), filepath.Join(root, "x", "b.log"), filepath.Join(root, "c.log")
	write(t, a, "ok")
	write(t, b, "wait")
	write(t, filepath.Join(root, "note.txt"), "not wanted")
	write(t, filepath.Join(root, "d.log.part"), "being written")
	// Started once the files are whole: a scan meeting a file half
	// written reads it again, rightly, once it changed.
	w := start(t, Config{Dirs: []string{root}, NoInotify: true,
		Partial: func(name string) bool { return strings.HasSuffix(name, ".log.part") }}, h)
	st := sync1(t, w)
	// b, still being written, was read by the first scan and again by
	// Sync's, or only by Sync's.
	if h.count(a) != 1 || h.count(b) < 1 || st.Incomplete != 1 || st.Partial != 1 || st.Queued != 0 {
		t.Fatalf("first scan: a %d, b %d, stats %+v", h.count(a), h.count(b), st)
	}
	readsB := h.count(b)
	st = sync1(t, w)
	if h.count(a) != 1 || h.count(b) != readsB+1 {
		t.Errorf("second scan read a %d times, the waiting b %d times", h.count(a), h.count(b)-readsB)
	}
	write(t, b, "done now, longer")
	write(t, c, "bad")
	st = sync1(t, w)
	if h.count(b) != readsB+2 || st.Incomplete != 0 || h.count(c) != 1 {
		t.Errorf("b finished: %d reads, stats %+v; c %d", h.count(b)-readsB, st, h.count(c))
	}
	sync1(t, w)
	if h.count(c) != 1 || h.count(b) != readsB+2 {
		t.Errorf("failed and done files read again: c %d, b %d", h.count(c), h.count(b))
	}
	os.Remove(a)
	os.Rename(filepath.Join(root, "d.log.part"), filepath.Join(root, "d.log"))
	st = sync1(t, w)
	if !slices.Contains(h.gone, a) || h.count(filepath.Join(root, "d.log")) != 1 || st.Partial != 0 {
		t.Errorf("gone %v, renamed partial read %d times, stats %+v", h.gone, h.count(filepath.Join(root, "d.log")), st)
	}
}

// Links are followed, to files and directories; a loop, or a second link
// to one directory, lists it once.
func TestLinksAndLoops(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	write(t, filepath.Join(elsewhere, "linked", "a.log"), "ok")
	write(t, filepath.Join(elsewhere, "file.log"), "ok")
	write(t, filepath.Join(root, "real", "b.log"), "ok")
	for link, target := range map[string]string{
		"dir-link":  filepath.Join(elsewhere, "linked"),
		"dir-again": filepath.Join(elsewhere, "linked"),
		"f.log":     filepath.Join(elsewhere, "file.log"),
		"real/loop": root,
		"dangling":  filepath.Join(elsewhere, "nothing"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true}, h)
	sync1(t, w)
	h.mu.Lock()
	defer h.mu.Unlock()
	var got []string
	for p, n := range h.reads {
		rel, _ := filepath.Rel(root, p)
		got = append(got, rel)
		if n != 1 {
			t.Errorf("%s read %d times", rel, n)
		}
	}
	slices.Sort(got)
	// The linked directory is listed once, under its first name.
	if want := []string{"dir-again/a.log", "f.log", "real/b.log"}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	files, err := List(root, 0, func(name string) bool { return strings.HasSuffix(name, ".log") })
	if err != nil || len(files) != 3 {
		t.Errorf("List: %v, %v", files, err)
	}
}

// FileDepth takes the files of one level only: a DaYu drop directory's
// workflow runs.
func TestFileDepth(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "top.log"), "ok")
	write(t, filepath.Join(root, "run1", "a.log"), "ok")
	write(t, filepath.Join(root, "run1", "deeper", "b.log"), "ok")
	write(t, filepath.Join(root, "run2", "c.log"), "ok")
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, FileDepth: 2}, h)
	sync1(t, w)
	if len(h.reads) != 2 || h.count(filepath.Join(root, "run1", "a.log")) != 1 || h.count(filepath.Join(root, "run2", "c.log")) != 1 {
		t.Errorf("reads %v", h.reads)
	}
	if got := w.Dirs(1); len(got) != 2 || filepath.Base(got[0]) != "run1" || filepath.Base(got[1]) != "run2" {
		t.Errorf("workflow directories %v", got)
	}
}

// A drop directory that does not exist yet is reported missing, then
// read when it appears.
func TestDirectoryAppearsLater(t *testing.T) {
	root := filepath.Join(t.TempDir(), "later")
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true}, h)
	if st := sync1(t, w); len(st.Missing) != 1 || st.Scans == 0 {
		t.Fatalf("stats %+v", st)
	}
	write(t, filepath.Join(root, "a.log"), "ok")
	if st := sync1(t, w); len(st.Missing) != 0 || h.count(filepath.Join(root, "a.log")) != 1 {
		t.Errorf("stats %+v, reads %v", st, h.reads)
	}
}

// With inotify, a file written or renamed into a watched directory, or a
// new directory, is read before the rescan; a deletion is Gone at once.
func TestInotify(t *testing.T) {
	root := t.TempDir()
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}}, h)
	if sync1(t, w).Watches == 0 {
		t.Skip("inotify unavailable here")
	}
	a := filepath.Join(root, "a.log")
	write(t, a, "ok")
	write(t, filepath.Join(root, "2026", "1", "b.log"), "ok")
	// A file met half written is read again once whole: at least once.
	waitUntil(t, "inotify finds the files", func() bool {
		return h.count(a) >= 1 && h.count(filepath.Join(root, "2026", "1", "b.log")) >= 1
	})
	os.Remove(a)
	waitUntil(t, "inotify reports the deletion", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return slices.Contains(h.gone, a)
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out: %s", what)
}

// With a retention window, old files are not opened and old leaf
// directories not listed again.
func TestRetention(t *testing.T) {
	root := t.TempDir()
	day := filepath.Join(root, "2025", "1", "1")
	old := time.Now().Add(-48 * time.Hour)
	write(t, filepath.Join(day, "old.log"), "ok")
	os.Chtimes(filepath.Join(day, "old.log"), old, old)
	os.Chtimes(day, old, old)
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, Retention: 24 * time.Hour}, h)
	if st := sync1(t, w); len(h.reads) != 0 || st.Files != 0 {
		t.Fatalf("old file read or kept: %v, %+v", h.reads, st)
	}
	write(t, filepath.Join(day, "new.log"), "ok")
	os.Chtimes(day, old, old)
	if sync1(t, w); len(h.reads) != 0 {
		t.Fatal("an old leaf directory was listed again")
	}
	now := time.Now()
	os.Chtimes(day, now, now)
	if sync1(t, w); h.count(filepath.Join(day, "new.log")) != 1 {
		t.Errorf("a changed directory was not listed: %v", h.reads)
	}
}

// OnIdle runs once the files found are read, before Sync returns; a slow
// Read holds up neither Stats nor Dirs.
func TestIdleAndSlowReads(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "run", "a.log"), "ok")
	h := newRecorder()
	h.block = make(chan struct{})
	var idles int
	var mu sync.Mutex
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, Workers: 1, OnIdle: func(*Watcher) {
		mu.Lock()
		idles++
		mu.Unlock()
	}}, h)
	done := make(chan error)
	go func() { done <- w.Sync(context.Background()) }()
	waitUntil(t, "the read starts", func() bool { return w.Stats().Queued == 1 })
	// Reading is stuck; the watcher still answers.
	if st := w.Stats(); st.Queued != 1 || len(w.Dirs(1)) != 1 {
		t.Errorf("stats while reading: %+v, dirs %v", st, w.Dirs(1))
	}
	close(h.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if idles == 0 {
		t.Error("OnIdle did not run before Sync returned")
	}
}

// A Handler that panics on a file fails that file; the watcher goes on.
func TestReadPanics(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.log"), "panic")
	write(t, filepath.Join(root, "b.log"), "ok")
	h := newRecorder()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, Workers: 1}, h)
	sync1(t, w)
	sync1(t, w)
	if h.count(filepath.Join(root, "b.log")) != 1 || h.count(filepath.Join(root, "a.log")) != 1 {
		t.Errorf("reads %v: the panicking file once, the other once", h.reads)
	}
}

// A directory more than MaxDepth levels below its drop directory is not
// listed: counted too_deep at every scan (the first level past the bound,
// not each level under it) and said once; the files above it are read.
func TestTooDeep(t *testing.T) {
	root := t.TempDir()
	dir := root
	var first string // the first level too deep
	for i := range MaxDepth + 8 {
		dir = filepath.Join(dir, fmt.Sprintf("d%02d", i+1))
		if i+1 == MaxDepth+1 {
			first = dir
		}
		if i+1 == 10 || i+1 == MaxDepth {
			write(t, filepath.Join(dir, "f.log"), "ok")
		}
	}
	write(t, filepath.Join(dir, "deep.log"), "ok")
	h := newRecorder()
	var logs logtest.Capture
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, What: "test", Logger: logs.Logger()}, h)
	for range 3 {
		if st := sync1(t, w); st.Unlisted[UnlistedTooDeep] != 1 || len(st.Unlisted) != 1 || st.Files != 2 {
			t.Errorf("unlisted %v, %d files; want one too_deep, the 2 files above it", st.Unlisted, st.Files)
		}
	}
	if h.count(filepath.Join(dir, "deep.log")) != 0 {
		t.Error("a file below the depth bound was read")
	}
	said := 0
	for _, r := range logs.Next(t) {
		if r["level"] == "WARN" && r["dir"] == first {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the directory too deep was said %d times in 3 scans, want once", said)
	}
	// Gone, it is no longer counted.
	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}
	if st := sync1(t, w); len(st.Unlisted) != 0 {
		t.Errorf("unlisted %v once the deep directories are gone", st.Unlisted)
	}
}
