package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// insightsReport is what --format=json must hold: every key of the schema.
type insightsReport struct {
	Log      string                       `json:"log"`
	JobID    *int64                       `json:"jobid"`
	Insights []map[string]json.RawMessage `json:"insights"`
}

var insightKeys = []string{"code", "count", "count_threshold", "files", "fired", "level", "message", "recommendations", "threshold", "value"}

func checkInsightsJSON(t *testing.T, name, out string) insightsReport {
	t.Helper()
	var r insightsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", name, err, out)
	}
	if r.JobID == nil || r.Log == "" || r.Insights == nil {
		t.Errorf("%s: report lacks log, jobid or insights: %.200s", name, out)
	}
	for _, in := range r.Insights {
		var keys []string
		for k := range in {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, insightKeys) {
			t.Errorf("%s: insight keys %v, want %v", name, keys, insightKeys)
		}
		var level string
		json.Unmarshal(in["level"], &level)
		if _, ok := insights.ParseLevel(level); !ok {
			t.Errorf("%s: level %q", name, level)
		}
	}
	return r
}

// Every log of the shared corpus: exit 0 and a JSON report, or, for the
// damaged ones, exit 1 and an error naming the log.
func TestDarshanInsightsCorpus(t *testing.T) {
	dir := corpus.Dir(t, "darshan")
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "*.darshan"))
	if len(logs) == 0 {
		t.Fatalf("no logs in %s", dir)
	}
	bin := buildExporter(t)
	for _, path := range logs {
		rel, _ := filepath.Rel(dir, path)
		out, errOut, status := runBinary(t, bin, "darshan", "insights", "--format=json", path)
		if strings.HasPrefix(rel, "corrupt"+string(filepath.Separator)) {
			if status != exitFailure || !strings.Contains(errOut, filepath.Base(path)) || out != "" {
				t.Errorf("%s: status %d, stderr %q, %d bytes out; want %d, an error naming the log, nothing out", rel, status, errOut, len(out), exitFailure)
			}
			continue
		}
		if status != exitOK {
			t.Errorf("%s: status %d: %s", rel, status, errOut)
			continue
		}
		checkInsightsJSON(t, rel, out)
	}
}

func TestDarshanInsightsCommand(t *testing.T) {
	bin := buildExporter(t)
	dir := t.TempDir()
	data, err := darshantest.Job{JobID: 31, UID: 1, Exe: "/bin/app", End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Ranks: 3, Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "job.darshan")
	conf := filepath.Join(dir, "thresholds.json")
	badConf := filepath.Join(dir, "bad.json")
	for p, b := range map[string][]byte{log: data, conf: []byte(`{"imbalance": {"size": 0.01}, "small": {"requests_absolute": 0}}`),
		badConf: []byte(`{"imbalance": {"sizes": 0.01}}`)} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	text, errOut, status := runBinary(t, bin, "darshan", "insights", log)
	if status != exitOK || errOut != "" {
		t.Fatalf("text: status %d: %s", status, errOut)
	}
	for _, want := range []string{"Darshan log   job.darshan", "job           31, 3 processes", "found ", "checked, not triggered:"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}

	// Thresholds from a file: the fixture's ranks write unequal amounts
	// (rank r writes (r+1)·Bytes), which a 1% imbalance threshold and no
	// absolute small-request count make P21 and P06 fire.
	out, errOut, status := runBinary(t, bin, "darshan", "insights", "--format=json", "--config="+conf, log)
	if status != exitOK {
		t.Fatalf("json: status %d: %s", status, errOut)
	}
	r := checkInsightsJSON(t, "fixture", out)
	fired := map[string]bool{}
	for _, in := range r.Insights {
		var code string
		var f bool
		json.Unmarshal(in["code"], &code)
		json.Unmarshal(in["fired"], &f)
		fired[code] = f
		var files []string
		json.Unmarshal(in["files"], &files)
		for _, name := range files {
			if strings.Contains(name, "/") {
				t.Errorf("%s lists %q without --full-paths", code, name)
			}
		}
	}
	if !fired["P06"] || !fired["M01"] {
		t.Errorf("with the config, P06 and M01 do not fire: %v", fired)
	}
	full, _, _ := runBinary(t, bin, "darshan", "insights", "--format=json", "--full-paths", "--config="+conf, log)
	if !strings.Contains(full, `"/`) {
		t.Errorf("--full-paths shows no full path:\n%s", full)
	}

	// CSV as Drishti's --export_csv: a header of JOB and every code, a row
	// of the job id and True/False.
	out, _, status = runBinary(t, bin, "darshan", "insights", "--format=csv", "--config="+conf, log)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if status != exitOK || err != nil || len(rows) != 2 {
		t.Fatalf("csv: status %d, %v:\n%s", status, err, out)
	}
	if !slices.Equal(rows[0], append([]string{"JOB"}, insights.Codes...)) || rows[1][0] != "31" {
		t.Errorf("csv header %v, row %v", rows[0], rows[1])
	}
	for i, c := range insights.Codes {
		if want := map[bool]string{true: "True", false: "False"}[fired[c]]; rows[1][i+1] != want {
			t.Errorf("csv %s = %s, want %s", c, rows[1][i+1], want)
		}
	}

	// Bad input: exit 1 with the reason.
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--config=" + badConf, log}, `unknown key "imbalance.sizes"`},
		{[]string{"--config=" + filepath.Join(dir, "none.json"), log}, "none.json"},
		{[]string{filepath.Join(dir, "missing.darshan")}, "missing.darshan"},
		{[]string{conf}, "thresholds.json"}, // not a log
	} {
		_, errOut, status := runBinary(t, bin, append([]string{"darshan", "insights"}, c.args...)...)
		if status != exitFailure || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, status, errOut, exitFailure, c.msg)
		}
	}
	if _, _, status := runBinary(t, bin, "darshan", "insights", "--format=yaml", log); status != exitUsage {
		t.Errorf("--format=yaml: status %d, want %d", status, exitUsage)
	}
}
