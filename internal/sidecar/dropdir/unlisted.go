package dropdir

import (
	"errors"
	"fmt"
	"io/fs"
)

// Reasons a directory is not listed (Stats.Unlisted).
const (
	// UnlistedPermission: the exporter's user may not list it.
	UnlistedPermission = "permission"
	// UnlistedSymlinkOwner: a link to it whose owner is neither root nor
	// the directory's owner (see OpenFile): not followed.
	UnlistedSymlinkOwner = "symlink_owner"
	// UnlistedError: any other error (I/O, too many open files).
	UnlistedError = "io_error"
	// UnlistedTooDeep: more than MaxDepth levels below its drop
	// directory; what it holds is not listed either (counted once, at
	// the first level too deep).
	UnlistedTooDeep = "too_deep"
)

// UnlistedReasons lists every reason, for exporting them at 0.
var UnlistedReasons = []string{UnlistedPermission, UnlistedSymlinkOwner, UnlistedError, UnlistedTooDeep}

// unlistedDir is a directory the scans cannot list, as last said.
type unlistedDir struct {
	reason string
	gen    int // the last scan that met it
}

// unlistedReason classifies an error listing a directory.
func unlistedReason(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return UnlistedPermission
	}
	return UnlistedError
}

// noteUnlisted records that dir (a directory, or a link to one) is not
// listed by scan gen, and says so when that is news: the first time, or
// for another reason than before. A directory that stays unlistable is
// said once, not at every rescan.
func (w *Watcher) noteUnlisted(dir, reason string, err error, gen int) {
	w.mu.Lock()
	before := w.unlisted[dir]
	w.unlisted[dir] = &unlistedDir{reason: reason, gen: gen}
	w.mu.Unlock()
	if before != nil && before.reason == reason {
		return
	}
	switch reason {
	case UnlistedSymlinkOwner:
		w.log.Warn("a link to a "+w.what()+" directory is not followed: its owner is neither root nor the owner of the directory it points to",
			"link", dir)
	case UnlistedTooDeep:
		w.log.Warn(fmt.Sprintf("a %s directory is more than %d levels below its drop directory: neither it nor anything under it is listed", w.what(), MaxDepth),
			"dir", dir)
	case UnlistedPermission:
		w.log.Warn("cannot list a "+w.what()+" directory; its files are left out until it can be listed",
			"dir", dir, "err", err,
			"hint", "the exporter's user needs read and execute permission on it (its group: the unit's SupplementaryGroups=)")
	default:
		w.log.Warn("cannot list a "+w.what()+" directory; its files are left out until it can be listed", "dir", dir, "err", err)
	}
}

// noteListed records that dir was listed, and says so if it could not be
// before.
func (w *Watcher) noteListed(dir string) {
	w.mu.Lock()
	before := w.unlisted[dir]
	delete(w.unlisted, dir)
	w.mu.Unlock()
	if before != nil {
		w.log.Info("a "+w.what()+" directory that could not be listed is listed again", "dir", dir)
	}
}

// pruneUnlistedLocked forgets, after scan gen, the directories it did not meet
// (removed, or no longer under a directory listed). Called with w.mu held.
func (w *Watcher) pruneUnlistedLocked(gen int) {
	for dir, u := range w.unlisted {
		if u.gen != gen {
			delete(w.unlisted, dir)
		}
	}
}
