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

// The Prometheus 3 release deploy/prometheus3 is written for and tested
// against, built from its Go module as VictoriaMetrics is (vm_helpers_test.go):
// the Go module proxy is the only place the tests download from, and
// Debian ships only Prometheus 2. Prometheus 3.16.0 is module version
// v0.316.0 (the module is tagged v0.3xx.y for 3.xx.y).
const (
	prom3Module  = "github.com/prometheus/prometheus"
	prom3Version = "v0.316.0"
)

// prom3Commands are the programs of the module the tests run.
var prom3Commands = []string{"prometheus", "promtool"}

var (
	prom3Once  sync.Once
	prom3Dir   string
	prom3Err   error
	prom3Built time.Duration
)

// prom3Binaries returns the directory holding prometheus and promtool at
// prom3Version. They are built once with `go install` into the user's
// cache directory, keyed by version and platform, so that later runs need
// neither the module proxy nor the Go build cache. The module asks for go
// 1.26.7, which the machine's 1.26.8 satisfies: no other toolchain is
// fetched. A first build is heavy (prometheus pulls in every service
// discovery's SDK): 10.6 CPU-minutes (9m09s user, 1m28s system), 14
// minutes of wall time on 2 cores shared with other builds, about 6 on
// idle ones, downloads included; 11 s when Go's build cache still holds
// it; none once cached here. A failed build (no network, no proxy) skips
// the test, except under CI.
func prom3Binaries(t testing.TB) string {
	t.Helper()
	prom3Once.Do(func() {
		begin := time.Now()
		prom3Dir, prom3Err = buildProm3(t)
		prom3Built = time.Since(begin)
	})
	if prom3Err != nil {
		msg := fmt.Sprintf("building Prometheus %s from the Go module proxy failed: %v", prom3Version, prom3Err)
		if underCI() {
			t.Fatal(msg)
		}
		t.Skip(msg + ": skipping")
	}
	t.Logf("Prometheus 3 (%s@%s) in %s (ready after %v)", prom3Module, prom3Version, prom3Dir, prom3Built.Round(time.Millisecond))
	return prom3Dir
}

func buildProm3(t testing.TB) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command in $PATH: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		// No home: build into this run's directory.
		cache = exportertest.Dir(t)
	}
	dir := prom3CacheDir(cache)
	if prom3UpToDate(dir) {
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
	if prom3UpToDate(dir) { // built by whoever held the lock
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
	for _, c := range prom3Commands {
		args = append(args, prom3Module+"/cmd/"+c+"@"+prom3Version)
	}
	line := niced(goBin, args...)
	cmd := exec.Command(line[0], line[1:]...)
	// Outside any module (pkg@version ignores the current one anyway).
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(),
		"GOBIN="+tmp,
		// Pure Go, static binaries, as Prometheus' own releases are.
		"CGO_ENABLED=0",
		// The module asks for go 1.26.7: never fetch another toolchain.
		"GOTOOLCHAIN=local",
		"GOFLAGS=-buildvcs=false -trimpath")
	begin := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built %s@%s (%s) in %v", prom3Module, prom3Version, strings.Join(prom3Commands, ", "), time.Since(begin).Round(time.Second))
	for _, c := range prom3Commands {
		if err := os.Rename(filepath.Join(tmp, c), filepath.Join(dir, c)); err != nil {
			return "", err
		}
	}
	if !prom3UpToDate(dir) {
		return "", fmt.Errorf("%s: the binaries built are not %s@%s", dir, prom3Module, prom3Version)
	}
	return dir, nil
}

// prom3CacheDir is where the binaries are kept under a cache directory:
// one directory per version and platform.
func prom3CacheDir(cache string) string {
	return filepath.Join(cache, "hpcio_exporter", fmt.Sprintf("prometheus-%s-%s-%s", prom3Version, runtime.GOOS, runtime.GOARCH))
}

// prom3Cached reports whether Prometheus 3 is built already, in the
// user's cache directory.
func prom3Cached() bool {
	cache, err := os.UserCacheDir()
	return err == nil && prom3UpToDate(prom3CacheDir(cache))
}

// prom3UpToDate reports whether dir holds prometheus and promtool built
// from prom3Module at prom3Version, as their build information says.
func prom3UpToDate(dir string) bool {
	for _, c := range prom3Commands {
		info, err := buildinfo.ReadFile(filepath.Join(dir, c))
		if err != nil || info.Main.Path != prom3Module || info.Main.Version != prom3Version {
			return false
		}
	}
	return true
}
