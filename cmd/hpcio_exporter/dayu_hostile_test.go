package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// What `dayu graph` costs on the files a user could hand it: a huge one is
// refused by its size before it is read, a large one read within a memory
// budget proportional to it (measured: the peak resident memory of the
// process, from its rusage).

// runDayuCLI runs bin with args, stdout discarded, and returns its stderr,
// exit status and peak resident memory in KiB (its own: runMeasured).
func runDayuCLI(t *testing.T, bin string, args ...string) (stderr string, status int, maxRSSKiB int64) {
	t.Helper()
	var errOut strings.Builder
	m, err := runMeasured(2*time.Minute, io.Discard, &errOut, bin, args...)
	if err != nil || m.timedOut {
		t.Fatalf("%q: %v (timed out: %v)", args, err, m.timedOut)
	}
	return errOut.String(), m.status, m.maxRSSKiB
}

// A 300 MB stats file (sparse) is skipped as too_large without being read:
// the process stays small (e27eef4 read 256 MiB of it first).
func TestDayuGraphRefusesHugeFile(t *testing.T) {
	bin := buildExporter(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "1-vfd_data_stat.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	stderr, status, rss := runDayuCLI(t, bin, "dayu", "graph", dir)
	if status != exitFailure || !strings.Contains(stderr, "too_large") || !strings.Contains(stderr, "--max-file-size") {
		t.Errorf("status %d, stderr %q; want %d, too_large and the flag that raises the cap", status, stderr, exitFailure)
	}
	t.Logf("peak RSS %d KiB", rss)
	if rss > 100<<10 {
		t.Errorf("peak RSS %d KiB: the file was read", rss)
	}
}

// writeJSONRecords writes a JSON stats file of about size bytes: the
// records of the JSON fixture again and again, as a task that opens its
// files many times makes it.
func writeJSONRecords(t *testing.T, path string, size int) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "dayu"), "json", "8001-vfd_data_stat.json"))
	if err != nil {
		t.Fatal(err)
	}
	inner := bytes.TrimSpace(data)
	inner = bytes.TrimSpace(inner[1 : len(inner)-1])
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("[\n")
	for n := 0; n < size; n += len(inner) + 2 {
		if n > 0 {
			w.WriteString(",\n")
		}
		w.Write(inner)
	}
	w.WriteString("]\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A 60 MB JSON stats file of records (the cap raised past it) is drawn
// with a peak resident memory under 5 bytes per byte of the file (3
// measured; e27eef4: 22).
func TestDayuGraphMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 60 MB stats file; skipped with -short")
	}
	bin := buildExporter(t)
	dir := t.TempDir()
	size := writeJSONRecords(t, filepath.Join(dir, "8001-vfd_data_stat.json"), 60<<20)
	stderr, status, rss := runDayuCLI(t, bin, "dayu", "graph", "--max-file-size=64MiB", dir)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	ratio := float64(rss<<10) / float64(size)
	t.Logf("%d bytes of stats: peak RSS %d KiB, %.2f bytes per byte", size, rss, ratio)
	if ratio > 5 {
		t.Errorf("peak RSS %.2f bytes per byte of the file, want under 5", ratio)
	}
}
