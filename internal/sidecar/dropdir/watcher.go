// Package dropdir watches drop directories: directories where programs
// leave files for the exporter (Darshan logs, DaYu stats). It finds the
// files by inotify where the kernel sees the writes and by a periodic
// rescan everywhere (drop directories usually live on Lustre or NFS, where
// inotify sees nothing of other nodes' writes), and hands each new or
// changed file, once per version (size and modification time), to a
// Handler in a bounded pool of workers. What the files mean is the
// Handler's.
//
// One policy for everything found:
//
//   - Symbolic links are followed, to files and to directories (a site
//     links drop directories into place), when their owner is root or
//     owns what they point to (see OpenFile); others are refused, counted
//     and said once. A directory met twice in one scan (a link loop, or
//     two links to one directory) is listed once.
//   - A directory that cannot be listed (permission, I/O error), or that
//     is more than MaxDepth levels below its drop directory, is said
//     once, and again only when that changes, and counted in
//     Stats.Unlisted at each scan.
//   - With Config.StateFile, a file version being read when the process
//     died is not read again after a restart (see state.go).
//   - Files named by Config.Partial (a program's temporary name, such as
//     *.darshan_partial) are counted as waiting and never handed on; the
//     rename to the final name is a new file.
//   - A file the Handler finds still being written (Waiting) is read again
//     at every scan and write until the Handler decides; a file read or
//     failed is read again only when it changes.
//   - With Config.Retention, files modified before the window are not
//     opened, and a leaf directory unchanged since it was listed and older
//     than the window is not listed again, so that a rescan stays cheap on
//     years of files. They are counted, each once, and reported.
//   - A file that vanishes, or is renamed away, is Gone.
//   - After each scan, once the files found are read, Config.OnReport is
//     told what each drop directory held (Report), for its user to log.
package dropdir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// Status is what became of a file version the Handler read.
type Status int

const (
	// Done: read. Read again only when it changes.
	Done Status = iota
	// Failed: could not be read. Read again only when it changes.
	Failed
	// Waiting: still being written. Read again at the next scan or write.
	Waiting
)

// Handler reads the files a Watcher finds. Its methods are called from
// several goroutines at once.
type Handler interface {
	// Read reads the file at path and returns the state it read it in
	// (nil if it could not even be looked at) and what became of it.
	Read(path string) (os.FileInfo, Status)
	// Gone tells that a file read before vanished or was renamed away.
	Gone(path string)
}

// OpenReader is a Handler whose files the watcher opens itself, with
// OpenFile (regular files only, links by their owner), and hands over
// open: the version written down in Config.StateFile is then the one
// read, whatever replaces the path meanwhile. The watcher calls ReadOpen
// instead of Read.
type OpenReader interface {
	Handler
	// ReadOpen reads f, the file found at path, opened by OpenFile; fi is
	// its state by fstat. The watcher closes f when ReadOpen returns.
	// When OpenFile failed, f and fi are nil and err says why
	// (ErrSymlinkOwner, ErrNotRegular, fs.ErrNotExist, fs.ErrPermission,
	// …). It returns, as Read does, the state it read the file in and
	// what became of it.
	ReadOpen(path string, f *os.File, fi os.FileInfo, err error) (os.FileInfo, Status)
}

// Config configures a Watcher; zero fields take the defaults below.
type Config struct {
	Dirs           []string      // drop directories, searched recursively
	RescanInterval time.Duration // default 30s
	Workers        int           // files read at the same time; default 2
	// FileDepth, when set, takes only files that many levels below a
	// drop directory (1: its own files; 2: the files of its
	// sub-directories) and lists no deeper.
	FileDepth int
	// Wanted tells the files to hand on by their base name.
	Wanted func(name string) bool
	// Partial tells, by base name, the files still being written under a
	// temporary name: counted as waiting, never handed on.
	Partial func(name string) bool
	// Retention, when set: files modified before it are old, see the
	// package documentation.
	Retention time.Duration
	// OnScan runs after each scan, with the time it started.
	OnScan func(now time.Time)
	// OnIdle runs when every file found was read: after a scan or a
	// batch of reads, and after a file is gone; before Sync returns.
	OnIdle func(w *Watcher)
	// OnReport runs after each scan, once the files found are read (and
	// after OnIdle), with what the scan found: see Report. It runs in the
	// scan, before Sync returns; the next scan waits for it.
	OnReport func(w *Watcher, r Report)
	// What names the files in log messages ("Darshan").
	What string
	// StateFile, when set, is the file where the versions being read are
	// written down, so that one that kills the process is skipped after
	// the restart (state.go); its directory must exist and be writable.
	StateFile string
	// StateMinSize: files smaller than this are not written down in
	// StateFile (their read cannot cost enough memory to kill the process;
	// see state.go).
	StateMinSize int64
	// OnCrashed is told of each file version skipped because it was being
	// read when the process died (Config.StateFile), as Read would have
	// been: once per version found. The version counts as Failed.
	OnCrashed func(path string, fi os.FileInfo)
	// NoInotify turns inotify off: rescans only.
	NoInotify bool
	Now       func() time.Time
	Logger    *slog.Logger
}

// Watcher watches drop directories. Start it with Start, stop it with
// Close.
type Watcher struct {
	cfg Config
	h   Handler
	log *slog.Logger
	now func() time.Time

	roots []string // Config.Dirs, cleaned

	mu       sync.Mutex
	files    map[string]*fileState
	dirs     map[string]*dirState
	partial  map[string]*partialFile // partial files, by path
	queue    []string
	queued   map[string]bool
	busy     int
	idle     *sync.Cond // signalled when the queue empties and no worker is busy
	gen      int        // scan generation
	doneGen  int        // the generation of the last scan that ended
	missing  map[string]bool
	lastScan time.Time
	scanTook time.Duration
	scans    uint64
	scanning sync.Mutex           // one scan at a time
	round    map[string]*oldTally // old files since the last report, by drop directory
	oldFiles uint64               // old files counted since start
	unlisted map[string]*unlistedDir

	journal  *journal // nil without Config.StateFile
	stateErr bool     // the last write of the state file failed (said once)

	wake     chan struct{} // a file was queued
	rescan   chan struct{} // a scan is wanted now
	notifier *notifier
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

type fileStatus int

const (
	statusQueued  fileStatus = iota
	statusDone               // read (or failed): read again only when it changes
	statusWaiting            // being written: retried at each scan
	statusOld                // modified before the retention window: never read
)

// fileState is what the watcher knows of one file: the size and
// modification time it was read with, and the outcome.
type fileState struct {
	size   int64
	mtime  time.Time
	dir    string
	status fileStatus
	gen    int       // the last scan that saw it
	ctime  time.Time // its inode's change time, when known (see noteOld)
}

type partialFile struct {
	mtime time.Time
	gen   int
}

// dirState is one directory as last listed.
type dirState struct {
	mtime time.Time
	// listedAt is when its last listing began, by the wall clock (the
	// file system's, not Config.Now), for noteOld.
	listedAt time.Time
	depth    int  // below its drop directory, which is 0
	leaf     bool // no sub-directories
	gen      int  // the last scan that listed or skipped it
}

// Start checks the configuration, starts the workers, the rescans and
// inotify, and returns at once; the first scan runs in the background.
func Start(cfg Config, h Handler) (*Watcher, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("no directory to watch")
	}
	if cfg.RescanInterval <= 0 {
		cfg.RescanInterval = 30 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Wanted == nil {
		cfg.Wanted = func(string) bool { return true }
	}
	if cfg.Partial == nil {
		cfg.Partial = func(string) bool { return false }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{cfg: cfg, h: h, log: cfg.Logger, now: cfg.Now, roots: cleanAll(cfg.Dirs),
		files: map[string]*fileState{}, dirs: map[string]*dirState{}, partial: map[string]*partialFile{},
		queued: map[string]bool{}, missing: map[string]bool{}, round: map[string]*oldTally{},
		unlisted: map[string]*unlistedDir{},
		wake:     make(chan struct{}, 1), rescan: make(chan struct{}, 1)}
	w.idle = sync.NewCond(&w.mu)
	if cfg.StateFile != "" {
		// The versions found being read are said by OnCrashed's user when
		// a scan finds them, once each: one that is gone meanwhile is news
		// to nobody.
		j, err := openJournal(cfg.StateFile, time.Now())
		if err != nil {
			return nil, fmt.Errorf("state file %s: %w", cfg.StateFile, err)
		}
		w.journal = j
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if !cfg.NoInotify {
		n, err := newNotifier()
		if err != nil {
			w.log.Warn("inotify unavailable, finding "+w.what()+" files by rescans only", "err", err)
		} else {
			w.notifier = n
			w.wg.Add(1)
			go func() { defer w.wg.Done(); n.run(w.ctx, w.event) }()
		}
	}
	for range cfg.Workers {
		w.wg.Add(1)
		go func() { defer w.wg.Done(); w.work() }()
	}
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.scanLoop() }()
	return w, nil
}

func (w *Watcher) what() string {
	if w.cfg.What == "" {
		return "dropped"
	}
	return w.cfg.What
}

// Close stops the watcher and waits for its goroutines.
func (w *Watcher) Close() error {
	w.cancel()
	if w.notifier != nil {
		w.notifier.close()
	}
	w.mu.Lock()
	w.idle.Broadcast()
	w.mu.Unlock()
	w.wg.Wait()
	return nil
}

// Sync scans now and returns when every file found is read (or ctx ends).
func (w *Watcher) Sync(ctx context.Context) error {
	w.scan(ctx, false)
	return w.waitIdle(ctx)
}

func (w *Watcher) waitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.idle.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) > 0 || w.busy > 0 {
		if ctx.Err() != nil || w.ctx.Err() != nil {
			return errors.Join(ctx.Err(), w.ctx.Err())
		}
		w.idle.Wait()
	}
	return nil
}

// Stats is the state of the watcher at one moment.
type Stats struct {
	Queued     int // files found and not read yet, or being read
	Partial    int // files under a temporary name (within the retention window)
	Incomplete int // files the Handler found still being written
	// LastScan is when the last scan began; zero before the first ends.
	LastScan     time.Time
	ScanDuration time.Duration
	Scans        uint64
	Watches      int // directories watched with inotify
	Files        int // files known (read, failed, waiting, queued)
	// Old counts the files found modified before the retention window,
	// and so never opened, each once (see Report).
	Old uint64
	// Missing are the drop directories that do not exist or cannot be
	// read, sorted.
	Missing []string
	// Unlisted counts, by reason (UnlistedPermission, …), the directories
	// that could not be listed, links to directories not followed, and
	// directories too deep (the first level past MaxDepth), at the last
	// scan.
	Unlisted map[string]int
}

// Stats returns the watcher's state.
func (w *Watcher) Stats() Stats {
	now := w.now()
	w.mu.Lock()
	st := Stats{Queued: len(w.queue) + w.busy, LastScan: w.lastScan, ScanDuration: w.scanTook, Scans: w.scans, Old: w.oldFiles}
	for _, f := range w.files {
		switch f.status {
		case statusOld:
			continue
		case statusWaiting:
			st.Incomplete++
		}
		st.Files++
	}
	for root := range w.missing {
		st.Missing = append(st.Missing, root)
	}
	st.Unlisted = map[string]int{}
	for _, u := range w.unlisted {
		st.Unlisted[u.reason]++
	}
	sort.Strings(st.Missing)
	for _, p := range w.partial {
		// A partial file of a job that crashed stays forever; one older
		// than the retention window no longer waits for anything.
		if w.cfg.Retention <= 0 || p.mtime.Add(w.cfg.Retention).After(now) {
			st.Partial++
		}
	}
	w.mu.Unlock()
	if w.notifier != nil {
		st.Watches = w.notifier.watches()
	}
	return st
}

// Dirs returns the directories depth levels below a drop directory as
// the last scan found them, in the order of Config.Dirs, then by name.
func (w *Watcher) Dirs(depth int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for dir, d := range w.dirs {
		// Those of the last scan that ended, or of the one under way.
		if d.depth == depth && d.gen >= w.doneGen {
			out = append(out, dir)
		}
	}
	rank := func(dir string) int {
		for i, root := range w.cfg.Dirs {
			if rel, err := filepath.Rel(filepath.Clean(root), dir); err == nil && filepath.IsLocal(rel) {
				return i
			}
		}
		return len(w.cfg.Dirs)
	}
	sortFunc(out, func(a, b string) bool {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a < b
	})
	return out
}

func (w *Watcher) scanLoop() {
	t := time.NewTicker(w.cfg.RescanInterval)
	defer t.Stop()
	w.scan(w.ctx, true)
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		case <-w.rescan:
		}
		w.scan(w.ctx, false)
	}
}

// requestScan asks for a scan soon (new directories, inotify overflow).
func (w *Watcher) requestScan() {
	select {
	case w.rescan <- struct{}{}:
	default:
	}
}

// consider looks at a file found by a scan (from) or an inotify event (nil
// from), and queues it when it is a wanted file not read in this version.
// retry re-queues a file the Handler found still being written.
func (w *Watcher) consider(path string, fi os.FileInfo, retry bool, from *listing) {
	name := filepath.Base(path)
	if !fi.Mode().IsRegular() {
		return
	}
	if w.journal != nil && w.journal.hasCrashed() {
		// Still there: a crashed version is kept while it is found.
		if v, ok := versionOf(path, fi); ok {
			w.journal.see(v)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cfg.Partial(name) {
		w.partial[path] = &partialFile{mtime: fi.ModTime(), gen: w.gen}
		return
	}
	if !w.cfg.Wanted(name) {
		return
	}
	st := w.files[path]
	if st != nil {
		st.gen = w.gen
		if st.size == fi.Size() && st.mtime.Equal(fi.ModTime()) {
			if retry && st.status == statusWaiting {
				w.enqueueLocked(path)
			}
			return
		}
	}
	first := st == nil
	if first {
		st = &fileState{dir: filepath.Dir(path), gen: w.gen}
		w.files[path] = st
	}
	st.size, st.mtime = fi.Size(), fi.ModTime()
	st.ctime, _ = ctimeOf(fi)
	// A file modified before the retention window is done with: not worth
	// opening, but counted, so that a directory of old files says so.
	if w.old(fi.ModTime(), w.now()) {
		st.status = statusOld
		if first {
			w.noteOld(path, fi, from)
		}
		return
	}
	st.status = statusQueued
	w.enqueueLocked(path)
}

func (w *Watcher) old(mtime, now time.Time) bool {
	return w.cfg.Retention > 0 && mtime.Add(w.cfg.Retention).Before(now)
}

func (w *Watcher) enqueueLocked(path string) {
	if w.queued[path] {
		return
	}
	w.queued[path] = true
	w.queue = append(w.queue, path)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// forget drops a file that vanished (or was renamed away).
func (w *Watcher) forget(path string) {
	w.mu.Lock()
	_, known := w.files[path]
	delete(w.files, path)
	delete(w.partial, path)
	w.mu.Unlock()
	if known {
		w.h.Gone(path)
	}
}

// work reads queued files until the watcher closes.
func (w *Watcher) work() {
	for {
		w.mu.Lock()
		for len(w.queue) == 0 {
			w.mu.Unlock()
			select {
			case <-w.ctx.Done():
				return
			case <-w.wake:
			}
			w.mu.Lock()
		}
		path := w.queue[0]
		w.queue[0] = ""
		w.queue = w.queue[1:]
		delete(w.queued, path)
		w.busy++
		w.mu.Unlock()
		// More work may be queued behind this one: pass the wake-up on.
		select {
		case w.wake <- struct{}{}:
		default:
		}

		fi, status := w.read(path)

		w.mu.Lock()
		st := w.files[path]
		if st != nil {
			if fi != nil {
				st.size, st.mtime = fi.Size(), fi.ModTime()
			}
			st.status = statusDone
			if status == Waiting {
				st.status = statusWaiting
			}
		}
		last := len(w.queue) == 0 && w.busy == 1
		w.mu.Unlock()
		if st == nil {
			// Forgotten while it was being read: what was read of it
			// must not stay.
			w.h.Gone(path)
		}
		// Still counted busy: Sync returns after OnIdle.
		if last && w.cfg.OnIdle != nil {
			w.cfg.OnIdle(w)
		}
		w.mu.Lock()
		w.busy--
		if len(w.queue) == 0 && w.busy == 0 {
			w.idle.Broadcast()
		}
		w.mu.Unlock()
	}
}

// read hands a file to the Handler, written down in the state file while
// it is read; a version written down as crashed is skipped. A bug the
// Handler meets on one file (a reader panicking on input it was not made
// for) fails that file, not the process.
func (w *Watcher) read(path string) (fi os.FileInfo, status Status) {
	defer func() {
		if p := recover(); p != nil {
			w.log.Error("reading a "+w.what()+" file panicked; it is left out", "path", path, "panic", p, "stack", string(debug.Stack()))
			fi, status = nil, Failed
		}
	}()
	or, opens := w.h.(OpenReader)
	var f *os.File
	var err error
	if opens {
		f, fi, err = OpenFile(path)
		if err != nil {
			return or.ReadOpen(path, nil, nil, err)
		}
		defer f.Close()
	} else if w.journal != nil {
		fi, err = os.Stat(path) // the reader opens it: the version is the path's now
	}
	if w.journal != nil && err == nil {
		if v, ok := versionOf(path, fi); ok {
			if w.journal.isCrashed(v) {
				if w.cfg.OnCrashed != nil {
					w.cfg.OnCrashed(path, fi)
				}
				return fi, Failed
			}
			if fi.Size() >= w.cfg.StateMinSize {
				token, err := w.journal.begin(v)
				w.noteState(err)
				defer func() { w.noteState(w.journal.end(token)) }()
			}
		}
	}
	if opens {
		return or.ReadOpen(path, f, fi, nil)
	}
	return w.h.Read(path)
}

// noteState says once that the state file cannot be written (and once
// that it can again): the reads go on without crash memory meanwhile.
func (w *Watcher) noteState(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && !w.stateErr:
		w.stateErr = true
		w.log.Warn("cannot write the state file; a "+w.what()+" file that kills the exporter while it is read would be read again after a restart",
			"file", w.cfg.StateFile, "err", err)
	case err == nil && w.stateErr:
		w.stateErr = false
		w.log.Info("the state file can be written again", "file", w.cfg.StateFile)
	}
}

// event acts on one inotify event.
func (w *Watcher) event(ev notifyEvent) {
	switch {
	case ev.overflow:
		w.requestScan()
	case ev.dir && ev.created:
		w.requestScan() // a new directory: list and watch it
	case ev.dir:
		// a directory removed or moved away: the next scan notices
	case ev.written:
		if w.depthOK(filepath.Dir(ev.path)) {
			if fi, err := os.Stat(ev.path); err == nil {
				w.consider(ev.path, fi, true, nil)
			}
		}
	case ev.removed:
		w.forget(ev.path)
		w.idleIfIdle()
	}
}

// depthOK reports whether files of dir are taken (Config.FileDepth).
func (w *Watcher) depthOK(dir string) bool {
	if w.cfg.FileDepth <= 0 {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.dirs[dir]
	return d != nil && d.depth+1 == w.cfg.FileDepth
}

// idleIfIdle runs OnIdle when nothing is queued or being read.
func (w *Watcher) idleIfIdle() {
	w.mu.Lock()
	idle := len(w.queue) == 0 && w.busy == 0
	w.mu.Unlock()
	if idle && w.cfg.OnIdle != nil {
		w.cfg.OnIdle(w)
	}
}
