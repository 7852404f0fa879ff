package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// What `darshan dump`, `signals` and `insights` do with files a user could
// hand them, or drop where the sidecar reads: a log whose names inflate to
// a gigabyte, devices and FIFOs, files that are no logs at all.

// logCommands are the commands that read one Darshan log.
var logCommands = [][]string{{"darshan", "dump"}, {"darshan", "signals"}, {"darshan", "insights"}}

// run is one finished run of the exporter.
type run struct {
	stderr string
	status int
	maxRSS int64 // peak resident memory, KiB (the rusage of the ended process)
}

// runLimited runs bin with args, its output discarded, and kills it after
// timeout: a run that blocks fails the test rather than hanging it. Its
// peak memory is its own (runMeasured).
func runLimited(t *testing.T, timeout time.Duration, bin string, args ...string) run {
	t.Helper()
	var stderr strings.Builder
	m, err := runMeasured(timeout, io.Discard, &stderr, bin, args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if m.timedOut {
		t.Errorf("%q did not end within %v: killed (stderr %q)", args, timeout, stderr.String())
		return run{stderr: stderr.String(), status: -1}
	}
	return run{stderr: stderr.String(), status: m.status, maxRSS: m.maxRSSKiB}
}

// writeNameBomb writes a log of 4.8 MB whose name region inflates to 1 GiB
// (224 times its size, under the reader's inflate bound of 256): a million
// entries of one 1,000-byte name, which the project's writer compresses in
// about 3 s.
func writeNameBomb(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{NProcs: 1, JobID: 1}
	name := "/scratch/" + strings.Repeat("a", 991)
	for i := range (1 << 30) / (8 + len(name) + 1) {
		w.AddNameID(uint64(i)+1, name)
	}
	if err := w.WriteRaw(darshan.POSIX, darshan.POSIX.CurrentVersion(), make([]byte, 704)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDarshanCommandsMemoryBomb: on the name-table bomb each command exits 1
// with one line naming the region, the budget and the flag to raise, and
// stays far under 600 MiB (it took 3.2 to 3.7 GB before the budget).
func TestDarshanCommandsMemoryBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes a log whose names inflate to 1 GiB (3 s)")
	}
	bin := buildExporter(t)
	bomb := filepath.Join(t.TempDir(), "user_app_id1-1_1-1-1.darshan")
	writeNameBomb(t, bomb)
	const maxRSS = 600 << 10 // KiB
	for _, c := range logCommands {
		r := runLimited(t, 2*time.Minute, bin, append(c, bomb)...)
		t.Logf("%s: exit %d, peak RSS %d MiB", strings.Join(c, " "), r.status, r.maxRSS>>10)
		want := ": data larger than the reader accepts: over the memory budget of 268435456 bytes; raise --max-log-memory (now 256MiB) to read it\n" // the default
		if r.status != exitFailure || !strings.HasSuffix(r.stderr, want) || !strings.Contains(r.stderr, ": name records region at offset ") ||
			strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s on the bomb: exit %d, stderr %q; want exit 1 and one line ending %q", c, r.status, r.stderr, want)
		}
		if r.maxRSS > maxRSS {
			t.Errorf("%s on the bomb: peak RSS %d MiB, want under %d", c, r.maxRSS>>10, maxRSS>>10)
		}
	}
}

// TestDarshanMaxLogMemory: --max-log-memory sets the budget: a real log
// under it reads, one over it exits 1 naming the flag; a size that is not
// one is a usage error.
func TestDarshanMaxLogMemory(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	log := filepath.Join(corpus.Fixtures(t, "darshan"), "all_modules.darshan")
	for _, c := range logCommands {
		for _, tc := range []struct {
			flag   string
			status int
			stderr string
		}{
			{"--max-log-memory=64MiB", exitOK, ""},
			{"--max-log-memory=67108864", exitOK, ""},
			{"--max-log-memory=1KiB", exitFailure, "over the memory budget of 1024 bytes; raise --max-log-memory (now 1KiB) to read it\n"},
			{"--max-log-memory=0", exitUsage, "at least one byte"},
			{"--max-log-memory=-1MiB", exitUsage, "at least one byte"},
			{"--max-log-memory=lots", exitUsage, "not a size in bytes"},
		} {
			r := runLimited(t, time.Minute, bin, append(c, tc.flag, log)...)
			if r.status != tc.status || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("%s %s: exit %d, stderr %q; want %d and %q", c, tc.flag, r.status, r.stderr, tc.status, tc.stderr)
			}
			if tc.status == exitFailure && strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%s %s: %q is not one line", c, tc.flag, r.stderr)
			}
		}
	}
}

// TestDarshanCommandsNotRegular: a device, a FIFO (whose open would block
// for ever) and a directory are refused at once, saying what they are.
func TestDarshanCommandsNotRegular(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "job.darshan")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, c := range logCommands {
		for _, f := range []struct{ path, kind string }{
			{"/dev/urandom", "character device"}, {fifo, "FIFO"}, {dir, "directory"},
		} {
			r := runLimited(t, 20*time.Second, bin, append(c, f.path)...)
			want := fmt.Sprintf("darshan log %s: not a regular file (%s)\n", f.path, f.kind)
			if r.status != exitFailure || !strings.HasSuffix(r.stderr, want) {
				t.Errorf("%s %s: exit %d, stderr %q; want 1 and %q", c, f.path, r.status, r.stderr, want)
			}
		}
	}
}

// TestDarshanCommandsNotDarshan: random bytes and a gzip file are no logs
// (not logs of an unknown version), and no error shows their bytes; nor
// does one of a file with the magic number and a version string of its own.
func TestDarshanCommandsNotDarshan(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	const secret = "TOPSECRET-xyz"
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 8192)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprintf(zw, "%s\n", secret)
	zw.Close()
	log, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "darshan"), "all_modules.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	version := bytes.Clone(log)
	copy(version, secret[:8])
	for _, f := range []struct {
		name string
		data []byte
		want string
	}{
		{"random.darshan", append([]byte(secret), random...), "header: not a darshan log (bad magic number)\n"},
		{"secret.darshan.gz", gz.Bytes(), "header: not a darshan log (bad magic number)\n"},
		{"version.darshan", version, "header: unsupported log format version: a version string of 8 bytes that is not a known version (this reader knows 3.00, 3.10, 3.20, 3.21, 3.41)\n"},
	} {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range logCommands {
			r := runLimited(t, time.Minute, bin, append(c, path)...)
			if r.status != exitFailure || !strings.HasSuffix(r.stderr, f.want) {
				t.Errorf("%s %s: exit %d, stderr %q; want 1 and %q", c, f.name, r.status, r.stderr, f.want)
			}
			for i := 0; i+6 <= len(f.data); i++ {
				if piece := string(f.data[i : i+6]); strings.Contains(r.stderr, piece) {
					t.Errorf("%s %s: stderr %q shows the file's bytes %q", c, f.name, r.stderr, piece)
					break
				}
			}
		}
	}
}
