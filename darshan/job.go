package darshan

import (
	"io"
	"strings"
)

const (
	jobRecordSize = 4096 // job struct + exe and mount string, as darshan-util reads it
	metadataLen   = 1024
	jobSize341    = 7*8 + metadataLen // with start/end nanoseconds
	jobSize300    = 5*8 + metadataLen
)

// Job is the job-level data of a log.
type Job struct {
	UID       int64
	StartTime int64 // seconds since the epoch
	StartNsec int64 // 0 before format 3.41
	EndTime   int64
	EndNsec   int64
	NProcs    int64
	JobID     int64
	// Metadata holds "key=value" lines separated by newlines (lib_ver=…,
	// MPI-IO hints h=…), as stored.
	Metadata string
}

// MetadataPairs returns the metadata lines that have a '=' split at the
// first '=', in stored order, skipping empty lines — the lines darshan-parser
// prints as "# metadata: key = value".
func (j *Job) MetadataPairs() [][2]string {
	var out [][2]string
	for line := range strings.SplitSeq(j.Metadata, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// LibVersion returns the darshan-runtime version from the metadata
// (lib_ver), or "".
func (j *Job) LibVersion() string {
	for _, kv := range j.MetadataPairs() {
		if kv[0] == "lib_ver" {
			return kv[1]
		}
	}
	return ""
}

// Mount is an entry of the mount table recorded with the job.
type Mount struct {
	Path string
	Type string
}

// RunTime returns the job's run time in seconds as darshan-util computes
// it: with nanoseconds from format 3.41 on, and end - start + 1 before.
func (l *Log) RunTime() float64 {
	j := &l.Job
	if l.Header.Major > 3 || l.Header.Minor >= 41 {
		return (float64(j.EndTime) + float64(j.EndNsec)/1e9) - (float64(j.StartTime) + float64(j.StartNsec)/1e9)
	}
	return float64(j.EndTime - j.StartTime + 1)
}

// readJob reads the job region: the job struct, then a NUL-terminated string
// of the command line followed by one "\n<fs type>\t<mount point>" per mount.
func (l *Log) readJob() error {
	h := &l.Header
	rr := l.openRegion("job", slotJob, h.JobRegion)
	if h.JobRegion.Length > uint64(l.size) { // the end computed by jobRegion lies before the start
		return rr.fail(causef(ErrCorrupt, "the next region starts inside the %d-byte header", h.Size))
	}
	b, err := rr.upTo(jobRecordSize)
	defer rr.release()
	size := jobSize300
	if h.Minor >= 41 {
		size = jobSize341
	}
	if len(b) < size {
		if err == nil {
			err = causef(ErrTruncated, "job data has %d bytes, the job record needs %d", len(b), size)
		}
		return rr.fail(err)
	}
	buf := make([]byte, jobRecordSize) // zero-filled like darshan-util's buffer
	copy(buf, b)
	big := h.BigEndian
	get := func(i int) int64 { return int64(getUint64(buf[8*i:], big)) }
	j := &l.Job
	if h.Minor >= 41 {
		j.UID, j.StartTime, j.StartNsec, j.EndTime, j.EndNsec, j.NProcs, j.JobID = get(0), get(1), get(2), get(3), get(4), get(5), get(6)
	} else {
		j.UID, j.StartTime, j.EndTime, j.NProcs, j.JobID = get(0), get(1), get(2), get(3), get(4)
	}
	meta := buf[size-metadataLen : size]
	j.Metadata = cString(meta)
	l.ExeMounts = cString(buf[size:])
	exe, mounts, _ := strings.Cut(l.ExeMounts, "\n")
	l.Exe = exe
	if mounts != "" {
		for line := range strings.SplitSeq(mounts, "\n") {
			typ, path, _ := strings.Cut(line, "\t")
			l.Mounts = append(l.Mounts, Mount{Path: path, Type: typ})
		}
	}
	if err != nil {
		return rr.fail(err)
	}
	return nil
}

// upTo returns up to n bytes of the region; err is set when the data ended
// early by damage rather than by its clean end.
func (rr *regionReader) upTo(n int) ([]byte, error) {
	b, err := rr.next(n)
	if err == nil {
		return b, nil
	}
	if err == io.EOF {
		return nil, nil
	}
	if len(b) > 0 && rr.err == io.EOF {
		return b, nil // the region is simply shorter than n
	}
	return b, err
}
