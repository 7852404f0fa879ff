// Package deploy holds no code: its tests prove the assets of deploy/
// (Prometheus configuration and rules, Alertmanager configuration, Grafana
// dashboards, systemd units) with the real tools, and end to end against
// the exporter's demo.
package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// installHint is what a skipped test says.
const installHint = "apt-get install prometheus prometheus-alertmanager"

func TestMain(m *testing.M) { os.Exit(exportertest.Main(m)) }

// underCI reports whether the tests run in CI, where every tool must be
// present (.ci/run installs them).
func underCI() bool { return os.Getenv("CI") == "true" }

// needTool returns the path of the first of names found in $PATH. Missing:
// under CI the test fails, elsewhere it is skipped with how to install it.
func needTool(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if underCI() {
		t.Fatalf("%s not found, and CI=true requires it (%s)", strings.Join(names, " or "), installHint)
	}
	t.Skipf("%s not installed: skipping (%s)", strings.Join(names, " or "), installHint)
	return ""
}

// exporterBinary builds cmd/hpcio_exporter once per test run.
func exporterBinary(t testing.TB) string { return exportertest.Binary(t) }

// run runs a tool and returns its combined output.
func run(t testing.TB, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// freePort returns a loopback address nothing listens on now.
func freePort(t testing.TB) string { return exportertest.FreeAddress(t) }

// process is a server the test started (Prometheus, Alertmanager,
// VictoriaMetrics, the exporter); it is stopped when the test ends.
type process = exportertest.Process

// start starts a server in its own process group; it is stopped when the
// test ends (SIGTERM, then SIGKILL to its group).
func start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	return exportertest.Start(t, name, bin, args...)
}

// waitHTTP waits until GET url answers 200.
func waitHTTP(t *testing.T, p *process, u string, within time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(within)
	for {
		resp, err := client.Get(u)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if p.Exited() || time.Now().After(deadline) {
			t.Fatalf("%s does not answer %s (%v)\n%s", p.Name, u, err, p.Tail(25))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// getJSON decodes a GET's JSON answer into v.
func getJSON(u string, v any) error {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s: %.300s", u, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

// promAPI is a small client of Prometheus' HTTP API.
type promAPI struct{ base string }

// sample is one series of a query result: an instant value or the values
// of a range.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
	Values [][]any           `json:"values"`
}

type queryResponse struct {
	Status    string `json:"status"`
	Error     string `json:"error"`
	ErrorType string `json:"errorType"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// query evaluates expr at time at (the server's now when zero). Scalars and
// strings come back as one sample without labels.
func (p promAPI) query(expr string, at time.Time) ([]sample, error) {
	q := url.Values{"query": {expr}}
	if !at.IsZero() {
		q.Set("time", fmt.Sprintf("%.3f", float64(at.UnixMilli())/1000))
	}
	return p.do("/api/v1/query?" + q.Encode())
}

// queryRange evaluates expr over [from, to] every step.
func (p promAPI) queryRange(expr string, from, to time.Time, step time.Duration) ([]sample, error) {
	q := url.Values{"query": {expr},
		"start": {fmt.Sprintf("%.3f", float64(from.UnixMilli())/1000)},
		"end":   {fmt.Sprintf("%.3f", float64(to.UnixMilli())/1000)},
		"step":  {fmt.Sprint(step.Seconds())}}
	return p.do("/api/v1/query_range?" + q.Encode())
}

func (p promAPI) do(path string) ([]sample, error) {
	var r queryResponse
	if err := getJSON(p.base+path, &r); err != nil {
		// Prometheus answers 400/422 with the error in the JSON body.
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	switch r.Data.ResultType {
	case "vector", "matrix":
		var s []sample
		err := json.Unmarshal(r.Data.Result, &s)
		return s, err
	case "scalar", "string":
		var v []any
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return nil, err
		}
		return []sample{{Value: v}}, nil
	}
	return nil, fmt.Errorf("result type %q", r.Data.ResultType)
}

// value reads the float of an instant sample.
func (s sample) value() float64 {
	if len(s.Value) != 2 {
		return 0
	}
	var f float64
	fmt.Sscan(fmt.Sprint(s.Value[1]), &f)
	return f
}

// readFile reads a file of the repository or fails.
func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// globFiles returns the files matching pattern, at least one.
func globFiles(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", pattern, err)
	}
	return files
}
