package jobstats

import (
	"testing"
	"unsafe"

	"github.com/hpcio/hpcio_exporter/jobid"
)

// A tracker keeps a raw series per job_id printed: at a hundred thousand
// jobs, 16 bytes more per series are 1.6 MB more heap. 96 bytes is a size
// class of Go's allocator; one byte more costs 16.
func TestSeriesSize(t *testing.T) {
	if n := unsafe.Sizeof(series{}); n > 96 {
		t.Errorf("a raw series takes %d bytes, more than 96", n)
	}
	// seriesMeta holds an outcome plus one.
	for o := range jobid.Outcome(255) {
		if m := resolvedAs(o); !m.resolved() || m.outcome() != o {
			t.Fatalf("outcome %d does not survive seriesMeta", o)
		}
	}
}
