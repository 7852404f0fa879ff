package dayu

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hpcio/hpcio_exporter/dropdir"
)

// MaxFileBytes bounds the size of a file the reader accepts; the largest
// real stats file seen is 300 kB.
const MaxFileBytes = 256 << 20

// FileKind says what a file in a workflow directory is.
type FileKind int

const (
	// KindOther is any file that is not tracker output.
	KindOther FileKind = iota
	// KindStats is a VOL or VFD stats file.
	KindStats
	// KindStageMap is a task_to_file or task_order_list file.
	KindStageMap
)

// KindOf classifies a file by its base name: .yaml, .yml or .json files
// whose name holds task_to_file or task_order_list are stage maps; the
// others whose name holds "stat" are stats files.
func KindOf(base string) FileKind {
	b := strings.ToLower(base)
	ext := filepath.Ext(b)
	if ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return KindOther
	}
	switch {
	case IsStageMapName(b):
		return KindStageMap
	case strings.Contains(b, "stat"):
		return KindStats
	}
	return KindOther
}

// ReadFile reads a file of at most MaxFileBytes; failures are *ParseError.
func ReadFile(path string) ([]byte, error) {
	base := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, &ParseError{File: base, Reason: ReasonRead, Msg: err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &ParseError{File: base, Reason: ReasonRead, Msg: err.Error()}
	}
	if len(data) > MaxFileBytes {
		return nil, &ParseError{File: base, Reason: ReasonTooLarge, Msg: fmt.Sprintf("larger than %d bytes", MaxFileBytes)}
	}
	return data, nil
}

// LoadDir reads every stats file and stage map of one workflow directory
// and assembles them. The files are those the exporter's drop-directory
// watcher would read there (package dropdir: links followed). Files that
// fail are returned as errors beside the workflow built from the others;
// err is set only when the directory itself cannot be listed.
func LoadDir(dir string) (w *Workflow, failed []error, err error) {
	paths, err := dropdir.List(dir, 1, func(name string) bool { return KindOf(name) != KindOther })
	if err != nil {
		return nil, nil, err
	}
	var maps []*StageMap
	var stats []*StatsFile
	for _, path := range paths {
		name := filepath.Base(path)
		data, rerr := ReadFile(path)
		if rerr != nil {
			failed = append(failed, rerr)
			continue
		}
		switch KindOf(name) {
		case KindStageMap:
			m, perr := ParseStageMap(name, data)
			if perr != nil {
				failed = append(failed, perr)
				continue
			}
			maps = append(maps, m)
		case KindStats:
			sf, perr := ParseStats(name, data)
			if perr != nil {
				failed = append(failed, perr)
				continue
			}
			stats = append(stats, sf)
		}
	}
	return Assemble(filepath.Base(filepath.Clean(dir)), maps, stats), failed, nil
}
