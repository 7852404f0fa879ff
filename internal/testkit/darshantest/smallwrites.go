package darshantest

import (
	"bytes"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// SmallWrites returns a one-rank log (uid 1000) of n 4 KiB POSIX writes to
// file, sequential and aligned, the job ending at end after a minute: the
// insights' P06 (small writes) fires past 1000 of them.
func SmallWrites(jobID int64, end time.Time, n int64, exe, file string) ([]byte, error) {
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	w.Job = darshan.Job{UID: 1000, JobID: jobID, StartTime: end.Unix() - 60, EndTime: end.Unix(), NProcs: 1, Metadata: "lib_ver=3.5.0\n"}
	w.Exe = exe
	w.Mounts = []darshan.Mount{{Path: "/scratch", Type: "lustre"}}
	l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: 0, ID: w.AddName(file)},
		Layout: l, Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
	for k, v := range map[string]int64{"POSIX_OPENS": 1, "POSIX_WRITES": n, "POSIX_BYTES_WRITTEN": n * 4096,
		"POSIX_SIZE_WRITE_1K_10K": n, "POSIX_SEQ_WRITES": n, "POSIX_CONSEC_WRITES": n,
		"POSIX_MAX_BYTE_WRITTEN": n*4096 - 1, "POSIX_FILE_ALIGNMENT": 4096, "POSIX_MEM_ALIGNMENT": 8} {
		c.Ints[l.IntIndex(k)] = v
	}
	c.Floats[l.FloatIndex("POSIX_F_WRITE_TIME")] = 1
	if err := w.Write(c); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
