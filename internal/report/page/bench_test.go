package page

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/report"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// BenchmarkWrite writes the page of the largest corpus log (the report is
// made once, outside the loop: this is the page's own cost).
func BenchmarkWrite(b *testing.B) {
	r := fromLogs(b, report.LogOptions{}, corpus.LargestDarshanLog(b, "apps"))
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
