package report

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// testLogs returns the project's fixture logs and, when the shared corpus
// is there, every corpus log.
func testLogs(t *testing.T) []string {
	t.Helper()
	var logs []string
	for _, dir := range []string{corpus.Fixtures(t, "darshan"), corpus.Fixtures(t, "darshan-signals"), corpus.Fixtures(t, "report")} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.darshan"))
		logs = append(logs, m...)
	}
	if root := corpus.Root(); root != "" {
		m, _ := filepath.Glob(filepath.Join(root, "corpus", "darshan", "*", "*.darshan"))
		logs = append(logs, m...)
	} else {
		t.Log("shared corpus not found: checking the fixtures only")
	}
	return logs
}

// commandSignals reads what `darshan signals` prints of a log at the job
// and module levels: "JOB SIGNAL_X" and "POSIX SIGNAL_X" → value text.
func commandSignals(t *testing.T, path string) (map[string]string, error) {
	l, err := darshan.Open(path)
	if err != nil {
		if l != nil {
			l.Close()
		}
		return nil, err
	}
	defer l.Close()
	var b bytes.Buffer
	if err := signals.WriteReport(&b, l); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.Lines(b.String()) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 5 || strings.HasPrefix(line, "#") {
			continue
		}
		if f[0] == "JOB" || f[2] == "MODULE" {
			out[f[0]+" "+f[3]] = f[4]
		}
	}
	return out, nil
}

// sameValue tells whether a report's value is the command's text.
func sameValue(v Value, text string) bool {
	if reason, ok := strings.CutPrefix(text, "NA("); ok {
		return !v.OK && v.NA == strings.TrimSuffix(reason, ")")
	}
	x, err := strconv.ParseFloat(text, 64)
	if err != nil || !v.OK {
		return false
	}
	return x == v.V || math.Abs(x-v.V) <= 1e-12*math.Abs(x)
}

// TestSameNumbersAsCommands holds the application's view of every fixture
// and corpus log to what `darshan signals` (signals.WriteReport) and
// `darshan insights` (insights.FromLog, Evaluate) say of it: every job and
// module signal with its value, and exactly the insight codes that fired,
// with their levels and numbers. A log the commands cannot read whole is
// one the report refuses.
func TestSameNumbersAsCommands(t *testing.T) {
	logs := testLogs(t)
	checked := 0
	for _, path := range logs {
		name := filepath.Base(path)
		_, app, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig()})
		want, cerr := commandSignals(t, path)
		var found []insights.Insight
		if cerr == nil {
			l, _ := darshan.Open(path)
			tot, ierr := insights.FromLog(l)
			l.Close()
			cerr = ierr
			found = insights.Evaluate(tot, insights.DefaultConfig())
		}
		if (err != nil) != (cerr != nil) {
			t.Errorf("%s: report error %v, commands' error %v", name, err, cerr)
			continue
		}
		if err != nil {
			continue
		}
		checked++
		got := map[string]Value{}
		for _, s := range app.JobSignals {
			got["JOB "+sigName(s.Name)] = s.Value
			if s.NA != "" {
				got["JOB "+sigName(s.Name)] = Value{NA: s.NA}
			}
		}
		for _, m := range app.Modules {
			for _, s := range m.Signals {
				got[m.Name+" "+sigName(s.Name)] = Value{V: s.Value.V, OK: s.Value.OK, NA: s.NA}
			}
		}
		for k, text := range want {
			v, ok := got[k]
			if !ok {
				t.Errorf("%s: %s missing from the report (command: %s)", name, k, text)
				continue
			}
			if !sameValue(v, text) {
				t.Errorf("%s: %s = %+v, command prints %s", name, k, v, text)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: %s in the report, not printed by the command", name, k)
			}
		}

		// Insights: the same decisions, in the same order, same numbers.
		if len(app.Insights) != len(found) {
			t.Errorf("%s: %d insights, the command decides %d", name, len(app.Insights), len(found))
			continue
		}
		for i, in := range found {
			r := app.Insights[i]
			if r.Code != in.Code || r.Fired != in.Fired || r.Level != in.Level.String() || r.Message != in.Message ||
				!sameNum(r.Value, in.Value) || !sameNum(r.Threshold, in.Threshold) || !sameNum(r.Count, in.Count) ||
				!slices.Equal(r.Recommendations, in.Recommendations) || !slices.Equal(r.Files, nonNil(in.Files)) {
				t.Errorf("%s: insight %d is %+v, the command's %+v", name, i, r, in)
			}
		}
		if app.Fired() == nil {
			t.Errorf("%s: Fired is nil", name)
		}
	}
	if checked == 0 {
		t.Fatal("no log checked")
	}
	t.Logf("%d of %d logs checked (the others refused by both)", checked, len(logs))
}

func sameNum(v Value, x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return !v.OK
	}
	return v.OK && v.V == x
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestHidePaths checks that --no-paths leaves no path of the log in the
// report: not in the top files, not in the insights' files.
func TestHidePaths(t *testing.T) {
	path := corpus.Fixtures(t, "darshan", "all_modules.darshan")
	_, app, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig(), HidePaths: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := darshan.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	names := l.Names
	l.Close()
	var b bytes.Buffer
	if err := WriteJSON(&b, &Report{App: app}); err != nil {
		t.Fatal(err)
	}
	if len(app.TopFiles) == 0 {
		t.Fatal("no top file")
	}
	for _, f := range app.TopFiles {
		if f.Path != "" {
			t.Errorf("file %s has its path", f.ID)
		}
	}
	js := b.String()
	for _, n := range names {
		if len(n) > 3 && strings.Contains(js, strconv.Quote(n)[1:len(strconv.Quote(n))-1]) {
			t.Errorf("the report holds the path %q", n)
		}
	}
}

// sigName is a signal's name as the command prints it.
func sigName(s string) string { return "SIGNAL_" + strings.ToUpper(s) }

// The heatmap's picture holds what its totals hold: the bytes of its
// cells, of its rows and of its read and write bins over time are the
// same, for every fixture and corpus log; a DXT heatmap of a log whose
// traces are whole (the fixture written by the corpus' darshan-runtime)
// holds the module's bytes.
func TestHeatmapsAddUp(t *testing.T) {
	heatmaps := 0
	for _, path := range testLogs(t) {
		_, app, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig()})
		if err != nil {
			continue
		}
		for _, h := range app.Heatmaps {
			heatmaps++
			var cells, rows, bins int64
			for _, r := range h.Cells {
				for _, v := range r {
					cells += v
				}
			}
			for _, v := range h.RankBytes {
				rows += v
			}
			for i := range h.Read {
				bins += h.Read[i] + h.Write[i]
			}
			if cells != rows || cells != bins || len(h.Rows) != len(h.Cells) || len(h.Read) != len(h.Write) {
				t.Errorf("%s %s: cells %d, rows %d, bins %d bytes; %d rows, %d lines of cells",
					filepath.Base(path), h.Layer, cells, rows, bins, len(h.Rows), len(h.Cells))
			}
			if len(h.Cells) > maxRows || len(h.Cells) > 0 && len(h.Cells[0]) > maxColumns {
				t.Errorf("%s %s: %d×%d cells, more than the picture's limits", filepath.Base(path), h.Layer, len(h.Cells), len(h.Cells[0]))
			}
		}
	}
	if heatmaps == 0 {
		t.Fatal("no heatmap checked")
	}
}
