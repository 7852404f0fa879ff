package collector

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/hpcio/hpcio_exporter/dayu"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// Each scan of a DaYu drop directory ends with one line in the log: the
// runs and tracker files found, the files parsed and failed since the scan
// before, and the runs still waiting for stats. INFO when any of it
// changed, DEBUG otherwise, as the Darshan sidecar does (logwatch).

const dayuScanMsg = "DaYu drop directory scanned"

// dayuTally is what became of the tracker files of one drop directory
// since the last report.
type dayuTally struct {
	parsed int
	failed map[dayu.Reason]int
}

func (t *dayuTally) failures() int {
	n := 0
	for _, v := range t.failed {
		n += v
	}
	return n
}

// dayuShown is the state a report shows, compared with the report before.
type dayuShown struct{ runs, files, waiting int }

// noteParse tallies a parse of path that failed for reason ("": parsed),
// with c.mu held.
func (c *dayuCollector) noteParse(path string, reason dayu.Reason) {
	root := dropdir.Root(c.dirs, path)
	t := c.tally[root]
	if t == nil {
		t = &dayuTally{failed: map[dayu.Reason]int{}}
		c.tally[root] = t
	}
	if reason != "" {
		t.failed[reason]++
		return
	}
	t.parsed++
}

// report logs each drop directory's line (dropdir's OnReport, after the
// view is published). Reports come one at a time, from the scans.
func (c *dayuCollector) report(w *dropdir.Watcher, r dropdir.Report) {
	runs := w.Dirs(1)
	c.mu.Lock()
	withStats := map[string]bool{} // run directories with a stats file read
	for path, f := range c.files {
		if f.stats != nil {
			withStats[filepath.Dir(path)] = true
		}
	}
	taken := c.tally
	c.tally = map[string]*dayuTally{}
	c.mu.Unlock()
	for _, d := range r.Dirs {
		if d.Missing {
			continue // the watcher warned, once
		}
		state := dayuShown{files: d.Files}
		for _, run := range runs {
			if dropdir.Root(c.dirs, run) == d.Dir {
				state.runs++
				if !withStats[run] {
					state.waiting++
				}
			}
		}
		t := taken[d.Dir]
		if t == nil {
			t = &dayuTally{}
		}
		c.logScan(r, d.Dir, state, t)
	}
}

// logScan logs the line of one drop directory.
func (c *dayuCollector) logScan(r dropdir.Report, dir string, state dayuShown, t *dayuTally) {
	before, shown := c.shown[dir]
	c.shown[dir] = state
	level := slog.LevelDebug
	if !shown || state != before || t.parsed+t.failures() > 0 {
		level = slog.LevelInfo
	}
	attrs := []slog.Attr{
		slog.String("dir", dir), slog.Uint64("scan", r.Scan),
		slog.Int("runs", state.runs), slog.Int("files", state.files),
		slog.Int("parsed", t.parsed), slog.Int("failed", t.failures()),
	}
	if t.failures() > 0 {
		var reasons []any
		for _, reason := range dayu.Reasons {
			if n := t.failed[reason]; n > 0 {
				reasons = append(reasons, slog.Int(string(reason), n))
			}
		}
		attrs = append(attrs, slog.Group("failed_reason", reasons...))
	}
	// Runs without stats: the tracker writes a task's stats when it ends.
	attrs = append(attrs, slog.Int("waiting", state.waiting), slog.Duration("listing", r.Listing))
	c.logger.LogAttrs(context.Background(), level, dayuScanMsg, attrs...)
}
