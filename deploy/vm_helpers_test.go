package deploy

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// victoriaMetrics is the VictoriaMetrics release the fleet test runs,
// built from its Go module. A first build takes one to four minutes on 2
// cores (compiling about a minute, downloading the modules the rest). Built
// without cgo, VictoriaMetrics uses its Go zstd instead of cgo's, which is
// all it changes.
var victoriaMetrics = &goTools{
	name: "VictoriaMetrics", dirName: "victoriametrics", module: "github.com/VictoriaMetrics/VictoriaMetrics", version: "v1.150.0",
	pkgDir: "app", commands: []string{"victoria-metrics", "vmagent", "vmalert"},
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
