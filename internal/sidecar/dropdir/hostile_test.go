//go:build linux

package dropdir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// A link refused by the owner rule reaches the OpenReader as
// ErrSymlinkOwner, once per version; a link to a directory of another
// owner is not listed, said once and counted at each scan; a site's
// (root's) links to directories are followed as before.
func TestLinkOwnerRule(t *testing.T) {
	needRoot(t)
	root, elsewhere := t.TempDir(), t.TempDir()
	secret := filepath.Join(elsewhere, "secret")
	write(t, secret, "TOPSECRET")
	os.Chmod(secret, 0o600)
	write(t, filepath.Join(elsewhere, "private", "p.log"), "TOPSECRET in a directory")
	write(t, filepath.Join(elsewhere, "site", "s.log"), "the site's")
	write(t, filepath.Join(root, "own.log"), "a plain log")
	symlink(t, secret, filepath.Join(root, "evil.log"))
	lchown(t, filepath.Join(root, "evil.log"), otherUID)
	symlink(t, filepath.Join(elsewhere, "private"), filepath.Join(root, "evil-dir"))
	lchown(t, filepath.Join(root, "evil-dir"), otherUID)
	symlink(t, filepath.Join(elsewhere, "site"), filepath.Join(root, "site-dir")) // root's
	var logs logtest.Capture
	o := newOpener()
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, What: "test", Logger: logs.Logger()}, o)
	for range 3 {
		st := sync1(t, w)
		if st.Unlisted[UnlistedSymlinkOwner] != 1 || len(st.Unlisted) != 1 {
			t.Errorf("unlisted: %v, want one symlink_owner", st.Unlisted)
		}
	}
	o.mu.Lock()
	if len(o.content) != 2 || o.content[filepath.Join(root, "own.log")] != "a plain log" ||
		o.content[filepath.Join(root, "site-dir", "s.log")] != "the site's" {
		t.Errorf("read %v", o.content)
	}
	evil := o.errs[filepath.Join(root, "evil.log")]
	if len(evil) != 1 || !errors.Is(evil[0], ErrSymlinkOwner) || len(o.errs) != 1 {
		t.Errorf("errors %v: want one ErrSymlinkOwner for evil.log", o.errs)
	}
	o.mu.Unlock()
	recs := logs.Next(t)
	warned := 0
	for _, r := range recs {
		line, _ := json.Marshal(r)
		if bytes.Contains(line, []byte("TOPSECRET")) {
			t.Errorf("a log line shows the content: %s", line)
		}
		if r["level"] == "WARN" && r["link"] == filepath.Join(root, "evil-dir") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the refused directory link was said %d times in 3 scans, want 1: %v", warned, recs)
	}
	// Given to root, the link is followed, and said so.
	lchown(t, filepath.Join(root, "evil-dir"), 0)
	if st := sync1(t, w); len(st.Unlisted) != 0 {
		t.Errorf("unlisted %v after the link was given to root", st.Unlisted)
	}
	o.mu.Lock()
	if o.content[filepath.Join(root, "evil-dir", "p.log")] == "" {
		t.Error("the directory link given to root is not followed")
	}
	o.mu.Unlock()
	if again := logtest.Pick(logs.Next(t), "INFO", "a test directory that could not be listed is listed again", filepath.Join(root, "evil-dir")); len(again) != 1 {
		t.Error("no line says the directory is listed again")
	}
}

// unlistedChildEnv runs TestUnlistedChild as the child of
// TestUnreadableDirectory.
const unlistedChildEnv = "DROPDIR_UNLISTED_CHILD"

// An unreadable sub-directory is said once, not at every rescan, with the
// hint for a permission error (not inotify's), counted at each scan, said
// again when it is readable again and when it is unreadable again. Root
// reads every directory, mode 000 or not: the watcher runs in a child
// process as another user (nobody), which the parent, root, drives one
// scan at a time, changing the directory's mode in between. Not root, the
// child runs as the test user, whom mode 000 stops too.
func TestUnreadableDirectory(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Where nobody can run the test binary and read the drop directory.
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "dropdir.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "drop")
	write(t, filepath.Join(root, "a.log"), "ok")
	write(t, filepath.Join(root, "locked", "b.log"), "ok")
	for _, d := range []string{root, filepath.Join(root, "locked")} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(filepath.Join(root, "a.log"), 0o644)
	os.Chmod(filepath.Join(root, "locked", "b.log"), 0o644)
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })

	cmd := exec.Command(bin, "-test.run=^TestUnlistedChild$")
	cmd.Env = append(os.Environ(), unlistedChildEnv+"="+root)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	out := bufio.NewScanner(outPipe)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	scan := func() Stats {
		t.Helper()
		fmt.Fprintln(in, "scan")
		for out.Scan() {
			if line, ok := strings.CutPrefix(out.Text(), "STATS "); ok {
				var st Stats
				if err := json.Unmarshal([]byte(line), &st); err != nil {
					t.Fatal(err)
				}
				return st
			}
		}
		t.Fatalf("the child ended: %v\n%s", out.Err(), logs.String())
		return Stats{}
	}
	for i := range 3 {
		if st := scan(); st.Unlisted[UnlistedPermission] != 1 || st.Files != 1 {
			t.Errorf("scan %d: unlisted %v, %d files; want one unreadable directory, one file", i, st.Unlisted, st.Files)
		}
	}
	os.Chmod(locked, 0o755)
	if st := scan(); len(st.Unlisted) != 0 || st.Files != 2 {
		t.Errorf("readable again: unlisted %v, %d files", st.Unlisted, st.Files)
	}
	os.Chmod(locked, 0)
	if st := scan(); st.Unlisted[UnlistedPermission] != 1 {
		t.Errorf("unreadable again: unlisted %v", st.Unlisted)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, logs.String())
	}

	var warned, again int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) != nil {
			continue // the test framework's own lines
		}
		if strings.Contains(line, "inotify") || strings.Contains(line, "max_user_watches") {
			t.Errorf("a permission error is said with inotify's hint: %s", line)
		}
		switch {
		case r["level"] == "WARN" && r["dir"] == locked:
			warned++
			if hint, _ := r["hint"].(string); !strings.Contains(hint, "permission") {
				t.Errorf("no permission hint: %s", line)
			}
		case r["level"] == "INFO" && r["dir"] == locked:
			again++
		case r["level"] == "WARN":
			t.Errorf("unexpected warning: %s", line)
		}
	}
	// Said when found, and when unreadable again; listed again once.
	if warned != 2 || again != 1 {
		t.Errorf("over 5 scans: %d warnings, %d lines listed again; want 2 and 1:\n%s", warned, again, logs.String())
	}
}

// TestUnlistedChild is TestUnreadableDirectory's watcher: a scan for each
// line read, its Stats printed after it.
func TestUnlistedChild(t *testing.T) {
	root := os.Getenv(unlistedChildEnv)
	if root == "" {
		t.Skip("run by TestUnreadableDirectory")
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := start(t, Config{Dirs: []string{root}, What: "test", Logger: logger}, newRecorder())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		st := sync1(t, w)
		data, _ := json.Marshal(st)
		fmt.Printf("STATS %s\n", data)
	}
}
