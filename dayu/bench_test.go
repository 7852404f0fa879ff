package dayu

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// BenchmarkParseLargestCorpusFile parses the largest corpus file, the 9-stage
// run_trackstats VOL stats (306 kB, 2023 format).
func BenchmarkDayuParseLargestCorpusFile(b *testing.B) {
	benchParse(b, filepath.Join(corpus.Dir(b, "dayu"), "wrf-9stage-1p9f9s", "168881_vol-data-stat-dl.yaml"))
}

// BenchmarkParseLargestVFD parses the largest VFD file (182 kB of page ranges).
func BenchmarkDayuParseLargestVFD(b *testing.B) {
	benchParse(b, filepath.Join(corpus.Dir(b, "dayu"), "wrf-9stage-1p9f9s", "168881_vfd-data-stat-dl.yaml"))
}

// BenchmarkParseJSON parses the corpus's JSON VFD file.
func BenchmarkDayuParseJSON(b *testing.B) {
	benchParse(b, filepath.Join(corpus.Dir(b, "dayu"), "json-format-vist", "271485-vfd_data_stat.json"))
}

func benchParse(b *testing.B, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseStats(filepath.Base(path), data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadNineStageWorkflow reads, parses and assembles the 9-stage
// corpus directory (13 files, 1.9 MB).
func BenchmarkDayuLoadNineStageWorkflow(b *testing.B) {
	dir := filepath.Join(corpus.Dir(b, "dayu"), "wrf-9stage-1p9f9s")
	b.ReportAllocs()
	for b.Loop() {
		if _, failed, err := LoadDir(dir, Limits{KeepRanges: true}); err != nil || len(failed) > 0 {
			b.Fatal(err, failed)
		}
	}
}
