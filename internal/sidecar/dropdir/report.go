package dropdir

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Report is what the watcher found in each drop directory by one scan, and
// by inotify since the scan before: the user logs it (nothing found
// silently), adding what its Handler made of the files it read.
type Report struct {
	Scan    uint64        // the scan's number, from 1
	Listing time.Duration // how long the listing took
	Dirs    []DirReport   // one per drop directory, in the order of Config.Dirs
}

// DirReport is one drop directory in a Report. Old counts events since the
// last report; the other counts are the state at the report.
type DirReport struct {
	Dir     string // as in Config.Dirs
	Missing bool   // does not exist or cannot be read
	// Old counts the files seen for the first time that were modified
	// before the retention window, and so never opened; OldestOld and
	// NewestOld are the first and last of their modification times.
	Old                  int
	OldestOld, NewestOld time.Time
	Files                int // wanted files known, old ones aside
	Queued               int // found and not read yet, or being read
	Partial              int // under a temporary name, within the retention window
	Incomplete           int // found still being written by the Handler
}

// oldTally is the old files of one drop directory since the last report.
type oldTally struct {
	n              int
	oldest, newest time.Time
}

// listing tells consider where a scan found a file: under which drop
// directory, and whether (and since when) its directory was listed before.
type listing struct {
	root   string
	listed bool
	since  time.Time // when the listing before began
}

// Root returns the drop directory of dirs (as given) that path is under,
// the first in their order as a scan lists them; "" if none.
func Root(dirs []string, path string) string {
	return rootOf(dirs, cleanAll(dirs), path)
}

// rootOf is Root with the directories already cleaned.
func rootOf(dirs, cleaned []string, path string) string {
	for i, d := range cleaned {
		if under(d, path) {
			return dirs[i]
		}
	}
	return ""
}

func cleanAll(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Clean(d)
	}
	return out
}

func under(root, path string) bool {
	if path == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(path, root)
}

// noteOld counts a file seen for the first time and modified before the
// retention window, once. A directory listed again (as a drop directory's
// own files are at every scan, or a day directory a late log lands in)
// shows the old files it held, counted when they were first listed and
// forgotten since (watcher.go keeps only the files of the window); a file
// that arrived since the listing before, by its inode change time (set
// when a file is created or renamed in, and by a copy setting an old
// modification time), is a new one. A file whose inode changes (chmod)
// counts again at its directory's next listing. Called with w.mu held;
// from is nil for inotify's files, new by definition.
func (w *Watcher) noteOld(path string, fi os.FileInfo, from *listing) {
	root := ""
	if from != nil {
		root = from.root
		if from.listed {
			c, ok := ctimeOf(fi)
			if !ok || !c.After(from.since) {
				return
			}
		}
	} else {
		root = rootOf(w.cfg.Dirs, w.roots, path)
	}
	w.oldFiles++
	t := w.round[root]
	if t == nil {
		t = &oldTally{}
		w.round[root] = t
	}
	mt := fi.ModTime()
	if t.n == 0 || mt.Before(t.oldest) {
		t.oldest = mt
	}
	if t.n == 0 || mt.After(t.newest) {
		t.newest = mt
	}
	t.n++
}

// report hands Config.OnReport what a scan found once the files found
// are read, so that it can say what became of them. It waits at most a
// rescan interval (or until ctx ends): a read stuck on a hung file server
// must not stop the rescans; what is not read by then is reported queued.
func (w *Watcher) report(ctx context.Context, scan uint64, took time.Duration) {
	if w.cfg.OnReport == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.RescanInterval)
	err := w.waitIdle(ctx)
	cancel()
	if err != nil && w.ctx.Err() != nil {
		return // closing
	}
	w.cfg.OnReport(w, w.takeReport(scan, took))
}

// takeReport returns the report of each drop directory and starts a new
// tally of old files.
func (w *Watcher) takeReport(scan uint64, took time.Duration) Report {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := Report{Scan: scan, Listing: took}
	for _, root := range w.cfg.Dirs {
		if !slices.ContainsFunc(r.Dirs, func(d DirReport) bool { return d.Dir == root }) {
			r.Dirs = append(r.Dirs, DirReport{Dir: root, Missing: w.missing[root]})
		}
	}
	byRoot := map[string]*DirReport{}
	for i := range r.Dirs {
		byRoot[r.Dirs[i].Dir] = &r.Dirs[i]
	}
	dir := func(path string) *DirReport {
		if d := byRoot[rootOf(w.cfg.Dirs, w.roots, path)]; d != nil {
			return d
		}
		return &DirReport{}
	}
	for path, st := range w.files {
		d := dir(path)
		switch st.status {
		case statusOld:
			continue
		case statusQueued:
			d.Queued++
		case statusWaiting:
			d.Incomplete++
		}
		d.Files++
	}
	for path, p := range w.partial {
		if !w.old(p.mtime, now) {
			dir(path).Partial++
		}
	}
	for root, t := range w.round {
		if d := byRoot[root]; d != nil {
			d.Old, d.OldestOld, d.NewestOld = t.n, t.oldest, t.newest
		}
	}
	w.round = map[string]*oldTally{}
	return r
}
