package toolrun

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The reaper: what a tool run leaves behind is killed.
//
// A run's process group is killed at its deadline, and after its end when
// a process of it still holds the output. That misses a child that left
// the group (setsid, daemon(3)): the exporter becomes a child subreaper
// (Linux's PR_SET_CHILD_SUBREAPER) before its first run, so that every
// descendant whose parent exits is reparented to it instead of to init.
// When a run is over, the exporter's children are listed (/proc) and those
// that are neither a tool still tracked here nor in the process group of a
// run still under way are killed and reaped (wait4 on their pid alone: the
// leaders are exec.Cmd's to reap).
//
// Children in the exporter's own process group are never touched: a
// program that starts other processes with os/exec (a test running
// promtool) keeps them there; a tool run never leaves a process there.
//
// Under sudo (the exporter unprivileged, lctl run as root) a root process
// cannot be signalled: it is logged once and reaped when it exits.

// procs tracks the runs, under mu. Start forks under mu, so that a sweep
// never mistakes a leader being started for a stray.
var procs = struct {
	mu       sync.Mutex
	stopping bool
	// runs are the runs not over yet, by leader pid (their process
	// group); leaders the leaders not yet reaped by their exec.Cmd.
	runs    map[int]*commandOutput
	leaders map[int]bool
}{runs: map[int]*commandOutput{}, leaders: map[int]bool{}}

var (
	strays atomic.Uint64 // processes killed by sweeps
	logger atomic.Pointer[slog.Logger]
)

// SetLogger sets where the reaper logs the processes it kills (nothing is
// logged before).
func SetLogger(l *slog.Logger) { logger.Store(l) }

func reapLogger() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// StraysKilled returns the number of processes left behind by tool runs
// that the exporter killed since it started: those that escaped a run's
// process group, and those still holding a run's output past its end.
func StraysKilled() uint64 { return strays.Load() }

// startTracked starts cmd and tracks it, unless the exporter is stopping.
func startTracked(cmd *exec.Cmd, o *commandOutput) error {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.stopping {
		return ErrStopping
	}
	becomeSubreaper()
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	procs.runs[pid], procs.leaders[pid] = o, true
	return nil
}

// leaderReaped notes that exec.Cmd reaped a leader.
func leaderReaped(pid int) {
	procs.mu.Lock()
	delete(procs.leaders, pid)
	procs.mu.Unlock()
}

// runOver notes the end of a run: what it left is now fair game, and is
// looked for in the background.
func runOver(pid int) {
	procs.mu.Lock()
	_, ok := procs.runs[pid]
	delete(procs.runs, pid)
	procs.mu.Unlock()
	if ok {
		sweepSoon()
	}
}

// killLeftBehind ends a run whose output a process still held after the
// leader's exit and the grace: the processes it left are killed now, those
// reparented to the exporter by a sweep (which counts them), any other of
// its group by the group's kill.
func killLeftBehind(pid int) {
	procs.mu.Lock()
	delete(procs.runs, pid)
	procs.mu.Unlock()
	sweep()
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// KillAll kills the process group of every tool run in flight (and any
// children found that escaped it), and makes later Starts fail with
// ErrStopping. For shutdown.
func KillAll() {
	procs.mu.Lock()
	procs.stopping = true
	var gone []chan struct{}
	for pid, o := range procs.runs {
		o.stopped.Store(true)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		gone = append(gone, o.leaderGone)
	}
	procs.mu.Unlock()
	// Children that escaped a group are reparented to the exporter only
	// once their parent is gone: wait for the leaders (a little; one
	// stuck in the kernel does not exit), then sweep.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, ch := range gone {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	sweep()
}

var (
	sweepRequests = make(chan struct{}, 1)
	sweeperOnce   sync.Once
)

// sweepSoon asks for a sweep in the background: the run that asks has
// ended, its scrape need not wait for the listing of /proc. Requests made
// during a sweep make one more.
func sweepSoon() {
	sweeperOnce.Do(func() {
		go func() {
			for range sweepRequests {
				sweep()
			}
		}()
	})
	select {
	case sweepRequests <- struct{}{}:
	default:
	}
}

// child is a child process of the exporter, as /proc shows it.
type child struct {
	pid, pgid int
	zombie    bool // exited, or dying of a SIGKILL already sent
	comm      string
}

var sweepState struct {
	sync.Mutex
	killed map[int]bool // killed, not reaped yet: counted once
	warned map[int]bool // could not be killed: logged once
	logged bool         // the first kill was logged at warning level
}

// sweep kills and reaps the exporter's children that no run owns. A killed
// process' own children are reparented to the exporter in turn: sweep
// looks again while it kills something, a few rounds at most.
func sweep() {
	pending := false // killed or dying children not reaped yet
	sweepState.Lock()
	defer sweepState.Unlock()
	if sweepState.killed == nil {
		sweepState.killed, sweepState.warned = map[int]bool{}, map[int]bool{}
	}
	own := syscall.Getpgrp()
	present := map[int]bool{}
	for round := 0; round < 8; round++ {
		kids := listChildren()
		var killed, others []child
		procs.mu.Lock()
		for _, k := range kids {
			present[k.pid] = true
			if k.pgid == own || procs.leaders[k.pid] || procs.runs[k.pgid] != nil {
				continue
			}
			switch {
			case k.zombie:
				others = append(others, k)
			case sweepState.killed[k.pid]:
				others = append(others, k) // killed before, stuck in the kernel
			default:
				err := syscall.Kill(k.pid, syscall.SIGKILL)
				switch {
				case err == nil:
					sweepState.killed[k.pid] = true
					strays.Add(1)
					killed = append(killed, k)
				case !sweepState.warned[k.pid]:
					// Not reaped until it exits by itself: not waited
					// for either.
					sweepState.warned[k.pid] = true
					reapLogger().Warn("a process left behind by an lctl or lnetctl run cannot be killed; it is reaped when it exits (a tool run as another user, through sudo?)",
						"pid", k.pid, "command", k.comm, "err", err)
					reaped(k.pid)
				default:
					reaped(k.pid)
				}
			}
		}
		procs.mu.Unlock()
		left := reap(others, 10*time.Millisecond)
		left += reap(killed, 100*time.Millisecond)
		pending = pending || left > 0
		if len(killed) > 0 {
			logKilled(killed)
		}
		if len(killed) == 0 {
			break
		}
	}
	for pid := range sweepState.warned {
		if !present[pid] {
			delete(sweepState.warned, pid)
		}
	}
	// A process killed but not dead yet (a loaded machine, a call in the
	// kernel to return from) would stay a zombie until the next run's
	// sweep, which may be a scrape interval away: look again shortly, a
	// few times.
	if !pending {
		sweepRetries.Store(0)
	} else if sweepRetries.Add(1) <= 20 {
		time.AfterFunc(250*time.Millisecond, sweepSoon)
	}
}

var sweepRetries atomic.Int32

// reap waits for the children given, polling for at most wait, and
// returns how many are left: a process blocked in the kernel dies when it
// returns, and is reaped by a later sweep.
func reap(kids []child, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	for len(kids) > 0 {
		rest := kids[:0]
		for _, k := range kids {
			if reaped(k.pid) {
				delete(sweepState.killed, k.pid)
			} else {
				rest = append(rest, k)
			}
		}
		kids = rest
		if len(kids) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return len(kids)
}

func logKilled(killed []child) {
	pids := make([]int, len(killed))
	comms := make([]string, len(killed))
	for i, k := range killed {
		pids[i], comms[i] = k.pid, k.comm
	}
	args := []any{"killed", len(killed), "pids", pids, "commands", comms, "total", strays.Load()}
	const msg = "killed processes left behind by an lctl or lnetctl run (escaped from its process group, or holding its output after it exited)"
	if !sweepState.logged {
		sweepState.logged = true
		reapLogger().Warn(msg+"; later ones are logged at debug level and counted in hpcio_exporter_lctl_strays_killed_total", args...)
	} else {
		reapLogger().Debug(msg, args...)
	}
}

// pid of the exporter, for /proc.
var self = os.Getpid()
