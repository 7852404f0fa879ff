package dropdir

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// opener is an OpenReader that writes down what it is given: the files
// read (their content) and the errors of those it could not open.
type opener struct {
	mu      sync.Mutex
	content map[string]string
	errs    map[string][]error
}

func newOpener() *opener { return &opener{content: map[string]string{}, errs: map[string][]error{}} }

func (o *opener) Read(string) (os.FileInfo, Status) {
	panic("the watcher opens the files of an OpenReader")
}
func (o *opener) Gone(string) {}

func (o *opener) ReadOpen(path string, f *os.File, fi os.FileInfo, err error) (os.FileInfo, Status) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.errs[path] = append(o.errs[path], err)
		return nil, Failed
	}
	data, _ := io.ReadAll(f)
	o.content[path] = string(data)
	return fi, Done
}

// stuck is an OpenReader whose reads of files starting with "bomb" wait
// until released: a read under way when the process dies.
type stuck struct {
	*opener
	reading chan string   // told when a bomb's read begins
	release chan struct{} // closed to let it end
}

func (s *stuck) ReadOpen(path string, f *os.File, fi os.FileInfo, err error) (os.FileInfo, Status) {
	if err == nil && strings.HasPrefix(filepath.Base(path), "bomb") {
		s.reading <- path
		<-s.release
	}
	return s.opener.ReadOpen(path, f, fi, err)
}

// crashes records what OnCrashed is told.
type crashes struct {
	mu    sync.Mutex
	paths []string
}

func (c *crashes) note(path string, _ os.FileInfo) {
	c.mu.Lock()
	c.paths = append(c.paths, path)
	c.mu.Unlock()
}

func (c *crashes) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.paths)
}

func readState(t *testing.T, path string) stateDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc stateDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return doc
}

// A file version being read when the process dies is not read again by
// the next start, nor the starts after it while it is there unchanged;
// OnCrashed is told each time instead. The other files are read. A new
// version of it is read, and the crashed one is then forgotten. The
// process's death is the state file as it was during the read (what a
// SIGKILL leaves; cmd/hpcio_exporter kills a real sidecar).
func TestCrashedVersionSkipped(t *testing.T) {
	root, stateDir := t.TempDir(), t.TempDir()
	state := filepath.Join(stateDir, "reads.json")
	bomb := filepath.Join(root, "bomb.log")
	write(t, bomb, "a file that kills the reader")
	write(t, filepath.Join(root, "a.log"), "ok")
	write(t, filepath.Join(root, "sub", "b.log"), "ok")

	// The first life: killed while it reads the bomb.
	s := &stuck{opener: newOpener(), reading: make(chan string, 1), release: make(chan struct{})}
	w, err := Start(Config{Dirs: []string{root}, NoInotify: true, RescanInterval: time.Hour, StateFile: state, Workers: 1,
		Wanted: func(n string) bool { return strings.HasSuffix(n, ".log") }}, s)
	if err != nil {
		t.Fatal(err)
	}
	<-s.reading
	during, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	if doc := readState(t, state); len(doc.Reading) != 1 || doc.Reading[0].Path != bomb || len(doc.Crashed) != 0 {
		t.Fatalf("state file while the bomb is read: %s", during)
	}
	close(s.release)
	w.Close()
	if doc := readState(t, state); len(doc.Reading) != 0 {
		t.Errorf("reads still written down once they ended: %+v", doc)
	}
	if err := os.WriteFile(state, during, 0o600); err != nil { // the kill
		t.Fatal(err)
	}

	// The next lives skip it, and read the rest.
	for life := 2; life <= 3; life++ {
		o, c := newOpener(), &crashes{}
		w := start(t, Config{Dirs: []string{root}, NoInotify: true, StateFile: state, OnCrashed: c.note}, o)
		sync1(t, w)
		sync1(t, w)
		if got := c.got(); !slices.Equal(got, []string{bomb}) {
			t.Errorf("life %d: OnCrashed told %v, want the bomb once", life, got)
		}
		o.mu.Lock()
		if _, read := o.content[bomb]; read || len(o.content) != 2 {
			t.Errorf("life %d: read %v", life, o.content)
		}
		o.mu.Unlock()
		doc := readState(t, state)
		if len(doc.Crashed) != 1 || doc.Crashed[0].Path != bomb || len(doc.Reading) != 0 {
			t.Errorf("life %d: state %+v, want the bomb crashed", life, doc)
		}
		w.Close()
	}

	// A new version is read, and the old one forgotten.
	write(t, bomb, "fixed, and longer than before")
	o, c := newOpener(), &crashes{}
	w = start(t, Config{Dirs: []string{root}, NoInotify: true, StateFile: state, OnCrashed: c.note}, o)
	sync1(t, w)
	if got := c.got(); len(got) != 0 {
		t.Errorf("the new version counted crashed: %v", got)
	}
	o.mu.Lock()
	if o.content[bomb] != "fixed, and longer than before" {
		t.Errorf("the new version is not read: %v", o.content)
	}
	o.mu.Unlock()
	if doc := readState(t, state); len(doc.Crashed) != 0 {
		t.Errorf("the crashed version is kept after it changed: %+v", doc)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 1 {
		t.Errorf("the state directory holds %d files, want the state file alone", len(entries))
	}
}

// The crashed versions are kept while they are found, also renamed, and
// forgotten when removed; the state file stays small.
func TestCrashedVersionRenamedAndRemoved(t *testing.T) {
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "reads.json")
	bomb := filepath.Join(root, "bomb.log")
	write(t, bomb, "boom")
	fi, err := os.Stat(bomb)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := versionOf(bomb, fi)
	if !ok {
		t.Skip("no file identity on this system")
	}
	data, _ := json.Marshal(stateDoc{Reading: []stateVersion{v}})
	os.WriteFile(state, data, 0o600)

	renamed := filepath.Join(root, "renamed.log")
	if err := os.Rename(bomb, renamed); err != nil {
		t.Fatal(err)
	}
	o, c := newOpener(), &crashes{}
	w := start(t, Config{Dirs: []string{root}, NoInotify: true, StateFile: state, OnCrashed: c.note}, o)
	sync1(t, w)
	if got := c.got(); !slices.Equal(got, []string{renamed}) {
		t.Errorf("renamed: OnCrashed told %v", got)
	}
	if doc := readState(t, state); len(doc.Crashed) != 1 {
		t.Errorf("renamed: state %+v", doc)
	}
	os.Remove(renamed)
	sync1(t, w)
	if doc := readState(t, state); len(doc.Crashed) != 0 {
		t.Errorf("removed: state %+v", doc)
	}
}

// A state file that is not one is an error at start, and so is a state
// directory that cannot be written.
func TestStateFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("TOPSECRET not json"), 0o600)
	if _, err := Start(Config{Dirs: []string{dir}, StateFile: bad}, newRecorder()); err == nil || strings.Contains(err.Error(), "TOPSECRET") {
		t.Errorf("a bad state file: %v", err)
	}
	if _, err := Start(Config{Dirs: []string{dir}, StateFile: filepath.Join(dir, "no", "such", "dir", "s.json")}, newRecorder()); err == nil {
		t.Error("a state file in a directory that does not exist is accepted")
	}
}

// At most maxCrashed crashed versions are kept, the oldest dropped.
func TestCrashedBound(t *testing.T) {
	state := filepath.Join(t.TempDir(), "reads.json")
	var doc stateDoc
	for i := range maxCrashed + 10 {
		doc.Reading = append(doc.Reading, stateVersion{Path: "/x/" + strings.Repeat("p", 200), Dev: 1, Ino: uint64(i), Size: 1, MTime: 1})
	}
	data, _ := json.Marshal(doc)
	os.WriteFile(state, data, 0o600)
	j, err := openJournal(state, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(j.crashed) != maxCrashed || j.crashed[0].Ino != 10 {
		t.Errorf("kept %d from inode %d, want the last %d", len(j.crashed), j.crashed[0].Ino, maxCrashed)
	}
	if data, _ := os.ReadFile(state); len(data) > 32<<10 {
		t.Errorf("the state file holds %d bytes", len(data))
	}
}

// BenchmarkStateWrite: a read written down and struck off (two atomic
// replacements of the state file, each with two fsyncs), the cost per
// file read with a state file.
func BenchmarkStateWrite(b *testing.B) {
	j, err := openJournal(filepath.Join(b.TempDir(), "reads.json"), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	v := stateVersion{Path: "/lustre/darshan-logs/2026/1/15/user_app_id123-456_1-15-43200-1_1.darshan", Dev: 1, Ino: 2, Size: 3, MTime: 4}
	for b.Loop() {
		tok, err := j.begin(v)
		if err != nil {
			b.Fatal(err)
		}
		if err := j.end(tok); err != nil {
			b.Fatal(err)
		}
	}
}
