//go:build unix

package dropdir

import (
	"os"
	"syscall"
)

// fileID is a directory's device and inode: what two paths to one
// directory (through a link) share.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // Dev's type varies by platform
}
