package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

var testEnd = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// writeTestLog writes a log into the test's directory under name.
func writeTestLog(t *testing.T, name string, data []byte, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLogStringsKept: the report holds a log's strings as the log holds
// them, hidden characters and all (the page shows their visible form, the
// JSON the strings themselves): the executable, the library version, the
// log's file name, mount points and types, file paths.
func TestLogStringsKept(t *testing.T) {
	h := darshantest.Hidden
	data, err := darshantest.HostileLog(testEnd)
	path := writeTestLog(t, darshantest.HostileFileName, data, err)
	job, app, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	odd := "/scratch" + h + "/out\xff\n\t" + h + ".dat"
	if want := []string{h + "fdp.exe"}; !slices.Equal(job.Exe, want) {
		t.Errorf("exe %q, want %q", job.Exe, want)
	}
	if l := app.Logs[0]; l.File != darshantest.HostileFileName || l.LibVersion != "3.4.7"+h || l.Exe != h+"fdp.exe" {
		t.Errorf("log %q, library %q, exe %q", l.File, l.LibVersion, l.Exe)
	}
	var paths []string
	for _, f := range app.TopFiles {
		paths = append(paths, f.Path)
	}
	for _, want := range []string{darshantest.HostilePath, odd} {
		if !slices.Contains(paths, want) {
			t.Errorf("top files %q lack %q", paths, want)
		}
	}
	if !slices.ContainsFunc(app.FileSystems, func(fs FileSystem) bool { return fs.Mount == "/scratch"+h && fs.Type == "lustre"+h }) {
		t.Errorf("file systems %+v lack the mount point /scratch%q", app.FileSystems, h)
	}
	named := false
	for _, in := range app.Insights {
		named = named || slices.Contains(in.Files, darshantest.HostilePath)
	}
	if !named {
		t.Error("no insight names the file by its path")
	}

	// The JSON: no hidden character in its text, the strings themselves
	// once decoded (a byte that is not UTF-8 as U+FFFD).
	var b bytes.Buffer
	if err := WriteJSON(&b, &Report{Schema: Schema, Job: job, App: app}); err != nil {
		t.Fatal(err)
	}
	if n := darshantest.CountHidden(b.String()); n != 0 {
		t.Errorf("%d hidden characters in the JSON", n)
	}
	if !strings.Contains(b.String(), `\u202e`) {
		t.Error("the JSON does not escape U+202E")
	}
	var back struct {
		Job struct {
			Exe []string `json:"exe"`
		} `json:"job"`
		App struct {
			Logs []struct {
				File       string `json:"file"`
				LibVersion string `json:"library_version"`
			} `json:"logs"`
			TopFiles []struct {
				Path string `json:"path"`
			} `json:"top_files"`
		} `json:"application"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Job.Exe, job.Exe) || back.App.Logs[0].File != darshantest.HostileFileName || back.App.Logs[0].LibVersion != "3.4.7"+h {
		t.Errorf("JSON read back: exe %q, log %q, library %q", back.Job.Exe, back.App.Logs[0].File, back.App.Logs[0].LibVersion)
	}
	var backPaths []string
	for _, f := range back.App.TopFiles {
		backPaths = append(backPaths, f.Path)
	}
	if want := strings.ToValidUTF8(odd, "\ufffd"); !slices.Contains(backPaths, darshantest.HostilePath) || !slices.Contains(backPaths, want) {
		t.Errorf("JSON read back: top files %q, want %q and %q among them", backPaths, darshantest.HostilePath, want)
	}
}
