package dropdir

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// MaxDepth bounds the directories walked below a drop directory, whatever
// the links: the YYYY/M/D layout of Darshan is three deep, a DaYu run one.
// A directory deeper (a drop directory is 0, its sub-directories 1) is
// not listed: counted in Stats.Unlisted as UnlistedTooDeep and said once.
const MaxDepth = 32

// scan lists the drop directories, queues new and changed files, forgets
// files that vanished, retries files being written and lets old ones go,
// then reports (waiting for the reads at most until ctx ends). The initial
// scan is skipped when another (Sync's) came first.
func (w *Watcher) scan(ctx context.Context, initial bool) {
	w.scanning.Lock()
	defer w.scanning.Unlock()
	if initial && w.scanCount() > 0 {
		return
	}
	begin := time.Now()
	now := w.now()
	w.mu.Lock()
	w.gen++
	gen := w.gen
	w.mu.Unlock()

	listed := map[string]bool{} // directories listed in this scan
	visited := map[fileID]bool{}
	for _, root := range w.cfg.Dirs {
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() {
			w.noteMissing(root, err)
			continue
		}
		w.noteMissing(root, nil)
		w.walk(root, filepath.Clean(root), fi, 0, now, gen, listed, visited)
	}

	// Forget what vanished: files of directories listed now that this scan
	// did not see, and files of directories that are gone.
	var gone, retry []string
	w.mu.Lock()
	for path, st := range w.files {
		d := w.dirs[st.dir]
		switch {
		case d == nil || d.gen != gen:
			gone = append(gone, path)
		case listed[st.dir] && st.gen != gen:
			gone = append(gone, path)
		case st.status == statusWaiting:
			retry = append(retry, path)
		case w.old(st.mtime, now) && (st.ctime.IsZero() || !st.ctime.After(d.listedAt)):
			// Modified before the retention window: done with. Forgetting
			// it keeps this map to the files of the window; listed again,
			// it is known old by its time and not read, nor counted again
			// (noteOld) now that a listing of its directory began after it
			// arrived. One that arrived during the listing stays known
			// until the next.
			delete(w.files, path)
		}
	}
	for path, p := range w.partial {
		dir := filepath.Dir(path)
		if d := w.dirs[dir]; d == nil || d.gen != gen || listed[dir] && p.gen != gen || w.old(p.mtime, now) {
			delete(w.partial, path)
		}
	}
	for dir, d := range w.dirs {
		if d.gen != gen {
			delete(w.dirs, dir)
			if w.notifier != nil {
				w.notifier.remove(dir)
			}
		}
	}
	w.pruneUnlistedLocked(gen)
	w.mu.Unlock()
	for _, path := range gone {
		w.forget(path)
	}
	if w.journal != nil {
		w.noteState(w.journal.prune(func(dir string) bool { return listed[dir] }))
	}
	for _, path := range retry {
		if fi, err := os.Stat(path); err == nil {
			w.consider(path, fi, true, nil)
		}
	}
	w.mu.Lock()
	took := time.Since(begin)
	w.lastScan, w.scanTook = now, took
	w.scans++
	scans := w.scans
	w.doneGen = gen
	w.mu.Unlock()
	if w.cfg.OnScan != nil {
		w.cfg.OnScan(now)
	}
	w.idleIfIdle()
	w.report(ctx, scans, took)
}

func (w *Watcher) scanCount() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.scans
}

// walk lists dir, depth levels below the drop directory root, and its
// sub-directories, unless it is an old leaf. Links are followed; a
// directory already visited in this scan is not listed again.
func (w *Watcher) walk(root, dir string, fi os.FileInfo, depth int, now time.Time, gen int, listed map[string]bool, visited map[fileID]bool) {
	if id, ok := idOf(fi); ok {
		if visited[id] {
			return
		}
		visited[id] = true
	}
	w.mu.Lock()
	d := w.dirs[dir]
	if d != nil && d.leaf && d.mtime.Equal(fi.ModTime()) && w.old(fi.ModTime(), now) {
		d.gen = gen
		w.mu.Unlock()
		return
	}
	from := &listing{root: root, listed: d != nil}
	if d != nil {
		from.since = d.listedAt
	}
	w.mu.Unlock()
	if w.notifier != nil {
		// Watch before listing: a file that lands in between is seen by
		// one or the other.
		w.notifier.add(dir, w.log, w.what())
	}
	listedAt := time.Now()
	entries, err := readDir(dir, fi)
	if err != nil {
		if !errors.Is(err, errDirSwapped) {
			w.noteUnlisted(dir, unlistedReason(err), err, gen)
		}
		// Keep what was known of it rather than forgetting its files.
		w.mu.Lock()
		if d != nil {
			d.gen = gen
		}
		if u := w.unlisted[dir]; u != nil {
			u.gen = gen
		}
		w.mu.Unlock()
		return
	}
	w.noteListed(dir)
	leaf := true
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if info.Mode()&os.ModeSymlink != 0 {
			link := info
			if info, err = os.Stat(path); err != nil {
				continue // a dangling link
			}
			// A link to a directory follows OpenFile's rule for links to
			// files (readDir checks that the directory listed is the one
			// looked at here). Said once, counted at every scan.
			if info.IsDir() && !linkAllowed(link, info) {
				leaf = false // listed again at each scan: the link may change
				w.noteUnlisted(path, UnlistedSymlinkOwner, nil, gen)
				continue
			}
		}
		if info.IsDir() {
			leaf = false
			switch {
			case w.cfg.FileDepth > 0 && depth+1 >= w.cfg.FileDepth:
				// Holds no file the user wants: not listed, by design.
			case depth+1 > MaxDepth:
				if id, ok := idOf(info); !ok || !visited[id] {
					w.noteUnlisted(path, UnlistedTooDeep, nil, gen)
				}
			default:
				w.walk(root, path, info, depth+1, now, gen, listed, visited)
			}
			continue
		}
		if w.cfg.FileDepth <= 0 || depth+1 == w.cfg.FileDepth {
			w.consider(path, info, false, from)
		}
	}
	w.mu.Lock()
	w.dirs[dir] = &dirState{mtime: fi.ModTime(), listedAt: listedAt, depth: depth, leaf: leaf, gen: gen}
	listed[dir] = true
	w.mu.Unlock()
}

// errDirSwapped: the directory opened is not the one looked at.
var errDirSwapped = errors.New("directory replaced while it was opened")

// readDir lists the directory at path, which fi (by stat) described: the
// directory opened must be that one (a link to a directory swapped for
// another after its owner was checked is not listed; the next scan looks
// again). Entries are sorted by name.
func readDir(path string, fi os.FileInfo) ([]os.DirEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if a, ok := idOf(fi); ok {
		if b, ok := idOf(ofi); !ok || a != b {
			return nil, errDirSwapped
		}
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// noteMissing logs a drop directory that does not exist (yet), once until
// it appears.
func (w *Watcher) noteMissing(root string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.missing, root)
		return
	}
	if !w.missing[root] {
		w.missing[root] = true
		if errors.Is(err, fs.ErrNotExist) {
			w.log.Warn(w.what()+" drop directory does not exist (yet); looking again at each rescan", "dir", root)
		} else {
			w.log.Warn("cannot read a "+w.what()+" drop directory", "dir", root, "err", err)
		}
	}
}

// List returns, once and without watching, the files of dir that a
// Watcher with these settings would hand on, following links as it does,
// sorted. Partial files are left out.
func List(dir string, fileDepth int, wanted func(name string) bool) ([]string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: errors.New("not a directory")}
	}
	var out []string
	visited := map[fileID]bool{}
	var walk func(dir string, fi os.FileInfo, depth int)
	walk = func(dir string, fi os.FileInfo, depth int) {
		if id, ok := idOf(fi); ok {
			if visited[id] {
				return
			}
			visited[id] = true
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			info, err := os.Stat(path)
			if err != nil {
				continue
			}
			switch {
			case info.IsDir():
				// Deeper than MaxDepth: left out, as the Watcher leaves it
				// (which counts it; a one-off listing has nowhere to).
				if (fileDepth <= 0 || depth+1 < fileDepth) && depth+1 <= MaxDepth {
					walk(path, info, depth+1)
				}
			case info.Mode().IsRegular() && (fileDepth <= 0 || depth+1 == fileDepth) && (wanted == nil || wanted(e.Name())):
				out = append(out, path)
			}
		}
	}
	walk(filepath.Clean(dir), fi, 0)
	sort.Strings(out)
	return out, nil
}

func sortFunc(s []string, less func(a, b string) bool) {
	sort.Slice(s, func(i, j int) bool { return less(s[i], s[j]) })
}
