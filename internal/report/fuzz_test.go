package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// FuzzFromLogs: whatever a log holds, the report of it is an error or a
// view whose numbers add up, never a panic; its JSON is written.
func FuzzFromLogs(f *testing.F) {
	for _, name := range []string{"all_modules.darshan", "heatmap_off_by_one.darshan", "partial_and_unknown.darshan"} {
		if b, err := os.ReadFile(corpus.Fixtures(f, "darshan", name)); err == nil {
			f.Add(b)
		}
	}
	if b, err := (darshantest.Job{JobID: 9, UID: 1, Exe: "/bin/x", Ranks: 3, Bytes: 1000}).Log(); err == nil {
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.darshan")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		job, app, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig(), MemoryBudget: 64 << 20})
		if err != nil {
			return
		}
		for _, h := range app.Heatmaps {
			if len(h.Rows) != len(h.Cells) || len(h.Cells) > maxRows+1 {
				t.Fatalf("%s: %d rows, %d lines of cells", h.Layer, len(h.Rows), len(h.Cells))
			}
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, &Report{Schema: Schema, Job: job, App: app}); err != nil {
			t.Fatal(err)
		}
		if n := darshantest.CountHidden(b.String()); n != 0 {
			t.Fatalf("%d hidden characters in the JSON", n)
		}
	})
}

// FuzzNames: the names a Darshan log directory and a log hold (file
// names, day directories, command lines, file paths) are read without a
// panic; what the report keeps of them is their own text (a base name of
// the command line, a prefix of the path or the mount point), which the
// page shows without a hidden character.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"alice_sim_id7001-31001_11-27-34080-1111_1.darshan", "2026/11/27", "/apps/sim/bin/sim --x",
		"/scratch/a/b", "_id-_", "2026/13/40", "x_id9-9_", "\x00/\u202e", "/scratch", "/scratch/\u202efdp.exe", "/scratch/a/\xff\u2066"} {
		f.Add(s)
	}
	mounts := sortedMounts([]darshan.Mount{{Path: "/scratch", Type: "lustre"}, {Path: "/", Type: "ext4"}, {Path: "/scratch/a", Type: "nfs"}})
	f.Fuzz(func(t *testing.T, s string) {
		if j, p, ok := jobid.DarshanLogName(s); ok && !strings.Contains(s, "_id") {
			t.Fatalf("DarshanLogName(%q) = %d, %d without _id", s, j, p)
		}
		if lo, hi, ok := dateRange(strings.Split(s, "/")); ok && lo > hi {
			t.Fatalf("dateRange(%q) = %v > %v", s, lo, hi)
		}
		fs := fileSystemOf(s, mounts)
		for _, out := range []string{exeBase(s), fs.mount, fs.typ} {
			if n := darshantest.CountHidden(labelvalue.Visible(out)); n != 0 {
				t.Fatalf("%q shown as %q: %d hidden characters", s, labelvalue.Visible(out), n)
			}
		}
		if e := exeBase(s); strings.ContainsRune(e, '/') || !strings.Contains(s, e) {
			t.Fatalf("exeBase(%q) = %q: not a base name of it", s, e)
		}
		if strings.HasPrefix(fs.mount, "/") && !strings.HasPrefix(s, fs.mount) {
			t.Fatalf("fileSystemOf(%q) = %q: not a prefix of the path", s, fs.mount)
		}
	})
}
