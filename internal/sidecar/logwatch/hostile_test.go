package logwatch

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// Drop directories are written by every user: what a user drops there
// must not make the sidecar show what it holds, read what the user could
// not, or stop the sidecar for everyone.

const secret = "TOPSECRET"

// noSecret fails if a line of the log shows a byte sequence of the secret
// files (their first bytes, as an error quoting a version string would).
func noSecret(t *testing.T, recs []logtest.Record) {
	t.Helper()
	for _, r := range recs {
		line, _ := json.Marshal(r)
		if bytes.Contains(line, []byte("TOPSECRE")) || bytes.Contains(line, []byte("TOPS")) {
			t.Errorf("a log line shows a file's content: %s", line)
		}
	}
}

// warnings returns the "cannot read Darshan log" lines about path.
func warnings(recs []logtest.Record, path string) []logtest.Record {
	var out []logtest.Record
	for _, r := range recs {
		if r["level"] == "WARN" && r["msg"] == "cannot read Darshan log" && r["path"] == path {
			out = append(out, r)
		}
	}
	return out
}

// Random bytes, a gzip file, text and a short file are not Darshan logs:
// counted not_darshan, each said once, with its path and never a byte of
// it.
func TestNotDarshanNeverLogged(t *testing.T) {
	root := t.TempDir()
	random := make([]byte, 4096)
	rand.Read(random)
	copy(random, secret) // what a reader quoting the version string would show
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(secret+" in a gzip file\n", 100)))
	zw.Close()
	files := map[string][]byte{
		"random.darshan": random,
		"gzip.darshan":   gz.Bytes(),
		"text.darshan":   []byte(strings.Repeat(secret+" password=hunter2\n", 50)),
		"short.darshan":  []byte(secret),
	}
	for name, data := range files {
		writeFile(t, filepath.Join(root, name), data)
	}
	c := &logtest.Capture{}
	s, _ := startLogged(t, c, time.Now().Add(time.Hour), root)
	snap := syncNow(t, s)
	syncNow(t, s)
	if snap.Failed[ReasonNotDarshan] != uint64(len(files)) || len(snap.Failed) != 1 {
		t.Errorf("failed %v, want %d not_darshan", snap.Failed, len(files))
	}
	recs := c.Next(t)
	noSecret(t, recs)
	for name := range files {
		if w := warnings(recs, filepath.Join(root, name)); len(w) != 1 || w[0]["reason"] != ReasonNotDarshan {
			t.Errorf("%s: said %d times (%v), want once as not_darshan", name, len(w), w)
		}
	}
}

// A log over the memory budget counts too_large, is said once and is not
// read again while it does not change; the other logs are read.
func TestOverBudgetNotRetried(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	good, err := darshantest.Job{JobID: 7, UID: 1000, Exe: "/bin/app", End: now.Add(-time.Hour), Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "good.darshan"), good)
	big := filepath.Join(root, "names.darshan")
	writeFile(t, big, manyNames(t, 4<<20))
	c := &logtest.Capture{}
	clk := &clock{t: now.Add(time.Hour)}
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, Retention: 24 * time.Hour,
		NoInotify: true, Now: clk.now, Logger: c.Logger(), MemoryBudget: 1 << 20})
	for range 3 {
		snap := syncNow(t, s)
		if snap.Failed[ReasonTooLarge] != 1 || snap.Processed != 1 {
			t.Errorf("failed %v, processed %d; want one too_large, one processed", snap.Failed, snap.Processed)
		}
	}
	recs := c.Next(t)
	if w := warnings(recs, big); len(w) != 1 || w[0]["reason"] != ReasonTooLarge {
		t.Errorf("the log over the budget is said %d times: %v", len(w), w)
	}
	noSecret(t, recs)
	// The same log under the default budget is read: the bound is the
	// budget, not the log.
	s2 := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, Retention: 24 * time.Hour,
		NoInotify: true, Now: clk.now})
	if snap := syncNow(t, s2); snap.Failed[ReasonTooLarge] != 0 || snap.Processed != 2 {
		t.Errorf("default budget: failed %v, processed %d", snap.Failed, snap.Processed)
	}
}

// manyNames returns a valid log whose name table inflates to about n
// bytes (names of secret text: its content must never be logged either).
func manyNames(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	end := time.Now().Add(-time.Hour).Unix()
	w.Job = darshan.Job{UID: 1000, JobID: 99, StartTime: end - 60, EndTime: end, NProcs: 1}
	w.Exe = "/bin/names"
	name := "/" + secret + "/" + strings.Repeat("n", 1000)
	for i := range n / len(name) {
		w.AddNameID(uint64(i+1), fmt.Sprintf("%s%d", name, i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A symbolic link dropped by a user to a file the user cannot read (root's)
// is not followed: counted symlink_owner, said once per version of it with
// its path only, never a byte of the target. Tests run as root, which
// reads everything: the link is given to another user (lchown).
func TestSymlinkToAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: a link of another user is made with lchown, which needs root")
	}
	root, private := t.TempDir(), t.TempDir()
	target := filepath.Join(private, "shadow")
	writeFile(t, target, []byte(secret+" root's own file, not a log"))
	os.Chmod(target, 0o600)
	log, err := darshantest.Job{JobID: 8, UID: 0, Exe: "/bin/app", End: time.Now().Add(-time.Hour), Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	rootLog := filepath.Join(private, "root.darshan")
	writeFile(t, rootLog, log) // a real log, still not the user's
	link := filepath.Join(root, "user_x_id1-1_1-1-1-1_1.darshan")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	c := &logtest.Capture{}
	s, _ := startLogged(t, c, time.Now().Add(time.Hour), root)
	snap := syncNow(t, s)
	// The link swapped to another target, as an attacker would: a new
	// version, refused again, said once more.
	os.Remove(link)
	os.Symlink(rootLog, link)
	os.Lchown(link, 12345, 12345)
	syncNow(t, s)
	snap = syncNow(t, s)
	if snap.Failed[ReasonSymlinkOwner] != 2 || snap.Processed != 0 || len(snap.Jobs) != 0 {
		t.Errorf("failed %v, processed %d: want two symlink_owner, nothing read", snap.Failed, snap.Processed)
	}
	recs := c.Next(t)
	noSecret(t, recs)
	if w := warnings(recs, link); len(w) != 2 {
		t.Errorf("the refused link is said %d times for two versions: %v", len(w), w)
	}
	n := 0.0
	for _, line := range logtest.Pick(recs, "INFO", scanMsg, root) {
		n += max(line.Num("failed_reason", ReasonSymlinkOwner), 0)
	}
	if n != 2 {
		t.Errorf("the scan lines count %g refused links, want 2", n)
	}
}

// A log being read when the sidecar died is skipped after the restart,
// counted crashed and said once; the other logs are read. (dropdir's
// tests hold the state file to its rules; cmd/hpcio_exporter kills a real
// sidecar.)
func TestCrashedLogSkipped(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	now := time.Now()
	for i, name := range []string{"a.darshan", "bomb.darshan"} {
		data, err := darshantest.Job{JobID: int64(10 + i), UID: 1000, Exe: "/bin/app", End: now.Add(-time.Hour), Bytes: 100}.Log()
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, name), data)
	}
	bomb := filepath.Join(root, "bomb.darshan")
	fi, err := os.Stat(bomb)
	if err != nil {
		t.Fatal(err)
	}
	writeState(t, filepath.Join(state, StateFileName), bomb, fi)
	c := &logtest.Capture{}
	clk := &clock{t: now}
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, Retention: 24 * time.Hour,
		NoInotify: true, Now: clk.now, Logger: c.Logger(), StateDir: state})
	syncNow(t, s)
	snap := syncNow(t, s)
	if snap.Failed[ReasonCrashed] != 1 || snap.Processed != 1 {
		t.Errorf("failed %v, processed %d: want the bomb crashed, the other read", snap.Failed, snap.Processed)
	}
	recs := c.Next(t)
	if w := warnings(recs, bomb); len(w) != 1 || w[0]["reason"] != ReasonCrashed {
		t.Errorf("the crashed log is said %d times: %v", len(w), w)
	}
	if line := oneScanLine(t, recs, root); line.Num("failed_reason", ReasonCrashed) != 1 {
		t.Errorf("scan line: %v", line)
	}
}

// writeState writes the state file a kill during the read of path leaves
// (dropdir's format: the version being read, by device, inode, size and
// modification time).
func writeState(t *testing.T, file, path string, fi os.FileInfo) {
	t.Helper()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no device and inode on this system")
	}
	doc := map[string]any{"reading": []map[string]any{{"path": path, "dev": uint64(st.Dev), "ino": st.Ino, //nolint:unconvert
		"size": fi.Size(), "mtime_ns": fi.ModTime().UnixNano()}}}
	data, _ := json.Marshal(doc)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
