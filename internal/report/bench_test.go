package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// largestCorpusLog returns the largest Darshan log of the shared corpus.
func largestCorpusLog(b *testing.B) string {
	logs, _ := filepath.Glob(filepath.Join(corpus.Dir(b, "darshan"), "*", "*.darshan"))
	var best string
	var size int64
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		b.Skip("no corpus log")
	}
	return best
}

// BenchmarkFromLogsLargest is the application's view of the largest
// corpus log (3.6 MB, DXT traces of 8 ranks): what `report` spends on the
// logs.
func BenchmarkFromLogsLargest(b *testing.B) {
	path := largestCorpusLog(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig()}); err != nil {
			b.Fatal(err)
		}
	}
}
