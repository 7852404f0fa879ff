// Package promtool runs Prometheus' promtool on the exporter's output in
// tests. Under CI (CI=true) promtool must be installed (Debian's prometheus
// package, which .ci/run installs); elsewhere a missing promtool skips the
// check with a message.
package promtool

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// CheckMetrics runs `promtool check metrics` on a scrape.
func CheckMetrics(tb testing.TB, text string) {
	tb.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("promtool is required under CI (apt-get install prometheus)")
		}
		tb.Log("promtool not installed (apt-get install prometheus): skipping promtool check metrics")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
