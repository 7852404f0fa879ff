package page

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// TestCorpusPages draws the page of every readable corpus log (release
// logs of every Darshan version, real applications, generated ones, DXT
// and HEATMAP): each has every section and chart, well-formed, nothing
// external. Logs report.FromLogs refuses are not the page's business.
func TestCorpusPages(t *testing.T) {
	root := corpus.Dir(t, "darshan")
	var logs []string
	for _, sub := range []string{"release", "apps", "generated"} {
		m, _ := filepath.Glob(filepath.Join(root, sub, "*.darshan"))
		logs = append(logs, m...)
	}
	if len(logs) == 0 {
		t.Skip("no Darshan log in the corpus: skipping")
	}
	drawn := 0
	for _, p := range logs {
		if fi, err := os.Stat(p); err != nil || testing.Short() && fi.Size() > 1<<20 {
			continue
		}
		job, app, err := report.FromLogs([]string{p}, report.LogOptions{Insights: insights.DefaultConfig()})
		if err != nil {
			t.Logf("%s: not drawn: %v", filepath.Base(p), err)
			continue
		}
		r := &report.Report{Schema: report.Schema, Job: job, App: app}
		t.Run(filepath.Base(p), func(t *testing.T) {
			checkPage(t, r, render(t, r))
		})
		drawn++
	}
	if drawn == 0 {
		t.Fatal("no corpus log could be read")
	}
}

// TestHeatScale: the colour of a cell rises with its bytes, from the
// lightest for the smallest non-zero cell to the darkest for the largest.
func TestHeatScale(t *testing.T) {
	sc := logScale{lo: 0, span: 30} // 1 B to 1 GiB, about
	prev := 0
	for v := int64(1); v < 1<<31; v *= 3 {
		l := sc.level(v)
		if l < prev || l < 1 || l > 8 {
			t.Fatalf("level(%d) = %d after %d", v, l, prev)
		}
		prev = l
	}
	if sc.level(0) != 0 || sc.level(1) != 1 || sc.level(1<<43) != 8 {
		t.Errorf("levels of 0, 1 B and past the top: %d %d %d", sc.level(0), sc.level(1), sc.level(1<<43))
	}
	if (logScale{}).level(5) != 8 {
		t.Error("all cells equal: not the darkest")
	}
}
