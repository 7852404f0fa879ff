package toolrun

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

var subreaper sync.Once

// becomeSubreaper makes the exporter the parent of every orphaned
// descendant, so that a child that escaped a run's process group can still
// be found among its children. Where it fails (Linux before 3.4, a
// seccomp filter), such children go to init as before and are not found.
func becomeSubreaper() {
	subreaper.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			reapLogger().Warn("cannot become a child subreaper: processes that escape an lctl or lnetctl run's process group will not be found", "err", err)
		}
	})
}

// listChildren lists the exporter's children. The children files of its
// threads (/proc/self/task/TID/children) name them at the cost of a read
// per thread; where the kernel lacks them (no CONFIG_PROC_CHILDREN), every
// process' stat is read, which costs a read per process on the machine.
// A child missed by a listing made while processes come and go (as the
// children files warn) is found by the next sweep.
func listChildren() []child {
	if pids, ok := childrenFiles(); ok {
		out := make([]child, 0, len(pids))
		buf := make([]byte, 1024)
		for _, pid := range pids {
			if c, ok := readStat(strconv.Itoa(pid), buf); ok {
				out = append(out, c)
			}
		}
		return out
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []child
	buf := make([]byte, 1024)
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		if c, ok := readStat(name, buf); ok {
			out = append(out, c)
		}
	}
	return out
}

var noChildrenFiles atomic.Bool

// childrenFiles reads the children of every thread of the exporter: a
// subreaper's adopted children may be any thread's.
func childrenFiles() ([]int, bool) {
	if noChildrenFiles.Load() {
		return nil, false
	}
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	var pids []int
	for _, tid := range tids {
		data, err := os.ReadFile("/proc/self/task/" + tid + "/children")
		if errors.Is(err, fs.ErrNotExist) {
			if _, terr := os.Stat("/proc/self/task/" + tid); terr == nil {
				noChildrenFiles.Store(true) // the thread is there, the file is not
				return nil, false
			}
			continue // the thread ended
		}
		for _, f := range bytes.Fields(data) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids, true
}

// readStat reads /proc/<pid>/stat into buf and keeps the process when it
// is a child of the exporter.
func readStat(pid string, buf []byte) (child, bool) {
	fd, err := syscall.Open("/proc/"+pid+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return child{}, false // gone meanwhile
	}
	n, _ := syscall.Read(fd, buf)
	syscall.Close(fd)
	if n <= 0 {
		return child{}, false
	}
	return parseStat(buf[:n])
}

// parseStat reads "pid (comm) state ppid pgrp ..." and keeps the
// process when its parent is the exporter. comm may hold spaces and
// parentheses: it ends at the last ')'.
func parseStat(b []byte) (child, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || end < open || len(b) < end+2 {
		return child{}, false
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 3 {
		return child{}, false
	}
	pid, err1 := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	ppid, err2 := strconv.Atoi(string(fields[1]))
	pgid, err3 := strconv.Atoi(string(fields[2]))
	if err1 != nil || err2 != nil || err3 != nil || ppid != self {
		return child{}, false
	}
	// A process being killed already (its group's SIGKILL at the
	// deadline) has SIGKILL pending in the signal mask of field 31: it is
	// dying, not one to count.
	dying := fields[0][0] == 'Z' || fields[0][0] == 'X'
	if len(fields) > 28 {
		if pending, err := strconv.ParseUint(string(fields[28]), 10, 64); err == nil && pending&(1<<(syscall.SIGKILL-1)) != 0 {
			dying = true
		}
	}
	return child{pid: pid, pgid: pgid, zombie: dying, comm: string(b[open+1 : end])}, true
}

// reaped reaps pid if it has exited.
func reaped(pid int) bool {
	var ws unix.WaitStatus
	got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	return got == pid || err == unix.ECHILD
}
