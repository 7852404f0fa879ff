package collector

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// What a hostile drop directory cannot do to the dayu collector: make it
// read a huge file, multiply its series, put control or bidi characters in
// its labels, or make it log what a file holds.

// readBytes is what this process has read so far, by /proc/self/io
// (rchar: every read, from files and pipes alike).
func readBytes(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io to count what is read: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// A 300 MB stats file (sparse: nothing on disk) is refused by its size,
// before it is read: counted too_large, logged once with its path and
// size, and the process reads none of it. The run's other files are
// exported.
func TestDayuHugeFileRefusedBeforeRead(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(run, "4243_vfd-data-stat-dl.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	const size = 300 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src := filepath.Join(corpus.Fixtures(t, "dayu"), "yaml2023", "4242_vfd-data-stat-dl.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "4242_vfd-data-stat-dl.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	log := &logtest.Capture{}
	before := readBytes(t)
	c := newDayuLogged(t, log.Logger(), 64, root)
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	read := readBytes(t) - before
	dayuWant(t, text, `dayu_files_failed_total{reason="too_large"}`, 1)
	dayuWant(t, text, `dayu_workflow_tracker_files{workflow="run1"}`, 1)
	if read > 16<<20 {
		t.Errorf("the process read %d bytes; a file over the size cap must not be read at all", read)
	}
	var skipped []logtest.Record
	for _, r := range log.Next(t) {
		if r["msg"] == "skipping DaYu tracker file" {
			skipped = append(skipped, r)
		}
	}
	if len(skipped) != 1 {
		t.Fatalf("%d lines about skipped files, want 1: %v", len(skipped), skipped)
	}
	if skipped[0]["file"] != big || skipped[0]["reason"] != "too_large" || skipped[0].Num("size") != size {
		t.Errorf("the line does not name the file, its reason and size: %v", skipped[0])
	}
	// Read once: a rescan does not read it, count it or log it again.
	text, err = dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	dayuWant(t, text, `dayu_files_failed_total{reason="too_large"}`, 1)
}

// dayuFamilySums sums every sample of each family in a text exposition.
func dayuFamilySums(t *testing.T, text string) (sums map[string]float64, series int) {
	t.Helper()
	sums = map[string]float64{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		series++
		name := l[:strings.IndexAny(l, "{ ")]
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		sums[name] += v
	}
	return sums, series
}

// dayuSummed are the families whose sums over a scrape are totals of what
// the files say: the counters, and the gauges that count.
var dayuSummed = []string{
	"dayu_stage_io_bytes_total", "dayu_stage_io_operations_total",
	"dayu_dataflow_bytes_total", "dayu_dataflow_operations_total",
	"dayu_stage_tracker_overhead_seconds_total",
	"dayu_stage_datasets_touched", "dayu_stage_files_touched",
	"dayu_workflow_stages", "dayu_workflow_files", "dayu_workflow_tracker_files",
}

func near(a, b float64) bool { return a == b || (a-b)/b < 1e-9 && (b-a)/b < 1e-9 }

// 1,000 workflow directories give a bounded number of series, and every
// total is what the 1,000 workflows hold: the workflows past the cap are
// summed under workflow="_other".
func TestDayuThousandWorkflowsCapped(t *testing.T) {
	src := filepath.Join(corpus.Fixtures(t, "dayu"), "yaml2023")
	names, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	copyRun := func(dir string, stamp time.Time) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			data, err := os.ReadFile(filepath.Join(src, n.Name()))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, n.Name())
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, stamp, stamp); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now().Add(-time.Hour)
	one := t.TempDir()
	copyRun(filepath.Join(one, "wf"), start)
	text, err := dayuScrape(t, newDayuForTest(t, 64, one))
	if err != nil {
		t.Fatal(err)
	}
	per, perSeries := dayuFamilySums(t, text)

	const n = 1000
	root := t.TempDir()
	for i := range n {
		copyRun(filepath.Join(root, fmt.Sprintf("wf%04d", i)), start.Add(time.Duration(i)*time.Second))
	}
	c := newDayuForTest(t, 64, root)
	text, err = dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	sums, series := dayuFamilySums(t, text)
	t.Logf("%d series for %d workflows (%d for one)", series, n, perSeries)
	if series > 100*perSeries+200 {
		t.Errorf("%d series for %d workflows: not capped", series, n)
	}
	for _, f := range dayuSummed {
		if !near(sums[f], n*per[f]) {
			t.Errorf("sum of %s = %v, want %d × %v", f, sums[f], n, per[f])
		}
	}
	dayuWant(t, text, `dayu_folded_items{kind="workflow"}`, n-100)
	// The most recently changed keep their series.
	if !strings.Contains(text, `workflow="wf0999"`) || !strings.Contains(text, `workflow="wf0900"`) || strings.Contains(text, `workflow="wf0899"`) {
		t.Error("the workflows kept are not the 100 changed last")
	}
	checkPromtool(t, text)
}

// One file with 10,000 task names: the stages past the cap are summed
// under stage="_other", the totals exact.
func TestDayuTenThousandTasksCapped(t *testing.T) {
	const n = 10000
	root := t.TempDir()
	run := filepath.Join(root, "tasks")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	var readBytes, writeBytes, ops int64
	w.WriteString("[\n")
	for i := range n {
		if i > 0 {
			w.WriteString(",\n")
		}
		rb, wb := int64(1000+i), int64(2*i+1)
		readBytes, writeBytes, ops = readBytes+rb, writeBytes+wb, ops+3
		fmt.Fprintf(w, `{"file-%d": {"file_name": "/d/f%d.h5", "task_name": "step%d-%d", "open_time": %d, "close_time": %d, "file_read_cnt": 1, "file_write_cnt": 2, "io_bytes": %d,
 "data": [{"file": {"H5FD_MEM_DRAW": {"read_bytes": %d, "read_cnt": 1, "read_ranges": {"1":[0,0]}, "write_bytes": %d, "write_cnt": 2, "write_ranges": {"2":[0,0],"3":[1,1]}}}}]},
 "Task": {"task_name": "step%d-%d", "task_id": %d, "VFD-Overhead(ms)": 1}}`,
			i+1, i%100, i, 20000+i, 1720000000000000+i, 1720000000001000+i, rb+wb, rb, wb, i, 20000+i, 20000+i)
	}
	w.WriteString("]\n")
	w.Flush()
	t.Logf("%d bytes of stats", b.Len())
	if err := os.WriteFile(filepath.Join(run, "20000-vfd_data_stat.json"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &logtest.Capture{}
	c := newDayuLogged(t, log.Logger(), 64, root)
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	sums, series := dayuFamilySums(t, text)
	t.Logf("%d series for %d stages", series, n)
	// Logged once, when what is folded changes; not at every scan.
	folded := func() []logtest.Record {
		var out []logtest.Record
		for _, r := range log.Next(t) {
			if m, _ := r["msg"].(string); strings.HasPrefix(m, "DaYu series past their caps") {
				out = append(out, r)
			}
		}
		return out
	}
	if got := folded(); len(got) != 1 || got[0].Num("stages") != n-256 || got[0].Num("max_stages") != 256 {
		t.Errorf("lines about the caps: %v, want one with stages=%d", got, n-256)
	}
	if _, err := dayuScrape(t, c); err != nil {
		t.Fatal(err)
	}
	if got := folded(); len(got) != 0 {
		t.Errorf("logged again with nothing changed: %v", got)
	}
	if series > 20000 {
		t.Errorf("%d series for %d stages: not capped", series, n)
	}
	for f, want := range map[string]float64{
		"dayu_stage_io_bytes_total":                 float64(readBytes + writeBytes),
		"dayu_stage_io_operations_total":            float64(ops),
		"dayu_dataflow_bytes_total":                 float64(readBytes + writeBytes),
		"dayu_dataflow_operations_total":            float64(ops),
		"dayu_stage_tracker_overhead_seconds_total": n * 0.001,
		"dayu_stage_files_touched":                  n,
	} {
		if !near(sums[f], want) {
			t.Errorf("sum of %s = %v, want %v", f, sums[f], want)
		}
	}
	dayuWant(t, text, `dayu_workflow_stages{workflow="tasks"}`, n)
	dayuWant(t, text, `dayu_folded_items{kind="stage"}`, n-256)
	// The stages that moved the most bytes keep their series.
	if !strings.Contains(text, `stage="step9999"`) || strings.Contains(text, `stage="step0"`) {
		t.Error("the stages kept are not those that moved the most bytes")
	}
	checkPromtool(t, text)
}

// dayuGather returns what one Update sends, gathered by a pedantic
// registry.
func dayuGather(t *testing.T, c *dayuCollector) []*dto.MetricFamily {
	t.Helper()
	if err := c.watcher.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&dayuAdapter{c: c})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return mfs
}

// badRune tells the runes no label value may hold: controls (C0, DEL, C1
// with NEL), format characters (bidi marks, embeddings, overrides,
// isolates), invalid UTF-8.
func badRune(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Workflow, stage and file names with ESC, BEL, CR, NEL (U+0085) and RLO
// (U+202E) in them, from a directory name, a YAML file's raw bytes and a
// JSON file's escapes: the label values hold none of them.
func TestDayuLabelValuesCleaned(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "wf\x1b[31m\a\r\u0085\u202eevil")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "- file-1:\n    file_name: \"/d/in\x1b[2J\a\r\u0085\u202eput.h5\"\n    task_name: \"pre\x1b]0;x\a\u0085\u202epare-7001\"\n" +
		"    open_time: 1710000000000000\n    close_time: 1710000001000000\n    file_read_cnt: 1\n    file_write_cnt: 0\n" +
		"    data:\n      H5FD_MEM_DRAW:\n        read_bytes: 4096\n        read_cnt: 1\n        read_ranges: {1:[0,0]}\n        write_bytes: 0\n        write_cnt: 0\n        write_ranges: {}\n" +
		"- Task:\n  task_id: 7001\n  VFD-Total-Overhead(ms): 2\n"
	json := `[{"file-1": {"file_name": "/d/out\u001b[0m\u0007\r\u0085\u202e.h5", "task_name": "wr\u001b\u0007\u000d\u0085\u202eite-7002", "open_time": 1710000002000000, "close_time": 1710000003000000,` +
		` "data": [{"file": {"H5FD_MEM_DRAW": {"read_bytes": 0, "read_cnt": 0, "read_ranges": {}, "write_bytes": 8192, "write_cnt": 2, "write_ranges": {"1":[0,0],"2":[1,1]}}}}]},` +
		` "Task": {"task_name": "wr\u001bite-7002", "task_id": 7002}}]`
	for name, data := range map[string]string{"7001-vfd_data_stat.yaml": yaml, "7002-vfd_data_stat.json": json} {
		if err := os.WriteFile(filepath.Join(run, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := newDayuForTest(t, 64, root)
	mfs := dayuGather(t, c)
	samples := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			samples++
			for _, lp := range m.GetLabel() {
				for _, r := range lp.GetValue() {
					if badRune(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
						t.Errorf("%s{%s=%q} holds %U", mf.GetName(), lp.GetName(), lp.GetValue(), r)
						break
					}
				}
			}
		}
	}
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	// The names, cleaned, are still the names.
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="in[2Jput.h5",stage="pre]0;xpare",workflow="wf[31mevil"}`, 4096)
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="write",file="out[0m.h5",stage="write",workflow="wf[31mevil"}`, 8192)
	checkPromtool(t, text)
}

// Damaged files whose text holds a marker where each error of the reader
// is found: what the collector logs names the file and the fault, never a
// byte of the marker.
func TestDayuErrorsCarryNoContent(t *testing.T) {
	const secret = "S3CR3T"
	files := map[string]string{
		"1_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n" + secret + "\n",
		"2_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n    open_time: " + secret + "\n- Task:\n  task_id: 1\n",
		"3_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n    data:\n      H5FD_MEM_DRAW:\n        read_ranges: {" + secret + ":(0,0)}\n",
		"4_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n    " + secret + ": [1, 2] " + secret + "\n- Task:\n  task_id: 1\n",
		"5_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n    open_time: {" + secret + "}\n",
		"6_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n    file_read_cnt: [" + secret + " " + secret + "]\n- Task:\n  task_id: 1\n",
		"7_vfd-data-stat.yaml":  "- file-1:\n    file_name: a\n    " + secret + "(ms): x\n- Task:\n  " + secret + "(ms): " + secret + "\n",
		"8-vfd_data_stat.json":  `[{"file-1": {"file_name": "a", "open_time": "` + secret + `"}}]`,
		"9-vfd_data_stat.json":  `[{"file-1": {"file_name": "a"}}, ` + secret + `]`,
		"10-vfd_data_stat.json": `[{"file-1": {"file_name": "a", "data": [{"` + secret + `": {"H5FD_MEM_DRAW": {"read_bytes": "` + secret + `"}}}]}}]`,
		"11-vfd_data_stat.json": `[{"file-1": {"file_name": "a", "data": [{"file": {"H5FD_MEM_` + secret + `": {"write_ranges": {"` + secret + `": [1, 2]}}}}]}}]`,
		"12-vfd_data_stat.json": `[{"file-1": {"file_name": "\` + secret + `"}}]`,
		"13-vfd_data_stat.json": `{"file-1": {"file_name": "a"}} ` + secret,
		"task_to_file.yaml":     "run:\n  order: 1\n  - " + secret + "\n",
	}
	root := t.TempDir()
	run := filepath.Join(root, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(run, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := &logtest.Capture{}
	c := newDayuLogged(t, log.Logger(), 64, root)
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	sums, _ := dayuFamilySums(t, text)
	if got := sums["dayu_files_failed_total"]; got != float64(len(files)) {
		t.Errorf("%v files failed, want %d", got, len(files))
	}
	recs := log.Next(t)
	skipped := 0
	for _, r := range recs {
		if r["msg"] == "skipping DaYu tracker file" {
			skipped++
		}
		line := fmt.Sprint(r)
		for _, part := range []string{secret, "S3CR", "CR3T"} {
			if strings.Contains(line, part) {
				t.Errorf("the log shows the file's content (%s): %s", part, line)
				break
			}
		}
	}
	if skipped != len(files) {
		t.Errorf("%d files logged as skipped, want %d", skipped, len(files))
	}
}
