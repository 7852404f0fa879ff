// Package logwatch is the machinery of the Darshan sidecar: it finds the
// logs that darshan-runtime drops in directories (recursively, in its
// YYYY/M/D layout), by inotify where the kernel sees the writes and by a
// periodic rescan everywhere (drop directories usually live on Lustre or
// NFS, where inotify sees nothing of other nodes' writes); reads each log
// once (same path, size and modification time: same log) in a bounded pool
// of workers; and keeps, per job, the summary of its logs and the values the
// collector exports, for a retention window after each log's end.
//
// It parses nothing itself (package darshan reads logs, darshan/signals
// computes) and exports nothing (collector/darshan.go does).
package logwatch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Config configures a Sidecar; zero fields take the defaults below.
type Config struct {
	Dirs           []string      // drop directories, searched recursively
	RescanInterval time.Duration // default 30s
	Workers        int           // logs read at the same time; default 2
	Retention      time.Duration // after a log's end; default 24h
	MaxJobs        int           // 0: no limit
	ExeLabel       bool          // label jobs with the executable's base name
	MaxRecords     int           // records kept per job; 0: none
	// Settle is how long a log that is still empty, has a zero header or
	// is truncated is retried as "being written" (counted waiting) before
	// it counts as failed; default 1m. The runtime writes the header last.
	Settle time.Duration
	// NoInotify turns inotify off: rescans only.
	NoInotify bool
	Now       func() time.Time
	Logger    *slog.Logger
}

const (
	partialSuffix = ".darshan_partial"
	logSuffix     = ".darshan"
)

// Sidecar watches the drop directories. Start it with Start, stop it with
// Close.
type Sidecar struct {
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	store *store
	stats stats

	mu       sync.Mutex
	files    map[string]*fileState
	dirs     map[string]*dirState
	partial  map[string]*partialFile // *.darshan_partial files, by path
	queue    []string
	queued   map[string]bool
	busy     int
	idle     *sync.Cond // signalled when the queue empties and no worker is busy
	gen      int        // scan generation
	missing  map[string]bool
	scanning sync.Mutex // one scan at a time

	wake     chan struct{} // a log was queued
	rescan   chan struct{} // a scan is wanted now
	notifier *notifier
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

type fileStatus int

const (
	statusQueued  fileStatus = iota
	statusDone               // read (exported, a copy, expired or dropped)
	statusFailed             // counted failed; read again only when it changes
	statusWaiting            // being written: retried at each scan
	statusOld                // modified before the retention window: never read
)

// fileState is what the sidecar knows of one file: the size and
// modification time it was read with, and the outcome.
type fileState struct {
	size   int64
	mtime  time.Time
	dir    string
	status fileStatus
	gen    int // the last scan that saw it
}

// partialFile is a log the runtime is still writing under its temporary
// name; it is renamed to *.darshan when complete.
type partialFile struct {
	mtime time.Time
	gen   int
}

// dirState is one directory as last listed.
type dirState struct {
	mtime time.Time
	leaf  bool // no sub-directories
	gen   int  // the last scan that listed or skipped it
}

// Start checks the configuration, starts the workers, the rescans and
// inotify, and returns at once; the first scan runs in the background.
func Start(cfg Config) (*Sidecar, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("no directory to watch")
	}
	if cfg.RescanInterval <= 0 {
		cfg.RescanInterval = 30 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Retention <= 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.Settle <= 0 {
		cfg.Settle = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sidecar{cfg: cfg, log: cfg.Logger, now: cfg.Now,
		store: newStore(cfg.Retention, cfg.MaxJobs, cfg.MaxRecords), stats: newStats(),
		files: map[string]*fileState{}, dirs: map[string]*dirState{}, partial: map[string]*partialFile{},
		queued: map[string]bool{}, missing: map[string]bool{},
		wake: make(chan struct{}, 1), rescan: make(chan struct{}, 1)}
	s.idle = sync.NewCond(&s.mu)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if !cfg.NoInotify {
		n, err := newNotifier()
		if err != nil {
			s.log.Warn("inotify unavailable, finding Darshan logs by rescans only", "err", err)
		} else {
			s.notifier = n
			s.wg.Add(1)
			go func() { defer s.wg.Done(); n.run(s.ctx, s.event) }()
		}
	}
	for range cfg.Workers {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.work() }()
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.scanLoop() }()
	return s, nil
}

// Close stops the sidecar and waits for its goroutines.
func (s *Sidecar) Close() error {
	s.cancel()
	if s.notifier != nil {
		s.notifier.close()
	}
	s.mu.Lock()
	s.idle.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// Sync scans now and returns when every log found is read (or ctx ends).
func (s *Sidecar) Sync(ctx context.Context) error {
	s.scan()
	return s.waitIdle(ctx)
}

func (s *Sidecar) waitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.idle.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 || s.busy > 0 {
		if ctx.Err() != nil || s.ctx.Err() != nil {
			return errors.Join(ctx.Err(), s.ctx.Err())
		}
		s.idle.Wait()
	}
	return nil
}

func (s *Sidecar) scanLoop() {
	t := time.NewTicker(s.cfg.RescanInterval)
	defer t.Stop()
	for {
		s.scan()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.rescan:
		}
	}
}

// requestScan asks for a scan soon (new directories, inotify overflow).
func (s *Sidecar) requestScan() {
	select {
	case s.rescan <- struct{}{}:
	default:
	}
}

// consider looks at a file found by a scan or an inotify event, and queues
// it when it is a log not read in this version. retry re-queues a log that
// was being written.
func (s *Sidecar) consider(path string, fi os.FileInfo, retry bool) {
	name := filepath.Base(path)
	if !fi.Mode().IsRegular() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasSuffix(name, partialSuffix) {
		s.partial[path] = &partialFile{mtime: fi.ModTime(), gen: s.gen}
		return
	}
	if !strings.HasSuffix(name, logSuffix) {
		return
	}
	st := s.files[path]
	if st != nil {
		st.gen = s.gen
		if st.size == fi.Size() && st.mtime.Equal(fi.ModTime()) {
			if retry && st.status == statusWaiting {
				s.enqueueLocked(path)
			}
			return
		}
	} else {
		st = &fileState{dir: filepath.Dir(path), gen: s.gen}
		s.files[path] = st
	}
	st.size, st.mtime = fi.Size(), fi.ModTime()
	// The runtime writes a log when the job ends, so a log modified before
	// the retention window ended before it: not worth opening.
	if fi.ModTime().Add(s.cfg.Retention).Before(s.now()) {
		st.status = statusOld
		return
	}
	st.status = statusQueued
	s.enqueueLocked(path)
}

func (s *Sidecar) enqueueLocked(path string) {
	if s.queued[path] {
		return
	}
	s.queued[path] = true
	s.queue = append(s.queue, path)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// forget drops a file that vanished (or was renamed away).
func (s *Sidecar) forget(path string) {
	s.mu.Lock()
	delete(s.files, path)
	delete(s.partial, path)
	s.mu.Unlock()
	s.store.remove(path)
}

// work reads queued logs until the sidecar closes.
func (s *Sidecar) work() {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.ctx.Done():
				return
			case <-s.wake:
			}
			s.mu.Lock()
		}
		path := s.queue[0]
		s.queue[0] = ""
		s.queue = s.queue[1:]
		delete(s.queued, path)
		s.busy++
		s.mu.Unlock()
		// More work may be queued behind this one: pass the wake-up on.
		select {
		case s.wake <- struct{}{}:
		default:
		}

		s.ingest(path)

		s.mu.Lock()
		s.busy--
		if len(s.queue) == 0 && s.busy == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}
}

// setStatus records the outcome of reading path with the given size and
// modification time.
func (s *Sidecar) setStatus(path string, fi os.FileInfo, status fileStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.files[path]
	if st == nil { // forgotten meanwhile (vanished): the outcome is moot
		return
	}
	st.size, st.mtime, st.status = fi.Size(), fi.ModTime(), status
}
