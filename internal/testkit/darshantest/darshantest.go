// Package darshantest makes small, realistic Darshan logs with
// darshan.Writer for the tests and benchmarks of the Darshan sidecar: a job
// whose ranks each write a file of their own and read a shared one, with
// STDIO output and a POSIX heatmap per rank.
package darshantest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Job describes a log.
type Job struct {
	JobID, UID int64
	Exe        string    // command line
	End        time.Time // the job's end; it ran for a minute
	Ranks      int       // at least 1
	Bytes      int64     // scale of the I/O: rank r writes (r+1)·Bytes
}

// Log returns the log's bytes.
func (j Job) Log() ([]byte, error) {
	ranks := max(j.Ranks, 1)
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: j.UID, JobID: j.JobID, StartTime: j.End.Unix() - 60, EndTime: j.End.Unix(),
		EndNsec: 500000000, NProcs: int64(ranks), Metadata: "lib_ver=3.5.0\n"}
	w.Exe = j.Exe
	w.Mounts = []darshan.Mount{{Path: "/scratch", Type: "lustre"}}
	w.RecordsPerStream = 1 // one zlib stream per rank, as the MPI runtime writes
	pl := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	posix := func(rank int64, name string, set map[string]float64) error {
		c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: rank, ID: w.AddName(name)}, Layout: pl,
			Ints: make([]int64, len(pl.Ints)), Floats: make([]float64, len(pl.Floats))}
		for n, v := range set {
			if i := pl.IntIndex(n); i >= 0 {
				c.Ints[i] = int64(v)
			} else if i := pl.FloatIndex(n); i >= 0 {
				c.Floats[i] = v
			} else {
				return fmt.Errorf("no POSIX counter %s", n)
			}
		}
		return w.Write(c)
	}
	b := float64(j.Bytes)
	for r := range ranks {
		if err := posix(int64(r), fmt.Sprintf("/scratch/secret/rank%05d.dat", r), map[string]float64{
			"POSIX_OPENS": 1, "POSIX_WRITES": 8, "POSIX_BYTES_WRITTEN": b * float64(r+1), "POSIX_SEQ_WRITES": 7,
			"POSIX_CONSEC_WRITES": 6, "POSIX_SIZE_WRITE_100K_1M": 8, "POSIX_F_WRITE_TIME": 0.5, "POSIX_F_META_TIME": 0.125,
			"POSIX_MAX_BYTE_WRITTEN": b*float64(r+1) - 1}); err != nil {
			return nil, err
		}
	}
	if err := posix(-1, "/scratch/secret/shared.h5", map[string]float64{
		"POSIX_OPENS": float64(ranks), "POSIX_READS": 16, "POSIX_BYTES_READ": 16 * b, "POSIX_SEQ_READS": 16,
		"POSIX_SIZE_READ_1M_4M": 16, "POSIX_F_READ_TIME": 2, "POSIX_FASTEST_RANK_BYTES": b, "POSIX_SLOWEST_RANK_BYTES": 3 * b,
		"POSIX_F_VARIANCE_RANK_BYTES": 12, "POSIX_MAX_BYTE_READ": 4*b - 1, "POSIX_FILE_NOT_ALIGNED": 2}); err != nil {
		return nil, err
	}
	sl := darshan.LayoutOf(darshan.STDIO, darshan.STDIO.CurrentVersion())
	st := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.STDIO, Rank: 0, ID: w.AddName("/home/alice/run.log")}, Layout: sl,
		Ints: make([]int64, len(sl.Ints)), Floats: make([]float64, len(sl.Floats))}
	st.Ints[sl.IntIndex("STDIO_WRITES")] = 10
	st.Ints[sl.IntIndex("STDIO_BYTES_WRITTEN")] = 1000
	if err := w.Write(st); err != nil {
		return nil, err
	}
	hid := w.AddName("heatmap:POSIX")
	for r := range ranks {
		h := &darshan.HeatmapRecord{Key: darshan.Key{Module: darshan.Heatmap, Rank: int64(r), ID: hid}, BinWidth: 0.5,
			ReadBins: []int64{j.Bytes, 0, 0, 0}, WriteBins: []int64{0, j.Bytes, j.Bytes, 0}}
		if err := w.Write(h); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CorruptPOSIX returns a copy of a log with bytes inverted in the middle of
// its compressed POSIX region, so that the region does not inflate.
func CorruptPOSIX(data []byte) ([]byte, error) {
	l, err := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "log")
	if err != nil {
		return nil, err
	}
	r := l.Header.ModuleRegions[darshan.POSIX]
	out := bytes.Clone(data)
	for i := r.Offset + r.Length/2; i < r.Offset+r.Length/2+4 && i < uint64(len(out)); i++ {
		out[i] ^= 0xff
	}
	return out, nil
}
