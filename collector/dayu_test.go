package collector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
	"github.com/hpcio/hpcio_exporter/internal/testkit/promtool"
)

// newDayuForTest builds the collector over dirs with the given cap.
func newDayuForTest(t *testing.T, maxFiles int, dirs ...string) *dayuCollector {
	t.Helper()
	return newDayuLogged(t, dayuTestLogger(t), maxFiles, dirs...)
}

// newDayuLogged is newDayuForTest with the collector's log sent to logger.
func newDayuLogged(t *testing.T, logger *slog.Logger, maxFiles int, dirs ...string) *dayuCollector {
	t.Helper()
	savedDirs, savedMax := dayuDirs, dayuMaxFiles
	t.Cleanup(func() { dayuDirs, dayuMaxFiles = savedDirs, savedMax })
	dayuDirs, dayuMaxFiles = dirs, maxFiles
	setFlag(t, &dayuNoInotify, true)
	setFlag(t, &dayuRescan, time.Hour) // the tests scan when they want (dayuScrape)
	c, err := newDayuCollector(Env{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.(io.Closer).Close() })
	return c.(*dayuCollector)
}

// dayuTestLogger sends the collector's log to the test's log.
func dayuTestLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(dayuLogWriter{t}, nil))
}

type dayuLogWriter struct{ t *testing.T }

func (w dayuLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// dayuAdapter runs one Update as a prometheus.Collector, so that a pedantic
// registry checks what it sends.
type dayuAdapter struct {
	c   Collector
	err error
}

func (a *dayuAdapter) Describe(chan<- *prometheus.Desc) {}

func (a *dayuAdapter) Collect(ch chan<- prometheus.Metric) {
	s := (&Registry{}).NewScrape(context.Background())
	a.err = a.c.Update(s, ch)
}

// dayuScrape returns the text exposition of one Update and its error,
// after the collector's watcher read what the directories hold now.
func dayuScrape(t *testing.T, c Collector) (string, error) {
	t.Helper()
	if dc, ok := c.(*dayuCollector); ok {
		if err := dc.watcher.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	a := &dayuAdapter{c: c}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(a)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String(), a.err
}

// The last-change timestamp is the files' mtime, which a checkout sets.
var dayuVolatile = regexp.MustCompile(`(?m)^dayu_workflow_last_change_timestamp_seconds\{.*\n`)

// dayuGolden compares text with testdata/dayu/<name>; the package's -update
// flag rewrites it.
func dayuGolden(t *testing.T, name, text string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "dayu", name), dayuVolatile.ReplaceAllString(text, ""), *update)
}

// dayuSample returns the value of one series in a text exposition.
func dayuSample(t *testing.T, text, series string) (float64, bool) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return v, true
		}
	}
	return 0, false
}

func dayuWant(t *testing.T, text, series string, want float64) {
	t.Helper()
	got, ok := dayuSample(t, text, series)
	if !ok {
		t.Errorf("no series %s", series)
		return
	}
	if got != want {
		t.Errorf("%s = %v, want %v", series, got, want)
	}
}

func TestDayuNotConfigured(t *testing.T) {
	savedDirs, savedMax := dayuDirs, dayuMaxFiles
	defer func() { dayuDirs, dayuMaxFiles = savedDirs, savedMax }()
	dayuDirs = nil
	if _, err := newDayuCollector(Env{Logger: dayuTestLogger(t)}); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("without --dayu.dir: %v, want ErrNotConfigured", err)
	}
	dayuDirs, dayuMaxFiles = []string{t.TempDir()}, 0
	if _, err := newDayuCollector(Env{Logger: dayuTestLogger(t)}); err == nil {
		t.Error("--dayu.max-files=0 accepted")
	}
}

// TestDayuFixtures exports the project's fixtures: one workflow per format,
// and one with broken files beside a good one.
func TestDayuFixtures(t *testing.T) {
	c := newDayuForTest(t, 64, corpus.Fixtures(t, "dayu"))
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	dayuGolden(t, "fixtures.prom", text)

	// yaml2023, summed by hand in dayu/fixtures_test.go.
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="input.h5",stage="prepare",workflow="yaml2023"}`, 34400)
	dayuWant(t, text, `dayu_dataflow_operations_total{direction="write",file="mid.h5",stage="prepare",workflow="yaml2023"}`, 15)
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="mid.h5",stage="analyze",workflow="yaml2023"}`, 19808)
	dayuWant(t, text, `dayu_stage_io_bytes_total{direction="write",kind="data",mem_type="DRAW",pid="4242",stage="prepare",workflow="yaml2023"}`, 65536)
	dayuWant(t, text, `dayu_stage_wall_seconds{pid="4242",stage="prepare",workflow="yaml2023"}`, 2.5)
	dayuWant(t, text, `dayu_stage_tracker_overhead_seconds_total{layer="vol",pid="4242",stage="prepare",workflow="yaml2023"}`, 0.025)
	dayuWant(t, text, `dayu_stage_order{pid="4242",stage="analyze",workflow="yaml2023"}`, 1)
	// prepare: metadata 1024 + 96 + 512 read and 2048 + 192 + 1024 + 256
	// written = 5152 B of 34400 + 69056 = 103456 B.
	dayuWant(t, text, `dayu_stage_metadata_bytes_ratio{pid="4242",stage="prepare",workflow="yaml2023"}`, 5152.0/103456)
	// Operations: 6 read + 15 written = 21, of which DRAW 2 + 4, so 15 metadata.
	dayuWant(t, text, `dayu_stage_metadata_operations_ratio{pid="4242",stage="prepare",workflow="yaml2023"}`, 15.0/21)
	// yaml2024: two pids of stage train read one file through two mounts.
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="samples.h5",stage="train",workflow="yaml2024"}`, 787336)
	dayuWant(t, text, `dayu_stage_files_touched{pid="7002",stage="train",workflow="yaml2024"}`, 1)
	// json
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="write",file="out.h5",stage="saveh5",workflow="json"}`, 70280)
	dayuWant(t, text, `dayu_stage_datasets_touched{pid="8001",stage="saveh5",workflow="json"}`, 2)

	// broken: five bad files counted, the good one still exported.
	for reason, n := range map[string]float64{"truncated": 3, "syntax": 1, "empty": 1, "not_stats": 1, "read_error": 0, "too_large": 0} {
		dayuWant(t, text, `dayu_files_failed_total{reason="`+reason+`"}`, n)
	}
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="in.h5",stage="reader",workflow="broken"}`, 4704)
	dayuWant(t, text, `dayu_workflow_tracker_files{workflow="broken"}`, 1)

	// A second scrape reads nothing again and counts no failure again.
	parses := c.parses
	text2, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if c.parses != parses {
		t.Errorf("second scrape parsed %d files again", c.parses-parses)
	}
	if text2 != text {
		t.Error("second scrape differs from the first")
	}
	checkPromtool(t, text)
}

// TestDayuFilesAppearChangeAndGo: a stats file being written is counted as
// truncated and skipped while the rest of the workflow shows; once complete
// it is read; a changed file is read again; removed files leave the output.
func TestDayuFilesAppearChangeAndGo(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run1")
	src := filepath.Join(corpus.Fixtures(t, "dayu"), "yaml2023")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile := func(name string, data []byte) {
		t.Helper()
		if data == nil {
			var err error
			if data, err = os.ReadFile(filepath.Join(src, name)); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(run, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Distinct mtimes, whatever the file system's clock resolution.
		stamp := time.Now().Add(time.Duration(len(data)) * time.Millisecond)
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	const vfd = "4242_vfd-data-stat-dl.yaml"
	full, err := os.ReadFile(filepath.Join(src, vfd))
	if err != nil {
		t.Fatal(err)
	}
	copyFile("task_to_file.yaml", nil)
	copyFile("4242_vol-data-stat-dl.yaml", nil)
	// Cut inside file-2's DRAW write_ranges, as a writer caught mid-line.
	cut := bytes.Index(full, []byte("{10:(1,1)")) + 5
	copyFile(vfd, full[:cut])

	c := newDayuForTest(t, 64, root)
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	dayuWant(t, text, `dayu_files_failed_total{reason="truncated"}`, 1)
	dayuWant(t, text, `dayu_workflow_tracker_files{workflow="run1"}`, 2)
	// Without VFD stats the VOL's dataset estimates draw the dataflow.
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="input.h5",stage="prepare",workflow="run1"}`, 32768)
	if _, ok := dayuSample(t, text, `dayu_stage_io_bytes_total{direction="read",kind="data",mem_type="DRAW",pid="4242",stage="prepare",workflow="run1"}`); ok {
		t.Error("VFD series exported from a truncated VFD file")
	}

	copyFile(vfd, full)
	text, err = dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	dayuWant(t, text, `dayu_files_failed_total{reason="truncated"}`, 1)
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="input.h5",stage="prepare",workflow="run1"}`, 34400)
	dayuWant(t, text, `dayu_stage_io_bytes_total{direction="read",kind="data",mem_type="DRAW",pid="4242",stage="prepare",workflow="run1"}`, 32768)
	parses := c.parses

	changed := bytes.Replace(full, []byte("read_bytes: 32768"), []byte("read_bytes: 32769"), 1)
	copyFile(vfd, changed)
	text, err = dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if c.parses != parses+1 {
		t.Errorf("%d files parsed after one changed, want 1", c.parses-parses)
	}
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="input.h5",stage="prepare",workflow="run1"}`, 34401)

	if err := os.RemoveAll(run); err != nil {
		t.Fatal(err)
	}
	text, err = dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	files, workflows := len(c.files), len(c.workflows)
	c.mu.Unlock()
	if strings.Contains(text, `workflow="run1"`) || files != 0 || workflows != 0 {
		t.Errorf("removed workflow still there: %d files, %d workflows cached", len(c.files), len(c.workflows))
	}
	dayuWant(t, text, `dayu_files_failed_total{reason="truncated"}`, 1)
}

// TestDayuMaxFiles: past the cap, the lightest files' edges are summed
// under file="_other".
func TestDayuMaxFiles(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink(filepath.Join(corpus.Fixtures(t, "dayu"), "yaml2023"), filepath.Join(root, "capped")); err != nil {
		t.Fatal(err)
	}
	c := newDayuForTest(t, 2, root)
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	// mid.h5 moves 69056 + 19808 B, input.h5 34400 B, result.h5 5440 B.
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="write",file="_other",stage="analyze",workflow="capped"}`, 5440)
	dayuWant(t, text, `dayu_dataflow_bytes_total{direction="read",file="input.h5",stage="prepare",workflow="capped"}`, 34400)
	dayuWant(t, text, `dayu_workflow_folded_files{workflow="capped"}`, 1)
	if strings.Contains(text, `file="result.h5"`) {
		t.Error("result.h5 exported past the cap")
	}
}

// TestDayuCorpus exports every corpus workflow: nothing fails, no label
// holds a directory, and the seed's WRF edges carry the hand-summed bytes.
func TestDayuCorpus(t *testing.T) {
	c := newDayuForTest(t, 64, corpus.Dir(t, "dayu"))
	text, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	dayuGolden(t, "corpus.prom", text)
	for _, r := range []string{"read_error", "too_large", "empty", "syntax", "truncated", "not_stats"} {
		dayuWant(t, text, `dayu_files_failed_total{reason="`+r+`"}`, 0)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		if strings.Contains(l, "/") {
			t.Errorf("a label holds a path: %s", l)
		}
		if strings.Contains(l, `job="`) || strings.Contains(l, `instance="`) {
			t.Errorf("a label is named job or instance: %s", l)
		}
	}
	// dayu/wrf_test.go sums these from 210263_vfd-data-stat-dl.yaml.
	for series, want := range map[string]float64{
		`dayu_dataflow_bytes_total{direction="read",file="wrfout_rainrate_tb_zh_mh_2015-05-06_00:00:00.nc",stage="run_idfeature",workflow="wrf-2stage-210263"}`: 17682661,
		`dayu_dataflow_bytes_total{direction="write",file="cloudid_20150506_010000.nc",stage="run_idfeature",workflow="wrf-2stage-210263"}`:                     7833254,
		`dayu_dataflow_bytes_total{direction="read",file="cloudid_20150506_000000.nc",stage="run_tracksingle",workflow="wrf-2stage-210263"}`:                    248204,
		`dayu_dataflow_operations_total{direction="write",file="track_20150506_010000.nc",stage="run_tracksingle",workflow="wrf-2stage-210263"}`:                241,
		`dayu_stage_tracker_overhead_seconds_total{layer="vol",pid="210263",stage="run_tracksingle",workflow="wrf-2stage-210263"}`:                              0.062,
	} {
		dayuWant(t, text, series, want)
	}
	checkPromtool(t, text)
}

// checkPromtool runs promtool check metrics when promtool is installed.
func checkPromtool(t *testing.T, text string) {
	t.Helper()
	promtool.CheckMetrics(t, text)
}

// BenchmarkDayuScrapeCorpus is one scrape of the whole corpus (6 workflows,
// 33 files) once every file is cached: a directory scan and the metrics.
func BenchmarkDayuScrapeCorpus(b *testing.B) {
	savedDirs := dayuDirs
	defer func() { dayuDirs = savedDirs }()
	dayuDirs = []string{corpus.Dir(b, "dayu")}
	c, err := newDayuCollector(Env{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.(io.Closer).Close()
	if err := c.(*dayuCollector).watcher.Sync(context.Background()); err != nil {
		b.Fatal(err)
	}
	scrape := func() {
		ch := make(chan prometheus.Metric, 1024)
		done := make(chan struct{})
		go func() {
			for range ch {
			}
			close(done)
		}()
		if err := c.Update((&Registry{}).NewScrape(context.Background()), ch); err != nil {
			b.Fatal(err)
		}
		close(ch)
		<-done
	}
	scrape()
	b.ReportAllocs()
	for b.Loop() {
		scrape()
	}
}

// A scrape reads the published view only: while the watcher parses and
// assembles (which holds the collector's lock), scrapes go on, and show
// the workflows as last published.
func TestDayuScrapeDoesNotWaitForParsing(t *testing.T) {
	c := newDayuForTest(t, 64, corpus.Fixtures(t, "dayu"))
	want, err := dayuScrape(t, c)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock() // as a parse or an assembly under way does
	defer c.mu.Unlock()
	done := make(chan string)
	go func() {
		a := &dayuAdapter{c: c}
		reg := prometheus.NewRegistry()
		reg.MustRegister(a)
		mfs, _ := reg.Gather()
		var b bytes.Buffer
		for _, mf := range mfs {
			expfmt.MetricFamilyToText(&b, mf)
		}
		done <- b.String()
	}()
	select {
	case got := <-done:
		if got != want {
			t.Error("a scrape during parsing differs from the published view")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a scrape waited for the collector's lock")
	}
}
