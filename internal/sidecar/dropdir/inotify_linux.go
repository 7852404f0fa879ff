//go:build linux

package dropdir

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// notifier watches directories with inotify (the standard library's
// syscall package has all it needs). It only speeds discovery up: inotify
// sees the writes of this node's kernel, not those of other Lustre or NFS
// clients, and a full queue drops events; the rescans find everything.
type notifier struct {
	f *os.File // non-blocking, so that Close ends a pending Read

	mu     sync.Mutex
	byWD   map[int32]string
	byDir  map[string]int32
	warned bool // the watch limit was hit
}

const watchMask = syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM |
	syscall.IN_DELETE | syscall.IN_CREATE | syscall.IN_DELETE_SELF | syscall.IN_ONLYDIR

func newNotifier() (*notifier, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &notifier{f: os.NewFile(uintptr(fd), "inotify"), byWD: map[int32]string{}, byDir: map[string]int32{}}, nil
}

// add watches dir; failures leave dir to the rescans. The watch limit
// (ENOSPC: fs.inotify.max_user_watches) is said once, with its hint; a
// directory that cannot be read (EACCES) or is gone is the listing's to
// report, and said there.
func (n *notifier) add(dir string, log *slog.Logger, what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.byDir[dir]; ok {
		return
	}
	wd, err := syscall.InotifyAddWatch(int(n.f.Fd()), dir, watchMask)
	if err != nil {
		if hint := watchLimitHint(err); hint != "" && !n.warned {
			n.warned = true
			log.Warn("inotify cannot watch a "+what+" directory; it and those after it are left to the rescans", "dir", dir, "err", err, "hint", hint)
		}
		return
	}
	n.byWD[int32(wd)] = dir
	n.byDir[dir] = int32(wd)
}

// remove stops watching dir (it vanished: the kernel already dropped it).
func (n *notifier) remove(dir string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if wd, ok := n.byDir[dir]; ok {
		syscall.InotifyRmWatch(int(n.f.Fd()), uint32(wd))
		delete(n.byDir, dir)
		delete(n.byWD, wd)
	}
}

func (n *notifier) watches() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.byDir)
}

func (n *notifier) close() { n.f.Close() }

// notifyEvent is one inotify event, resolved to a path.
type notifyEvent struct {
	path     string
	overflow bool // events were lost: rescan
	dir      bool // about a directory
	created  bool // created or moved in
	written  bool // a file closed after writing, or moved in
	removed  bool // deleted or moved away
}

// run reads events until ctx ends or the notifier is closed.
func (n *notifier) run(ctx context.Context, handle func(notifyEvent)) {
	buf := make([]byte, 64<<10)
	for ctx.Err() == nil {
		k, err := n.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || ctx.Err() != nil {
				return
			}
			continue
		}
		parseEvents(buf[:k], func(wd int32, mask uint32, name string) {
			if mask&syscall.IN_Q_OVERFLOW != 0 {
				handle(notifyEvent{overflow: true})
				return
			}
			n.mu.Lock()
			dir, ok := n.byWD[wd]
			if mask&syscall.IN_IGNORED != 0 && ok {
				delete(n.byWD, wd)
				delete(n.byDir, dir)
			}
			n.mu.Unlock()
			if !ok {
				return
			}
			path := dir
			if name != "" {
				path = filepath.Join(dir, name)
			}
			handle(notifyEvent{path: path,
				dir:     mask&syscall.IN_ISDIR != 0,
				created: mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0,
				written: mask&(syscall.IN_CLOSE_WRITE|syscall.IN_MOVED_TO) != 0,
				removed: mask&(syscall.IN_MOVED_FROM|syscall.IN_DELETE) != 0})
		})
	}
}

// watchLimitHint returns the hint for an inotify_add_watch error that is a
// limit of the system, "" for the others.
func watchLimitHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "raise fs.inotify.max_user_watches"
	case errors.Is(err, syscall.EMFILE):
		return "raise fs.inotify.max_user_instances"
	}
	return ""
}
