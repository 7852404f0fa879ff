package report

import (
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// BenchmarkFromLogsLargest is the application's view of the largest
// corpus log (3.6 MB, DXT traces of 8 ranks): what `report` spends on the
// logs.
func BenchmarkFromLogsLargest(b *testing.B) {
	path := corpus.LargestDarshanLog(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig()}); err != nil {
			b.Fatal(err)
		}
	}
}
