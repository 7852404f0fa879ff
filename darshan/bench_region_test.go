package darshan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/cpuclock"
)

// benchRegion returns the compressed DXT_MPIIO region of the largest corpus log.
func benchRegion(b *testing.B) []byte {
	path := filepath.Join(corpus.Dir(b, "darshan"), "apps", "jeanbez_8_benchmark_parallel_id45195555_8-6-50011-11681279140261054765_1628283217.darshan")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := l.Header.ModuleRegions[DXTMPIIO]
	return data[r.Offset : r.Offset+r.Length]
}

// cpuPerOp starts measuring process CPU time; the returned function reports
// it per operation (call it deferred, after the b.Loop loop).
func cpuPerOp(b *testing.B) func() {
	report := cpuclock.Start(b)
	return func() { report(b.N) }
}
