package dropdir

import (
	"errors"
	"io/fs"
	"os"
)

// Drop directories are written by every user of a cluster, and the
// exporter may read what they cannot (its group, or root). So what it
// opens there follows one rule, Apache's SymLinksIfOwnerMatch:
//
//   - Only regular files are opened, and never in a way that blocks or
//     takes a terminal: a FIFO named like a log is refused, not waited on.
//   - A symbolic link is followed only when its owner owns what it points
//     to, or is root (a site linking directories into place). A link made
//     by a user to a file of root's or of another user's is refused: the
//     user could not read it, the exporter must not read it for them.
//   - The rule is checked against the file opened (fstat of the open
//     descriptor), not against a look at the path before: a link swapped
//     between the look and the open cannot win.
//
// The owner of a link or a file that the kernel shows as the overflow uid
// (an id not mapped into the exporter's user namespace, as under systemd's
// PrivateUsers=, where every other user is "nobody") is unknown: two
// unknown owners are not taken for one.

var (
	// ErrNotRegular: the path is not a regular file (a directory, FIFO,
	// socket or device).
	ErrNotRegular = errors.New("not a regular file")
	// ErrSymlinkOwner: the path is a symbolic link whose owner is neither
	// root nor the owner of its target; it is not followed.
	ErrSymlinkOwner = errors.New("symbolic link not followed: its owner is neither root nor the owner of its target")
)

// OpenFile opens the file at path for reading, following the rule above:
// it returns the open file and its state (by fstat), or a *fs.PathError
// wrapping ErrNotRegular, ErrSymlinkOwner or the error of lstat or open
// (fs.ErrNotExist, fs.ErrPermission, …). The errors name the path, never
// anything the file holds.
func OpenFile(path string) (*os.File, os.FileInfo, error) {
	for try := 0; ; try++ {
		f, fi, err := openOnce(path)
		// A path that was no link when looked at and is one when opened
		// (O_NOFOLLOW refused it) changed in between: look again, a few
		// times, then give up.
		if errors.Is(err, errSwapped) && try < 3 {
			continue
		}
		if errors.Is(err, errSwapped) {
			err = &fs.PathError{Op: "open", Path: path, Err: errors.New("replaced by a symbolic link while it was opened")}
		}
		return f, fi, err
	}
}

var errSwapped = errors.New("swapped")

func openOnce(path string) (*os.File, os.FileInfo, error) {
	refuse := func(err error) (*os.File, os.FileInfo, error) {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	link := lfi.Mode()&os.ModeSymlink != 0
	flags := openFlags
	if link {
		// Looked at before opening too, so that a link to a FIFO or a
		// device is not even opened (opening some devices acts); the check
		// that counts comes after the open.
		tfi, err := os.Stat(path)
		if err != nil {
			return nil, nil, err
		}
		if !tfi.Mode().IsRegular() {
			return refuse(ErrNotRegular)
		}
	} else {
		if !lfi.Mode().IsRegular() {
			return refuse(ErrNotRegular)
		}
		flags |= noFollow
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if !link && isLoop(err) {
			return nil, nil, errSwapped
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return refuse(ErrNotRegular)
	}
	// The owner compared is the one Lstat saw: a link replaced between
	// Lstat and open was replaced by its directory's writer, who cannot
	// make a link owned by another user; a user's link replaced by root's
	// makes a refusal at worst.
	if link && !linkAllowed(lfi, fi) {
		f.Close()
		return refuse(ErrSymlinkOwner)
	}
	return f, fi, nil
}

// linkAllowed tells whether a link (its Lstat state) may lead to target:
// its owner is root, or owns target, and is known.
func linkAllowed(link, target os.FileInfo) bool {
	lu, ok1 := ownerOf(link)
	tu, ok2 := ownerOf(target)
	if !ok1 || !ok2 {
		return false
	}
	return lu == 0 || lu == tu && lu != overflowUID()
}
