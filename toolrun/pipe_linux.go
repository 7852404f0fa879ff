package toolrun

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the pipe buffer asked for a tool's output. Linux's default
// of 64 KiB makes a read, and a context switch, per 64 KiB of the
// hundreds of megabytes lctl prints on a busy server; 1 MiB is the most an
// unprivileged process may ask for by default (fs.pipe-max-size).
const pipeSize = 1 << 20

// growPipe enlarges the pipe of a tool's output; where it cannot, the
// default stays, which is only slower.
func growPipe(r io.Reader) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	// Through SyscallConn: Fd would turn the pipe to blocking mode.
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}
