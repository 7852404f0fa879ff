package logwatch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// scan lists the drop directories, queues new and changed logs, forgets
// files that vanished, retries logs being written and expires old ones.
//
// A rescan must stay cheap on a drop directory that holds years of logs: a
// leaf directory (a day of the YYYY/M/D layout) whose modification time is
// the one it had when last listed and older than the retention window is
// not listed again. Adding, removing or renaming a file changes its
// directory's modification time, so nothing new can hide there; logs that
// were being written are re-examined by path whatever their directory.
func (s *Sidecar) scan() {
	s.scanning.Lock()
	defer s.scanning.Unlock()
	begin := time.Now()
	now := s.now()
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.mu.Unlock()

	listed := map[string]bool{} // directories listed in this scan
	for _, root := range s.cfg.Dirs {
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() {
			s.noteMissing(root, err)
			continue
		}
		s.noteMissing(root, nil)
		s.walk(filepath.Clean(root), fi, now, gen, listed)
	}

	// Forget what vanished: files of directories listed now that this scan
	// did not see, and files of directories that are gone.
	var gone []string
	var retry []string
	s.mu.Lock()
	for path, st := range s.files {
		d := s.dirs[st.dir]
		switch {
		case d == nil || d.gen != gen:
			gone = append(gone, path)
		case listed[st.dir] && st.gen != gen:
			gone = append(gone, path)
		case st.status == statusWaiting:
			retry = append(retry, path)
		case st.mtime.Add(s.cfg.Retention).Before(now):
			// Modified before the retention window, so ended before it:
			// its log, if it was read, has expired. Forgetting the file
			// keeps this map to the files of the window; listed again, it
			// is known old by its time and not read.
			delete(s.files, path)
		}
	}
	for path, p := range s.partial {
		dir := filepath.Dir(path)
		if d := s.dirs[dir]; d == nil || d.gen != gen || listed[dir] && p.gen != gen || p.mtime.Add(s.cfg.Retention).Before(now) {
			delete(s.partial, path)
		}
	}
	for dir, d := range s.dirs {
		if d.gen != gen {
			delete(s.dirs, dir)
			if s.notifier != nil {
				s.notifier.remove(dir)
			}
		}
	}
	s.mu.Unlock()
	for _, path := range gone {
		s.forget(path)
	}
	for _, path := range retry {
		if fi, err := os.Stat(path); err == nil {
			s.consider(path, fi, true)
		}
	}
	s.store.expire(now)
	s.stats.scanned(now, time.Since(begin))
}

// walk lists dir and its sub-directories, unless it is an old leaf.
func (s *Sidecar) walk(dir string, fi os.FileInfo, now time.Time, gen int, listed map[string]bool) {
	s.mu.Lock()
	d := s.dirs[dir]
	if d != nil && d.leaf && d.mtime.Equal(fi.ModTime()) && fi.ModTime().Add(s.cfg.Retention).Before(now) {
		d.gen = gen
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if s.notifier != nil {
		// Watch before listing: a log that lands in between is seen by
		// one or the other.
		s.notifier.add(dir, s.log)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		s.log.Warn("cannot list a Darshan drop directory", "dir", dir, "err", err)
		// Keep what was known of it rather than forgetting its logs.
		s.mu.Lock()
		if d != nil {
			d.gen = gen
		}
		s.mu.Unlock()
		return
	}
	leaf := true
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if e.IsDir() {
			leaf = false
			s.walk(path, info, now, gen, listed)
			continue
		}
		s.consider(path, info, false)
	}
	s.mu.Lock()
	s.dirs[dir] = &dirState{mtime: fi.ModTime(), leaf: leaf, gen: gen}
	listed[dir] = true
	s.mu.Unlock()
}

// noteMissing logs a drop directory that does not exist (yet), once until
// it appears.
func (s *Sidecar) noteMissing(root string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.missing, root)
		return
	}
	if !s.missing[root] {
		s.missing[root] = true
		if errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("Darshan drop directory does not exist (yet); looking again at each rescan", "dir", root)
		} else {
			s.log.Warn("cannot read a Darshan drop directory", "dir", root, "err", err)
		}
	}
}
