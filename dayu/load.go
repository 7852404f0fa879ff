package dayu

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

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

// ReadFile reads a whole file of at most DefaultMaxFileBytes (refused by
// its size before it is read), opened as the drop-directory watcher opens
// files (dropdir.OpenFile: regular files only, links only to their owner's
// files); failures are *ParseError. For tests and small files: the readers
// of tracker files stream (ReadStats, ReadStageMap).
func ReadFile(path string) ([]byte, error) {
	base := filepath.Base(path)
	f, fi, err := dropdir.OpenFile(path)
	if err != nil {
		return nil, &ParseError{File: base, Reason: ReasonRead, Msg: err.Error()}
	}
	defer f.Close()
	lim := Limits{}
	if err := lim.CheckSize(base, fi.Size()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, lim.maxBytes()+1))
	if err != nil {
		return nil, &ParseError{File: base, Reason: ReasonRead, Msg: err.Error()}
	}
	if int64(len(data)) > lim.maxBytes() {
		return nil, &ParseError{File: base, Reason: ReasonTooLarge, Msg: msgGrew}
	}
	return data, nil
}

// ReadPath opens path as ReadFile does and reads it as a stats file or a
// stage map, by its name (KindOf), within lim. It returns one of stats and
// smap, or a *ParseError.
func ReadPath(path string, lim Limits) (stats *StatsFile, smap *StageMap, err error) {
	base := filepath.Base(path)
	f, fi, err := dropdir.OpenFile(path)
	if err != nil {
		return nil, nil, &ParseError{File: base, Reason: ReasonRead, Msg: err.Error()}
	}
	defer f.Close()
	return ReadOpen(path, f, fi.Size(), lim)
}

// ReadOpen reads the tracker file at path, open as r with size bytes (its
// fstat), as ReadPath does.
func ReadOpen(path string, r io.Reader, size int64, lim Limits) (stats *StatsFile, smap *StageMap, err error) {
	switch KindOf(filepath.Base(path)) {
	case KindStageMap:
		smap, err = ReadStageMap(path, r, size, lim)
	case KindStats:
		stats, err = ReadStats(path, r, size, lim)
	default:
		err = &ParseError{File: filepath.Base(path), Reason: ReasonNotStats, Msg: msgNoRecords}
	}
	return stats, smap, err
}

// LoadDir reads every stats file and stage map of one workflow directory
// within lim and assembles them. The files are those the exporter's
// drop-directory watcher would read there (package dropdir: links
// followed). Files that fail are returned as errors beside the workflow
// built from the others; err is set only when the directory itself cannot
// be listed.
func LoadDir(dir string, lim Limits) (w *Workflow, failed []error, err error) {
	paths, err := dropdir.List(dir, 1, func(name string) bool { return KindOf(name) != KindOther })
	if err != nil {
		return nil, nil, err
	}
	var maps []*StageMap
	var stats []*StatsFile
	for _, path := range paths {
		sf, m, rerr := ReadPath(path, lim)
		switch {
		case rerr != nil:
			failed = append(failed, rerr)
		case m != nil:
			maps = append(maps, m)
		case sf != nil:
			stats = append(stats, sf)
		}
	}
	return Assemble(filepath.Base(filepath.Clean(dir)), maps, stats), failed, nil
}
