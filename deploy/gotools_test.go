package deploy

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// goTools are programs of a Go module that the tests run, built from the Go
// module proxy (the only place the tests download from) with `go install`
// into the user's cache directory, keyed by version and platform, so that
// later runs need neither the proxy nor the Go build cache (which
// `go clean -cache` empties and which drops what it has not used for five
// days). A failed build (no network, no proxy) skips the test, except
// under CI.
type goTools struct {
	name     string // for people: "VictoriaMetrics"
	dirName  string // the cache directory's prefix: "victoriametrics"
	module   string
	version  string
	pkgDir   string // where the commands are in the module: "app", "cmd"
	commands []string

	once  sync.Once
	dir   string
	err   error
	built time.Duration
}

// binaries returns the directory holding the commands at the version,
// building them the first time.
func (g *goTools) binaries(t testing.TB) string {
	t.Helper()
	g.once.Do(func() {
		begin := time.Now()
		g.dir, g.err = g.build(t)
		g.built = time.Since(begin)
	})
	if g.err != nil {
		msg := fmt.Sprintf("building %s %s from the Go module proxy failed: %v", g.name, g.version, g.err)
		if underCI() {
			t.Fatal(msg)
		}
		t.Skip(msg + ": skipping")
	}
	t.Logf("%s (%s@%s) in %s (ready after %v)", g.name, g.module, g.version, g.dir, g.built.Round(time.Millisecond))
	return g.dir
}

func (g *goTools) build(t testing.TB) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command in $PATH: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		// No home: build into this run's directory.
		cache = exportertest.Dir(t)
	}
	dir := g.cacheDir(cache)
	if g.upToDate(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// One build at a time: deploy's tests of two `go test` runs (a
	// developer's and CI's on the same machine) would otherwise both spend
	// minutes of the 2 cores on the same binaries. The lock goes with the
	// process, however it ends.
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if g.upToDate(dir) { // built by whoever held the lock
		return dir, nil
	}
	// Into a directory of this build, then renamed into place one by one:
	// a concurrent test run never sees half a binary.
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	args := []string{"install"}
	for _, c := range g.commands {
		args = append(args, g.module+"/"+g.pkgDir+"/"+c+"@"+g.version)
	}
	line := niced(goBin, args...)
	cmd := exec.Command(line[0], line[1:]...)
	// Outside any module (pkg@version ignores the current one anyway).
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(),
		"GOBIN="+tmp,
		// Pure Go, static binaries: no C compiler needed.
		"CGO_ENABLED=0",
		// The modules ask for a go 1.26 the machine's satisfies: never
		// fetch another toolchain.
		"GOTOOLCHAIN=local",
		"GOFLAGS=-buildvcs=false -trimpath")
	begin := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built %s@%s (%s) in %v", g.module, g.version, strings.Join(g.commands, ", "), time.Since(begin).Round(time.Second))
	for _, c := range g.commands {
		if err := os.Rename(filepath.Join(tmp, c), filepath.Join(dir, c)); err != nil {
			return "", err
		}
	}
	if !g.upToDate(dir) {
		return "", fmt.Errorf("%s: the binaries built are not %s@%s", dir, g.module, g.version)
	}
	return dir, nil
}

// cacheDir is where the binaries are kept under a cache directory: one
// directory per version and platform.
func (g *goTools) cacheDir(cache string) string {
	return filepath.Join(cache, "hpcio_exporter", fmt.Sprintf("%s-%s-%s-%s", g.dirName, g.version, runtime.GOOS, runtime.GOARCH))
}

// cached reports whether the commands are built already, in the user's
// cache directory.
func (g *goTools) cached() bool {
	cache, err := os.UserCacheDir()
	return err == nil && g.upToDate(g.cacheDir(cache))
}

// upToDate reports whether dir holds the commands built from the module at
// the version, as their build information says.
func (g *goTools) upToDate(dir string) bool {
	for _, c := range g.commands {
		info, err := buildinfo.ReadFile(filepath.Join(dir, c))
		if err != nil || info.Main.Path != g.module || info.Main.Version != g.version {
			return false
		}
	}
	return true
}
