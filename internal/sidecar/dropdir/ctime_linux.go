package dropdir

import (
	"os"
	"syscall"
	"time"
)

// ctimeOf returns the time of the last change of fi's inode: set when the
// file is created or renamed in, and by any change of its times (utimes
// sets it to now, never back), so that it tells a file that arrived since
// a listing even when a copy kept an old modification time (cp -p,
// rsync -a).
func ctimeOf(fi os.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Unix()), true
}
