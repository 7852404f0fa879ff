package dayu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// The YAML-ish reader keeps a stack of open blocks, each remembering the
// indentation of the line that opened it. A line closes every block it is not
// indented under; then its key is read in the innermost block left. Record
// keys (file-N, Task, task-<pid>) always start a new record whatever their
// indentation, which is what makes the 2023 files readable: their `Task:`
// sits at column 0 between list items and their dataset lists are indented
// less than the keys around them.

type blockKind int

const (
	blockEntry    blockKind = iota // - file-N:
	blockTask                      // Task: / - Task: / - task-<pid>:
	blockDatasets                  // datasets:
	blockDataset                   // - dset: (or the implicit one of 2024)
	blockIO                        // data: / ata: / metadata:
	blockMem                       // H5FD_MEM_*:
	blockSkip                      // a block of unknown keys, read past
)

type block struct {
	kind   blockKind
	indent int
	dash   bool
}

// contains tells whether l is inside b. YAML lets a block's list items sit
// at the block key's own indentation ("datasets:\n- dset:"), so a dash line
// at the same indentation as a key without a dash belongs to it.
func (b block) contains(l line) bool {
	return l.indent > b.indent || (l.indent == b.indent && l.dash && !b.dash)
}

type yamlReader struct {
	p       *parse
	sf      *StatsFile
	stack   []block
	entry   *Entry
	dataset *Dataset
	mem     *memBlock
	task    *Task
	pending []*Entry // entries written since the last task block
	sawTask bool
	sawTop  bool // a top-level field such as the 2p2f "Total-Overhead(ms)"
}

func parseStatsYAML(p *parse, sf *StatsFile, br *bufio.Reader, firstLine int) error {
	r := &yamlReader{p: p, sf: sf}
	err := splitLines(br, p, firstLine, func(l line) error {
		if err := r.line(l); err != nil {
			return lineError(l, err)
		}
		return nil
	}, r.longLine)
	if err != nil {
		return err
	}
	return r.end()
}

func (r *yamlReader) top() *block {
	if len(r.stack) == 0 {
		return nil
	}
	return &r.stack[len(r.stack)-1]
}

func (r *yamlReader) push(kind blockKind, l line) {
	r.stack = append(r.stack, block{kind: kind, indent: l.indent, dash: l.dash})
}

func (r *yamlReader) line(l line) error {
	if l.hasKey && l.value == "" {
		if isEntryKey(l.key) {
			return r.startEntry(l)
		}
		if pid, ok := taskKey(l.key); ok {
			return r.startTask(l, pid)
		}
	}
	for len(r.stack) > 0 && !r.top().contains(l) {
		r.pop()
	}
	b := r.top()
	if b != nil && b.kind == blockSkip {
		return nil
	}
	if !l.hasKey {
		if l.value == "" { // a lone dash
			return nil
		}
		return errors.New(msgNotKeyValue)
	}
	if b != nil && b.kind == blockMem && (l.key == "read_ranges" || l.key == "write_ranges") {
		rs, ok, err := scanRanges(r.p, l.value, r.p.keepRanges)
		if err != nil {
			return err
		}
		if ok {
			r.mem.setRanges(l.key, rs)
			return nil
		}
	}
	v, err := parseValueIn(r.p, l.value)
	if err != nil {
		return fieldErr(l.key, err)
	}
	if b == nil {
		return r.topLevel(l, v)
	}
	switch b.kind {
	case blockEntry:
		return r.inEntry(l, v)
	case blockTask:
		if l.value == "" {
			r.push(blockSkip, l)
			return nil
		}
		return r.task.set(r.p, l.key, v, r.sf.Layer)
	case blockDatasets:
		if l.key == "dset" && l.value == "" {
			return r.newDataset(l)
		}
		// 2024: "datasets:" holds the fields of one dataset directly.
		if r.dataset == nil || (l.key == "dset_name" && r.dataset.Name != "") {
			if err := r.p.keep(costDataset); err != nil {
				return err
			}
			r.dataset = r.entry.newDataset()
		}
		return r.field(l, v, r.dataset.set)
	case blockDataset:
		return r.field(l, v, r.dataset.set)
	case blockIO:
		if t, ok := memTypeOf(l.key); ok && l.value == "" {
			return r.startMem(l, t)
		}
		r.push(blockSkip, l)
		return nil
	case blockMem:
		if l.value == "" {
			r.push(blockSkip, l)
			return nil
		}
		return r.mem.set(r.p, l.key, v)
	}
	return nil
}

// newDataset opens a "- dset:" block.
func (r *yamlReader) newDataset(l line) error {
	if err := r.p.keep(costDataset); err != nil {
		return err
	}
	r.dataset = r.entry.newDataset()
	r.push(blockDataset, l)
	return nil
}

// streamLongRanges lets longLine stream range maps (tests turn it off to
// compare with the lines put together).
var streamLongRanges = true

// longLine takes a long line that is a page range map of an I/O block
// from the stream (streamranges.go), as line would read it put together.
func (r *yamlReader) longLine(l line, head []byte, br *bufio.Reader) (took, last bool, err error) {
	if !streamLongRanges || !l.hasKey || (l.key != "read_ranges" && l.key != "write_ranges") || !strings.HasPrefix(l.value, "{") {
		return false, false, nil
	}
	key := "read_ranges"
	if l.key == "write_ranges" {
		key = "write_ranges"
	}
	// The value starts at the first "{" after the first ": ", as splitKey
	// finds them.
	i := bytes.Index(head, []byte(": "))
	if i < 0 {
		return false, false, nil
	}
	start := i + 2 + bytes.IndexByte(head[i+2:], '{')
	for len(r.stack) > 0 && !r.top().contains(l) {
		r.pop()
	}
	if b := r.top(); b == nil || b.kind != blockMem {
		return false, false, nil
	}
	src := &lineSource{head: head[start:], br: br}
	rs, err := streamRanges(r.p, src, r.p.keepRanges)
	if err != nil {
		l.last = src.eof
		return true, src.eof, lineError(l, err)
	}
	r.mem.setRanges(key, rs)
	streamedLines.Add(1)
	return true, src.eof, nil
}

// streamedLines counts the lines longLine streamed, for tests.
var streamedLines atomic.Int64

// field sets a scalar field, or reads past a nested block of unknown keys.
func (r *yamlReader) field(l line, v *node, set func(*parse, string, *node) error) error {
	if l.value == "" {
		r.push(blockSkip, l)
		return nil
	}
	return set(r.p, l.key, v)
}

func (r *yamlReader) inEntry(l line, v *node) error {
	if l.value == "" {
		switch {
		case l.key == "datasets":
			r.dataset = nil
			r.push(blockDatasets, l)
			return nil
		case l.key == "dset": // 2p2f: "- dset:" right under the record
			return r.newDataset(l)
		case l.key == "data" || l.key == "ata" || l.key == "metadata":
			// "ata:" is a writer typo in the 9-stage samples. Data or
			// metadata is decided by the memory type, not by the section:
			// the earliest files list DRAW under metadata.
			r.push(blockIO, l)
			return nil
		}
		if t, ok := memTypeOf(l.key); ok {
			return r.startMem(l, t)
		}
		r.push(blockSkip, l)
		return nil
	}
	return r.entry.set(r.p, l.key, v)
}

func (r *yamlReader) topLevel(l line, v *node) error {
	if l.value == "" {
		r.push(blockSkip, l)
		return nil
	}
	// The earliest VOL files end with a bare "Total-Overhead(ms): N".
	if r.task == nil || !r.sawTop {
		if err := r.p.keep(costTask); err != nil {
			return err
		}
		r.task = &Task{}
		r.sf.Tasks = append(r.sf.Tasks, r.task)
		r.closePending(r.task)
		r.sawTop = true
	}
	return r.task.set(r.p, l.key, v, r.sf.Layer)
}

func (r *yamlReader) startEntry(l line) error {
	if err := r.p.keep(costEntry + int64(len(l.key))); err != nil {
		return err
	}
	// The record before is complete: its I/O blocks are summed now, not
	// held to the end.
	if r.entry != nil {
		if err := r.entry.sumBlocks(r.p); err != nil {
			return err
		}
	}
	id, err := r.p.str(l.key)
	if err != nil {
		return err
	}
	r.stack = r.stack[:0]
	r.entry = &Entry{ID: id}
	r.dataset, r.mem = nil, nil
	r.sf.Entries = append(r.sf.Entries, r.entry)
	r.pending = append(r.pending, r.entry)
	r.push(blockEntry, l)
	r.sawTop = false
	return nil
}

func (r *yamlReader) startTask(l line, pid int64) error {
	if err := r.p.keep(costTask); err != nil {
		return err
	}
	r.stack = r.stack[:0]
	r.task = &Task{PID: pid}
	r.sf.Tasks = append(r.sf.Tasks, r.task)
	r.closePending(r.task)
	r.sawTask = true
	r.sawTop = false
	if r.sf.Format == "" {
		r.sf.Format = FormatYAML2023
	}
	if l.key == "Task" && l.dash {
		r.sf.Format = FormatYAML2024
	}
	r.push(blockTask, l)
	return nil
}

func (r *yamlReader) startMem(l line, t MemType) error {
	if err := r.p.keep(costBlock + int64(len(t))); err != nil {
		return err
	}
	if _, known := knownMemOrder[t]; !known {
		s, err := r.p.str(string(t))
		if err != nil {
			return err
		}
		t = MemType(s)
	}
	r.mem = &memBlock{typ: t, line: l.num}
	r.entry.blocks = append(r.entry.blocks, r.mem)
	r.push(blockMem, l)
	return nil
}

func (r *yamlReader) pop() { r.stack = r.stack[:len(r.stack)-1] }

// closePending gives the entries since the previous task block their task.
func (r *yamlReader) closePending(t *Task) {
	for _, e := range r.pending {
		e.task = t
	}
	r.pending = r.pending[:0]
}

func (e *Entry) newDataset() *Dataset {
	d := &Dataset{Offset: -1}
	e.Datasets = append(e.Datasets, d)
	return d
}

// end checks that the file was not cut short and drops empty records.
func (r *yamlReader) end() error {
	sf := r.sf
	for _, e := range sf.Entries {
		if e.TaskName != "" {
			sf.Format = FormatYAML2024
		}
	}
	if sf.Format == "" {
		sf.Format = FormatYAML2023
	}
	if len(sf.Entries) == 0 {
		return nil
	}
	last := sf.Entries[len(sf.Entries)-1]
	// Files with task blocks, and every file of the formats with task names,
	// have one after every record: records after the last one were being
	// written when the file was read, or the writer died.
	if (r.sawTask || sf.Format == FormatYAML2024) && len(r.pending) > 0 && !r.sawTop {
		return &ParseError{Reason: ReasonTruncated, Msg: fmt.Sprintf(msgNoTask, len(sf.Entries))}
	}
	if last.Path == "" {
		return &ParseError{Reason: ReasonTruncated, Msg: fmt.Sprintf(msgNoFileName, len(sf.Entries))}
	}
	if n := len(last.blocks); n > 0 {
		if miss := last.blocks[n-1].missing(); len(miss) > 0 {
			return &ParseError{Line: last.blocks[n-1].line, Reason: ReasonTruncated,
				Msg: fmt.Sprintf(msgBlockLacks, len(sf.Entries), strings.Join(miss, ", "))}
		}
	}
	// Records without a file name carry nothing to attribute; datasets
	// without a name likewise.
	kept := sf.Entries[:0]
	for _, e := range sf.Entries {
		if e.Path == "" {
			continue
		}
		ds := e.Datasets[:0]
		for _, d := range e.Datasets {
			if d.Name != "" {
				ds = append(ds, d)
			}
		}
		e.Datasets = ds
		kept = append(kept, e)
	}
	sf.Entries = kept
	return nil
}
