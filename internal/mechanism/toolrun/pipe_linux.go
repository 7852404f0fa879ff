package toolrun

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the pipe buffer asked for a tool's output. Linux's default
// of 64 KiB makes a read, and a context switch, per 64 KiB of the
// hundreds of megabytes lctl prints on a busy server; 1 MiB is the most an
// unprivileged process may ask for by default (fs.pipe-max-size).
const pipeSize = 1 << 20

// growPipe enlarges the pipe of a tool's output and returns its capacity;
// where it cannot, the default stays, which is only slower.
func growPipe(f *os.File) int {
	size := 64 << 10
	// Through SyscallConn: Fd would turn the pipe to blocking mode.
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
			if n, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && n > 0 {
				size = n
			}
		})
	}
	return size
}

// pipeBuffered returns the number of bytes waiting in a pipe (FIONREAD,
// which Linux names TIOCINQ).
func pipeBuffered(f *os.File) int {
	n := 0
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		})
	}
	return n
}
