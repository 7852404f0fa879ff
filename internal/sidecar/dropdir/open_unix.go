//go:build unix

package dropdir

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// openFlags open for reading without blocking on a FIFO (refused after
// fstat) and without making a terminal the exporter's.
const (
	openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC
	noFollow  = syscall.O_NOFOLLOW
)

// isLoop tells open's error on a link with O_NOFOLLOW.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// ownerOf returns the uid owning fi.
func ownerOf(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// overflowUID is the uid the kernel shows for ids not mapped into the
// process's user namespace (kernel.overflowuid, 65534 by default).
var overflowUID = sync.OnceValue(func() uint32 {
	if data, err := os.ReadFile("/proc/sys/kernel/overflowuid"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 32); err == nil {
			return uint32(v)
		}
	}
	return 65534
})
