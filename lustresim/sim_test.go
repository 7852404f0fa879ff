package lustresim

import (
	"bytes"
	"testing"
	"time"
)

func TestDemoOutputLooksRight(t *testing.T) {
	s := New(DemoConfig())
	var buf bytes.Buffer
	if err := s.WriteParams(&buf, time.Unix(1.8e9, 0), "jobid_name", "obdfilter.*.job_stats", "mdt.*.job_stats"); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes", buf.Len())
	t.Logf("%s", buf.Bytes()[:3000])
}
