package deploy

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// The VictoriaMetrics release the fleet test runs, built from its Go
// module: the Go module proxy is the only place the tests download from.
const (
	vmModule  = "github.com/VictoriaMetrics/VictoriaMetrics"
	vmVersion = "v1.150.0"
)

// vmCommands are the programs of the module the test runs.
var vmCommands = []string{"victoria-metrics", "vmagent", "vmalert"}

var (
	vmOnce  sync.Once
	vmDir   string
	vmErr   error
	vmBuilt time.Duration
)

// vmBinaries returns the directory holding victoria-metrics, vmagent and
// vmalert at vmVersion. They are built once with `go install` into the
// user's cache directory, keyed by version and platform, so that later
// runs need neither the module proxy nor the Go build cache (which
// `go clean -cache` empties and which drops what it has not used for five
// days). A first build takes one to four minutes on 2 cores (compiling
// about a minute, downloading the modules the rest); a failed one (no
// network, no proxy) skips the test, except under CI.
func vmBinaries(t testing.TB) string {
	t.Helper()
	vmOnce.Do(func() {
		begin := time.Now()
		vmDir, vmErr = buildVM(t)
		vmBuilt = time.Since(begin)
	})
	if vmErr != nil {
		msg := fmt.Sprintf("building VictoriaMetrics %s from the Go module proxy failed: %v", vmVersion, vmErr)
		if underCI() {
			t.Fatal(msg)
		}
		t.Skip(msg + ": skipping")
	}
	t.Logf("VictoriaMetrics %s in %s (ready after %v)", vmVersion, vmDir, vmBuilt.Round(time.Millisecond))
	return vmDir
}

func buildVM(t testing.TB) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command in $PATH: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		// No home: build into this run's directory.
		cache = exportertest.Dir(t)
	}
	dir := filepath.Join(cache, "hpcio_exporter", fmt.Sprintf("victoriametrics-%s-%s-%s", vmVersion, runtime.GOOS, runtime.GOARCH))
	if vmUpToDate(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Into a directory of this build, then renamed into place one by one:
	// a concurrent test run never sees half a binary.
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	args := []string{"install"}
	for _, c := range vmCommands {
		args = append(args, vmModule+"/app/"+c+"@"+vmVersion)
	}
	line := niced(goBin, args...)
	cmd := exec.Command(line[0], line[1:]...)
	// Outside any module (pkg@version ignores the current one anyway).
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(),
		"GOBIN="+tmp,
		// Pure Go: no C compiler needed, static binaries. VictoriaMetrics
		// then uses its Go zstd instead of cgo's, which is all it changes.
		"CGO_ENABLED=0",
		// The module asks for go 1.26.6: never fetch another toolchain.
		"GOTOOLCHAIN=local",
		"GOFLAGS=-buildvcs=false -trimpath")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, c := range vmCommands {
		if err := os.Rename(filepath.Join(tmp, c), filepath.Join(dir, c)); err != nil {
			return "", err
		}
	}
	if !vmUpToDate(dir) {
		return "", fmt.Errorf("%s: the binaries built are not %s@%s", dir, vmModule, vmVersion)
	}
	return dir, nil
}

// vmUpToDate reports whether dir holds the three commands built from
// vmModule at vmVersion, as their build information says.
func vmUpToDate(dir string) bool {
	for _, c := range vmCommands {
		info, err := buildinfo.ReadFile(filepath.Join(dir, c))
		if err != nil || info.Main.Path != vmModule || info.Main.Version != vmVersion {
			return false
		}
	}
	return true
}

// niced returns a command line that runs bin with args at a lower
// scheduling priority, through nice(1) when there is one: the fleet test
// runs beside other packages' tests under `go test ./...`, whose
// timing-sensitive checks must get the CPU first on a 2-core machine.
// nice(1) sets the priority before exec, so that every thread of the
// program has it (setpriority on a running Go program would reach one
// thread).
func niced(bin string, args ...string) []string {
	nice, err := exec.LookPath("nice")
	if err != nil {
		return append([]string{bin}, args...)
	}
	// 5, not more: at 10 a site's first scrapes starved for minutes on
	// CI's 2 cores while other packages' tests ran.
	return append([]string{nice, "-n", "5", bin}, args...)
}

// startNiced starts a server as start does, through niced.
func startNiced(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	line := niced(bin, args...)
	return start(t, name, line[0], line[1:]...)
}

// scrapeValue sums the samples of metric on a /metrics page whose labels
// contain every one of labels (`name="value"` strings), and reports
// whether there was any. Enough for a program's own gauges and counters,
// without a full parser.
func scrapeValue(u, metric string, labels ...string) (float64, bool, error) {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
		return 0, false, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest == "" || (rest[0] != ' ' && rest[0] != '{')) {
			continue
		}
		matched := true
		for _, l := range labels {
			matched = matched && strings.Contains(rest, l)
		}
		if !matched {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found, sc.Err()
}

// getText returns the body of a GET.
func getText(u string) (string, error) {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(body), err
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
