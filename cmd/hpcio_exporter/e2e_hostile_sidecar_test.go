package main

// The Darshan sidecar against its drop directory's users, in the built
// binary: a log that unfolds into a gigabyte, a log that gets the process
// killed anyway, links to files the user cannot read, files that are no
// logs, a directory the exporter may not list.

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

const mib = 1 << 20

var (
	bombOnce sync.Once
	bombPath string
	bombErr  error
)

// nameTableBomb returns the path of a valid Darshan log of about 4 MB whose
// name table inflates to about 1 GiB: 300,000 names of 3.5 KB, each eight
// random letters and a run of one, zlib's ratio about 200, under the
// reader's inflate bound (darshan.MaxInflateRatio, 256). Made once per run
// with the project's writer, the names cut from one 2 MB string (the
// writer keeps what it is given: 1 GiB of distinct strings would cost the
// test what it costs the sidecar).
func nameTableBomb(t *testing.T) string {
	t.Helper()
	bombOnce.Do(func() {
		const nameLen, run = 3508, 3500
		var base strings.Builder
		r := mathrand.New(mathrand.NewPCG(1, 2))
		blocks := 2 * mib / nameLen
		for range blocks {
			for range nameLen - run {
				base.WriteByte(byte('a' + r.IntN(26)))
			}
			base.WriteString(strings.Repeat("x", run))
		}
		s := base.String()
		var buf bytes.Buffer
		w := darshan.NewWriter(&buf)
		end := time.Now().Add(-time.Hour).Unix()
		w.Job = darshan.Job{UID: 1000, JobID: 666, StartTime: end - 60, EndTime: end, NProcs: 1}
		w.Exe = "/bin/bomb"
		for i := range 300_000 {
			off := (i % blocks) * nameLen
			w.AddNameID(uint64(i+1), s[off:off+nameLen])
		}
		if bombErr = w.Close(); bombErr != nil {
			return
		}
		bombPath = filepath.Join(exportertest.Dir(t), "bomb.darshan")
		bombErr = os.WriteFile(bombPath, buf.Bytes(), 0o644)
	})
	if bombErr != nil {
		t.Fatal(bombErr)
	}
	return bombPath
}

// copyFile copies src to dst (mode 0644).
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goodLogs writes n small logs (a few KB each: under the size the state
// file writes down) into dir.
func goodLogs(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		data, err := darshantest.Job{JobID: int64(5000 + i), UID: 1000, Exe: "/apps/sim", End: time.Now().Add(-time.Hour), Ranks: 2, Bytes: 1 << 20}.Log()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("user_sim_id%d-1_1-1-1-1_1.darshan", 5000+i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// logLines returns the lines of the exporter's log (read once it ended)
// that hold every one of parts.
func logLines(e *exporter, parts ...string) []string {
	var out []string
	for _, l := range strings.Split(e.Logs.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// The name-table bomb (4 MB, 1 GiB of names) is refused as too_large, said
// once, while the sidecar's peak RSS stays under 600 MiB, and the other
// logs are read. On e27eef4 it was read whole: 3.2 GB.
func TestEndToEndSidecarBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: makes a 1 GiB name table (about 4 s) and reads 256 MiB of it")
	}
	bin := buildExporter(t)
	dir := t.TempDir()
	bomb := filepath.Join(dir, "user_bomb_id666-1_1-1-1-1_1.darshan")
	copyFile(t, nameTableBomb(t), bomb)
	goodLogs(t, dir, 3)
	e := startExporter(t, bin, "--collector.disable-defaults", "--collector.darshan",
		"--darshan.dir="+dir, "--darshan.retention=87600h")
	waitFor(t, e, "the bomb refused", has(`darshan_logs_failed_total{reason="too_large"} 1`, "darshan_logs_processed_total 3"))
	peak, err := peakRSS(e.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sidecar peak RSS with the bomb: %d MiB", peak/mib)
	if peak > 600*mib {
		t.Errorf("peak RSS %d MiB, want under 600", peak/mib)
	}
	e.Stop()
	if n := len(logLines(e, "level=WARN", "reason=too_large", "path="+bomb)); n != 1 {
		t.Errorf("the bomb is said %d times, want once:\n%s", n, e.Logs)
	}
}

// A sidecar killed (SIGKILL: what the OOM killer sends) while it reads the
// bomb, its budget raised so that the read takes a while, skips that log
// after the restart, counts it crashed, says so once, and reads the
// others; it never reads the bomb again (its peak RSS shows it).
func TestEndToEndSidecarCrashRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: makes a 1 GiB name table (about 4 s) and reads part of it")
	}
	bin := buildExporter(t)
	dir, state := t.TempDir(), t.TempDir()
	bomb := filepath.Join(dir, "user_bomb_id666-1_1-1-1-1_1.darshan")
	copyFile(t, nameTableBomb(t), bomb)
	goodLogs(t, dir, 3)
	args := []string{"--collector.disable-defaults", "--collector.darshan", "--darshan.dir=" + dir,
		"--darshan.retention=87600h", "--darshan.max-log-memory=8GiB", "--darshan.state-dir=" + state}
	first := startExporter(t, bin, args...)
	stateFile := filepath.Join(state, "darshan-reading.json")
	reading := func() bool {
		data, err := os.ReadFile(stateFile)
		if err != nil {
			return false
		}
		var doc struct{ Reading []struct{ Path string } }
		if json.Unmarshal(data, &doc) != nil {
			return false
		}
		for _, r := range doc.Reading {
			if r.Path == bomb {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(20 * time.Second)
	for !reading() {
		if time.Now().After(deadline) {
			t.Fatalf("the state file never shows the bomb being read:\n%s", first.Logs)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := first.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if ws, ok := first.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the first sidecar ended otherwise than killed: %v\n%s", first.Cmd.ProcessState, first.Logs)
	}

	second := startExporter(t, bin, args...)
	waitFor(t, second, "the restart", has(`darshan_logs_failed_total{reason="crashed"} 1`, "darshan_logs_processed_total 3"))
	peak, err := peakRSS(second.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted sidecar's peak RSS: %d MiB", peak/mib)
	if peak > 600*mib {
		t.Errorf("the restarted sidecar's peak RSS is %d MiB: it read the bomb again", peak/mib)
	}
	text, _ := scrapeMetrics(t, second, nil)
	if !strings.Contains(text, `darshan_logs_failed_total{reason="too_large"} 0`) {
		t.Error("the bomb was read again after the restart")
	}
	second.Stop()
	if n := len(logLines(second, "level=WARN", "reason=crashed", "path="+bomb)); n != 1 {
		t.Errorf("the crashed log is said %d times, want once:\n%s", n, second.Logs)
	}
	data, err := os.ReadFile(stateFile)
	if err != nil || !strings.Contains(string(data), `"crashed":[{"path":"`+bomb) {
		t.Errorf("the state file keeps no crashed bomb for the next restart: %s %v", data, err)
	}
}

// Files that are no logs, and a link dropped by a user to a file of
// root's: not_darshan and symlink_owner, each said once with its path, and
// no byte of any of them in the log. Tests run as root (here and in CI),
// which reads everything: the link is given to another user (lchown), as a
// user's own link would be.
func TestEndToEndSidecarHostileFiles(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir, private := t.TempDir(), t.TempDir()
	random := make([]byte, 8192)
	rand.Read(random)
	copy(random, "TOPSECRET")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("TOPSECRET gzipped\n"), 1000))
	zw.Close()
	files := map[string][]byte{
		"random_id1-1_1-1-1-1_1.darshan": random,
		"gzip_id2-1_1-1-1-1_1.darshan":   gz.Bytes(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goodLogs(t, dir, 1)
	root := os.Geteuid() == 0
	link := filepath.Join(dir, "user_x_id3-1_1-1-1-1_1.darshan")
	if root {
		target := filepath.Join(private, "shadow")
		if err := os.WriteFile(target, []byte("TOPSECRET root's own"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(link, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("not root: no link of another user (lchown needs root); the files that are no logs are still checked")
	}
	e := startExporter(t, bin, "--collector.disable-defaults", "--collector.darshan",
		"--darshan.dir="+dir, "--darshan.retention=87600h", "--darshan.rescan-interval=200ms")
	want := []string{`darshan_logs_failed_total{reason="not_darshan"} 2`, "darshan_logs_processed_total 1",
		`darshan_logs_failed_total{reason="unsupported_version"} 0`}
	if root {
		want = append(want, `darshan_logs_failed_total{reason="symlink_owner"} 1`)
	}
	waitFor(t, e, "the files refused", has(want...))
	time.Sleep(time.Second) // five rescans more: nothing is said again
	e.Stop()
	if bytes.Contains(e.Logs.Bytes(), []byte("TOPS")) {
		t.Errorf("the log shows a file's content:\n%s", e.Logs)
	}
	for name := range files {
		if n := len(logLines(e, "level=WARN", "reason=not_darshan", "path="+filepath.Join(dir, name))); n != 1 {
			t.Errorf("%s is said %d times, want once", name, n)
		}
	}
	if root {
		if n := len(logLines(e, "level=WARN", "reason=symlink_owner", "path="+link)); n != 1 {
			t.Errorf("the link is said %d times, want once:\n%s", n, e.Logs)
		}
	}
}

// A sub-directory the exporter may not list is said once, not at every
// rescan, with the hint for a permission error and not inotify's, and
// counted in darshan_dirs_unlisted. Root lists every directory, mode 000
// or not: as root, the exporter runs as nobody.
func TestEndToEndSidecarUnreadableDir(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runBin := bin
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// Where nobody can run it.
		runBin = filepath.Join(base, "hpcio_exporter")
		copyFile(t, bin, runBin)
		os.Chmod(runBin, 0o755)
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	dir := filepath.Join(base, "drop")
	locked := filepath.Join(dir, "2026", "1", "15")
	goodLogs(t, mkdirAll(t, filepath.Join(dir, "2026", "1", "14")), 1)
	goodLogs(t, mkdirAll(t, locked), 1)
	filepath.Walk(dir, func(p string, fi os.FileInfo, _ error) error {
		if fi.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })

	addr := freeAddress(t)
	e := exportertest.Command("exporter", runBin, "--web.listen-address="+addr, "--web.disable-exporter-metrics",
		"--collector.disable-defaults", "--collector.darshan", "--darshan.dir="+dir,
		"--darshan.retention=87600h", "--darshan.rescan-interval=200ms")
	e.Addr = addr
	e.Cmd.SysProcAttr.Credential = cred
	launch(t, e)
	waitFor(t, e, "the unreadable directory", has(`darshan_dirs_unlisted{reason="permission"} 1`, "darshan_logs_processed_total 1"))
	time.Sleep(time.Second) // five rescans more
	text, _ := scrapeMetrics(t, e, nil)
	if !strings.Contains(text, `darshan_dirs_unlisted{reason="permission"} 1`) {
		t.Error("the unreadable directory is no longer counted")
	}
	e.Stop()
	said := logLines(e, "level=WARN", "dir="+locked)
	if len(said) != 1 {
		t.Errorf("the unreadable directory is said %d times over several rescans, want once:\n%s", len(said), e.Logs)
	}
	for _, l := range said {
		if !strings.Contains(l, "permission") {
			t.Errorf("no permission hint: %s", l)
		}
	}
	if inotify := logLines(e, "max_user_watches"); len(inotify) != 0 {
		t.Errorf("a permission error is given inotify's hint: %s", inotify)
	}
}

func mkdirAll(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The built binary's bounds: one uid's 60 logs, ending after the 12 jobs
// of three other users, push out that uid's own jobs only
// (--darshan.max-jobs-per-user), counted per uid and said once; a tree
// deeper than the bound is counted too_deep and said once.
func TestEndToEndSidecarFlood(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	end := time.Now().Add(-3 * time.Hour)
	put := func(uid, id int64, at time.Time) {
		data, err := darshantest.Job{JobID: id, UID: uid, Exe: "/bin/app", End: at, Bytes: 100}.Log()
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, filepath.Join(dir, "2026", "1", "15", fmt.Sprintf("u%d_app_id%d-1_1-15-1-1_1.darshan", uid, id)), data)
	}
	for i := range 12 {
		put(int64(2000+i%3), int64(100+i), end.Add(time.Duration(i)*time.Minute))
	}
	for i := range 60 {
		put(6666, int64(900+i), end.Add(time.Hour+time.Duration(i)*time.Minute))
	}
	deep := dir
	for i := range 34 {
		deep = filepath.Join(deep, fmt.Sprintf("d%d", i+1))
	}
	mkdirAll(t, deep)
	e := startExporter(t, bin, "--collector.disable-defaults", "--collector.darshan", "--darshan.dir="+dir,
		"--darshan.max-jobs-per-user=10", "--darshan.max-jobs=30")
	text := waitFor(t, e, "every log read", has("darshan_logs_processed_total 72"))
	for want, n := range map[string]float64{
		`darshan_jobs_dropped_total{reason="user_share"}`: 50, `darshan_jobs_dropped_total{reason="max_jobs"}`: 0,
		`darshan_user_jobs_dropped_total{uid="6666"}`: 50, "darshan_retained_jobs": 22, `darshan_dirs_unlisted{reason="too_deep"}`: 1,
	} {
		if got := metricValue(text, want); got != n {
			t.Errorf("%s = %g, want %g", want, got, n)
		}
	}
	for uid := range 3 {
		if n := len(regexp.MustCompile(fmt.Sprintf(`(?m)^darshan_job_info\{[^}]*uid="%d"`, 2000+uid)).FindAllString(text, -1)); n != 4 {
			t.Errorf("uid %d keeps %d of its 4 jobs", 2000+uid, n)
		}
	}
	e.Stop()
	if said := logLines(e, "level=WARN", "uid=6666", "reason=user_share"); len(said) != 1 {
		t.Errorf("the flooding uid is said %d times, want once:\n%s", len(said), strings.Join(said, "\n"))
	}
	if said := logLines(e, "level=WARN", "more than 32 levels"); len(said) != 1 {
		t.Errorf("the tree too deep is said %d times, want once", len(said))
	}
}
