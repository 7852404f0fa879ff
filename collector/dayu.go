package collector

// The dayu collector exports the HDF5 VOL/VFD stats that the DaYu tracker
// writes for each task of a workflow: per stage, the bytes and operations
// read and written by memory type, the metadata share, datasets and files
// touched, wall time and tracker overhead; and the dataflow between stages
// and files as edges that Grafana's node graph panel can draw.
//
// Every sub-directory of a --dayu.dir is one workflow run. A drop-directory
// watcher (package dropdir: inotify, and a rescan every
// --dayu.rescan-interval) finds the tracker files, following links, and
// the collector parses only the files whose size or modification time
// changed; a workflow whose files did not change keeps its assembled
// model. A file that fails to parse is counted once per version in
// dayu_files_failed_total{reason}, logged, and left out; the rest of its
// workflow is exported. Each scan logs what it found (dayu_scanlog.go).
// Scrapes read an immutable view of the workflows, published after each
// batch of changes.
//
// Drawing the dataflow in Grafana: add a Node graph panel with one instant
// Prometheus query, format Table, that gives each edge an id, a source and a
// target:
//
//	label_join(
//	    label_replace(label_replace(
//	      sum by (stage, file, direction) (dayu_dataflow_bytes_total{workflow="$workflow", direction="write"}),
//	      "source", "$1", "stage", "(.*)"), "target", "$1", "file", "(.*)")
//	  or
//	    label_replace(label_replace(
//	      sum by (stage, file, direction) (dayu_dataflow_bytes_total{workflow="$workflow", direction="read"}),
//	      "source", "$1", "file", "(.*)"), "target", "$1", "stage", "(.*)"),
//	  "id", " -> ", "source", "target")
//
// and an "Organize fields" transformation that keeps id, source and target
// and renames Value to mainstat (unit: bytes). With an edges frame alone the
// panel makes the nodes itself, titled by their ids (stage names and file
// base names). Reads point from file to stage, writes from stage to file.

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/dayu"
	"github.com/hpcio/hpcio_exporter/dropdir"
)

var (
	// dayuDirs are the directories of workflow runs; empty leaves the
	// collector out.
	dayuDirs []string
	// dayuMaxFiles caps the file base names exported as labels per workflow.
	dayuMaxFiles = 64
	dayuRescan   = 30 * time.Second
	// Tests only: no inotify, and the watcher once started.
	dayuNoInotify      bool
	dayuWatcherStarted func(*dropdir.Watcher)
)

// dayuOtherFile is the file label of the edges of files past the cap.
const dayuOtherFile = "_other"

func init() {
	register("dayu", true, newDayuCollector)
	addFlags(func(a FlagGroup) {
		a.Flag("dayu.dir", "Directory holding one sub-directory per workflow run with DaYu VOL/VFD stats (YAML or JSON) and stage maps; repeat for several. The dayu collector is off without it.").
			StringsVar(&dayuDirs)
		a.Flag("dayu.rescan-interval", "How often the DaYu directories are listed again (inotify finds local writes sooner; Lustre and NFS need the rescans).").
			Default(dayuRescan.String()).DurationVar(&dayuRescan)
		a.Flag("dayu.max-files", "Most file base names per workflow exported as labels of the dataflow; the edges of the other files are summed under file=\""+dayuOtherFile+"\".").
			Default(strconv.Itoa(dayuMaxFiles)).IntVar(&dayuMaxFiles)
	})
}

var (
	dayuStageLabels = []string{"workflow", "stage", "pid"}
	dayuEdgeLabels  = []string{"workflow", "stage", "file", "direction"}

	dayuIOBytesDesc = prometheus.NewDesc("dayu_stage_io_bytes_total",
		"Bytes the stage's tasks read or wrote through the HDF5 VFD, by direction (read, write), HDF5 memory type (DRAW is raw data, OHDR, SUPER, BTREE, LHEAP metadata) and kind (data, metadata).",
		append(append([]string{}, dayuStageLabels...), "direction", "mem_type", "kind"), nil)
	dayuIOOpsDesc = prometheus.NewDesc("dayu_stage_io_operations_total",
		"Read or write operations of the stage's tasks through the HDF5 VFD, by direction, memory type and kind.",
		append(append([]string{}, dayuStageLabels...), "direction", "mem_type", "kind"), nil)
	dayuMetaBytesDesc = prometheus.NewDesc("dayu_stage_metadata_bytes_ratio",
		"Share of the stage's VFD bytes, read and written, that were HDF5 metadata (0-1).", dayuStageLabels, nil)
	dayuMetaOpsDesc = prometheus.NewDesc("dayu_stage_metadata_operations_ratio",
		"Share of the stage's VFD operations, reads and writes, that were HDF5 metadata (0-1).", dayuStageLabels, nil)
	dayuDatasetsDesc = prometheus.NewDesc("dayu_stage_datasets_touched",
		"Distinct HDF5 datasets (file base name and dataset name) the stage opened.", dayuStageLabels, nil)
	dayuFilesDesc = prometheus.NewDesc("dayu_stage_files_touched",
		"Distinct files, by base name, the stage opened.", dayuStageLabels, nil)
	dayuWallDesc = prometheus.NewDesc("dayu_stage_wall_seconds",
		"Time from the stage's first file open to its last file close.", dayuStageLabels, nil)
	dayuStartDesc = prometheus.NewDesc("dayu_stage_start_timestamp_seconds",
		"When the stage first opened a file, in seconds since the epoch.", dayuStageLabels, nil)
	dayuOrderDesc = prometheus.NewDesc("dayu_stage_order",
		"Position of the stage in the workflow's stage map (task_to_file or task_order_list), from 0; absent without one.", dayuStageLabels, nil)
	dayuOverheadDesc = prometheus.NewDesc("dayu_stage_tracker_overhead_seconds_total",
		"Time the DaYu tracker itself spent in the stage's tasks, by HDF5 layer (vol, vfd).",
		append(append([]string{}, dayuStageLabels...), "layer"), nil)
	dayuFlowBytesDesc = prometheus.NewDesc("dayu_dataflow_bytes_total",
		"Bytes on one edge of the workflow's dataflow: a stage reading a file (direction=read, file -> stage) or writing one (direction=write, stage -> file), data and metadata.",
		dayuEdgeLabels, nil)
	dayuFlowOpsDesc = prometheus.NewDesc("dayu_dataflow_operations_total",
		"Operations on one edge of the workflow's dataflow.", dayuEdgeLabels, nil)
	dayuStagesDesc = prometheus.NewDesc("dayu_workflow_stages",
		"Stages (tasks: a stage name in one process) of the workflow.", []string{"workflow"}, nil)
	dayuWorkflowFilesDesc = prometheus.NewDesc("dayu_workflow_files",
		"Distinct files, by base name, that the workflow's stages opened.", []string{"workflow"}, nil)
	dayuFoldedDesc = prometheus.NewDesc("dayu_workflow_folded_files",
		"Files of the dataflow past --dayu.max-files, whose edges are summed under file=\""+dayuOtherFile+"\".", []string{"workflow"}, nil)
	dayuSourcesDesc = prometheus.NewDesc("dayu_workflow_tracker_files",
		"Stats files and stage maps of the workflow that were read successfully.", []string{"workflow"}, nil)
	dayuChangedDesc = prometheus.NewDesc("dayu_workflow_last_change_timestamp_seconds",
		"Modification time of the workflow's newest tracker file, in seconds since the epoch.", []string{"workflow"}, nil)
	dayuFailedDesc = prometheus.NewDesc("dayu_files_failed_total",
		"Tracker files skipped because they could not be read, by reason (read_error, too_large, empty, syntax, truncated, not_stats); each version of a file counts once.",
		[]string{"reason"}, nil)
)

// dayuCollector keeps the DaYu files of the drop directories read (a
// dropdir.Watcher finds them: inotify and rescans) and publishes, after
// each batch of changes, an immutable view of the assembled workflows.
// Update only reads the latest view: a scrape never waits for a parse, and
// a slow one holds nothing.
type dayuCollector struct {
	logger   *slog.Logger
	maxFiles int
	dirs     []string // the drop directories
	watcher  *dropdir.Watcher
	view     atomic.Pointer[dayuView]
	shown    map[string]dayuShown // by drop directory, as last reported (dayu_scanlog.go)

	mu        sync.Mutex
	files     map[string]*dayuFile     // by path
	workflows map[string]*dayuWorkflow // by directory, as last assembled
	failures  map[dayu.Reason]float64
	parses    int             // files parsed, for tests of the cache
	dupWarned map[string]bool // duplicate workflow directories already warned about
	tally     map[string]*dayuTally
}

// dayuView is what a scrape exports: never changed once published.
type dayuView struct {
	workflows []*dayuWorkflow // one per name, in the order of --dayu.dir
	failures  map[dayu.Reason]float64
	// missing are drop directories that cannot be listed: the collector
	// fails while there are any.
	missing []string
}

// dayuFile is one tracker file as last read.
type dayuFile struct {
	size  int64
	mtime time.Time
	stats *dayu.StatsFile
	smap  *dayu.StageMap
	err   error
}

// dayuWorkflow is an assembled workflow and the file versions it came from.
type dayuWorkflow struct {
	fingerprint string
	model       *dayu.Workflow
	edges       []dayu.Edge // capped
	folded      int
	files       int // distinct file base names
	sources     int
	changed     time.Time
}

func newDayuCollector(env Env) (Collector, error) {
	if len(dayuDirs) == 0 {
		return nil, ErrNotConfigured
	}
	if dayuMaxFiles < 1 {
		return nil, fmt.Errorf("--dayu.max-files must be at least 1, not %d", dayuMaxFiles)
	}
	c := &dayuCollector{
		logger:    env.Logger,
		maxFiles:  dayuMaxFiles,
		dirs:      append([]string(nil), dayuDirs...),
		shown:     map[string]dayuShown{},
		tally:     map[string]*dayuTally{},
		files:     map[string]*dayuFile{},
		workflows: map[string]*dayuWorkflow{},
		failures:  map[dayu.Reason]float64{},
		dupWarned: map[string]bool{},
	}
	w, err := dropdir.Start(dropdir.Config{
		Dirs: c.dirs, RescanInterval: dayuRescan, Workers: 1,
		// Each sub-directory of a drop directory is a workflow run: its
		// own files are the tracker's.
		FileDepth: 2,
		Wanted:    func(name string) bool { return dayu.KindOf(name) != dayu.KindOther },
		OnIdle:    c.publish,
		OnReport:  c.report,
		What:      "DaYu", NoInotify: dayuNoInotify, Now: env.Now, Logger: env.Logger,
	}, c)
	if err != nil {
		return nil, err
	}
	c.watcher = w
	if dayuWatcherStarted != nil {
		dayuWatcherStarted(w)
	}
	return c, nil
}

// Close stops the watcher (tests; the exporter runs it until it exits).
func (c *dayuCollector) Close() error { return c.watcher.Close() }

func (c *dayuCollector) Update(s *Scrape, ch chan<- prometheus.Metric) error {
	v := c.view.Load()
	out := newDayuEmitter(ch)
	if v == nil {
		v = &dayuView{} // before the first scan ends
	}
	for _, wf := range v.workflows {
		c.emit(out, wf)
	}
	for _, r := range dayu.Reasons {
		out.metric(dayuFailedDesc, prometheus.CounterValue, v.failures[r], string(r))
	}
	if len(v.missing) > 0 {
		return fmt.Errorf("cannot list DaYu drop directories: %s", strings.Join(v.missing, ", "))
	}
	return nil
}

// Read implements dropdir.Handler: it parses one tracker file.
func (c *dayuCollector) Read(path string) (os.FileInfo, dropdir.Status) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, dropdir.Done // gone since: the watcher will say so
	}
	f := c.parse(path, dayu.KindOf(filepath.Base(path)), fi)
	c.mu.Lock()
	c.files[path] = f
	c.mu.Unlock()
	if f.err != nil {
		return fi, dropdir.Failed
	}
	return fi, dropdir.Done
}

// Gone implements dropdir.Handler.
func (c *dayuCollector) Gone(path string) {
	c.mu.Lock()
	delete(c.files, path)
	c.mu.Unlock()
}

// publish assembles the workflows whose files changed and publishes a new
// view; the watcher calls it once every file found was read.
func (c *dayuCollector) publish(w *dropdir.Watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byDir := map[string][]string{}
	for p := range c.files {
		byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
	}
	v := &dayuView{failures: maps.Clone(c.failures), missing: w.Stats().Missing}
	names := map[string]string{} // workflow label -> directory
	assembled := map[string]*dayuWorkflow{}
	for _, dir := range w.Dirs(1) {
		name := filepath.Base(dir)
		if other, dup := names[name]; dup {
			// Once: a view is published after every batch of changes.
			if !c.dupWarned[dir] {
				c.dupWarned[dir] = true
				c.logger.Warn("two workflow directories with one name; exporting the first", "workflow", name, "first", other, "skipped", dir)
			}
			continue
		}
		names[name] = dir
		wf := c.workflow(dir, name, byDir[dir])
		assembled[dir] = wf
		v.workflows = append(v.workflows, wf)
	}
	c.workflows = assembled
	c.view.Store(v)
}

// workflow returns the assembled workflow of dir from its files read,
// assembling it again only when one of them changed.
func (c *dayuCollector) workflow(dir, name string, paths []string) *dayuWorkflow {
	sort.Strings(paths)
	var fp strings.Builder
	var maps []*dayu.StageMap
	var stats []*dayu.StatsFile
	var changed time.Time
	for _, p := range paths {
		f := c.files[p]
		fmt.Fprintf(&fp, "%s\x00%d\x00%d\x00", filepath.Base(p), f.size, f.mtime.UnixNano())
		if f.err != nil {
			continue
		}
		if f.mtime.After(changed) {
			changed = f.mtime
		}
		if f.smap != nil {
			maps = append(maps, f.smap)
		}
		if f.stats != nil {
			stats = append(stats, f.stats)
		}
	}
	if wf := c.workflows[dir]; wf != nil && wf.fingerprint == fp.String() {
		return wf
	}
	model := dayu.Assemble(name, maps, stats)
	wf := &dayuWorkflow{fingerprint: fp.String(), model: model, sources: len(maps) + len(stats), changed: changed}
	wf.edges, wf.folded = dayuCapFiles(model.Dataflow(), c.maxFiles)
	files := map[string]bool{}
	for _, s := range model.Stages {
		for _, f := range s.Files {
			files[f.Name] = true
		}
	}
	wf.files = len(files)
	return wf
}

func (c *dayuCollector) parse(path string, kind dayu.FileKind, fi os.FileInfo) *dayuFile {
	c.mu.Lock()
	c.parses++
	c.mu.Unlock()
	f := &dayuFile{size: fi.Size(), mtime: fi.ModTime()}
	data, err := dayu.ReadFile(path)
	if err == nil {
		switch kind {
		case dayu.KindStageMap:
			f.smap, err = dayu.ParseStageMap(path, data)
		case dayu.KindStats:
			f.stats, err = dayu.ParseStats(path, data)
			if err == nil {
				// Page ranges are for the graph command; metrics never use them.
				f.stats.DropPageRanges()
			}
		}
	}
	var reason dayu.Reason // none: parsed
	if err != nil {
		reason = dayu.ReasonOf(err)
	}
	c.mu.Lock()
	c.noteParse(path, reason)
	if err != nil {
		c.failures[reason]++
	}
	c.mu.Unlock()
	if err != nil {
		f.err = err
		c.logger.Warn("skipping DaYu tracker file", "file", path, "reason", string(reason), "err", err)
	}
	return f
}

// dayuCapFiles keeps the edges of the maxFiles files that move the most
// bytes and sums the others per stage and direction under dayuOtherFile. A
// file that is literally named like the bucket goes into it, so that no two
// series can share labels.
func dayuCapFiles(edges []dayu.Edge, maxFiles int) ([]dayu.Edge, int) {
	total := map[string]int64{}
	for _, e := range edges {
		total[e.File] += e.Bytes
	}
	names := make([]string, 0, len(total))
	for n := range total {
		if n != dayuOtherFile {
			names = append(names, n)
		}
	}
	if len(names) <= maxFiles && total[dayuOtherFile] == 0 {
		return edges, 0
	}
	sort.Slice(names, func(i, j int) bool {
		if total[names[i]] != total[names[j]] {
			return total[names[i]] > total[names[j]]
		}
		return names[i] < names[j]
	})
	keep := map[string]bool{}
	for _, n := range names[:min(maxFiles, len(names))] {
		keep[n] = true
	}
	var out []dayu.Edge
	other := map[[2]string]int{} // (stage, direction) -> index in out
	for _, e := range edges {
		if keep[e.File] {
			out = append(out, e)
			continue
		}
		k := [2]string{e.Stage, string(e.Direction)}
		if i, ok := other[k]; ok {
			out[i].Bytes += e.Bytes
			out[i].Ops += e.Ops
			continue
		}
		e.File = dayuOtherFile
		other[k] = len(out)
		out = append(out, e)
	}
	return out, len(names) - len(keep)
}

func (c *dayuCollector) emit(out *dayuEmitter, wf *dayuWorkflow) {
	w := wf.model
	for _, s := range w.Stages {
		labels := []string{w.Name, dayuLabel(s.Name), dayuPID(s.PID)}
		io := s.IO()
		var metaBytes, allBytes, metaOps, allOps int64
		for _, t := range io.Types() {
			m := io[t]
			for _, dir := range []struct {
				name       string
				bytes, ops int64
			}{{"read", m.ReadBytes, m.ReadOps}, {"write", m.WriteBytes, m.WriteOps}} {
				l := append(append([]string{}, labels...), dir.name, string(t), t.Kind())
				out.metric(dayuIOBytesDesc, prometheus.CounterValue, float64(dir.bytes), l...)
				out.metric(dayuIOOpsDesc, prometheus.CounterValue, float64(dir.ops), l...)
				allBytes += dir.bytes
				allOps += dir.ops
				if !t.IsData() {
					metaBytes += dir.bytes
					metaOps += dir.ops
				}
			}
		}
		if allBytes > 0 {
			out.metric(dayuMetaBytesDesc, prometheus.GaugeValue, float64(metaBytes)/float64(allBytes), labels...)
		}
		if allOps > 0 {
			out.metric(dayuMetaOpsDesc, prometheus.GaugeValue, float64(metaOps)/float64(allOps), labels...)
		}
		out.metric(dayuDatasetsDesc, prometheus.GaugeValue, float64(s.DatasetsTouched()), labels...)
		out.metric(dayuFilesDesc, prometheus.GaugeValue, float64(s.FilesTouched()), labels...)
		if s.Start != 0 && s.End >= s.Start {
			out.metric(dayuWallDesc, prometheus.GaugeValue, s.WallSeconds(), labels...)
			out.metric(dayuStartDesc, prometheus.GaugeValue, float64(s.Start)/1e6, labels...)
		}
		if s.Order >= 0 {
			out.metric(dayuOrderDesc, prometheus.GaugeValue, float64(s.Order), labels...)
		}
		for _, layer := range []dayu.Layer{dayu.LayerVOL, dayu.LayerVFD} {
			if ms, ok := s.OverheadMS[layer]; ok {
				l := append(append([]string{}, labels...), string(layer))
				out.metric(dayuOverheadDesc, prometheus.CounterValue, ms/1000, l...)
			}
		}
	}
	for _, e := range wf.edges {
		l := []string{w.Name, dayuLabel(e.Stage), e.File, string(e.Direction)}
		out.metric(dayuFlowBytesDesc, prometheus.CounterValue, float64(e.Bytes), l...)
		out.metric(dayuFlowOpsDesc, prometheus.CounterValue, float64(e.Ops), l...)
	}
	out.metric(dayuStagesDesc, prometheus.GaugeValue, float64(len(w.Stages)), w.Name)
	out.metric(dayuWorkflowFilesDesc, prometheus.GaugeValue, float64(wf.files), w.Name)
	out.metric(dayuFoldedDesc, prometheus.GaugeValue, float64(wf.folded), w.Name)
	out.metric(dayuSourcesDesc, prometheus.GaugeValue, float64(wf.sources), w.Name)
	if !wf.changed.IsZero() {
		out.metric(dayuChangedDesc, prometheus.GaugeValue, float64(wf.changed.UnixNano())/1e9, w.Name)
	}
}

// dayuLabel keeps path separators out of stage labels: task names come
// from the tracker's environment and could hold one.
func dayuLabel(s string) string { return strings.ReplaceAll(s, "/", "_") }

func dayuPID(pid int64) string {
	if pid == 0 {
		return ""
	}
	return strconv.FormatInt(pid, 10)
}

// dayuEmitter sends metrics, dropping a second series with the labels of
// one already sent: odd input (two stages whose names differ only by a
// slash) must not fail the whole scrape with a duplicate.
type dayuEmitter struct {
	ch   chan<- prometheus.Metric
	sent map[string]bool
}

func newDayuEmitter(ch chan<- prometheus.Metric) *dayuEmitter {
	return &dayuEmitter{ch: ch, sent: map[string]bool{}}
}

func (e *dayuEmitter) metric(desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
	for i, l := range labels {
		// File and directory names need not be UTF-8; label values must.
		labels[i] = strings.ToValidUTF8(l, "\uFFFD")
	}
	key := desc.String() + "\xff" + strings.Join(labels, "\xff")
	if e.sent[key] {
		return
	}
	e.sent[key] = true
	m, err := prometheus.NewConstMetric(desc, typ, v, labels...)
	if err != nil {
		e.ch <- prometheus.NewInvalidMetric(desc, err)
		return
	}
	e.ch <- m
}
