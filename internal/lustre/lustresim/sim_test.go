package lustresim

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// entries parses an output into target → raw id → write_bytes sum and
// start time.
type parsed map[string]map[string][2]float64

type collect struct {
	p      parsed
	target string
	t      *testing.T
}

func (c *collect) Job(js *lctl.JobStat) {
	m := c.p[c.target]
	if _, dup := m[string(js.JobID)]; dup {
		c.t.Errorf("%s: job_id %q printed twice", c.target, js.JobID)
	}
	var sum float64
	for _, op := range js.Ops {
		if op.Op == "write_bytes" {
			sum = float64(op.Sum)
		}
	}
	m[string(js.JobID)] = [2]float64{sum, js.StartTime}
	if js.Malformed != 0 {
		c.t.Errorf("malformed lines in simulator output for %q", js.JobID)
	}
}

func (c *collect) End(bool, lctl.SectionStats) {}

func parse(t *testing.T, s *Sim, at time.Time) parsed {
	t.Helper()
	var buf bytes.Buffer
	if err := s.WriteParams(&buf, at, "obdfilter.*.job_stats", "mdt.*.job_stats"); err != nil {
		t.Fatal(err)
	}
	p := parsed{}
	err := lctl.Scan(&buf, "", func(param string) lctl.SectionParser {
		p[param] = map[string][2]float64{}
		return lctl.NewJobStatsParser(&collect{p: p, target: param, t: t})
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The demo has a few hundred jobs at any time, on 2 MDTs and 8 OSTs.
func TestDemoPopulation(t *testing.T) {
	s := New(DemoConfig())
	for _, at := range []float64{1.8e9, 1.8e9 + 3600, 1.9e9} {
		n := 0
		for _, j := range s.jobsAt(at) {
			if j.Arrive <= at && at < j.Leave {
				n++
			}
		}
		if n < 200 || n > 400 {
			t.Errorf("at %.0f: %d jobs present, want about 300", at, n)
		}
	}
	p := parse(t, s, time.Unix(1.8e9, 0))
	if len(p) != 10 {
		t.Errorf("%d targets, want 10", len(p))
	}
}

// Between two outputs, an entry's counters only grow, unless its start
// time changed (the entry was cleaned up and made again); and restarts do
// happen, as jobs go idle for longer than the cleanup interval.
func TestCountersGrowOrRestart(t *testing.T) {
	s := New(DemoConfig())
	prev := parse(t, s, time.Unix(1.8e9, 0))
	restarts, vanished, grew := 0, 0, 0
	for step := 1; step <= 40; step++ {
		cur := parse(t, s, time.Unix(1.8e9+int64(step)*15, 0))
		for target, m := range prev {
			for id, v := range m {
				w, ok := cur[target][id]
				switch {
				case !ok:
					vanished++
				case w[1] != v[1]:
					restarts++
				case w[0] < v[0]:
					t.Errorf("%s %q: write_bytes went from %v to %v with the same start time", target, id, v[0], w[0])
				case w[0] > v[0]:
					grew++
				}
			}
		}
		prev = cur
	}
	if restarts == 0 || vanished == 0 || grew == 0 {
		t.Errorf("restarts %d, vanished %d, grew %d: the demo should show all three", restarts, vanished, grew)
	}
}

func TestBenchTextSize(t *testing.T) {
	text := JobStatsText(1000, 0)
	entries := bytes.Count(text, []byte("- job_id:"))
	if entries != 1000 {
		t.Fatalf("%d entries for 1000 jobs", entries)
	}
	t.Logf("%d bytes per job", len(text)/entries)
}

// GetParam behaves as lctl: the selected parameters in pattern order, and
// a non-zero exit for a pattern that matches nothing.
func TestGetParam(t *testing.T) {
	s := New(Config{OSTs: 2, Jobs: 10, Static: true, FSName: "x"})
	out, err := s.GetParam(context.Background(), []string{"jobid_name", "obdfilter.*.job_stats", "mdt.*.job_stats"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(out)
	var exit *toolrun.ExitError
	if err := out.Close(); err == nil || !asExit(err, &exit) || exit.Code != 2 {
		t.Errorf("close: %v, want an exit error for mdt.*", err)
	}
	if !bytes.HasPrefix(data, []byte("jobid_name=%j:%u:%H\nobdfilter.x-OST0000.job_stats=\njob_stats:\n")) || !bytes.Contains(data, []byte("obdfilter.x-OST0001.job_stats=")) {
		t.Errorf("output starts %q", data[:min(len(data), 200)])
	}
}

func asExit(err error, target **toolrun.ExitError) bool {
	e, ok := err.(*toolrun.ExitError)
	*target = e
	return ok
}

// No two entries of a target share a raw job_id, at any time: Lustre
// keys its entries by job_id. (Processes outside jobs once repeated their
// uid every two epochs, and two of them printed one id.)
func TestRawIDsUnique(t *testing.T) {
	s := New(Config{Seed: 11, FSName: "u", MDTs: 1, OSTs: 2, Jobs: 400})
	steps := 36 // six hours: uids of epochs ten apart meet
	if testing.Short() {
		steps = 12
	}
	for step := range steps {
		parse(t, s, time.Unix(1.8e9+int64(step)*600, 0)) // errors on a repeated id
	}
}
