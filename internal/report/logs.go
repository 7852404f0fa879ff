package report

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// LogOptions are how the logs are read and what the report keeps.
type LogOptions struct {
	// MemoryBudget bounds what reading one log may take (0: the default
	// of package darshan); a log over it is refused.
	MemoryBudget int64
	// Insights are the thresholds of the triggers.
	Insights insights.Config
	// TopFiles is how many files the report lists (most bytes first): 0
	// is DefaultTopFiles, a negative number none.
	TopFiles int
	// HidePaths leaves file paths out (the insights' files too).
	HidePaths bool
}

// DefaultTopFiles is how many files the report lists by default.
const DefaultTopFiles = 20

// identity is what makes logs one job, as the sidecar's (logwatch):
// the job id (the runtime's fallback, a pid, and no id are "_nojob") and
// the user; for logs outside a batch job, also the executable, since
// runs of different programs outside jobs are not one job.
type identity struct {
	jobID, exe string
	uid        int64
}

// String names the identity without the executable: a message holds no
// byte of a log's content but its numbers.
func (id identity) String() string {
	if id.jobID == jobid.SyntheticJob {
		return fmt.Sprintf("outside a batch job, uid %d", id.uid)
	}
	return fmt.Sprintf("job %s, uid %d", id.jobID, id.uid)
}

// fingerprint tells a copy of a log from another log of the same job, as
// the sidecar does: same job, times, command line and bytes.
type fingerprint struct {
	jobID, uid, nprocs int64
	start, end         float64
	cmd                uint64
	bytes              float64
}

// logJobID is the sidecar's jobid of a log (jobid.OfDarshanLog).
func logJobID(id int64, path string) string { return jobid.OfDarshanLog(id, path) }

// The longest strings of a log the report keeps, in bytes: an executable's
// base name, a path or mount point, a file system type. Darshan's own
// limits are below them (the command line and mount table share 4 KiB).
const (
	maxExeBytes  = 256
	maxPathBytes = 4096
	maxTypeBytes = 256
)

// exeBase is the base name of a command line's first word, as the log
// holds it: the report's JSON keeps a log's strings, its page shows their
// visible form (control and invisible characters as escapes).
func exeBase(cmdline string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(cmdline, " \t"), " ")
	first, _, _ = strings.Cut(first, "\t")
	if i := strings.LastIndexByte(first, '/'); i >= 0 {
		first = first[i+1:]
	}
	return capped(strings.TrimSuffix(first, "<TRUNCATED>"), maxExeBytes)
}

// capped cuts s to at most n bytes, never inside a UTF-8 sequence.
func capped(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := 0
	for end < len(s) {
		_, size := utf8.DecodeRuneInString(s[end:])
		if end+size > n {
			break
		}
		end += size
	}
	return s[:end]
}

// gatherer sums the logs of one job.
type gatherer struct {
	o      LogOptions
	id     *identity
	idFrom string
	prints map[fingerprint]string
	sums   []*signals.Summary
	totals []*insights.Totals
	app    *App
	job    Job
	mods   map[darshan.ModuleID]*modAcc
	files  map[uint64]*fileAgg
	fs     map[fsKey]*fsAgg
	heat   map[string][]rankHeat // by layer
	dxt    map[string]*signals.Layer
}

// FromLogs reads the logs of one job and returns the job and its
// application's view. Logs of different jobs, and a log that cannot be
// read whole (damaged, truncated, over its memory budget), are errors:
// a report from part of a job's logs would mislead. The one exception is
// a log's DXT traces, which only the DXT heatmaps read: past the log's
// memory budget, they are left out (App.DXTLeftOut) and so are the
// heatmaps from DXT, as `darshan signals` and `darshan insights` read
// such a log without its traces.
func FromLogs(paths []string, o LogOptions) (Job, *App, error) {
	if len(paths) == 0 {
		return Job{}, nil, errors.New("no Darshan log")
	}
	if o.TopFiles == 0 {
		o.TopFiles = DefaultTopFiles
	}
	g := &gatherer{o: o, prints: map[fingerprint]string{}, mods: map[darshan.ModuleID]*modAcc{},
		files: map[uint64]*fileAgg{}, fs: map[fsKey]*fsAgg{}, heat: map[string][]rankHeat{}, dxt: map[string]*signals.Layer{},
		app: &App{Logs: []LogInfo{}, Copies: []string{}, Notes: []string{}, DXTLeftOut: []LeftOut{}}}
	for _, p := range paths {
		if err := g.read(p); err != nil {
			return Job{}, nil, err
		}
	}
	g.finish()
	return g.job, g.app, nil
}

// read reads one log whole.
func (g *gatherer) read(path string) error {
	l, err := darshan.OpenWith(path, darshan.Options{MemoryBudget: g.o.MemoryBudget})
	if err != nil {
		if l != nil {
			l.Close()
		}
		return err
	}
	defer l.Close()
	sum := signals.Summarize(l, 0)
	if sum.Err != nil {
		return sum.Err
	}
	id := identity{jobID: logJobID(l.Job.JobID, path), uid: l.Job.UID}
	if id.jobID == jobid.SyntheticJob {
		// The sidecar's executable, a label value: cleaned.
		id.exe = labelvalue.Clean(exeBase(l.Exe), maxExeBytes)
	}
	if g.id == nil {
		g.id, g.idFrom = &id, path
	} else if *g.id != id {
		if g.id.jobID == id.jobID && g.id.uid == id.uid {
			return fmt.Errorf("logs of different jobs: %s and %s were made outside a batch job by different programs; give the logs of one job",
				filepath.Base(g.idFrom), filepath.Base(path))
		}
		return fmt.Errorf("logs of different jobs: %s is %s, %s is %s; give the logs of one job",
			filepath.Base(g.idFrom), g.id, filepath.Base(path), id)
	}
	fp := fingerprint{jobID: l.Job.JobID, uid: l.Job.UID, nprocs: l.Job.NProcs, start: sum.Start, end: sum.End, cmd: hash(l.Exe)}
	for i := range sum.Modules {
		fp.bytes += sum.Modules[i].Bytes()
	}
	if _, dup := g.prints[fp]; dup {
		g.app.Copies = append(g.app.Copies, filepath.Base(path))
		return nil
	}
	g.prints[fp] = path
	t, err := insights.FromLog(l)
	if err != nil {
		return err
	}
	if err := g.records(l, sum); err != nil {
		return err
	}
	g.sums = append(g.sums, sum)
	g.totals = append(g.totals, t)
	info := LogInfo{File: filepath.Base(path), Version: l.Header.Version, LibVersion: l.Job.LibVersion(), Exe: exeBase(l.Exe),
		Processes: l.Job.NProcs, Start: unixTime(sum.Start), End: unixTime(sum.End), RunTime: l.RunTime(), Modules: []ModuleInfo{}}
	for _, m := range l.Modules() {
		info.Modules = append(info.Modules, ModuleInfo{Name: m.ID.String(), Version: m.Version, Bytes: m.Region.Length, Partial: m.Partial})
	}
	g.app.Logs = append(g.app.Logs, info)
	return nil
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// records reads the log's counter, HEATMAP and (without HEATMAP) DXT
// records: what signals.Summary does not keep.
func (g *gatherer) records(l *darshan.Log, sum *signals.Summary) error {
	mounts := sortedMounts(l.Mounts)
	for _, s := range modSpecs {
		m := g.mods[s.id]
		rd := l.Records(s.id)
		if s.accum {
			if m == nil {
				m = newModAcc(s)
			}
			m.startLog()
		}
		for rd.Next() {
			r := rd.Record()
			c := darshan.CountersOf(r)
			if c == nil || c.Layout == nil {
				continue
			}
			if m == nil {
				m = newModAcc(s)
			}
			m.add(r, c)
			if s.file {
				g.file(l, s, m.x, c, mounts)
			}
		}
		if err := rd.Err(); err != nil {
			return err
		}
		if m != nil && m.records > 0 {
			g.mods[s.id] = m
		}
		if s.accum && m != nil && m.logRank != nil {
			m.endLog()
		}
	}
	return g.heatmaps(l, sum)
}

// fileAgg is one file over the job's logs: its name, and per group of
// layers its bytes, per-rank records and shared record. The bytes shown
// are those of the lowest layer that has it: POSIX and STDIO (what reached
// the file system), else DFS, DAOS, then MPI-IO.
type fileAgg struct {
	name    string
	modules uint64 // bit per module id
	group   [4]struct {
		read, written int64
		ranks         int
		shared, has   bool
	}
}

func layerGroup(m darshan.ModuleID) int {
	switch m {
	case darshan.POSIX, darshan.STDIO:
		return 0
	case darshan.DFS:
		return 1
	case darshan.DAOS:
		return 2
	case darshan.MPIIO:
		return 3
	}
	return -1
}

// fsKey is a file system of the data access section.
type fsKey struct{ mount, typ string }

type fsAgg struct {
	read, written int64
	filesR        map[uint64]bool
	filesW        map[uint64]bool
}

// file adds a file record to the top files and, for POSIX and STDIO, to
// its file system.
func (g *gatherer) file(l *darshan.Log, s *modSpec, x *index, c *darshan.CounterRecord, mounts []darshan.Mount) {
	k := c.Key
	f := g.files[k.ID]
	if f == nil {
		f = &fileAgg{name: l.Names[k.ID]}
		g.files[k.ID] = f
	}
	f.modules |= 1 << uint(s.id)
	gi := layerGroup(s.id)
	if gi < 0 {
		return
	}
	br, bw := iv(c, x.bytesRead), iv(c, x.bytesWritten)
	grp := &f.group[gi]
	grp.has = true
	grp.read += br
	grp.written += bw
	if k.Rank < 0 {
		grp.shared = true
	} else {
		grp.ranks++
	}
	if gi != 0 || (br < 1 && bw < 1) {
		return
	}
	key := fileSystemOf(f.name, mounts)
	a := g.fs[key]
	if a == nil {
		a = &fsAgg{filesR: map[uint64]bool{}, filesW: map[uint64]bool{}}
		g.fs[key] = a
	}
	if br >= 1 {
		a.read += br
		a.filesR[k.ID] = true
	}
	if bw >= 1 {
		a.written += bw
		a.filesW[k.ID] = true
	}
}

// sortedMounts returns the mount table longest path first, for the
// longest prefix match.
func sortedMounts(ms []darshan.Mount) []darshan.Mount {
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b darshan.Mount) int { return len(b.Path) - len(a.Path) })
	return out
}

// fileSystemOf returns the mount point that holds path (the longest
// prefix), or, when none does, PyDarshan's category: the path's first
// component.
func fileSystemOf(path string, mounts []darshan.Mount) fsKey {
	switch {
	case path == "<STDIN>" || path == "<STDOUT>" || path == "<STDERR>":
		return fsKey{mount: "(standard streams)"}
	case path == "":
		return fsKey{mount: "(no name in the log)"}
	case !strings.HasPrefix(path, "/"):
		if _, err := strconv.ParseUint(path, 10, 64); err == nil {
			return fsKey{mount: "(anonymized)"}
		}
		return fsKey{mount: "(relative paths)"}
	}
	for _, m := range mounts {
		if m.Path == "/" || path == m.Path || strings.HasPrefix(path, m.Path+"/") {
			return fsKey{mount: capped(m.Path, maxPathBytes), typ: capped(m.Type, maxTypeBytes)}
		}
	}
	first, _, _ := strings.Cut(path[1:], "/")
	return fsKey{mount: capped("/"+first, maxPathBytes)}
}

// finish merges the logs' summaries and insights and fills the report.
func (g *gatherer) finish() {
	merged := g.sums[0]
	t := g.totals[0]
	if len(g.sums) > 1 {
		merged = signals.Merge(0, g.sums...)
		t = insights.Merge(g.totals...)
	}
	a := g.app
	// The logs in the order they ran (then by name), whatever the order
	// they were given in: the report of a job is one report.
	slices.SortStableFunc(a.Logs, func(x, y LogInfo) int {
		return cmp.Or(x.Start.T.Compare(y.Start.T), x.End.T.Compare(y.End.T), strings.Compare(x.File, y.File))
	})
	uid := merged.UID
	g.job = Job{JobID: g.id.jobID, UID: &uid, Exe: []string{}, Processes: merged.NProcs}
	for _, l := range a.Logs {
		if l.Exe != "" && !slices.Contains(g.job.Exe, l.Exe) {
			g.job.Exe = append(g.job.Exe, l.Exe)
		}
	}
	// The run time of one log is darshan-util's (end - start + 1 before
	// format 3.41); of several, from the first start to the last end.
	start, end := unixTime(merged.Start), unixTime(merged.End)
	g.job.Start, g.job.End = &start, &end
	g.job.RunTime = merged.End - merged.Start
	if len(a.Logs) == 1 {
		g.job.RunTime = a.Logs[0].RunTime
	}
	for _, s := range signals.JobSignals {
		a.JobSignals = append(a.JobSignals, signalOf(s, merged.JobSignal(s)))
	}
	if merged.Module(darshan.POSIX) != nil {
		for _, s := range signals.POSIXJobSignals {
			a.POSIXSignals = append(a.POSIXSignals, signalOf(s, merged.POSIXJobSignal(s)))
		}
	}
	if a.POSIXSignals == nil {
		a.POSIXSignals = []Signal{}
	}
	a.Modules = []Module{}
	for _, s := range modSpecs {
		m := g.mods[s.id]
		if m == nil {
			continue
		}
		mod := m.module(merged.NProcs)
		if in := merged.Module(s.id); in != nil {
			for _, sig := range signals.ModuleSignals {
				mod.Signals = append(mod.Signals, signalOf(sig, in.ModuleSignal(sig)))
			}
		}
		a.Modules = append(a.Modules, mod)
	}
	a.FileSystems = g.fileSystems()
	a.Heatmaps = g.heatmapsOf(merged)
	a.Files = len(g.files)
	a.TopFiles = g.topFiles()
	a.Insights, a.InsightsUndecided = g.insights(t)
}

func (g *gatherer) fileSystems() []FileSystem {
	out := []FileSystem{}
	for k, a := range g.fs {
		out = append(out, FileSystem{Mount: k.mount, Type: k.typ, BytesRead: a.read, BytesWritten: a.written,
			FilesRead: len(a.filesR), FilesWritten: len(a.filesW)})
	}
	slices.SortFunc(out, func(a, b FileSystem) int {
		if x, y := a.BytesRead+a.BytesWritten, b.BytesRead+b.BytesWritten; x != y {
			if x > y {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Mount, b.Mount)
	})
	return out
}

// topFiles lists the files with the most bytes (ties: by record id).
func (g *gatherer) topFiles() []File {
	type entry struct {
		id uint64
		f  *fileAgg
		gi int
	}
	var all []entry
	for id, f := range g.files {
		for gi := range f.group {
			if f.group[gi].has {
				all = append(all, entry{id, f, gi})
				break
			}
		}
	}
	bytes := func(e entry) int64 { return e.f.group[e.gi].read + e.f.group[e.gi].written }
	slices.SortFunc(all, func(a, b entry) int {
		if x, y := bytes(a), bytes(b); x != y {
			if x > y {
				return -1
			}
			return 1
		}
		if a.id < b.id {
			return -1
		}
		if a.id > b.id {
			return 1
		}
		return 0
	})
	out := []File{}
	for _, e := range all[:min(len(all), max(g.o.TopFiles, 0))] {
		grp := e.f.group[e.gi]
		f := File{ID: strconv.FormatUint(e.id, 16), BytesRead: grp.read, BytesWritten: grp.written, Ranks: grp.ranks, Shared: grp.shared, Modules: []string{}}
		if !g.o.HidePaths {
			f.Path = capped(e.f.name, maxPathBytes)
			if f.Path == "" {
				f.Path = "(no name in the log)"
			}
		}
		for _, s := range modSpecs {
			if e.f.modules&(1<<uint(s.id)) != 0 {
				f.Modules = append(f.Modules, s.id.String())
			}
		}
		out = append(out, f)
	}
	return out
}

// insights evaluates the job's triggers as `darshan insights` does, with
// the files' full paths (or none with HidePaths).
func (g *gatherer) insights(t *insights.Totals) ([]Insight, []string) {
	found := insights.Evaluate(t, g.o.Insights)
	out := []Insight{}
	seen := map[string]bool{}
	for _, in := range found {
		seen[in.Code] = true
		j := Insight{Code: in.Code, Level: in.Level.String(), Fired: in.Fired, Value: finite(in.Value), Threshold: finite(in.Threshold),
			Count: finite(in.Count), CountThreshold: finite(in.CountThreshold), Message: in.Message,
			Recommendations: slices.Clone(in.Recommendations), Files: []string{}}
		if j.Recommendations == nil {
			j.Recommendations = []string{}
		}
		if !g.o.HidePaths {
			j.Files = append(j.Files, in.Files...)
		}
		out = append(out, j)
	}
	undecided := []string{}
	for _, c := range insights.Codes {
		if !seen[c] {
			undecided = append(undecided, c)
		}
	}
	return out, undecided
}

// finite is a number, or no value for NaN and ±Inf.
func finite(v float64) Value {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Value{}
	}
	return Num(v)
}
