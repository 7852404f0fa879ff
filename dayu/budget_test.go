package dayu

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The memory a parse costs, per byte of input: on large files generated in
// each layout (budget.go), and the budget holding on hostile ones.

var memSizeMiB = flag.Int("dayu.memsize", 32, "size in MiB of the files BenchmarkDayuParseMemory generates")

// memLayouts are the large files a long run of the tracker writes: many
// records (a task opening files again and again: the fixtures' records
// repeated), or one record with many I/Os (page range maps of millions of
// entries, one line in YAML).
var memLayouts = []struct {
	name, file string
	gen        func(tb testing.TB, w *bufio.Writer, size int64)
}{
	{"yaml2023-records", "4242_vfd-data-stat-dl.yaml", repeatFixture("yaml2023/4242_vfd-data-stat-dl.yaml")},
	{"yaml2023-vol-records", "4242_vol-data-stat-dl.yaml", repeatFixture("yaml2023/4242_vol-data-stat-dl.yaml")},
	{"yaml2024-records", "7001-vfd_data_stat.yaml", repeatFixture("yaml2024/7001-vfd_data_stat.yaml")},
	{"yaml2024-vol-records", "7001-vol_data_stat.yaml", repeatFixture("yaml2024/7001-vol_data_stat.yaml")},
	{"json-records", "8001-vfd_data_stat.json", repeatFixture("json/8001-vfd_data_stat.json")},
	{"json-vol-records", "8001-vol_data_stat.json", repeatFixture("json/8001-vol_data_stat.json")},
	{"yaml2023-ranges", "9001_vfd-data-stat-dl.yaml", manyRanges(
		"- file-1:\n    file_name: \"out.h5\"\n    open_time: 1\n    close_time: 2\n    data:\n    - H5FD_MEM_DRAW:\n        read_bytes: 0\n        read_cnt: 0\n        read_ranges: {}\n        write_bytes: 1\n        write_cnt: 1\n        write_ranges: {",
		"%d:(%d,%d),", "0:(0,0)}\n- task-9001:\n    VFD-Total-Overhead(ms): 1\n")},
	{"yaml2024-ranges", "9001-vfd_data_stat.yaml", manyRanges(
		"- file-1:\n    file_name: \"/x/out.h5\"\n    task_name: \"w-9001\"\n    data:\n      H5FD_MEM_DRAW:\n        read_bytes: 0\n        read_cnt: 0\n        read_ranges: {}\n        write_bytes: 1\n        write_cnt: 1\n        write_ranges: {",
		"%d:[%d,%d],", "0:[0,0]}\n- Task:\n  task_id: 9001\n")},
	{"json-ranges", "9001-vfd_data_stat.json", manyRanges(
		`[{"file-1": {"file_name": "/x/out.h5", "task_name": "w-9001", "data":[{"file": {"H5FD_MEM_DRAW": {"read_bytes": 0, "read_cnt": 0, "read_ranges": {}, "write_bytes": 1, "write_cnt": 1, "write_ranges": {`,
		`"%d":[%d,%d],`, `"0":[0,0]}}}}]}, "Task": {"task_name": "w-9001", "task_id": 9001}}]`+"\n")},
}

// repeatFixture writes a fixture's records again and again: YAML files one
// after the other, JSON arrays' elements in one array.
func repeatFixture(rel string) func(tb testing.TB, w *bufio.Writer, size int64) {
	return func(tb testing.TB, w *bufio.Writer, size int64) {
		data, err := os.ReadFile(filepath.Join(corpus.Fixtures(tb, "dayu"), rel))
		if err != nil {
			tb.Fatal(err)
		}
		var n int64
		if strings.HasSuffix(rel, ".json") {
			inner := bytes.TrimSpace(data)
			inner = bytes.TrimSpace(inner[1 : len(inner)-1])
			w.WriteString("[\n")
			for first := true; n < size; first = false {
				if !first {
					w.WriteString(",\n")
				}
				w.Write(inner)
				n += int64(len(inner)) + 2
			}
			w.WriteString("]\n")
			return
		}
		for n < size {
			w.Write(data)
			w.WriteString("\n")
			n += int64(len(data)) + 1
		}
	}
}

// manyRanges writes one record whose write_ranges hold the file's bulk.
func manyRanges(head, item, tail string) func(tb testing.TB, w *bufio.Writer, size int64) {
	return func(tb testing.TB, w *bufio.Writer, size int64) {
		n, _ := w.WriteString(head)
		for i := int64(1); int64(n) < size; i++ {
			m, _ := fmt.Fprintf(w, item, i, i/4, i/4)
			n += m
		}
		w.WriteString(tail)
	}
}

// genFile writes a layout of about size bytes into dir.
func genFile(tb testing.TB, dir string, layout int, size int64) string {
	tb.Helper()
	l := memLayouts[layout]
	path := filepath.Join(dir, l.file)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	l.gen(tb, w, size)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// heapSampler follows the heap's size (objects, live or not yet
// collected) while it runs: its peak is what a parse made the heap reach.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := heapObjects(); v > h.peak {
				h.peak = v
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	if v := heapObjects(); v > h.peak {
		h.peak = v
	}
	return h.peak
}

// readGenerated parses path as the collector does: streamed from the
// open file, page ranges dropped.
func readGenerated(path string) (*StatsFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return ReadStats(path, f, fi.Size(), Limits{MaxFileBytes: 1 << 40})
}

// BenchmarkDayuParseMemory parses a generated file of -dayu.memsize MiB in
// each layout and reports the heap's peak above where it started
// (peak-B/B) and what the parsed file keeps once collected (kept-B/B), per
// byte of the file.
func BenchmarkDayuParseMemory(b *testing.B) {
	dir := b.TempDir()
	size := int64(*memSizeMiB) << 20
	for i, l := range memLayouts {
		b.Run(l.name, func(b *testing.B) {
			path := genFile(b, dir, i, size)
			defer os.Remove(path)
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			var peak, kept float64
			for b.Loop() {
				runtime.GC()
				base := heapObjects()
				h := startHeapSampler()
				sf, err := readGenerated(path)
				p := h.Stop()
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				k := heapObjects()
				runtime.KeepAlive(sf)
				peak = max(peak, float64(p-base)/float64(fi.Size()))
				kept = max(kept, (float64(k)-float64(base))/float64(fi.Size()))
			}
			b.ReportMetric(peak, "peak-B/B")
			b.ReportMetric(kept, "kept-B/B")
		})
	}
}

// TestDayuMemoryBudget: a generated file of every layout parses within its
// budget, and the heap's peak while it is read stays under 5 bytes per
// byte of the file (a bound on a measure, not on time).
func TestDayuMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and parses 16 MiB files; skipped with -short")
	}
	dir := t.TempDir()
	const size = 16 << 20
	for i, l := range memLayouts {
		path := genFile(t, dir, i, size)
		fi, _ := os.Stat(path)
		runtime.GC()
		base := heapObjects()
		h := startHeapSampler()
		sf, err := readGenerated(path)
		peak := float64(h.Stop()-base) / float64(fi.Size())
		if err != nil {
			t.Errorf("%s: %v", l.name, err)
			continue
		}
		t.Logf("%s: %d records, heap peak %.2f B per byte of the file", l.name, len(sf.Entries), peak)
		if peak > 5 {
			t.Errorf("%s: the heap peaked at %.2f bytes per byte of the file, want under 5", l.name, peak)
		}
		os.Remove(path)
	}
}

// TestDayuHostileShapesStayInBudget: shapes whose model costs many times
// their text fail as too_large, having held no more than the budget.
func TestDayuHostileShapesStayInBudget(t *testing.T) {
	const n = 4 << 20
	for _, tc := range []struct{ name, head, item, tail string }{
		{"records", "", "- file-1:\n", ""},
		{"datasets", "- file-1:\n    file_name: a\n    datasets:\n", "    - dset:\n", ""},
		{"blocks", "- file-1:\n    file_name: a\n    data:\n", "      H5FD_MEM_X:\n", ""},
		{"numbers", "- file-1:\n    file_name: a\n    datasets:\n    - dset:\n        dimensions: [", "0,", "]\n"},
		{"unknown keys", "- file-1:\n    file_name: a\n", "    k: v\n", ""},
		{"json zeros", `[{"file-1": {"file_name": "a", "x": [`, "0,", `0]}}]`},
		{"json objects", `[{"file-1": {"file_name": "a", "x": [`, "{},", `{}]}}]`},
		{"json records", `[`, `{"file-1": {"file_name": "a"}},`, `{}]`},
	} {
		data := []byte(tc.head + strings.Repeat(tc.item, n/len(tc.item)) + tc.tail)
		runtime.GC()
		base := heapObjects()
		h := startHeapSampler()
		_, err := ReadStats("1_vfd-data-stat.yaml", bytes.NewReader(data), int64(len(data)), Limits{})
		peak := float64(h.Stop()-base) / float64(len(data))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Reason != ReasonTooLarge {
			t.Logf("%s: %v (parsed within its budget), heap peak %.2f B/B", tc.name, err, peak)
		} else {
			t.Logf("%s: %v, heap peak %.2f B/B", tc.name, err, peak)
		}
		// The budget, and as much again of garbage that Go's collector
		// (GOGC=100) lets pile up before it runs, with a margin: its
		// pace is not exact.
		if limit := 2.5 * (float64(memFactor) + float64(memSlack)/float64(len(data))); peak > limit {
			t.Errorf("%s: the heap peaked at %.2f bytes per byte of the file, over the budget's %.2f", tc.name, peak, limit)
		}
	}
}

var _ = io.EOF
