package dropdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// A file that kills the process while it is read (memory past the
// cgroup's limit: the OOM killer; a reader bound set too high) would kill
// it again after every restart, since a watcher reads again at start every
// file of its window: one user could stop the exporter for everyone. So,
// with Config.StateFile, the watcher writes down each file version before
// it hands it to its reader and strikes it off when the reader returns. A
// version found written down at start was being read when the process
// died: it is not handed out again (Config.OnCrashed is told instead) and
// stays written down, as "crashed", for as long as a scan still finds it,
// so that the restarts after this one skip it too. A new version of the
// file (changed size or modification time) is read as any other.
//
// Files smaller than Config.StateMinSize are not written down: their
// reader cannot spend enough memory to kill the process (its user knows
// the bound), and each record costs two replacements of the state file,
// milliseconds with their fsyncs (BenchmarkStateWrite: 1.9 ms on an idle
// disk, more on a busy one), twenty times the read of a small Darshan log.
//
// The file holds the reads in flight (at most Config.Workers) and the
// crashed versions still found (at most maxCrashed, the oldest dropped):
// a few kilobytes. It is replaced whole at every change (a temporary file,
// fsync, rename, fsync of the directory), so that a crash, even of the
// machine, leaves the old state or the new one, never a mix.
//
// With several workers, the versions read at the same time as the one
// that killed the process are skipped too: nothing tells which it was.

// maxCrashed bounds the crashed versions kept.
const maxCrashed = 64

// stateVersion is one version of a file: where it was found and what it
// was (device, inode, size, modification time) when it was opened.
type stateVersion struct {
	Path  string `json:"path"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
}

// same tells whether two records are one version, wherever it was found
// (a file renamed keeps its inode).
func (v stateVersion) same(o stateVersion) bool {
	return v.Dev == o.Dev && v.Ino == o.Ino && v.Size == o.Size && v.MTime == o.MTime
}

// versionOf returns the version of fi found at path; false when its
// identity is unknown (off Unix).
func versionOf(path string, fi os.FileInfo) (stateVersion, bool) {
	id, ok := idOf(fi)
	if !ok {
		return stateVersion{}, false
	}
	return stateVersion{Path: path, Dev: id.dev, Ino: id.ino, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}, true
}

// stateDoc is the file's content.
type stateDoc struct {
	// Reading are the versions handed to the reader and not returned yet.
	Reading []stateVersion `json:"reading"`
	// Crashed are the versions found in Reading at a start, or kept from
	// the start before, still found by the scans.
	Crashed []crashedVersion `json:"crashed"`
}

type crashedVersion struct {
	stateVersion
	Since time.Time `json:"since"` // when a start first found it
}

// journal keeps the state file.
type journal struct {
	path string

	mu      sync.Mutex
	next    int
	reading map[int]stateVersion
	crashed []*crashedEntry
}

type crashedEntry struct {
	crashedVersion
	seen bool // found since the last prune
}

// openJournal reads the state file at path (none yet is an empty state),
// makes every version being read a crashed one, and writes the file back:
// a state file that cannot be written is an error at start, not a surprise
// at the first read.
func openJournal(path string, now time.Time) (*journal, error) {
	j := &journal{path: path, reading: map[int]stateVersion{}}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: filepath.Dir(path), Err: errors.New("not a directory")}
	}
	var doc stateDoc
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case len(bytes.TrimSpace(data)) == 0:
		// Made by hand (touch) or by an editor: nothing written down.
	default:
		if json.Unmarshal(data, &doc) != nil {
			// Not ours (the flag names a wrong directory): refused rather
			// than overwritten. Its content is not quoted.
			return nil, errors.New("not a state file of this exporter (not its JSON); move it away or give another directory")
		}
	}
	for _, c := range doc.Crashed {
		j.crashed = append(j.crashed, &crashedEntry{crashedVersion: c})
	}
	for _, v := range doc.Reading {
		if !slices.ContainsFunc(j.crashed, func(c *crashedEntry) bool { return c.same(v) }) {
			j.crashed = append(j.crashed, &crashedEntry{crashedVersion: crashedVersion{v, now}})
		}
	}
	j.trimLocked()
	if err := j.writeLocked(); err != nil {
		return nil, err
	}
	return j, nil
}

// trimLocked drops the oldest crashed versions past maxCrashed.
func (j *journal) trimLocked() {
	if len(j.crashed) > maxCrashed {
		j.crashed = slices.Clone(j.crashed[len(j.crashed)-maxCrashed:])
	}
}

// begin writes v down as being read and returns its token for end.
func (j *journal) begin(v stateVersion) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	j.reading[j.next] = v
	return j.next, j.writeLocked()
}

// end strikes off the read of token.
func (j *journal) end(token int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.reading, token)
	return j.writeLocked()
}

// isCrashed tells whether v is a crashed version.
func (j *journal) isCrashed(v stateVersion) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.ContainsFunc(j.crashed, func(c *crashedEntry) bool { return c.same(v) })
}

// see notes that a scan found v.
func (j *journal) see(v stateVersion) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range j.crashed {
		if c.same(v) {
			c.seen = true
		}
	}
}

// hasCrashed tells whether there is any crashed version to look for.
func (j *journal) hasCrashed() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.crashed) > 0
}

// prune drops, after a scan, the crashed versions it did not find in the
// directories it listed (listed(dir)): the file was removed or changed, and
// a new version is read as any other. Those of directories not listed (an
// old one the scan skipped, one that could not be listed) are kept.
func (j *journal) prune(listed func(dir string) bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	kept := j.crashed[:0]
	for _, c := range j.crashed {
		if c.seen || !listed(filepath.Dir(c.Path)) {
			c.seen = false
			kept = append(kept, c)
		}
	}
	if len(kept) == len(j.crashed) {
		return nil
	}
	clear(j.crashed[len(kept):])
	j.crashed = kept
	return j.writeLocked()
}

// writeLocked replaces the state file with the state.
func (j *journal) writeLocked() error {
	doc := stateDoc{Reading: []stateVersion{}, Crashed: []crashedVersion{}}
	tokens := make([]int, 0, len(j.reading))
	for t := range j.reading {
		tokens = append(tokens, t)
	}
	slices.Sort(tokens)
	for _, t := range tokens {
		doc.Reading = append(doc.Reading, j.reading[t])
	}
	for _, c := range j.crashed {
		doc.Crashed = append(doc.Crashed, c.crashedVersion)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return writeAtomic(j.path, append(data, '\n'))
}

// writeAtomic replaces the file at path with data: written to a temporary
// file beside it, synced, renamed over it, and the directory synced, so
// that the file is the old one or the new one whatever happens.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil // renamed: the directory sync only hastens it
	}
	defer d.Close()
	d.Sync()
	return nil
}
