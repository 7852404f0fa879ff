package dayu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Format is the generation of tracker output a file was written in.
type Format string

const (
	// FormatYAML2023 has `Task:` at column 0 or `- task-<pid>:` blocks, tuple
	// page ranges `{83:(0,0)}`, and no task names.
	FormatYAML2023 Format = "yaml-2023"
	// FormatYAML2024 has `- Task:` items, task_name on every file and
	// `{1:[0,0]}` page ranges.
	FormatYAML2024 Format = "yaml-2024"
	// FormatJSON is the current output: an array of {"file-N": …, "Task": …}.
	FormatJSON Format = "json"
)

// StatsFile is one VOL or VFD stats file as written: its entries and task
// blocks in file order.
type StatsFile struct {
	// Name is the file's base name.
	Name   string
	Layer  Layer
	Format Format
	// PID is the pid in the file name (<pid>_vfd-data-stat.yaml), or 0.
	PID     int64
	Entries []*Entry
	Tasks   []*Task
}

// Entry is one `file-N` record: one open of one file by one task. The VOL
// writes a record per dataset and then a summary record of the file; the VFD
// writes one record per open with its I/O.
type Entry struct {
	// ID is the tracker's record key, such as "file-3".
	ID    string
	Layer Layer
	// Path is the file_name field as written.
	Path string
	// TaskName is the 2024+ task_name, "<stage>-<pid>".
	TaskName string
	// PID is the task's pid: from task_name, else from the task block that
	// follows the entry, else from the stats file's name.
	PID         int64
	Open, Close int64
	Size        int64
	Intents     []string
	// AccessType (read_only, write_only, read_write, not_accessed) and
	// FileType (input, output, input-output, na) are the tracker's own
	// classification, 2024+.
	AccessType, FileType string
	ReadOps, WriteOps    int64
	// IOBytes is total_io_bytes (YAML 2024) or io_bytes (JSON).
	IOBytes                  int64
	HeaderSize, SieveBufSize int64
	Objects                  ObjectCounts
	Datasets                 []*Dataset
	IO                       IOSet
	// Extra keeps fields this reader does not know, as written.
	Extra map[string]string

	task   *Task       // the task block written after this entry
	blocks []*memBlock // VFD blocks in file order, summed into IO at the end
}

type memBlock struct {
	typ     MemType
	dataset string // JSON: the dataset the block belongs to, "" for the file
	io      MemIO
	seen    uint8 // the fields set (memSeen)
	line    int
}

// Task is a task block: the tracker writes one after each entry, holding
// running totals for the task so far.
type Task struct {
	PID  int64
	Name string
	// PageSize is tracker_vfd_page_size or hermes_page_size, in bytes.
	PageSize int64
	// OverheadMS is the running total of the tracker's own time per layer.
	OverheadMS map[Layer]float64
	// TimersMS keeps every "(ms)" field as written, overheads included.
	TimersMS map[string]float64
	Extra    map[string]string
}

// Reason classifies why a file could not be read; it is the reason label of
// dayu_files_failed_total.
type Reason string

// Reasons for a file to fail. Bounded, so they can be label values.
const (
	ReasonRead      Reason = "read_error"
	ReasonTooLarge  Reason = "too_large"
	ReasonEmpty     Reason = "empty"
	ReasonSyntax    Reason = "syntax"
	ReasonTruncated Reason = "truncated"
	ReasonNotStats  Reason = "not_stats"
	// Reasons of the drop directory, not of the text: a link whose owner
	// is neither root nor its target's (the owner rule of package
	// dropdir); a file kept would pass the total of the files kept
	// (--dayu.max-total-size); a file that was being read when the
	// process died, not read again.
	ReasonSymlinkOwner Reason = "symlink_owner"
	ReasonTotalSize    Reason = "total_size"
	ReasonCrashed      Reason = "crashed"
)

// Reasons lists every Reason, for exporting zero counts.
var Reasons = []Reason{ReasonRead, ReasonTooLarge, ReasonEmpty, ReasonSyntax, ReasonTruncated, ReasonNotStats,
	ReasonSymlinkOwner, ReasonTotalSize, ReasonCrashed}

// ParseError tells which file failed, where and why.
type ParseError struct {
	File   string
	Line   int // 0 when not known
	Reason Reason
	Msg    string

	overCap bool // refused by its size (OverSizeCap)
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Reason, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Reason, e.Msg)
}

// ReasonOf returns the Reason of a *ParseError, else ReasonRead.
func ReasonOf(err error) Reason {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ReasonRead
}

var filePIDPattern = regexp.MustCompile(`^(\d+)[-_]`)

// ParseStats reads one VOL or VFD stats file in any of the tracker's formats
// from memory, keeping page ranges. name is the file's name; its base name
// tells the layer ("vfd" in it means VFD) and the pid (a leading number). A
// file that is cut short, has lines that are not key: value, or holds no
// tracker records is an error; unknown keys are kept, never an error.
func ParseStats(name string, data []byte) (*StatsFile, error) {
	return ReadStats(name, bytes.NewReader(data), int64(len(data)), Limits{MaxFileBytes: math.MaxInt64, KeepRanges: true})
}

// ReadStats reads a stats file as ParseStats does, from r, which holds size
// bytes (the fstat of the open file): refused by that size when it is over
// lim.MaxFileBytes, before a byte is read, and read as a stream within the
// file's memory budget (budget.go) otherwise.
func ReadStats(name string, r io.Reader, size int64, lim Limits) (*StatsFile, error) {
	base := baseOf(name)
	if err := lim.CheckSize(base, size); err != nil {
		return nil, err
	}
	sf := &StatsFile{Name: base, Layer: layerFromName(base)}
	if m := filePIDPattern.FindStringSubmatch(base); m != nil {
		sf.PID, _ = strconv.ParseInt(m[1], 10, 64)
	}
	p := newParse(size, lim.KeepRanges)
	br := bufio.NewReaderSize(&countingReader{r: r, p: p, max: lim.maxBytes()}, readBufferSize)
	first, newlines, ok, err := skipSpace(br)
	switch {
	case err != nil:
	case !ok:
		return nil, &ParseError{File: base, Reason: ReasonEmpty, Msg: msgNoContent}
	case first == '[' || first == '{':
		sf.Format = FormatJSON
		err = parseStatsJSON(p, sf, br, newlines+1)
	default:
		err = parseStatsYAML(p, sf, br, newlines+1)
	}
	if err != nil {
		return nil, asParseError(base, err)
	}
	if len(sf.Entries) == 0 {
		return nil, &ParseError{File: base, Reason: ReasonNotStats, Msg: msgNoRecords}
	}
	if err := sf.finish(p); err != nil {
		return nil, asParseError(base, err)
	}
	return sf, nil
}

// readBuffer is the read-ahead of a parse: lines and JSON values are
// taken from it, so most are never copied. Lines longer than it are put
// together, or streamed (range maps). Tests make it small.
const readBuffer = 64 << 10

var readBufferSize = readBuffer

// asParseError gives err the file's name and a Reason: a charge over the
// budget or a file that grew past the cap is too_large, a failed read
// read_error, anything else not already a *ParseError syntax.
func asParseError(base string, err error) *ParseError {
	var pe *ParseError
	var re readError
	switch {
	case errors.As(err, &pe):
		pe.File = base
		return pe
	case errors.Is(err, errBudget):
		return &ParseError{File: base, Reason: ReasonTooLarge, Msg: msgOverBudget}
	case errors.Is(err, errGrew):
		return &ParseError{File: base, Reason: ReasonTooLarge, Msg: msgGrew}
	case errors.As(err, &re):
		return &ParseError{File: base, Reason: ReasonRead, Msg: msgReadFailed}
	}
	return &ParseError{File: base, Reason: ReasonSyntax, Msg: err.Error()}
}

// lineError is the error of a line the reader could not take: cut short
// when it is the last line and has no newline (the writer was caught
// mid-line), else damaged.
func lineError(l line, err error) error {
	var pe *ParseError
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, errBudget):
		return &ParseError{Line: l.num, Reason: ReasonTooLarge, Msg: msgOverBudget}
	case errors.Is(err, errGrew), errors.As(err, new(readError)):
		return err
	}
	reason := ReasonSyntax
	if l.last {
		reason = ReasonTruncated
	}
	return &ParseError{Line: l.num, Reason: reason, Msg: err.Error()}
}

// layerFromName: the VOL files are *vol*stat* or, earliest, *_data-stat-dl.yaml.
func layerFromName(base string) Layer {
	if strings.Contains(strings.ToLower(base), "vfd") {
		return LayerVFD
	}
	return LayerVOL
}

// finish resolves pids, sums the VFD blocks not summed yet into each
// entry's IO and settles the layer of each entry.
func (sf *StatsFile) finish(p *parse) error {
	for _, e := range sf.Entries {
		if e.PID == 0 {
			if _, pid, ok := splitTaskName(e.TaskName); ok {
				e.PID = pid
			} else if e.task != nil && e.task.PID != 0 {
				e.PID = e.task.PID
			} else {
				e.PID = sf.PID
			}
		}
		if err := e.sumBlocks(p); err != nil {
			return err
		}
		e.Layer = sf.Layer
		if len(e.IO) > 0 {
			e.Layer = LayerVFD
		}
	}
	return nil
}

// sumBlocks adds the entry's VFD blocks, in file order, into its IO and
// (JSON) its datasets' IO, and forgets them: a record's blocks are held only
// until the record is whole. What the sums keep is charged first.
func (e *Entry) sumBlocks(p *parse) error {
	if len(e.blocks) == 0 {
		return nil
	}
	if e.IO == nil {
		if err := p.keep(costMap); err != nil {
			return err
		}
		e.IO = IOSet{}
	}
	var byName map[string]*Dataset
	for _, b := range e.blocks {
		if e.IO[b.typ] == nil {
			if err := p.keep(costMemIO); err != nil {
				return err
			}
		}
		e.IO.get(b.typ).add(&b.io)
		if b.dataset == "" || b.dataset == "file" {
			continue
		}
		if byName == nil {
			byName = make(map[string]*Dataset, len(e.Datasets))
			for _, d := range e.Datasets {
				if byName[d.Name] == nil {
					byName[d.Name] = d
				}
			}
		}
		d := byName[b.dataset]
		if d == nil {
			if err := p.keep(costDataset); err != nil {
				return err
			}
			d = &Dataset{Name: b.dataset, Offset: -1}
			e.Datasets = append(e.Datasets, d)
			byName[b.dataset] = d
		}
		if d.IO == nil {
			if err := p.keep(costMap); err != nil {
				return err
			}
			d.IO = IOSet{}
		}
		if d.IO[b.typ] == nil {
			if err := p.keep(costMemIO); err != nil {
				return err
			}
		}
		d.IO.get(b.typ).add(&b.io)
	}
	e.blocks = nil
	return nil
}

// DropPageRanges forgets every page range, to keep a cached file small.
func (sf *StatsFile) DropPageRanges() {
	for _, e := range sf.Entries {
		e.IO.dropRanges()
		for _, d := range e.Datasets {
			d.IO.dropRanges()
		}
	}
}

var taskNamePattern = regexp.MustCompile(`^(.*)-(\d+)$`)

// splitTaskName splits "arldm_saveh5-1126849" into name and pid.
func splitTaskName(s string) (name string, pid int64, ok bool) {
	m := taskNamePattern.FindStringSubmatch(s)
	if m == nil || m[1] == "" {
		return s, 0, false
	}
	pid, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return s, 0, false
	}
	return m[1], pid, true
}

// isEntryKey matches the record keys "file-1", "file-23".
func isEntryKey(k string) bool {
	rest, ok := strings.CutPrefix(k, "file-")
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

// taskKey matches "Task" and the 2023 VFD's "task-<pid>"; pid is 0 for "Task".
func taskKey(k string) (pid int64, ok bool) {
	if k == "Task" {
		return 0, true
	}
	rest, ok := strings.CutPrefix(k, "task-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.ParseInt(rest, 10, 64)
	return pid, err == nil
}
