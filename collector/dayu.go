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
// Anyone may write into a drop directory, so what it holds is bounded
// before it costs anything:
//
//   - Every file is opened by openTrackerFile (regular files only, links
//     only to their owner's files) and refused by its size (fstat) over
//     --dayu.max-file-size before a byte is read: too_large. One under it
//     is parsed as a stream within a memory budget proportional to its
//     size (package dayu, budget.go); past the budget it is too_large too.
//   - Label values (workflow, stage, file) are cleaned as Darshan's are
//     (internal/labelvalue: no control, format or bidi character, at most
//     dayuLabelBytes bytes). Names that become one label are summed.
//   - Series are capped per view: --dayu.max-workflows workflows keep
//     their own series, the most recently changed (a site looks at the
//     runs of the day; older ones keep counting, summed); the others are
//     summed under workflow="_other" (one stage "_other", one file
//     "_other"). In each workflow kept, --dayu.max-stages stages (stage and
//     pid) keep their own series, those that moved the most bytes (the
//     ones that matter to I/O, and a ranking that does not churn as a run
//     goes on); the others are summed under stage="_other". Likewise
//     --dayu.max-files files per workflow in the dataflow, under
//     file="_other". Counters of the folded series are summed, so every
//     total stays exact; what was folded is dayu_folded_items{kind} and
//     logged when it changes.
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
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/dayu"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

var (
	// dayuDirs are the directories of workflow runs; empty leaves the
	// collector out.
	dayuDirs []string
	// dayuMaxFiles caps the file base names exported as labels per workflow.
	dayuMaxFiles = 64
	// dayuMaxStages caps the stages (name and pid) with series of their own
	// per workflow; dayuMaxWorkflows the workflows with series of their own.
	// Real runs have up to a few dozen stages (the corpus: 12); a drop
	// directory keeps what its users leave in it.
	dayuMaxStages    = 256
	dayuMaxWorkflows = 100
	// dayuMaxFileSize refuses a larger tracker file before reading it.
	dayuMaxFileSize = dayu.DefaultMaxFileBytes
	// dayuMaxTotalSize bounds the sizes of the tracker files kept parsed,
	// together: each is bounded by dayuMaxFileSize, their number only by
	// what users drop. A parsed file keeps about twice its size (the
	// records; page ranges are not kept), so 256 MiB of files keep about
	// 512 MiB, well inside the sidecar unit's MemoryMax beside Darshan's
	// budget; real runs are kilobytes each (the corpus' largest: 306 kB).
	dayuMaxTotalSize int64 = 256 << 20
	// dayuStateDir is where the watcher writes down the files being read
	// (dropdir's state file); "" keeps no such memory.
	dayuStateDir string
	dayuRescan   = 30 * time.Second
	// Tests only: no inotify, and the watcher once started.
	dayuNoInotify      bool
	dayuWatcherStarted func(*dropdir.Watcher)
)

// dayuOther is the label value that sums what is past a cap: the file
// label of the edges of files past --dayu.max-files, the stage label of
// stages past --dayu.max-stages, the workflow label of workflows past
// --dayu.max-workflows.
const (
	dayuOther     = "_other"
	dayuOtherFile = dayuOther
)

// dayuFoldedMsg is logged when what is past the caps changes.
const dayuFoldedMsg = "DaYu series past their caps are summed under \"" + dayuOther + "\""

// dayuLabelBytes caps a DaYu label value: file base names run longer than
// executable names (the corpus' longest is 47 bytes).
const dayuLabelBytes = 128

// dayuStateFileName is the collector's file in --dayu.state-dir.
const dayuStateFileName = "dayu-reading.json"

// dayuStateMinSize: files smaller are not written down in the state file.
// A file is parsed within a budget of a few bytes per byte of it
// (package dayu, budget.go): one under a MiB cannot cost the process
// enough memory to kill it, and writing down every small file would cost a
// synced write each.
const dayuStateMinSize = 1 << 20

func init() {
	register("dayu", true, newDayuCollector)
	addFlags(func(a FlagGroup) {
		a.Flag("dayu.dir", "Directory holding one sub-directory per workflow run with DaYu VOL/VFD stats (YAML or JSON) and stage maps; repeat for several. The dayu collector is off without it.").
			StringsVar(&dayuDirs)
		a.Flag("dayu.rescan-interval", "How often the DaYu directories are listed again (inotify finds local writes sooner; Lustre and NFS need the rescans).").
			Default(dayuRescan.String()).DurationVar(&dayuRescan)
		a.Flag("dayu.max-files", "Most file base names per workflow exported as labels of the dataflow; the edges of the other files are summed under file=\""+dayuOtherFile+"\".").
			Default(strconv.Itoa(dayuMaxFiles)).IntVar(&dayuMaxFiles)
		a.Flag("dayu.max-stages", "Most stages (stage and pid) per workflow with series of their own: those that moved the most bytes; the others are summed under stage=\""+dayuOther+"\".").
			Default(strconv.Itoa(dayuMaxStages)).IntVar(&dayuMaxStages)
		a.Flag("dayu.max-workflows", "Most workflows with series of their own: the most recently changed; the others are summed under workflow=\""+dayuOther+"\".").
			Default(strconv.Itoa(dayuMaxWorkflows)).IntVar(&dayuMaxWorkflows)
		// A flag of bytes ("32MiB"): kingpin's own parser, copied into
		// dayuMaxFileSize when the flag is given.
		size := a.Flag("dayu.max-file-size", "Largest DaYu tracker file read; a larger one is skipped by its size, before it is read (dayu_files_failed_total{reason=\"too_large\"}). Each file is parsed within a memory budget proportional to its size.").
			Default(strconv.FormatInt(dayuMaxFileSize>>20, 10) + "MiB")
		v := size.Bytes()
		size.Action(func(*kingpin.ParseContext) error {
			dayuMaxFileSize = int64(*v)
			return nil
		})
		total := a.Flag("dayu.max-total-size", "Most bytes of DaYu tracker files kept parsed, all workflows together (a parsed file keeps about twice its size); a file that would pass it is skipped (dayu_files_failed_total{reason=\"total_size\"}) until it changes.").
			Default(strconv.FormatInt(dayuMaxTotalSize>>20, 10) + "MiB")
		tv := total.Bytes()
		total.Action(func(*kingpin.ParseContext) error {
			dayuMaxTotalSize = int64(*tv)
			return nil
		})
		a.Flag("dayu.state-dir", "Directory (existing, writable) where the DaYu files being read are written down, so that a file that kills the exporter while it is read (out of memory) is skipped after the restart and counted dayu_files_failed_total{reason=\"crashed\"}. It may be --darshan.state-dir. Without it, such a file is read again at every restart.").
			PlaceHolder("DIR").StringVar(&dayuStateDir)
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
	dayuFoldedItemsDesc = prometheus.NewDesc("dayu_folded_items",
		"What is past a cap and summed under \""+dayuOther+"\", by kind: workflow (past --dayu.max-workflows: workflow=\""+dayuOther+"\"), stage (stages and pids of the workflows kept, past --dayu.max-stages: stage=\""+dayuOther+"\"), file (files of the workflows kept, past --dayu.max-files: file=\""+dayuOther+"\").",
		[]string{"kind"}, nil)
	dayuFailedDesc = prometheus.NewDesc("dayu_files_failed_total",
		"Tracker files skipped because they could not be read, by reason (read_error, too_large, empty, syntax, truncated, not_stats; symlink_owner: a link whose owner is neither root nor its target's; total_size: past --dayu.max-total-size; crashed: being read when the exporter died); each version of a file counts once.",
		[]string{"reason"}, nil)
	dayuUnlistedDesc = prometheus.NewDesc("dayu_dirs_unlisted",
		"Directories under the DaYu drop directories that the last scan did not list, by reason: permission (the exporter's user may not list it), symlink_owner (a link to it whose owner is neither root nor the directory's), io_error. Their files are not read.",
		[]string{"reason"}, nil)
	dayuKeptBytesDesc = prometheus.NewDesc("dayu_files_kept_bytes",
		"Bytes of the DaYu tracker files kept parsed, against --dayu.max-total-size.", nil, nil)
)

// dayuCollector keeps the DaYu files of the drop directories read (a
// dropdir.Watcher finds them: inotify and rescans) and publishes, after
// each batch of changes, an immutable view of the assembled workflows.
// Update only reads the latest view: a scrape never waits for a parse, and
// a slow one holds nothing.
type dayuCollector struct {
	logger       *slog.Logger
	maxFiles     int
	maxStages    int
	maxWorkflows int
	maxFileSize  int64
	maxTotal     int64    // --dayu.max-total-size
	dirs         []string // the drop directories
	watcher      *dropdir.Watcher
	view         atomic.Pointer[dayuView]
	shown        map[string]dayuShown // by drop directory, as last reported (dayu_scanlog.go)

	mu        sync.Mutex
	files     map[string]*dayuFile     // by path
	kept      int64                    // sizes of the files in files parsed successfully
	workflows map[string]*dayuWorkflow // by directory, as last assembled
	failures  map[dayu.Reason]float64
	parses    int             // files parsed, for tests of the cache
	dupWarned map[string]bool // duplicate workflow directories already warned about
	tally     map[string]*dayuTally
	folded    dayuFolded // as last logged
}

// dayuView is what a scrape exports: never changed once published.
type dayuView struct {
	workflows []*dayuSeries // kept, then "_other"
	failures  map[dayu.Reason]float64
	folded    dayuFolded
	unlisted  map[string]int // by dropdir.UnlistedReasons
	kept      int64
	// missing are drop directories that cannot be listed: the collector
	// fails while there are any.
	missing []string
}

// dayuFolded counts what is past each cap.
type dayuFolded struct{ workflows, stages, files int }

// dayuFile is one tracker file as last read.
type dayuFile struct {
	size  int64
	mtime time.Time
	stats *dayu.StatsFile
	smap  *dayu.StageMap
	err   error
}

// dayuWorkflow is an assembled workflow, its series, and the file versions
// it came from.
type dayuWorkflow struct {
	fingerprint string
	series      *dayuSeries
}

// dayuSeries is what one workflow label exports: its stages and edges with
// their labels cleaned and capped, and its gauges. Immutable once built.
type dayuSeries struct {
	name    string // the workflow label
	stages  []*dayuStageRow
	edges   []*dayuEdgeRow
	nStages float64 // stages of the model (before the cap)
	nFiles  float64 // distinct file base names
	folded  float64 // files past --dayu.max-files
	sources float64
	changed time.Time
	// foldedStages counts the stages past --dayu.max-stages.
	foldedStages int
}

// dayuStageRow is the series of one (stage, pid) label pair: a stage, or
// the sum of the stages whose labels are one once cleaned, or of the
// stages past the cap (other: no wall time, start or order then).
type dayuStageRow struct {
	stage, pid string
	io         map[dayuIOKey]*dayuCount
	datasets   float64
	files      float64
	start, end int64 // microseconds; start 0: unknown
	order      int   // -1: none
	overhead   map[dayu.Layer]float64
	other      bool
	rank       float64 // bytes moved, for the cap
}

type dayuIOKey struct {
	dir string // read, write
	mem dayu.MemType
}

type dayuCount struct{ bytes, ops float64 }

// dayuEdgeRow is one edge of the dataflow as exported.
type dayuEdgeRow struct {
	stage, file, dir string
	bytes, ops       float64
}

func newDayuCollector(env Env) (Collector, error) {
	if len(dayuDirs) == 0 {
		return nil, ErrNotConfigured
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--dayu.max-files", dayuMaxFiles}, {"--dayu.max-stages", dayuMaxStages}, {"--dayu.max-workflows", dayuMaxWorkflows}} {
		if f.v < 1 {
			return nil, fmt.Errorf("%s must be at least 1, not %d", f.name, f.v)
		}
	}
	if dayuMaxFileSize < 1 {
		return nil, fmt.Errorf("--dayu.max-file-size must be at least 1 byte, not %d", dayuMaxFileSize)
	}
	if dayuMaxTotalSize < dayuMaxFileSize {
		return nil, fmt.Errorf("--dayu.max-total-size (%d bytes) must be at least --dayu.max-file-size (%d bytes)", dayuMaxTotalSize, dayuMaxFileSize)
	}
	stateFile := ""
	if dayuStateDir != "" {
		stateFile = filepath.Join(dayuStateDir, dayuStateFileName)
	} else {
		env.Logger.Info("no --dayu.state-dir: a DaYu file that kills the exporter while it is read (out of memory) will be read again after a restart")
	}
	c := &dayuCollector{
		logger:       env.Logger,
		maxFiles:     dayuMaxFiles,
		maxStages:    dayuMaxStages,
		maxWorkflows: dayuMaxWorkflows,
		maxFileSize:  dayuMaxFileSize,
		maxTotal:     dayuMaxTotalSize,
		dirs:         append([]string(nil), dayuDirs...),
		shown:        map[string]dayuShown{},
		tally:        map[string]*dayuTally{},
		files:        map[string]*dayuFile{},
		workflows:    map[string]*dayuWorkflow{},
		failures:     map[dayu.Reason]float64{},
		dupWarned:    map[string]bool{},
	}
	w, err := dropdir.Start(dropdir.Config{
		Dirs: c.dirs, RescanInterval: dayuRescan, Workers: 1,
		// Each sub-directory of a drop directory is a workflow run: its
		// own files are the tracker's.
		FileDepth: 2,
		Wanted:    func(name string) bool { return dayu.KindOf(name) != dayu.KindOther },
		OnIdle:    c.publish,
		OnReport:  c.report,
		// The watcher opens each file (dropdir.OpenFile) and writes it
		// down while it is read (ReadOpen).
		StateFile: stateFile, StateMinSize: dayuStateMinSize, OnCrashed: c.crashed,
		What: "DaYu", NoInotify: dayuNoInotify, Now: env.Now, Logger: env.Logger,
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
		wf.emit(out)
	}
	for _, k := range []struct {
		kind string
		n    int
	}{{"workflow", v.folded.workflows}, {"stage", v.folded.stages}, {"file", v.folded.files}} {
		out.metric(dayuFoldedItemsDesc, prometheus.GaugeValue, float64(k.n), k.kind)
	}
	for _, r := range dayu.Reasons {
		out.metric(dayuFailedDesc, prometheus.CounterValue, v.failures[r], string(r))
	}
	for _, r := range dropdir.UnlistedReasons {
		out.metric(dayuUnlistedDesc, prometheus.GaugeValue, float64(v.unlisted[r]), r)
	}
	out.metric(dayuKeptBytesDesc, prometheus.GaugeValue, float64(v.kept))
	if len(v.missing) > 0 {
		return fmt.Errorf("cannot list DaYu drop directories: %s", strings.Join(v.missing, ", "))
	}
	return nil
}

// openTrackerFile opens every file the collector reads: a regular file, a
// link only to a file of the link's owner (dropdir.OpenFile), without
// blocking on a FIFO; fi is the open file's fstat.
func openTrackerFile(path string) (f *os.File, fi os.FileInfo, err error) {
	return dropdir.OpenFile(path)
}

// Read implements dropdir.Handler: it opens and parses one tracker file.
// The watcher calls ReadOpen instead (the collector is a
// dropdir.OpenReader); Read is for callers without a watcher.
func (c *dayuCollector) Read(path string) (os.FileInfo, dropdir.Status) {
	f, fi, err := openTrackerFile(path)
	if f != nil {
		defer f.Close()
	}
	return c.ReadOpen(path, f, fi, err)
}

// ReadOpen implements dropdir.OpenReader: it parses the tracker file at
// path, open as f with fi its fstat; err is why it could not be opened.
func (c *dayuCollector) ReadOpen(path string, f *os.File, fi os.FileInfo, err error) (os.FileInfo, dropdir.Status) {
	if errors.Is(err, fs.ErrNotExist) {
		return nil, dropdir.Done // gone since: the watcher will say so
	}
	c.mu.Lock()
	c.forget(path) // the version read before no longer counts in the total
	c.mu.Unlock()
	df := c.parse(path, f, fi, err)
	c.mu.Lock()
	c.files[path] = df
	if df.err == nil {
		c.kept += df.size
	}
	c.mu.Unlock()
	if df.err != nil {
		return fi, dropdir.Failed
	}
	return fi, dropdir.Done
}

// Gone implements dropdir.Handler.
func (c *dayuCollector) Gone(path string) {
	c.mu.Lock()
	c.forget(path)
	c.mu.Unlock()
}

// forget drops the version of path read before (c.mu held).
func (c *dayuCollector) forget(path string) {
	if old := c.files[path]; old != nil {
		if old.err == nil {
			c.kept -= old.size
		}
		delete(c.files, path)
	}
}

// crashed counts a file version that was being read when the exporter
// died (dropdir's OnCrashed): once, as a failure, never read again.
func (c *dayuCollector) crashed(path string, fi os.FileInfo) {
	c.mu.Lock()
	c.forget(path)
	c.files[path] = &dayuFile{size: fi.Size(), mtime: fi.ModTime(), err: errDayuCrashed}
	c.noteParse(path, dayu.ReasonCrashed)
	c.failures[dayu.ReasonCrashed]++
	c.mu.Unlock()
	c.logger.Warn("skipping DaYu tracker file", "file", path, "reason", string(dayu.ReasonCrashed),
		"err", errDayuCrashed, "size", fi.Size())
}

var errDayuCrashed = errors.New("it was being read when the exporter stopped (killed: out of memory?); this version is not read again")

// parse reads one tracker file, or counts and logs why it could not be:
// the open failed (openErr), it is over the size cap (before a byte is
// read), or its text is damaged or over its memory budget.
func (c *dayuCollector) parse(path string, f *os.File, fi os.FileInfo, openErr error) *dayuFile {
	c.mu.Lock()
	c.parses++
	room := c.maxTotal - c.kept // one reader at a time (Workers: 1)
	c.mu.Unlock()
	df := &dayuFile{}
	err := openErr
	switch {
	case errors.Is(openErr, dropdir.ErrSymlinkOwner):
		err = &dayu.ParseError{File: filepath.Base(path), Reason: dayu.ReasonSymlinkOwner, Msg: openErr.Error()}
	case openErr != nil:
		err = &dayu.ParseError{File: filepath.Base(path), Reason: dayu.ReasonRead, Msg: openErr.Error()}
	case fi.Size() > room && fi.Size() <= c.maxFileSize:
		// Before a byte is read, as the size cap. Not read again until it
		// changes: the watcher hands each version over once.
		df.size, df.mtime = fi.Size(), fi.ModTime()
		err = &dayu.ParseError{File: filepath.Base(path), Reason: dayu.ReasonTotalSize,
			Msg: fmt.Sprintf("the files kept would pass --dayu.max-total-size (%d bytes kept of %d)", c.maxTotal-room, c.maxTotal)}
	default:
		df.size, df.mtime = fi.Size(), fi.ModTime()
		// Page ranges are for library users; metrics never use them.
		df.stats, df.smap, err = dayu.ReadOpen(path, f, fi.Size(), dayu.Limits{MaxFileBytes: c.maxFileSize})
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
		df.err = err
		// Once per version: the watcher hands each version over once. The
		// error names the file and what was wrong, never its content.
		attrs := []any{"file", path, "reason", string(reason), "err", err}
		if fi != nil {
			attrs = append(attrs, "size", fi.Size())
		}
		switch reason {
		case dayu.ReasonTooLarge:
			attrs = append(attrs, "max_file_size", c.maxFileSize)
		case dayu.ReasonTotalSize:
			attrs = append(attrs, "max_total_size", c.maxTotal)
		}
		c.logger.Warn("skipping DaYu tracker file", attrs...)
	}
	return df
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
	st := w.Stats()
	v := &dayuView{failures: maps.Clone(c.failures), missing: st.Missing, unlisted: st.Unlisted, kept: c.kept}
	names := map[string]string{} // workflow label -> directory
	assembled := map[string]*dayuWorkflow{}
	var all []*dayuSeries
	for _, dir := range w.Dirs(1) {
		name := dayuLabelValue(filepath.Base(dir))
		if other, dup := names[name]; dup {
			// Two directories whose names are one label once cleaned (or
			// the same name in two drop directories): the second gets a
			// suffix, so that both are exported and nothing is lost.
			base := name
			for n := 2; dup; n++ {
				name = base + "~" + strconv.Itoa(n)
				_, dup = names[name]
			}
			// Once: a view is published after every batch of changes.
			if !c.dupWarned[dir] {
				c.dupWarned[dir] = true
				c.logger.Warn("two workflow directories with one name; the second is exported with a suffix", "workflow", base, "first", other, "second", dir, "label", name)
			}
		}
		names[name] = dir
		wf := c.workflow(dir, name, byDir[dir])
		assembled[dir] = wf
		all = append(all, wf.series)
	}
	c.workflows = assembled
	v.workflows, v.folded = dayuCapWorkflows(all, c.maxWorkflows)
	if v.folded != c.folded {
		c.folded = v.folded
		c.logger.Info(dayuFoldedMsg,
			"workflows", v.folded.workflows, "max_workflows", c.maxWorkflows,
			"stages", v.folded.stages, "max_stages", c.maxStages,
			"files", v.folded.files, "max_files", c.maxFiles)
	}
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
	if wf := c.workflows[dir]; wf != nil && wf.fingerprint == fp.String() && wf.series.name == name {
		return wf
	}
	model := dayu.Assemble(name, maps, stats)
	s := dayuBuildSeries(name, model, c.maxStages, c.maxFiles)
	s.sources = float64(len(maps) + len(stats))
	s.changed = changed
	return &dayuWorkflow{fingerprint: fp.String(), series: s}
}

// dayuLabelValue cleans a name from outside into a label value.
func dayuLabelValue(s string) string { return labelvalue.Clean(s, dayuLabelBytes) }

// dayuStageLabel also keeps path separators out of stage labels: task
// names come from the tracker's environment and could hold one.
func dayuStageLabel(s string) string { return dayuLabelValue(strings.ReplaceAll(s, "/", "_")) }

func dayuPID(pid int64) string {
	if pid == 0 {
		return ""
	}
	return strconv.FormatInt(pid, 10)
}

// dayuBuildSeries turns an assembled workflow into its series: labels
// cleaned (stages whose labels become one are summed), at most maxStages
// stage rows of their own (the rest summed under stage="_other"), and the
// dataflow with at most maxFiles files of its own.
func dayuBuildSeries(name string, w *dayu.Workflow, maxStages, maxFiles int) *dayuSeries {
	s := &dayuSeries{name: name, nStages: float64(len(w.Stages))}
	byLabel := map[[2]string]*dayuStageRow{}
	var rows []*dayuStageRow
	files := map[string]bool{}
	for _, st := range w.Stages {
		k := [2]string{dayuStageLabel(st.Name), dayuPID(st.PID)}
		r := byLabel[k]
		if r == nil {
			r = &dayuStageRow{stage: k[0], pid: k[1], order: -1}
			byLabel[k] = r
			rows = append(rows, r)
		}
		r.addStage(st)
		for _, f := range st.Files {
			files[f.Name] = true
		}
	}
	s.nFiles = float64(len(files))

	// The stages that moved the most bytes keep their rows: by their VFD
	// bytes, or, for stages the VFD did not see, by the bytes of their
	// name's dataflow (the VOL's estimates). A stage literally named like
	// the bucket goes into it.
	flow := w.Dataflow()
	flowBytes := map[string]float64{}
	for _, e := range flow {
		flowBytes[dayuStageLabel(e.Stage)] += float64(e.Bytes)
	}
	for _, r := range rows {
		if r.rank == 0 {
			r.rank = flowBytes[r.stage]
		}
	}
	slices.SortStableFunc(rows, func(a, b *dayuStageRow) int {
		if c := cmp.Compare(b.rank, a.rank); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.pid, b.pid))
	})
	keptNames := map[string]bool{} // stage labels with a row of their own
	var other *dayuStageRow
	for _, r := range rows {
		if len(s.stages) < maxStages && r.stage != dayuOther {
			s.stages = append(s.stages, r)
			keptNames[r.stage] = true
			continue
		}
		if other == nil {
			other = &dayuStageRow{stage: dayuOther, order: -1, other: true}
		}
		other.add(r)
		s.foldedStages++
	}
	if other != nil {
		s.stages = append(s.stages, other)
	}

	// Edges are by stage name (over its pids): a name keeps its edges when
	// one of its rows is kept. Then the file cap.
	edges := map[[3]string]*dayuEdgeRow{}
	var order []*dayuEdgeRow
	for _, e := range flow {
		stage := dayuStageLabel(e.Stage)
		if !keptNames[stage] {
			stage = dayuOther
		}
		k := [3]string{stage, dayuLabelValue(e.File), string(e.Direction)}
		r := edges[k]
		if r == nil {
			r = &dayuEdgeRow{stage: k[0], file: k[1], dir: k[2]}
			edges[k] = r
			order = append(order, r)
		}
		r.bytes += float64(e.Bytes)
		r.ops += float64(e.Ops)
	}
	var folded int
	s.edges, folded = dayuCapFiles(order, maxFiles)
	s.folded = float64(folded)
	return s
}

// addStage adds one stage of the model to the row.
func (r *dayuStageRow) addStage(st *dayu.Stage) {
	if r.io == nil {
		r.io = map[dayuIOKey]*dayuCount{}
		r.overhead = map[dayu.Layer]float64{}
	}
	io := st.IO()
	for t, m := range io {
		for _, d := range []struct {
			name       string
			bytes, ops int64
		}{{"read", m.ReadBytes, m.ReadOps}, {"write", m.WriteBytes, m.WriteOps}} {
			c := r.count(dayuIOKey{d.name, t})
			c.bytes += float64(d.bytes)
			c.ops += float64(d.ops)
			r.rank += float64(d.bytes)
		}
	}
	r.datasets += float64(st.DatasetsTouched())
	r.files += float64(st.FilesTouched())
	if st.Start != 0 && st.End >= st.Start {
		if r.start == 0 || st.Start < r.start {
			r.start = st.Start
		}
		r.end = max(r.end, st.End)
	}
	if st.Order >= 0 && (r.order < 0 || st.Order < r.order) {
		r.order = st.Order
	}
	for l, ms := range st.OverheadMS {
		r.overhead[l] += ms
	}
}

func (r *dayuStageRow) count(k dayuIOKey) *dayuCount {
	c := r.io[k]
	if c == nil {
		c = &dayuCount{}
		r.io[k] = c
	}
	return c
}

// add sums row o into r (r is a bucket: its times and order are not shown).
func (r *dayuStageRow) add(o *dayuStageRow) {
	if r.io == nil {
		r.io = map[dayuIOKey]*dayuCount{}
		r.overhead = map[dayu.Layer]float64{}
	}
	for k, v := range o.io {
		c := r.count(k)
		c.bytes += v.bytes
		c.ops += v.ops
	}
	r.datasets += o.datasets
	r.files += o.files
	for l, ms := range o.overhead {
		r.overhead[l] += ms
	}
	r.rank += o.rank
}

// dayuCapFiles keeps the edges of the maxFiles files that move the most
// bytes and sums the others per stage and direction under dayuOtherFile. A
// file that is literally named like the bucket goes into it, so that no two
// series can share labels.
func dayuCapFiles(edges []*dayuEdgeRow, maxFiles int) ([]*dayuEdgeRow, int) {
	total := map[string]float64{}
	for _, e := range edges {
		total[e.file] += e.bytes
	}
	names := make([]string, 0, len(total))
	for n := range total {
		if n != dayuOtherFile {
			names = append(names, n)
		}
	}
	if _, ok := total[dayuOtherFile]; len(names) <= maxFiles && !ok {
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
	var out []*dayuEdgeRow
	other := map[[2]string]*dayuEdgeRow{} // (stage, direction)
	for _, e := range edges {
		if keep[e.file] {
			out = append(out, e)
			continue
		}
		k := [2]string{e.stage, e.dir}
		if o := other[k]; o != nil {
			o.bytes += e.bytes
			o.ops += e.ops
			continue
		}
		o := &dayuEdgeRow{stage: e.stage, file: dayuOtherFile, dir: e.dir, bytes: e.bytes, ops: e.ops}
		other[k] = o
		out = append(out, o)
	}
	return out, len(names) - len(keep)
}

// dayuCapWorkflows keeps the maxWorkflows workflows changed last (then by
// name) and sums the others into one workflow "_other", with one stage
// and one file "_other". A workflow literally named like the bucket goes
// into it.
func dayuCapWorkflows(all []*dayuSeries, maxWorkflows int) ([]*dayuSeries, dayuFolded) {
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, func(a, b *dayuSeries) int {
		if c := b.changed.Compare(a.changed); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	var kept []*dayuSeries
	var folded dayuFolded
	var other *dayuSeries
	for _, s := range sorted {
		if len(kept) < maxWorkflows && s.name != dayuOther {
			kept = append(kept, s)
			folded.stages += s.foldedStages
			folded.files += int(s.folded)
			continue
		}
		if other == nil {
			other = &dayuSeries{name: dayuOther}
		}
		other.add(s)
		folded.workflows++
	}
	// In the order of --dayu.dir, as listed.
	keptSet := map[*dayuSeries]bool{}
	for _, s := range kept {
		keptSet[s] = true
	}
	var out []*dayuSeries
	for _, s := range all {
		if keptSet[s] {
			out = append(out, s)
		}
	}
	if other != nil {
		out = append(out, other)
	}
	return out, folded
}

// add sums workflow o into the bucket s: every stage into one row, every
// edge into one per direction, the gauges summed (the last change: the
// latest).
func (s *dayuSeries) add(o *dayuSeries) {
	if len(s.stages) == 0 {
		s.stages = []*dayuStageRow{{stage: dayuOther, order: -1, other: true}}
	}
	for _, r := range o.stages {
		s.stages[0].add(r)
	}
	for _, e := range o.edges {
		var into *dayuEdgeRow
		for _, x := range s.edges {
			if x.dir == e.dir {
				into = x
			}
		}
		if into == nil {
			into = &dayuEdgeRow{stage: dayuOther, file: dayuOther, dir: e.dir}
			s.edges = append(s.edges, into)
		}
		into.bytes += e.bytes
		into.ops += e.ops
	}
	s.nStages += o.nStages
	s.nFiles += o.nFiles
	s.folded += o.folded
	s.sources += o.sources
	if o.changed.After(s.changed) {
		s.changed = o.changed
	}
}

// emit sends the workflow's series.
func (s *dayuSeries) emit(out *dayuEmitter) {
	for _, r := range s.stages {
		labels := []string{s.name, r.stage, r.pid}
		var metaBytes, allBytes, metaOps, allOps float64
		keys := slices.Collect(maps.Keys(r.io))
		slices.SortFunc(keys, func(a, b dayuIOKey) int {
			return cmp.Or(cmp.Compare(a.mem, b.mem), cmp.Compare(a.dir, b.dir))
		})
		for _, k := range keys {
			c := r.io[k]
			l := append(slices.Clone(labels), k.dir, dayuLabelValue(string(k.mem)), k.mem.Kind())
			out.metric(dayuIOBytesDesc, prometheus.CounterValue, c.bytes, l...)
			out.metric(dayuIOOpsDesc, prometheus.CounterValue, c.ops, l...)
			allBytes += c.bytes
			allOps += c.ops
			if !k.mem.IsData() {
				metaBytes += c.bytes
				metaOps += c.ops
			}
		}
		if allBytes > 0 {
			out.metric(dayuMetaBytesDesc, prometheus.GaugeValue, metaBytes/allBytes, labels...)
		}
		if allOps > 0 {
			out.metric(dayuMetaOpsDesc, prometheus.GaugeValue, metaOps/allOps, labels...)
		}
		out.metric(dayuDatasetsDesc, prometheus.GaugeValue, r.datasets, labels...)
		out.metric(dayuFilesDesc, prometheus.GaugeValue, r.files, labels...)
		if !r.other && r.start != 0 {
			out.metric(dayuWallDesc, prometheus.GaugeValue, float64(r.end-r.start)/1e6, labels...)
			out.metric(dayuStartDesc, prometheus.GaugeValue, float64(r.start)/1e6, labels...)
		}
		if !r.other && r.order >= 0 {
			out.metric(dayuOrderDesc, prometheus.GaugeValue, float64(r.order), labels...)
		}
		for _, layer := range []dayu.Layer{dayu.LayerVOL, dayu.LayerVFD} {
			if ms, ok := r.overhead[layer]; ok {
				out.metric(dayuOverheadDesc, prometheus.CounterValue, ms/1000, append(slices.Clone(labels), string(layer))...)
			}
		}
	}
	for _, e := range s.edges {
		l := []string{s.name, e.stage, e.file, e.dir}
		out.metric(dayuFlowBytesDesc, prometheus.CounterValue, e.bytes, l...)
		out.metric(dayuFlowOpsDesc, prometheus.CounterValue, e.ops, l...)
	}
	out.metric(dayuStagesDesc, prometheus.GaugeValue, s.nStages, s.name)
	out.metric(dayuWorkflowFilesDesc, prometheus.GaugeValue, s.nFiles, s.name)
	out.metric(dayuFoldedDesc, prometheus.GaugeValue, s.folded, s.name)
	out.metric(dayuSourcesDesc, prometheus.GaugeValue, s.sources, s.name)
	if !s.changed.IsZero() {
		out.metric(dayuChangedDesc, prometheus.GaugeValue, float64(s.changed.UnixNano())/1e9, s.name)
	}
}

// dayuEmitter sends metrics, dropping a second series with the labels of
// one already sent. Rows are summed by their cleaned labels before they
// get here, so none should come; the check keeps odd input from failing
// the whole scrape with a duplicate.
type dayuEmitter struct {
	ch   chan<- prometheus.Metric
	sent map[string]bool
}

func newDayuEmitter(ch chan<- prometheus.Metric) *dayuEmitter {
	return &dayuEmitter{ch: ch, sent: map[string]bool{}}
}

func (e *dayuEmitter) metric(desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
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
