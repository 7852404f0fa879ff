//go:build unix

package dropdir

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Other users, for the owner rule: tests run as root (here and in CI),
// which can read everything, so "another user's" link is made by giving
// it away with Lchown.
const (
	otherUID = 12345 // a user of the site
	nobody   = 65534 // the overflow uid: an owner not known
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: the links of other users are made with lchown, which needs root")
	}
}

func lchown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// OpenFile opens regular files, refuses anything else without blocking,
// and follows a link only when its owner is root or owns the target.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.log")
	write(t, plain, "TOPSECRET plain")
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	symlink(t, fifo, filepath.Join(dir, "to-fifo.log"))
	symlink(t, plain, filepath.Join(dir, "mine.log")) // the test user's link to the test user's file

	type result struct {
		data string
		err  error
	}
	open := func(name string) result {
		done := make(chan result, 1)
		go func() {
			f, fi, err := OpenFile(filepath.Join(dir, name))
			if err != nil {
				done <- result{err: err}
				return
			}
			defer f.Close()
			data, _ := io.ReadAll(f)
			if fi.Size() != int64(len(data)) || !fi.Mode().IsRegular() {
				t.Errorf("%s: state %v %d, read %d bytes", name, fi.Mode(), fi.Size(), len(data))
			}
			done <- result{data: string(data)}
		}()
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("OpenFile(%s) blocks", name)
			return result{}
		}
	}
	for _, c := range []struct {
		name string
		want error // nil: read
	}{
		{"plain.log", nil},
		{"mine.log", nil},
		{"fifo.log", ErrNotRegular},
		{"to-fifo.log", ErrNotRegular},
		{".", ErrNotRegular},
		{"none.log", fs.ErrNotExist},
	} {
		r := open(c.name)
		switch {
		case c.want == nil && (r.err != nil || r.data != "TOPSECRET plain"):
			t.Errorf("%s: %q, %v", c.name, r.data, r.err)
		case c.want != nil && !errors.Is(r.err, c.want):
			t.Errorf("%s: %v, want %v", c.name, r.err, c.want)
		case r.err != nil && strings.Contains(r.err.Error(), "TOPSECRET"):
			t.Errorf("%s: the error shows the content: %v", c.name, r.err)
		}
	}
}

// The owner rule, with links and targets of other users.
func TestOpenFileLinkOwner(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	rootFile := filepath.Join(dir, "root-only")
	write(t, rootFile, "TOPSECRET of root")
	os.Chmod(rootFile, 0o600)
	userFile := filepath.Join(dir, "user-file")
	write(t, userFile, "TOPSECRET of the user")
	lchown(t, userFile, otherUID)
	nobodyFile := filepath.Join(dir, "nobody-file")
	write(t, nobodyFile, "TOPSECRET of nobody")
	lchown(t, nobodyFile, nobody)

	for _, c := range []struct {
		name, target string
		owner        int
		want         error
	}{
		{"root-to-user.log", userFile, 0, nil},                        // a site's link
		{"user-to-own.log", userFile, otherUID, nil},                  // the user's own file
		{"user-to-root.log", rootFile, otherUID, ErrSymlinkOwner},     // the attack
		{"nobody-to-root.log", rootFile, nobody, ErrSymlinkOwner},     // the attack, as seen under PrivateUsers=
		{"nobody-to-nobody.log", nobodyFile, nobody, ErrSymlinkOwner}, // two unknown owners are not one
		{"user-to-nobody.log", nobodyFile, otherUID, ErrSymlinkOwner},
	} {
		link := filepath.Join(dir, c.name)
		symlink(t, c.target, link)
		lchown(t, link, c.owner)
		f, _, err := OpenFile(link)
		if f != nil {
			f.Close()
		}
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "TOPSECRET") || !strings.Contains(err.Error(), link)) {
			t.Errorf("%s: the error should name the link and nothing it points to: %v", c.name, err)
		}
	}
}

// A path that is swapped for a link while the watcher looks at it is
// checked as a link: the version opened is the one judged.
func TestOpenFileSwapped(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	rootFile := filepath.Join(dir, "root-only")
	write(t, rootFile, "TOPSECRET of root")
	own := filepath.Join(dir, "own")
	write(t, own, "the user's")
	lchown(t, own, otherUID)
	path := filepath.Join(dir, "x.log")
	// Two links of the user's, swapped as fast as possible: one to the
	// user's file, one to root's.
	a, b := filepath.Join(dir, ".a"), filepath.Join(dir, ".b")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp, target := a, own
			if i%2 == 1 {
				tmp, target = b, rootFile
			}
			os.Remove(tmp)
			if os.Symlink(target, tmp) != nil || os.Lchown(tmp, otherUID, otherUID) != nil {
				continue
			}
			os.Rename(tmp, path)
		}
	}()
	var read, refused int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && (read < 100 || refused < 100); {
		f, _, err := OpenFile(path)
		if err != nil {
			if errors.Is(err, ErrSymlinkOwner) {
				refused++
			}
			continue
		}
		data, _ := io.ReadAll(f)
		f.Close()
		if strings.Contains(string(data), "TOPSECRET") {
			t.Fatal("a link swapped to root's file was followed")
		}
		read++
	}
	close(stop)
	<-done
	t.Logf("%d opens of the user's file, %d refused", read, refused)
	if read == 0 || refused == 0 {
		t.Errorf("the swaps were not met: %d read, %d refused", read, refused)
	}
}
