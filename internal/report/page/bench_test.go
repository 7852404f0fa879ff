package page

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// largestLog returns the largest Darshan log of the corpus' real
// applications.
func largestLog(b *testing.B) string {
	dir := corpus.Dir(b, "darshan", "apps")
	logs, _ := filepath.Glob(filepath.Join(dir, "*.darshan"))
	best, size := "", int64(-1)
	for _, p := range logs {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		b.Skip("no Darshan log in the corpus: skipping")
	}
	return best
}

// BenchmarkWrite writes the page of the largest corpus log (the report is
// made once, outside the loop: this is the page's own cost).
func BenchmarkWrite(b *testing.B) {
	r := fromLogs(b, report.LogOptions{}, largestLog(b))
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteHeatmap writes the page of the corpus log with the largest
// heatmap (512 ranks).
func BenchmarkWriteHeatmap(b *testing.B) {
	r := fromLogs(b, report.LogOptions{}, filepath.Join(corpus.Dir(b, "darshan", "apps"), heatmapLog))
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
