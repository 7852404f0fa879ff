package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
)

// runReportBinary runs `report args…` with SOURCE_DATE_EPOCH set, so that
// the report's time of making is fixed.
func runReportBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	return runEnv(t, bin, []string{"SOURCE_DATE_EPOCH=1795777200"}, append([]string{"report"}, args...)...)
}

// runEnv is runBinary with env added to the environment.
func runEnv(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = time.Minute
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		status = exit.ExitCode()
	default:
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return out.String(), errOut.String(), status
}

// reportJSON is what the tests read of a report.
type reportOut struct {
	Schema string `json:"schema"`
	Job    struct {
		JobID string   `json:"jobid"`
		Exe   []string `json:"exe"`
	} `json:"job"`
	PathsHidden bool `json:"paths_hidden"`
	App         *struct {
		Logs []struct {
			File string `json:"file"`
		} `json:"logs"`
		Modules []struct {
			Module       string  `json:"module"`
			BytesRead    float64 `json:"bytes_read"`
			BytesWritten float64 `json:"bytes_written"`
		} `json:"modules"`
		TopFiles []struct {
			Path string `json:"path"`
			ID   string `json:"id"`
		} `json:"top_files"`
		Insights []struct {
			Code  string   `json:"code"`
			Fired bool     `json:"fired"`
			Files []string `json:"files"`
		} `json:"insights"`
		Notes []string `json:"notes"`
	} `json:"application"`
	Servers  json.RawMessage `json:"servers"`
	Verdicts []any           `json:"verdicts"`
}

func decodeReport(t *testing.T, out string) reportOut {
	t.Helper()
	var r reportOut
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not a JSON report: %v\n%.500s", err, out)
	}
	if r.Schema != "hpcio_exporter.report/v1" {
		t.Fatalf("schema %q", r.Schema)
	}
	return r
}

func (r reportOut) fired() []string {
	var out []string
	for _, in := range r.App.Insights {
		if in.Fired {
			out = append(out, in.Code)
		}
	}
	return out
}

// The JSON report of a few fixture logs, whole: the application's view of
// the project's fixtures (every module; a heatmap's bin edges; signals
// that are NA for each reason; a job of two logs, summed; small writes
// that fire P06) and, with the corpus, of a log with DXT traces (its
// heatmap from the traces).
func TestReportGolden(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	cases := []struct {
		name string
		logs []string
	}{
		{"all_modules", []string{corpus.Fixtures(t, "darshan", "all_modules.darshan")}},
		{"heatmap_off_by_one", []string{corpus.Fixtures(t, "darshan", "heatmap_off_by_one.darshan")}},
		{"na_reasons", []string{corpus.Fixtures(t, "darshan-signals", "na_reasons.darshan")}},
		{"job7001_two_logs", []string{reportFixture(t, "alice_post_id7001-31077_11-27-34200-2222_1.darshan"),
			reportFixture(t, "alice_sim_id7001-31001_11-27-34080-1111_1.darshan")}},
		{"job7002_small_writes", []string{reportFixture(t, "alice_logger_id7002-40001_11-27-34200-3333_1.darshan")}},
		{"corpus_dxt", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.logs == nil {
				c.logs = []string{filepath.Join(corpus.Dir(t, "darshan", "apps"), "pydarshan_ior_hdf5_example.darshan")}
			}
			out, errOut, status := runReportBinary(t, bin, append([]string{"--format=json"}, c.logs...)...)
			if status != exitOK {
				t.Fatalf("status %d: %s", status, errOut)
			}
			decodeReport(t, out)
			golden.Check(t, filepath.Join("testdata", "report", c.name+".json"), out, *update)
		})
	}
}

// Several logs of one job are one report, whatever their order: the same
// bytes as the sum of the logs' own reports, the logs in the order they
// ran.
func TestReportSumsLogs(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	a := reportFixture(t, "alice_sim_id7001-31001_11-27-34080-1111_1.darshan")
	b := reportFixture(t, "alice_post_id7001-31077_11-27-34200-2222_1.darshan")
	both1, _, s1 := runReportBinary(t, bin, "--format=json", a, b)
	both2, _, s2 := runReportBinary(t, bin, "--format=json", b, a)
	onlyA, _, s3 := runReportBinary(t, bin, "--format=json", a)
	onlyB, _, s4 := runReportBinary(t, bin, "--format=json", b)
	if s1+s2+s3+s4 != 0 {
		t.Fatalf("statuses %d %d %d %d", s1, s2, s3, s4)
	}
	if both1 != both2 {
		t.Errorf("the report depends on the order of the logs: %s", golden.FirstDifference(both1, both2))
	}
	r, ra, rb := decodeReport(t, both1), decodeReport(t, onlyA), decodeReport(t, onlyB)
	if len(r.App.Logs) != 2 || r.App.Logs[0].File != filepath.Base(a) {
		t.Errorf("logs %+v, want %s first (it ran first)", r.App.Logs, filepath.Base(a))
	}
	sum := map[string]float64{}
	for _, x := range []reportOut{ra, rb} {
		for _, m := range x.App.Modules {
			sum[m.Module] += m.BytesRead + m.BytesWritten
		}
	}
	for _, m := range r.App.Modules {
		if got := m.BytesRead + m.BytesWritten; got != sum[m.Module] || got == 0 {
			t.Errorf("%s: %v bytes in the job, %v in its logs", m.Module, got, sum[m.Module])
		}
	}
	if !slices.Equal(r.Job.Exe, []string{"sim", "post"}) {
		t.Errorf("exe %v", r.Job.Exe)
	}
}

// On the held-out logs (every corpus log; the fixtures under -short), the
// report lists exactly the insight codes `darshan insights` reports as
// fired, and the report fails exactly where the command fails.
func TestReportInsightsAsCommand(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	var logs []string
	for _, dir := range []string{corpus.Fixtures(t, "darshan"), corpus.Fixtures(t, "report")} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.darshan"))
		logs = append(logs, m...)
	}
	if testing.Short() {
		t.Log("-short: the fixtures only")
	} else if root := corpus.Root(); root != "" {
		m, _ := filepath.Glob(filepath.Join(root, "corpus", "darshan", "*", "*.darshan"))
		logs = append(logs, m...)
	} else {
		t.Log("shared corpus not found: the fixtures only")
	}
	for _, path := range logs {
		insOut, _, insStatus := runBinary(t, bin, "darshan", "insights", "--format=json", "--full-paths", path)
		repOut, repErr, repStatus := runReportBinary(t, bin, "--format=json", path)
		if insStatus != repStatus {
			t.Errorf("%s: report exits %d (%s), darshan insights %d", filepath.Base(path), repStatus, strings.TrimSpace(repErr), insStatus)
			continue
		}
		if repStatus != exitOK {
			continue
		}
		var want struct {
			Insights []struct {
				Code  string `json:"code"`
				Fired bool   `json:"fired"`
			} `json:"insights"`
		}
		if err := json.Unmarshal([]byte(insOut), &want); err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, in := range want.Insights {
			if in.Fired {
				codes = append(codes, in.Code)
			}
		}
		if got := decodeReport(t, repOut).fired(); !slices.Equal(got, codes) {
			t.Errorf("%s: the report's insights %v, darshan insights reports %v", filepath.Base(path), got, codes)
		}
	}
}

// Bad inputs: one line on stderr that says what is wrong, exit 1, nothing
// on stdout and no file written; no byte of a log's content in the
// message.
func TestReportBadInputs(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	data, err := darshantest.Job{JobID: 1, UID: 1, Exe: "/bin/a", End: reportEnd, Ranks: 2, Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	corrupt, err := darshantest.CorruptPOSIX(data)
	if err != nil {
		t.Fatal(err)
	}
	damaged, text := filepath.Join(dir, "damaged.darshan"), filepath.Join(dir, "text.darshan")
	secret := "SECRET-CONTENT-7f3a"
	if err := os.WriteFile(damaged, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(text, []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keyed := filepath.Join(dir, "keyed.json")
	if err := os.WriteFile(keyed, []byte(`{"SECRETKEY": {"SECRETVALUE": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	job7001 := reportFixture(t, "alice_sim_id7001-31001_11-27-34080-1111_1.darshan")
	job7002 := reportFixture(t, "alice_logger_id7002-40001_11-27-34200-3333_1.darshan")
	emptyDir := t.TempDir()
	closed := "http://" + freeAddress(t) // nothing listens there

	cases := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"damaged log", []string{damaged}, "damaged.darshan: POSIX region"},
		{"not a log", []string{text}, "not a darshan log"},
		{"missing log", []string{filepath.Join(dir, "missing.darshan")}, "missing.darshan"},
		{"logs of two jobs", []string{job7001, job7002}, "logs of different jobs"},
		{"a good log and a damaged one", []string{job7001, damaged}, "damaged.darshan"},
		{"logs not of --jobid", []string{"--jobid=7002", job7001}, "the logs are of job 7001, not --jobid=7002"},
		{"unreachable Prometheus", []string{"--prometheus.url=" + closed, job7001}, "cannot reach it"},
		{"unreachable Prometheus alone", []string{"--prometheus.url=" + closed, "--jobid=7001", "--from=2026-11-27T09:00:00Z"}, "cannot reach it"},
		{"no logs of the job", []string{"--darshan.dir=" + emptyDir, "--jobid=7001"}, "no Darshan log of job 7001"},
		{"no such directory", []string{"--darshan.dir=" + filepath.Join(dir, "nodir"), "--jobid=7001"}, "nodir"},
		{"bad Prometheus config", []string{"--prometheus.url=" + closed, "--prometheus.config=" + text, job7001}, "--prometheus.config"},
		{"bad insights config", []string{"--insights.config=" + text, job7001}, "text.darshan"},
		{"insights config with an unknown key", []string{"--insights.config=" + keyed, job7001}, "unknown key"},
		{"Prometheus config with an unknown key", []string{"--prometheus.url=" + closed, "--prometheus.config=" + keyed, job7001}, "keyed.json is not a valid configuration (errors at line 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outFile := filepath.Join(t.TempDir(), "report.json")
			out, errOut, status := runReportBinary(t, bin, append([]string{"--format=json", "-o", outFile}, c.args...)...)
			if status != exitFailure {
				t.Fatalf("status %d, want 1; stderr %q", status, errOut)
			}
			if !strings.Contains(errOut, c.stderr) || !strings.HasPrefix(errOut, "hpcio_exporter report: ") {
				t.Errorf("stderr %q, want it to hold %q", errOut, c.stderr)
			}
			if n := strings.Count(errOut, "\n"); n != 1 {
				t.Errorf("stderr has %d lines: %q", n, errOut)
			}
			if strings.Contains(errOut, "SECRET") {
				t.Errorf("the message holds the file's content: %q", errOut)
			}
			if out != "" {
				t.Errorf("stdout %.200q", out)
			}
			if ents, _ := os.ReadDir(filepath.Dir(outFile)); len(ents) != 0 {
				t.Errorf("files left in -o's directory: %v", ents)
			}
		})
	}
}

// Usage errors (exit 2): flag combinations that cannot make a report.
func TestReportUsage(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	log := reportFixture(t, "alice_sim_id7001-31001_11-27-34080-1111_1.darshan")
	cases := []struct {
		args   []string
		stderr string
	}{
		{nil, "nothing to report"},
		{[]string{"--darshan.dir=/tmp"}, "--darshan.dir needs --jobid"},
		{[]string{"--darshan.dir=/tmp", "--jobid=7001", log}, "not both"},
		{[]string{"--darshan.dir=/tmp", "--jobid=abc"}, "positive decimal"},
		{[]string{"--prometheus.url=http://127.0.0.1:9", "--jobid=7001"}, "needs --from"},
		{[]string{"--prometheus.url=http://127.0.0.1:9", "--from=0"}, "needs --jobid"},
		{[]string{"--prometheus.config=x.yml", log}, "--prometheus.config without --prometheus.url"},
		{[]string{"--from=yesterday", log}, "not a time"},
		{[]string{"--from=2026-11-27T10:00:00Z", "--to=2026-11-27T09:00:00Z", log}, "--to must be after --from"},
		{[]string{"--format=pdf", log}, "html,json"},
		{[]string{"--jobid=a b", log}, "no spaces"},
	}
	for _, c := range cases {
		out, errOut, status := runReportBinary(t, bin, c.args...)
		if status != exitUsage || !strings.Contains(errOut, c.stderr) || out != "" {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", c.args, status, errOut, c.stderr)
		}
	}
}

// -o writes a new file (mode 0600) in place of the old one by rename: the
// old file is whole until the new one replaces it (another inode), a
// failed report leaves it as it was, and no temporary file stays.
func TestReportOutputAtomic(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "job.json")
	old := "the previous report\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	inode := func() uint64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	before := inode()
	damaged := filepath.Join(t.TempDir(), "damaged.darshan")
	data, _ := darshantest.Job{JobID: 1, UID: 1, Exe: "/bin/a", End: reportEnd, Ranks: 2, Bytes: 100}.Log()
	corrupt, _ := darshantest.CorruptPOSIX(data)
	os.WriteFile(damaged, corrupt, 0o644)

	if _, _, status := runReportBinary(t, bin, "--format=json", "-o", path, damaged); status != exitFailure {
		t.Fatalf("damaged log: status %d", status)
	}
	if b, _ := os.ReadFile(path); string(b) != old || inode() != before {
		t.Errorf("a failed report changed the old file: %q", b)
	}
	log := reportFixture(t, "alice_sim_id7001-31001_11-27-34080-1111_1.darshan")
	out, errOut, status := runReportBinary(t, bin, "--format=json", "--output", path, log)
	if status != exitOK || out != "" || errOut != "" {
		t.Fatalf("status %d, stdout %.100q, stderr %q", status, out, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, _ := runReportBinary(t, bin, "--format=json", log)
	if string(b) != stdout {
		t.Errorf("-o wrote other bytes than stdout gets: %s", golden.FirstDifference(stdout, string(b)))
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if inode() == before {
		t.Error("the file was rewritten in place, not replaced by rename")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files in the directory: %v", ents)
	}
	// A directory that does not exist: exit 1, one line.
	_, errOut, status = runReportBinary(t, bin, "--format=json", "-o", filepath.Join(dir, "no", "x.json"), log)
	if status != exitFailure || strings.Count(errOut, "\n") != 1 {
		t.Errorf("-o into a missing directory: status %d, stderr %q", status, errOut)
	}
}

// darshanDir lays out a Darshan log directory as darshan-runtime does,
// <dir>/YYYY/M/D/<name>, with the fixture logs under their start day, and
// beside them what the search must leave out: a log of the job still
// being written, a log of another job, a log named with the job id that
// holds another job (the runtime's fallback pid), and a log of the job
// under a day outside the window.
func darshanDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	put := func(day time.Time, name string, data []byte) {
		d := filepath.Join(dir, day.Format("2006/1/2"))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs, err := reportFixtures()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range logs {
		put(reportEnd, name, data)
	}
	put(reportEnd, "alice_sim_id7001-31999_11-27-34300-4444_1.darshan_partial", []byte("partial"))
	other, err := darshantest.Job{JobID: 31555, UID: 1000, Exe: "/bin/x", End: reportEnd, Ranks: 1, Bytes: 1}.Log()
	if err != nil {
		t.Fatal(err)
	}
	put(reportEnd, "bob_x_id7001-31555_11-27-34300-5555_1.darshan", other)
	put(reportEnd.AddDate(0, -3, 0), "alice_sim_id7001-1_8-27-34080-6666_1.darshan", []byte("not even a log: outside the window, never opened"))
	return dir
}

// --darshan.dir with --jobid finds the job's logs by the day directories
// and the job id in their names and headers: the report is that of the
// same logs given by name, with a note of the log still being written.
func TestReportDarshanDir(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := darshanDir(t)
	out, errOut, status := runReportBinary(t, bin, "--format=json", "--darshan.dir="+dir, "--jobid=7001", "--to=2026-11-27T12:00:00Z")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, errOut)
	}
	r := decodeReport(t, out)
	var files []string
	for _, l := range r.App.Logs {
		files = append(files, l.File)
	}
	if want := []string{"alice_sim_id7001-31001_11-27-34080-1111_1.darshan", "alice_post_id7001-31077_11-27-34200-2222_1.darshan"}; !slices.Equal(files, want) {
		t.Errorf("logs %v, want %v", files, want)
	}
	if len(r.App.Notes) != 2 || !strings.Contains(r.App.Notes[0], "1 log(s) of the job still being written") ||
		!strings.Contains(r.App.Notes[1], "hold another job") {
		t.Errorf("notes %q", r.App.Notes)
	}
	if !strings.Contains(errOut, "still being written") {
		t.Errorf("stderr %q: no note of the partial log", errOut)
	}
	given, _, _ := runReportBinary(t, bin, "--format=json", reportFixture(t, files[0]), reportFixture(t, files[1]))
	g := decodeReport(t, given)
	if !slices.Equal(r.fired(), g.fired()) || len(r.App.Modules) != len(g.App.Modules) || r.App.Modules[0] != g.App.Modules[0] {
		t.Errorf("found logs' report differs from the given logs'")
	}
	// The window is searched by day: three months back holds the job's
	// name but is outside it (and not a log: opening it would fail).
	out, errOut, status = runReportBinary(t, bin, "--format=json", "--darshan.dir="+dir, "--jobid=7001", "--from=2026-08-20T00:00:00Z", "--to=2026-09-01T00:00:00Z")
	if status != exitFailure || !strings.Contains(errOut, "not a darshan log") {
		t.Errorf("a window holding the damaged old day: status %d, stderr %q", status, errOut)
	}
	_ = out
	// A job with no logs at all.
	_, errOut, status = runReportBinary(t, bin, "--format=json", "--darshan.dir="+dir, "--jobid=9999", "--to=2026-11-27T12:00:00Z")
	if status != exitFailure || !strings.Contains(errOut, "no Darshan log of job 9999") {
		t.Errorf("unknown job: status %d, stderr %q", status, errOut)
	}
}

// --no-paths: no file path of the log anywhere in the report (top files,
// insights' files), JSON or page, the files still told apart by their
// record ids.
func TestReportNoPaths(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	for _, path := range []string{corpus.Fixtures(t, "darshan", "all_modules.darshan"), reportFixture(t, "alice_logger_id7002-40001_11-27-34200-3333_1.darshan")} {
		l, err := darshan.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		names := l.Names
		l.Close()
		withPaths, _, s1 := runReportBinary(t, bin, "--format=json", path)
		out, errOut, s2 := runReportBinary(t, bin, "--format=json", "--no-paths", path)
		if s1 != exitOK || s2 != exitOK {
			t.Fatalf("status %d %d: %s", s1, s2, errOut)
		}
		shown := 0
		for _, n := range names {
			if !strings.HasPrefix(n, "/") {
				continue
			}
			if strings.Contains(withPaths, n) {
				shown++
			}
			if strings.Contains(out, n) {
				t.Errorf("%s: --no-paths report holds %q", filepath.Base(path), n)
			}
		}
		if shown == 0 {
			t.Errorf("%s: the report without --no-paths shows no path either: the test checks nothing", filepath.Base(path))
		}
		page, errOut, s3 := runReportBinary(t, bin, "--no-paths", path)
		if s3 != exitOK || !strings.HasPrefix(page, "<!DOCTYPE html>") {
			t.Fatalf("the HTML page: status %d, %.100q, %s", s3, page, errOut)
		}
		for _, n := range names {
			if strings.HasPrefix(n, "/") && strings.Contains(page, n) {
				t.Errorf("%s: --no-paths page holds %q", filepath.Base(path), n)
			}
		}
		r := decodeReport(t, out)
		if !r.PathsHidden || len(r.App.TopFiles) == 0 {
			t.Fatalf("paths_hidden %v, %d top files", r.PathsHidden, len(r.App.TopFiles))
		}
		for _, f := range r.App.TopFiles {
			if f.Path != "" || f.ID == "" {
				t.Errorf("top file %+v", f)
			}
		}
	}
}

// emptyPrometheus serves Prometheus' HTTP API knowing no series at all: a
// Prometheus that never scraped the job.
func emptyPrometheus(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/query":
			io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
		case "/api/v1/query_range":
			io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
		case "/api/v1/rules":
			io.WriteString(w, `{"status":"success","data":{"groups":[]}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A job id Prometheus has no series of: alone, no report (exit 1, one
// line); with the job's logs, the application's view and the servers'
// note of what is missing.
func TestReportUnknownJobInPrometheus(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	url := emptyPrometheus(t)
	out, errOut, status := runReportBinary(t, bin, "--format=json", "--prometheus.url="+url, "--jobid=424242", "--from=2026-11-27T09:00:00Z", "--to=2026-11-27T10:00:00Z")
	if status != exitFailure || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "no job_stats series of job 424242") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
	log := reportFixture(t, "alice_sim_id7001-31001_11-27-34080-1111_1.darshan")
	out, errOut, status = runReportBinary(t, bin, "--format=json", "--prometheus.url="+url, log)
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var r struct {
		Application any `json:"application"`
		Servers     *struct {
			Found  bool     `json:"found"`
			Window string   `json:"window"`
			Notes  []string `json:"notes"`
			From   struct {
				Unix float64 `json:"unix"`
			} `json:"from"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Application == nil || r.Servers == nil || r.Servers.Found || r.Servers.Window != "logs" || len(r.Servers.Notes) == 0 ||
		r.Servers.From.Unix != float64(reportEnd.Add(-3*time.Minute).Unix()) {
		t.Errorf("application %v, servers %+v: want both, the servers' found false with a note, over the logs' window", r.Application != nil, r.Servers)
	}
}
