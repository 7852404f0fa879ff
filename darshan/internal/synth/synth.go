// Package synth makes synthetic Darshan logs with darshan.Writer, for
// benchmarks and tests that need more data than the fixtures hold.
package synth

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// Large returns a log of a job of ranks ranks with records records in
// all: half POSIX, a fifth MPI-IO, a fifth STDIO, one HEATMAP record per
// rank and DXT_POSIX traces (8 segments each) for the rest. Each rank has
// its own files and its own zlib stream per module, as the MPI runtime
// writes them.
func Large(records, ranks int) ([]byte, error) {
	r := rand.New(rand.NewPCG(uint64(records), uint64(ranks)))
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: 1000, StartTime: 1700000000, EndTime: 1700003600, NProcs: int64(ranks), JobID: 4242,
		Metadata: "lib_ver=3.5.0\n"}
	w.Exe = "/opt/app/bin/solver --steps 1000"
	w.Mounts = []darshan.Mount{{Path: "/", Type: "ext4"}, {Path: "/scratch", Type: "lustre"}}

	counts := map[darshan.ModuleID]int{
		darshan.POSIX: records / 2, darshan.MPIIO: records / 5, darshan.STDIO: records / 5, darshan.Heatmap: ranks,
	}
	counts[darshan.DXTPOSIX] = records - counts[darshan.POSIX] - counts[darshan.MPIIO] - counts[darshan.STDIO] - ranks
	w.RecordsPerStream = max(1, counts[darshan.POSIX]/ranks)

	names := map[string]uint64{}
	name := func(rank, file int) uint64 {
		n := fmt.Sprintf("/scratch/job4242/rank%05d/file%04d.dat", rank, file)
		if id, ok := names[n]; ok {
			return id
		}
		id := w.AddName(n)
		names[n] = id
		return id
	}
	for _, m := range []darshan.ModuleID{darshan.POSIX, darshan.MPIIO, darshan.STDIO, darshan.DXTPOSIX, darshan.Heatmap} {
		n := counts[m]
		for i := range n {
			rank := i * ranks / max(n, 1)
			key := darshan.Key{Module: m, Rank: int64(rank), ID: name(rank, i%max(1, n/ranks))}
			var rec darshan.Record
			switch m {
			case darshan.Heatmap:
				h := &darshan.HeatmapRecord{Key: key, BinWidth: 0.1, ReadBins: make([]int64, 100), WriteBins: make([]int64, 100)}
				for b := range h.ReadBins {
					h.ReadBins[b] = int64(r.IntN(3)) << 20
					h.WriteBins[b] = int64(r.IntN(3)) << 20
				}
				rec = h
			case darshan.DXTPOSIX:
				d := &darshan.DXTRecord{Key: key, Hostname: fmt.Sprintf("nid%05d", rank/64), HasThreads: true}
				t := r.Float64()
				for range 8 {
					s := darshan.Segment{Offset: int64(r.IntN(1 << 30)), Length: 1 << 20, Start: t, End: t + 0.01, PthreadID: 140000000000000}
					t += 0.02
					d.Writes = append(d.Writes, s)
				}
				rec = d
			default:
				l := darshan.LayoutOf(m, m.CurrentVersion())
				c := &darshan.CounterRecord{Key: key, Layout: l, Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
				for k := range c.Ints {
					if r.IntN(3) == 0 {
						c.Ints[k] = int64(r.IntN(1 << 20))
					}
				}
				for k := range c.Floats {
					c.Floats[k] = r.Float64() * 10
				}
				rec = c
			}
			if err := w.Write(rec); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// The corpus logs the benchmarks read: the largest (DXT traces of 1,024
// ranks) and the one darshan-parser is slowest on (HEATMAP).
var corpusLogs = map[string]string{
	"jeanbez": "apps/jeanbez_8_benchmark_parallel_id45195555_8-6-50011-11681279140261054765_1628283217.darshan",
	"e3sm":    "apps/e3sm_io_heatmap_only.darshan",
}

var large100k = sync.OnceValues(func() ([]byte, error) { return Large(100000, 1000) })

// BenchPath returns the path of the corpus log a benchmark names
// ("jeanbez", "e3sm"), skipping the benchmark without the corpus.
func BenchPath(tb testing.TB, name string) string {
	rel, ok := corpusLogs[name]
	if !ok {
		tb.Fatalf("no benchmark log %q", name)
	}
	return filepath.Join(corpus.Dir(tb, "darshan"), rel)
}

// BenchLog returns a benchmark log in memory: "synthetic-100k" (100,000
// records of 1,000 ranks, made once) or a corpus log of BenchPath.
func BenchLog(tb testing.TB, name string) []byte {
	if name == "synthetic-100k" {
		data, err := large100k()
		if err != nil {
			tb.Fatal(err)
		}
		return data
	}
	data, err := os.ReadFile(BenchPath(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
