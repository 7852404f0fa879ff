package lustre

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/jobstats"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// texts prints its texts in turn; a text ending in "\x00" is cut there, as
// by a killed lctl.
type texts struct {
	list     []string
	n        atomic.Int32
	patterns []string
}

func (s *texts) GetParam(_ context.Context, patterns []string) (io.ReadCloser, error) {
	s.patterns = patterns
	text := s.list[min(int(s.n.Add(1))-1, len(s.list)-1)]
	if cut, ok := strings.CutSuffix(text, "\x00"); ok {
		return &cutOutput{Reader: strings.NewReader(cut)}, nil
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

type cutOutput struct{ io.Reader }

func (c *cutOutput) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	if err == io.EOF {
		err = toolrun.ErrKilled
	}
	return n, err
}

func (c *cutOutput) Close() error { return toolrun.ErrKilled }

func newSource(t *testing.T, list ...string) (*Source, *texts) {
	t.Helper()
	src := &texts{list: list}
	s := New(Config{Lctl: src, Bounds: toolrun.Bounds{Timeout: time.Minute}})
	s.Add(Request{Owner: "memory", Kind: Values, Patterns: []string{"memused", "memused_max"}})
	s.Add(Request{Owner: "ost_stats", Kind: Stats, Patterns: []string{"obdfilter.*.stats"}})
	s.Add(Request{Owner: "health", Kind: Health, Patterns: []string{"health_check"}})
	return s, src
}

const statsText = `obdfilter.fs-OST0000.stats=
snapshot_time             1716295737.287969347 secs.nsecs
write_bytes               5 samples [bytes] 1 4096 8192
write_bytes               9 samples [bytes] 1 4096 9999
punch                     3 samples [usecs] 1 5 9
`

// Each parameter goes to the request that asked for it, parsed by its
// kind; a value printed twice counts once; what cannot be read is counted
// against its owner and dropped alone.
func TestSnapshotRouting(t *testing.T) {
	s, src := newSource(t, "memused=12\nmemused_max=not supported\nmemused=99\nhealth_check=healthy\n"+statsText)
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(src.patterns, " "); got != "memused memused_max obdfilter.*.stats health_check" {
		t.Errorf("patterns %q", got)
	}
	if len(snap.Values) != 1 || snap.Values[0] != (Param[float64]{"memused", "memory", 12}) {
		t.Errorf("values %+v", snap.Values)
	}
	if snap.BadInput["memory"] != 1 || snap.BadInput["ost_stats"] != 0 {
		t.Errorf("bad input %v", snap.BadInput)
	}
	if len(snap.Stats) != 1 || len(snap.Stats[0].V.Stats) != 2 || snap.Stats[0].V.Stats[0].Sum != 8192 || snap.Stats[0].Owner != "ost_stats" {
		t.Errorf("stats %+v", snap.Stats)
	}
	if len(snap.Health) != 1 || !snap.Health[0].V {
		t.Errorf("health %+v", snap.Health)
	}
	if snap.Result != toolrun.OK || snap.Runs[toolrun.OK] != 1 {
		t.Errorf("result %v, runs %v", snap.Result, snap.Runs)
	}
}

// A run cut short keeps what it read whole and leaves out the section it
// was in; the snapshots of earlier runs are left as they were.
func TestSnapshotCutAndImmutable(t *testing.T) {
	s, _ := newSource(t, "memused=12\n"+statsText, "memused=13\n"+statsText[:len(statsText)-30]+"\x00")
	first, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	keep := first.Stats[0].V.Stats[1]
	second, err := s.Snapshot(context.Background())
	if !errors.Is(err, toolrun.ErrKilled) || second.Err != err || second.Result != toolrun.Killed {
		t.Fatalf("cut run: %v (%v)", err, second.Result)
	}
	if len(second.Values) != 1 || second.Values[0].V != 13 || len(second.Stats) != 0 {
		t.Errorf("cut run kept %+v and %+v", second.Values, second.Stats)
	}
	if first.Values[0].V != 12 || first.Stats[0].V.Stats[1] != keep || first.Runs[toolrun.OK] != 1 || first.Runs[toolrun.Killed] != 0 {
		t.Errorf("first snapshot changed: %+v", first)
	}
	if second.Runs[toolrun.OK] != 1 || second.Runs[toolrun.Killed] != 1 {
		t.Errorf("runs %v", second.Runs)
	}
}

// lctl that cannot start: the snapshot says why, and has nothing else.
func TestSnapshotLctlMissing(t *testing.T) {
	s := New(Config{Lctl: &lctl.Command{Path: "/nonexistent/lctl"}, Bounds: toolrun.Bounds{Timeout: time.Minute}})
	s.Add(Request{Owner: "memory", Kind: Values, Patterns: []string{"memused"}})
	tr, err := jobstats.New(jobstats.Config{TTL: time.Minute, Labels: []string{"jobid"}})
	if err != nil {
		t.Fatal(err)
	}
	s.TrackJobs("jobstats", tr)
	snap, err := s.Snapshot(context.Background())
	if err == nil || snap == nil || snap.Result != toolrun.Failed || !strings.Contains(err.Error(), "/nonexistent/lctl") {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	if snap.Jobs == nil || snap.Jobs.Err != nil {
		t.Errorf("jobs view of a failed run: %+v (its error is the run's, not its own)", snap.Jobs)
	}
}

// exiting prints text, then exits non-zero.
type exiting struct {
	text string
	exit *toolrun.ExitError
}

func (e *exiting) GetParam(context.Context, []string) (io.ReadCloser, error) {
	return &exitOutput{Reader: strings.NewReader(e.text), exit: e.exit}, nil
}

type exitOutput struct {
	io.Reader
	exit *toolrun.ExitError
}

func (o *exitOutput) Close() error { return o.exit }

// A non-zero exit is partial when some parameter asked for was printed
// (another pattern matched nothing), and failed when none was: nothing
// printed (sudo asking for a password), or only parameters no request
// wants. The failure carries the tool's message and fails the snapshot.
func TestSnapshotExitWithoutOutput(t *testing.T) {
	exit := &toolrun.ExitError{Code: 1, Stderr: "sudo: a password is required"}
	for _, tc := range []struct {
		name, text string
		want       toolrun.Result
	}{
		{"nothing", "", toolrun.Failed},
		{"not asked for", "other.param=1\n", toolrun.Failed},
		{"some asked for", "memused=12\n", toolrun.Partial},
		{"health only", "health_check=healthy\n", toolrun.Partial},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Lctl: &exiting{text: tc.text, exit: exit}, Bounds: toolrun.Bounds{Timeout: time.Minute}})
			s.Add(Request{Owner: "memory", Kind: Values, Patterns: []string{"memused"}})
			s.Add(Request{Owner: "health", Kind: Health, Patterns: []string{"health_check"}})
			snap, err := s.Snapshot(context.Background())
			if snap.Result != tc.want || snap.Runs[tc.want] != 1 {
				t.Fatalf("result %v, runs %v, err %v", snap.Result, snap.Runs, err)
			}
			switch tc.want {
			case toolrun.Failed:
				if err == nil || err != snap.Err || !errors.Is(err, exit) || !strings.Contains(err.Error(), "sudo: a password is required") || snap.Exit != nil {
					t.Errorf("err %v, snapshot err %v, exit %v", err, snap.Err, snap.Exit)
				}
			default:
				if err != nil || snap.Err != nil || snap.Exit != exit {
					t.Errorf("err %v, snapshot err %v, exit %v", err, snap.Err, snap.Exit)
				}
			}
		})
	}
}

// The same through the lctl command: a real process that prints nothing
// on stdout, its complaint on stderr, and exits 1; with job_stats tracked
// too, the run's failure is the view's, not a "no job_stats" of its own.
func TestSnapshotFailingCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lctl")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Lctl: &lctl.Command{Path: path}, Bounds: toolrun.Bounds{Timeout: time.Minute}})
	s.Add(Request{Owner: "memory", Kind: Values, Patterns: []string{"memused"}})
	tr, err := jobstats.New(jobstats.Config{TTL: time.Minute, Labels: []string{"jobid"}})
	if err != nil {
		t.Fatal(err)
	}
	s.TrackJobs("jobstats", tr)
	snap, err := s.Snapshot(context.Background())
	if snap.Result != toolrun.Failed || err == nil || !strings.Contains(err.Error(), "exited with status 1: sudo: a password is required") {
		t.Fatalf("result %v, err %v", snap.Result, err)
	}
	if snap.Jobs == nil || snap.Jobs.Err != nil {
		t.Errorf("jobs view %+v", snap.Jobs)
	}
}

// A run that doubles the raw job series tracked (to at least 50,000)
// collects the garbage of growing the tables; other runs do not.
func TestCollectGrowth(t *testing.T) {
	s := New(Config{})
	collected := 0
	s.collect = func() { collected++ }
	view := func(perTarget ...int) *jobstats.View {
		v := &jobstats.View{}
		for _, n := range perTarget {
			v.Targets = append(v.Targets, &jobstats.TargetView{RawSeries: n})
		}
		return v
	}
	for i, step := range []struct {
		series []int
		want   int
	}{
		{[]int{25000}, 0},          // small
		{[]int{30000, 30000}, 1},   // 60,000: the first large run
		{[]int{60000, 59000}, 1},   // 119,000: less than twice
		{[]int{60000, 60000}, 2},   // 120,000: twice
		{[]int{100}, 2},            // shrank
		{[]int{150000, 150000}, 3}, // 300,000
	} {
		s.collectGrowth(view(step.series...))
		if collected != step.want {
			t.Fatalf("step %d (%v): %d collections, want %d", i, step.series, collected, step.want)
		}
	}
}

// jobsText is an OST's job_stats with the given job_ids, each having
// written write bytes.
func jobsText(write uint64, ids ...string) string {
	var b strings.Builder
	b.WriteString("obdfilter.fs-OST0000.job_stats=\njob_stats:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "- job_id:          %s\n  snapshot_time:   1700000000\n"+
			"  write_bytes:     { samples: 1, unit: bytes, min: 1, max: 1, sum: %d }\n", id, write)
	}
	return b.String()
}

// A run whose job_stats hold more entries than the tracker takes, or
// whose output is larger than the source reads, is over its budget: it
// reads no further, counts over_budget, fails with an error naming the
// flag, and publishes nothing, neither jobs nor any other parameter; the
// job_ids it met first are forgotten (the tracker's raw series are those
// of the run before). The next run within the budget is ok and counts the
// ids it meets whole. Before the budgets, both runs were ok, and the run
// with five ids kept all five.
func TestSnapshotOverBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		entries  int
		bytes    int64
		overText string
		flag     string
	}{
		{"entries", 3, 0, jobsText(20, "1:1:a", "2:2:b", "3:3:c", "4:4:d", "5:5:e"), "--lustre.jobstats.max-entries"},
		{"bytes", 0, 1000, jobsText(20, "1:1:a", "2:2:b") + strings.Repeat("health_check=healthy\n", 60), "--lustre.max-output-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &texts{list: []string{jobsText(10, "1:1:a", "2:2:b"), "memused=12\n" + tc.overText, jobsText(30, "1:1:a", "2:2:b", "3:3:c")}}
			s := New(Config{Lctl: src, Bounds: toolrun.Bounds{Timeout: time.Minute}, MaxOutputBytes: tc.bytes})
			s.Add(Request{Owner: "memory", Kind: Values, Patterns: []string{"memused"}})
			tr, err := jobstats.New(jobstats.Config{TTL: time.Hour, Labels: []string{"jobid"}, JobIDName: "%j:%u:%H", MaxEntries: tc.entries})
			if err != nil {
				t.Fatal(err)
			}
			s.TrackJobs("jobstats", tr)
			total := func(v *jobstats.View) (n uint64) {
				for _, tv := range v.Targets {
					for _, c := range tv.Counted {
						n += c
					}
				}
				return n
			}
			snap, err := s.Snapshot(context.Background())
			if err != nil || snap.Result != toolrun.OK || total(snap.Jobs) != 2*(10+1) {
				t.Fatalf("run 1: %v %v, counted %d", snap.Result, err, total(snap.Jobs))
			}
			s.Release(snap)

			snap, err = s.Snapshot(context.Background())
			if snap.Result != toolrun.OverBudget || !errors.Is(err, toolrun.ErrOverBudget) || !strings.Contains(err.Error(), tc.flag) {
				t.Fatalf("run 2: result %v, err %v", snap.Result, err)
			}
			if snap.Jobs != nil || len(snap.Values) != 0 || len(snap.Health) != 0 {
				t.Errorf("run 2 published something: jobs %v, values %v, health %v", snap.Jobs, snap.Values, snap.Health)
			}
			if runs, _ := s.Runs(); runs[toolrun.OverBudget] != 1 {
				t.Errorf("runs %v", runs)
			}
			s.Release(snap)

			snap, err = s.Snapshot(context.Background())
			if err != nil || snap.Result != toolrun.OK {
				t.Fatalf("run 3: %v %v", snap.Result, err)
			}
			// 1 and 2 count from 10 (or from 20 when run 2 read them) to
			// 30 with one more sample each; 3 is new and counts whole.
			if got, want := total(snap.Jobs), uint64(3*(30+1)); got != want {
				t.Errorf("run 3: counted %d, want %d", got, want)
			}
			if n := snap.Jobs.Targets[0].RawSeries; n != 3 {
				t.Errorf("run 3: %d raw series, want 3", n)
			}
			s.Release(snap)
		})
	}
}

// The raw job_ids a killed run met first are forgotten, not tracked (nor
// published) until a complete output shows them.
func TestSnapshotKilledForgetsNewIDs(t *testing.T) {
	src := &texts{list: []string{jobsText(10, "1:1:a"), jobsText(10, "1:1:a", "2:2:b", "3:3:c") + "\x00", jobsText(10, "1:1:a", "2:2:b")}}
	s := New(Config{Lctl: src, Bounds: toolrun.Bounds{Timeout: time.Minute}})
	tr, err := jobstats.New(jobstats.Config{TTL: time.Hour, Labels: []string{"jobid"}, JobIDName: "%j:%u:%H"})
	if err != nil {
		t.Fatal(err)
	}
	s.TrackJobs("jobstats", tr)
	for run, want := range []struct {
		result   toolrun.Result
		raw, ids int
	}{{toolrun.OK, 1, 1}, {toolrun.Killed, 1, 1}, {toolrun.OK, 2, 2}} {
		snap, _ := s.Snapshot(context.Background())
		tv := snap.Jobs.Targets[0]
		if snap.Result != want.result || tv.RawSeries != want.raw || tv.Identities != want.ids {
			t.Errorf("run %d: %v, %d raw series, %d identities; want %v, %d, %d", run+1, snap.Result, tv.RawSeries, tv.Identities, want.result, want.raw, want.ids)
		}
		s.Release(snap)
	}
}
