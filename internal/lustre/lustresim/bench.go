package lustresim

import (
	"bytes"
	"time"
)

// BenchTime is the moment benchmark outputs are printed at.
var BenchTime = time.Unix(1_700_003_600, 0)

// JobStatsText returns the get_param output of one OST holding n jobs, all
// active, at BenchTime plus offset: the input of the parse benchmarks.
// Outputs at two offsets differ as a server's do between two scrapes.
func JobStatsText(n int, offset time.Duration) []byte {
	s := New(Config{Seed: 7, FSName: "bench", OSTs: 1, Jobs: n, Static: true})
	var buf bytes.Buffer
	buf.Grow(n * 2400)
	s.WriteParams(&buf, BenchTime.Add(offset), "jobid_name", "obdfilter.*.job_stats")
	return buf.Bytes()
}
