package darshan

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// nameBomb writes a log whose name region inflates to about inflated bytes
// at a ratio under MaxInflateRatio: entries of distinct ids and one long
// name, as a user could drop (names of 1,000 bytes compress 224:1); and one
// POSIX record.
func nameBomb(t testing.TB, inflated int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job = Job{NProcs: 1, JobID: 1}
	name := "/scratch/" + strings.Repeat("a", 991)
	for i := range inflated / (8 + len(name) + 1) {
		w.AddNameID(uint64(i)+1, name)
	}
	if err := w.WriteRaw(POSIX, POSIX.CurrentVersion(), make([]byte, posixRecordSize)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readWhole reads every record of every module of a log, as the signals
// and the insights do, and returns the first error.
func readWhole(l *Log) error {
	for _, m := range l.Modules() {
		rd := l.Records(m.ID)
		for rd.Next() {
		}
		if err := rd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// TestNameTableBomb: a 4.8 MB log whose name region inflates to 1 GiB,
// 224 times its size (under the inflate bound), is refused as over the
// default budget, having cost about the budget, not the gigabyte.
func TestNameTableBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes a 1 GiB name table (3 s); TestSmallNameTableBomb is the same with a small budget")
	}
	data := nameBomb(t, 1<<30)
	var l *Log
	var err error
	alloc := allocated(func() { l, err = NewReader(bytes.NewReader(data), int64(len(data)), "bomb") })
	t.Logf("%d-byte log: %v; %d bytes allocated", len(data), err, alloc)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a %d-byte log whose names inflate to 1 GiB: %v, want ErrTooLarge", len(data), err)
	}
	want := fmt.Sprintf("darshan log bomb: name records region at offset %d: data larger than the reader accepts: over the memory budget of 268435456 bytes", l.Header.NameRegion.Offset)
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// the names kept, the window and the map's growth: well under twice
	// the budget, where the whole table took 3 GB
	if alloc > 2*DefaultMemoryBudget {
		t.Errorf("reading the bomb allocated %d bytes, the budget is %d", alloc, DefaultMemoryBudget)
	}
	if err := readWhole(l); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a module of a log over its budget: %v, want ErrTooLarge", err)
	}
}

// TestSmallNameTableBomb is TestNameTableBomb in miniature: 32 MiB of names
// against a budget of 4 MiB.
func TestSmallNameTableBomb(t *testing.T) {
	data := nameBomb(t, 32<<20)
	const budget = 4 << 20
	var l *Log
	var err error
	alloc := allocated(func() {
		l, err = NewReaderWith(bytes.NewReader(data), int64(len(data)), "bomb", Options{MemoryBudget: budget})
	})
	var be *BudgetError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &be) || be.Budget != budget {
		t.Fatalf("%v, want a *BudgetError of %d bytes", err, budget)
	}
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Region != "name records" {
		t.Errorf("%v does not name the name records region", err)
	}
	// charged past the budget by one read of the window at most
	if c := l.MemoryCharged(); c < budget || c > budget+2<<20 {
		t.Errorf("charged %d bytes, the budget is %d", c, budget)
	}
	if alloc > 4*budget {
		t.Errorf("allocated %d bytes for a budget of %d", alloc, budget)
	}
	if len(l.Names) == 0 || int64(len(l.Names))*(1000+nameEntryCost) > budget {
		t.Errorf("%d names kept under a budget of %d", len(l.Names), budget)
	}
}

// TestBudgetEdge: every fixture, read whole, costs some C bytes; with a
// budget of C it reads as with the default one, with C-1 it is refused.
// ReadModule's copies are charged on top.
func TestBudgetEdge(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(fixturesDir(t), "*.darshan"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		open := func(budget int64) (*Log, error) {
			return NewReaderWith(bytes.NewReader(data), int64(len(data)), filepath.Base(p), Options{MemoryBudget: budget})
		}
		l, err := open(0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want := readWhole(l)
		if want != nil && !strings.Contains(p, "partial_and_unknown") {
			t.Fatalf("%s: %v", p, want)
		}
		c := l.MemoryCharged()
		if readWhole(l); l.MemoryCharged() != c {
			t.Errorf("%s: a second read charged %d bytes more", p, l.MemoryCharged()-c)
		}
		if c <= 0 || c > 4<<20 {
			t.Errorf("%s: charged %d bytes", p, c)
		}
		l, err = open(c)
		if err != nil {
			t.Fatalf("%s with a budget of its cost, %d: %v", p, c, err)
		}
		if err := readWhole(l); fmt.Sprint(err) != fmt.Sprint(want) {
			t.Errorf("%s with a budget of its cost, %d: %v, want %v", p, c, err, want)
		}
		var be *BudgetError
		l, err = open(c - 1)
		if err == nil && l != nil {
			err = readWhole(l)
		}
		if !errors.As(err, &be) || be.Budget != c-1 {
			t.Errorf("%s with a budget of %d, one byte under its cost: %v, want a *BudgetError", p, c-1, err)
		}

		// ReadModule keeps copies: they cost.
		l, _ = open(c)
		readWhole(l)
		for _, m := range l.Modules() {
			if m.Region.Length > 0 && !strings.Contains(p, "partial_and_unknown") {
				if _, err := l.ReadModule(m.ID); !errors.As(err, &be) {
					t.Errorf("%s: ReadModule(%s) on a log whose budget its reading used up: %v, want a *BudgetError", p, m.ID, err)
				}
				break
			}
		}
	}
}

// TestDXTBudget: one DXT record of 400,000 segments (16 MB of data) under a
// budget of 4 MiB stops with a *BudgetError before its segments are held.
func TestDXTBudget(t *testing.T) {
	rec := &DXTRecord{Key: Key{Module: DXTPOSIX, Rank: 0, ID: 1}, Hostname: "n1", Writes: make([]Segment, 400_000)}
	for i := range rec.Writes {
		rec.Writes[i] = Segment{Offset: int64(i) << 12, Length: 4096, Start: float64(i) / 1e3, End: float64(i+1) / 1e3}
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.AddNameID(1, "/f")
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	const budget = 4 << 20
	var err error
	alloc := allocated(func() {
		var l *Log
		if l, err = NewReaderWith(bytes.NewReader(data), int64(len(data)), "dxt", Options{MemoryBudget: budget}); err == nil {
			err = readWhole(l)
		}
	})
	var be *BudgetError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "DXT_POSIX region") {
		t.Errorf("%d-byte log of one record of 400,000 segments: %v, want a *BudgetError in DXT_POSIX", len(data), err)
	}
	if alloc > 3*budget {
		t.Errorf("allocated %d bytes under a budget of %d", alloc, budget)
	}
}

// TestBadOptions: a negative budget is refused.
func TestBadOptions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixturesDir(t), "all_modules.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := NewReaderWith(bytes.NewReader(data), int64(len(data)), "x", Options{MemoryBudget: -1}); l != nil || err == nil {
		t.Errorf("a negative budget: %v, %v", l, err)
	}
	if l, err := OpenWith(filepath.Join(fixturesDir(t), "all_modules.darshan"), Options{MemoryBudget: -1}); l != nil || err == nil {
		t.Errorf("a negative budget: %v, %v", l, err)
	}
}

// secret is what the files of TestNotDarshan hold, and no error may show.
const secret = "TOPSECRET-xyz"

// TestNotDarshan: files without the magic number are ErrNotDarshan, whatever
// their version string; one with the magic and an unknown version is
// ErrUnsupportedVersion; no error holds a byte of the file.
func TestNotDarshan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	copy(random[100:], secret)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Name = secret
	fmt.Fprintf(zw, "%s\n%s\n", secret, strings.Repeat("x", 5000))
	zw.Close()
	log, err := os.ReadFile(filepath.Join(fixturesDir(t), "all_modules.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	badVersion := bytes.Clone(log)
	copy(badVersion, secret[:8])
	bigBadVersion, err := os.ReadFile(filepath.Join(fixturesDir(t), "big_endian.darshan"))
	if err != nil {
		t.Fatal(err)
	}
	copy(bigBadVersion, "3.99\x00\x00\x00\x00")
	knownBadVersion := bytes.Clone(log)
	copy(knownBadVersion, "3.41"+secret[:4]) // parses as 3.41; its rest must not be shown either
	knownBadVersion = knownBadVersion[:1000]

	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"random bytes", random, ErrNotDarshan},
		{"random bytes, secret first", append([]byte(secret), random...), ErrNotDarshan},
		{"gzip", gz.Bytes(), ErrNotDarshan},
		{"text", []byte(secret + " zqjx vbnm\n"), ErrNotDarshan},
		{"short text", []byte(secret[:10]), ErrNotDarshan},
		{"magic, version string not a version", badVersion, ErrUnsupportedVersion},
		{"magic big-endian, unknown version", bigBadVersion, ErrUnsupportedVersion},
		{"a known version followed by text, cut short", knownBadVersion, ErrTruncated},
		{"a log's first 12 bytes", log[:12], ErrTruncated},
		{"zeros", make([]byte, 2000), ErrIncomplete},
		{"empty", nil, ErrTruncated},
	} {
		l, err := NewReader(bytes.NewReader(c.data), int64(len(c.data)), "x")
		if l != nil || !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if leak := leaked(err.Error(), c.data); leak != "" {
			t.Errorf("%s: error %q shows the file's bytes %q", c.name, err, leak)
		}
	}
}

// leaked returns a piece of data (6 bytes or more, or a part of secret)
// found in msg, or "".
func leaked(msg string, data []byte) string {
	for _, s := range []string{secret, "TOPSECRE", "SECRET", "TOPS"} {
		if strings.Contains(msg, s) {
			return s
		}
	}
	for i := 0; i+6 <= len(data); i++ {
		if strings.Contains(msg, string(data[i:i+6])) {
			return string(data[i : i+6])
		}
	}
	return ""
}

// TestOpenNotRegular: Open refuses a device, a FIFO and a directory at
// once, saying what they are, and never blocks on a FIFO.
func TestOpenNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "log.darshan")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, c := range []struct{ path, kind string }{
		{"/dev/urandom", "character device"},
		{"/dev/null", "character device"},
		{fifo, "FIFO"},
		{dir, "directory"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			t.Logf("%s: %v", c.path, err)
			continue
		}
		done := make(chan error, 1)
		go func() {
			l, err := Open(c.path)
			if l != nil {
				l.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			want := fmt.Sprintf("darshan log %s: not a regular file (%s)", c.path, c.kind)
			if !errors.Is(err, ErrNotRegular) || err.Error() != want {
				t.Errorf("Open(%s): %v, want %q", c.path, err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Open(%s) still blocked after 20 s", c.path)
		}
	}
	empty := filepath.Join(dir, "empty.darshan")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(empty); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty file: %v, want ErrTruncated saying it is empty", err)
	}
}

// TestCorpusCost: no real log comes near the default budget. Each log of
// the corpus and the fixtures is read whole (names, every module), and its
// cost is logged; the largest must be under a quarter of the default.
func TestCorpusCost(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(fixturesDir(t), "*.darshan"))
	if dir := corpus.Root(); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "corpus", "darshan", "*", "*.darshan"))
		paths = append(paths, more...)
	} else {
		t.Log("no corpus (../shared/corpus): the fixtures alone")
	}
	var most int64
	var mostPath string
	for _, p := range paths {
		l, err := Open(p)
		if l == nil {
			continue // the corpus's corrupt logs
		}
		if err == nil {
			readWhole(l)
		}
		if c := l.MemoryCharged(); c > most {
			most, mostPath = c, p
		}
		l.Close()
	}
	runtime.GC()
	t.Logf("the most a log costs: %d bytes (%s)", most, filepath.Base(mostPath))
	if most > DefaultMemoryBudget/4 {
		t.Errorf("%s costs %d bytes, more than a quarter of the default budget", mostPath, most)
	}
}
