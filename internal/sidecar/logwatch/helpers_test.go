package logwatch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// logSpec describes a small log made with darshan.Writer: one job, ranks
// POSIX records of bytes bytes each, and a POSIX heatmap per rank.
type logSpec struct {
	jobID, uid int64
	exe        string
	start, end int64 // seconds
	ranks      int
	bytes      int64
}

func (s logSpec) make(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: s.uid, JobID: s.jobID, StartTime: s.start, EndTime: s.end, NProcs: int64(max(s.ranks, 1)),
		Metadata: "lib_ver=3.5.0\n"}
	w.Exe = s.exe
	w.Mounts = []darshan.Mount{{Path: "/scratch", Type: "lustre"}}
	l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	idx := func(n string) int { return l.IntIndex(n) }
	for r := range max(s.ranks, 1) {
		id := w.AddName(filepath.Join("/scratch/job", string(rune('a'+r%26)), "out.dat"))
		c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: int64(r), ID: id}, Layout: l,
			Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
		c.Ints[idx("POSIX_WRITES")] = 4
		c.Ints[idx("POSIX_BYTES_WRITTEN")] = s.bytes
		c.Ints[idx("POSIX_READS")] = 2
		c.Ints[idx("POSIX_BYTES_READ")] = s.bytes / 2
		c.Ints[idx("POSIX_SEQ_WRITES")] = 3
		c.Floats[l.FloatIndex("POSIX_F_WRITE_TIME")] = 0.5
		c.Floats[l.FloatIndex("POSIX_F_READ_TIME")] = 0.25
		if err := w.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	hid := w.AddName("heatmap:POSIX")
	for r := range max(s.ranks, 1) {
		h := &darshan.HeatmapRecord{Key: darshan.Key{Module: darshan.Heatmap, Rank: int64(r), ID: hid}, BinWidth: 0.5,
			ReadBins: []int64{s.bytes / 2, 0, 0}, WriteBins: []int64{0, s.bytes, 0}}
		if err := w.Write(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// clock is a settable Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func startSidecar(t *testing.T, cfg Config) *Sidecar {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func syncNow(t *testing.T, s *Sidecar) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return s.Snapshot()
}

// jobsByID returns the views by jobid.
func jobsByID(snap Snapshot) map[string]*JobView {
	out := map[string]*JobView{}
	for _, v := range snap.Jobs {
		out[v.JobID] = v
	}
	return out
}

// corruptPOSIX inverts bytes in the middle of the log's compressed POSIX
// region, so that it does not inflate.
func corruptPOSIX(t testing.TB, data []byte) []byte {
	t.Helper()
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "x")
	if err != nil {
		t.Fatal(err)
	}
	r := l.Header.ModuleRegions[darshan.POSIX]
	out := bytes.Clone(data)
	for i := r.Offset + r.Length/2; i < r.Offset+r.Length/2+4; i++ {
		out[i] ^= 0xff
	}
	return out
}
