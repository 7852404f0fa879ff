package logwatch

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// smallWriteLog is a one-rank log of writes small 4 KiB POSIX writes
// (sequential, aligned), ending at end, to a file of its own.
func smallWriteLog(t testing.TB, jobID int64, end time.Time, writes int64) []byte {
	t.Helper()
	data, err := darshantest.SmallWrites(jobID, end, writes, "/opt/app/bin/writer", fmt.Sprintf("/scratch/out-%d.dat", end.Unix()))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func insightOf(v *JobView, code string) *InsightView {
	for i := range v.Insights {
		if v.Insights[i].Code() == code {
			return &v.Insights[i]
		}
	}
	return nil
}

// A job's insights are those of its logs together: two steps of 600 small
// writes each fire P06 (more than 1000 small writes) where neither alone
// does, and the job goes back when a step's file is removed. Only fired
// insights are kept, High first.
func TestInsightsMergedPerJob(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	cfg := insights.DefaultConfig()
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true, Insights: &cfg, Now: func() time.Time { return now }})
	day := filepath.Join(root, "2026", "1", "15")
	first := filepath.Join(day, "alice_writer_id51-1_1-15-1-1_1.darshan")
	writeFile(t, first, smallWriteLog(t, 51, now.Add(-time.Hour), 600))
	j := jobsByID(syncNow(t, s))["51"]
	if j == nil || j.InsightLogs != 1 || j.InsightsDecided == 0 {
		t.Fatalf("job 51: %+v", j)
	}
	if in := insightOf(j, "P06"); in != nil {
		t.Errorf("600 small writes fired P06: %+v", in)
	}
	if in := insightOf(j, "M01"); in == nil || in.Level() != insights.Warn || in.Recommendation() == "" {
		t.Errorf("M01 (no MPI-IO): %+v", in)
	}

	writeFile(t, filepath.Join(day, "alice_writer_id51-2_1-15-2-2_1.darshan"), smallWriteLog(t, 51, now.Add(-30*time.Minute), 600))
	j = jobsByID(syncNow(t, s))["51"]
	if j.Logs != 2 || j.InsightLogs != 2 {
		t.Fatalf("logs %d, insight logs %d", j.Logs, j.InsightLogs)
	}
	in := insightOf(j, "P06")
	if in == nil || in.Level() != insights.High || in.Value != 1 || in.Threshold != cfg.SmallRequests || in.Recommendation() == "" {
		t.Fatalf("P06 on 1200 small writes: %+v", in)
	}
	for i, x := range j.Insights {
		if x.Level() == insights.OK {
			t.Errorf("an OK insight is kept: %+v", x)
		}
		if i > 0 && x.Level() > j.Insights[i-1].Level() {
			t.Errorf("not High first: %v", j.Insights)
		}
	}

	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	j = jobsByID(syncNow(t, s))["51"]
	if j.Logs != 1 || j.InsightLogs != 1 || insightOf(j, "P06") != nil {
		t.Errorf("after the first step left: logs %d, insight logs %d, P06 %+v", j.Logs, j.InsightLogs, insightOf(j, "P06"))
	}
}

// Without a Config the sidecar computes no insights.
func TestInsightsOff(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true, Now: func() time.Time { return now }})
	writeFile(t, filepath.Join(root, "a_id52-1_1.darshan"), smallWriteLog(t, 52, now.Add(-time.Hour), 5000))
	j := jobsByID(syncNow(t, s))["52"]
	if j == nil || j.Insights != nil || j.InsightLogs != 0 || j.InsightsDecided != 0 {
		t.Errorf("insights off: %+v", j)
	}
}

// A failure of the insights (an error or a panic, reading a log or
// evaluating a job) costs the insights only: the signals are exported,
// the failure is counted and logged, and the job's other logs keep theirs.
func TestInsightsFailureCostsInsightsOnly(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	cfg := insights.DefaultConfig()
	logs := &logtest.Capture{}
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true, Insights: &cfg,
		Now: func() time.Time { return now }, Logger: logs.Logger()})

	good := smallWriteLog(t, 53, now.Add(-time.Hour), 5000)
	writeFile(t, filepath.Join(root, "a_id53-1_1.darshan"), good)
	syncNow(t, s)

	// Two workers read the logs: the count is shared. Which log fails how
	// does not matter, both lose their insights.
	var calls atomic.Int32
	setVar(t, &newBuilder, func(l *darshan.Log) (totalsBuilder, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("no insights for you")
		}
		b, err := insights.NewBuilder(l)
		if err != nil {
			t.Error(err)
			return nil, err
		}
		return panicking{b}, nil
	})
	writeFile(t, filepath.Join(root, "a_id53-2_1.darshan"), smallWriteLog(t, 53, now.Add(-50*time.Minute), 10))
	writeFile(t, filepath.Join(root, "b_id54-1_1.darshan"), smallWriteLog(t, 54, now.Add(-50*time.Minute), 10))
	snap := syncNow(t, s)
	if n := calls.Load(); n != 2 {
		t.Fatalf("newBuilder called %d times", n)
	}
	if snap.InsightsFailed != 2 || snap.Processed != 3 || sumFailed(snap) != 0 {
		t.Fatalf("insights failed %d, processed %d, failed %v", snap.InsightsFailed, snap.Processed, snap.Failed)
	}
	jobs := jobsByID(snap)
	if j := jobs["53"]; j.Logs != 2 || j.InsightLogs != 1 || insightOf(j, "P06") == nil || !j.Job[1].Valid() {
		t.Errorf("job 53: logs %d, insight logs %d, P06 %+v, bytes written %v", j.Logs, j.InsightLogs, insightOf(j, "P06"), j.Job[1])
	}
	if j := jobs["54"]; j == nil || j.Insights != nil || j.InsightLogs != 0 || j.Job[1].V != 10*4096 {
		t.Errorf("job 54 without insights: %+v", j)
	}
	if n := countMsg(logs.Next(t), "cannot compute the insights of a Darshan log; its signals are exported"); n != 2 {
		t.Errorf("%d warnings logged", n)
	}

	// A panic while evaluating a job: the job keeps its signals.
	setVar(t, &newBuilder, builderOf)
	setVar(t, &evaluate, func(*insights.Decider, []insights.Insight, *insights.Totals) ([]insights.Insight, int) {
		panic("evaluate")
	})
	writeFile(t, filepath.Join(root, "c_id55-1_1.darshan"), smallWriteLog(t, 55, now.Add(-40*time.Minute), 10))
	snap = syncNow(t, s)
	if j := jobsByID(snap)["55"]; j == nil || j.Insights != nil || j.Job[1].V != 10*4096 || snap.InsightsFailed != 3 {
		t.Errorf("job 55: %+v, insights failed %d", j, snap.InsightsFailed)
	}
	if n := countMsg(logs.Next(t), "cannot evaluate the insights of a Darshan job; its signals are exported"); n != 1 {
		t.Errorf("evaluation failure logged %d times", n)
	}
}

// panicking is an insights Builder that panics on the first record it is
// given, while the signals' walk of the log is under way.
type panicking struct{ *insights.Builder }

func (panicking) Add(darshan.Record) { panic("a trigger nobody foresaw") }

func sumFailed(snap Snapshot) (n uint64) {
	for _, c := range snap.Failed {
		n += c
	}
	return n
}

// countMsg counts the WARN records with message msg.
func countMsg(recs []logtest.Record, msg string) int {
	n := 0
	for _, r := range recs {
		if r["level"] == "WARN" && r["msg"] == msg {
			n++
		}
	}
	return n
}

func setVar[T any](t *testing.T, p *T, v T) {
	t.Helper()
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// The sidecar keeps no file path in the Totals it holds: it looks none up
// (Builder.WithoutNames), on logs whose Rankings have entries.
func TestInsightsKeepNoNames(t *testing.T) {
	entries := 0
	for _, p := range darshanLogs(t, corpus.Fixtures(t, "darshan")) {
		l, err := darshan.Open(p)
		if err != nil {
			continue
		}
		_, packed, err := readLog(l, 0, true)
		l.Close()
		if err != nil || packed == nil {
			continue
		}
		tot := unpacked(t, packed)
		for _, r := range rankingsOf(tot) {
			for _, e := range r.Top {
				entries++
				if e.Name != "" || !(e.Value > 0) {
					t.Errorf("%s: %+v", filepath.Base(p), e)
				}
			}
		}
	}
	if entries == 0 {
		t.Fatal("no Ranking entry in the fixtures' Totals: nothing checked")
	}
	t.Logf("%d Ranking entries, none named", entries)
}

// What a view keeps of an insight's code alone, its level and its first
// recommendation (insightCodes), is the same for every log whose insight of
// that code fires: each fired insight of the fixtures' logs agrees with
// the table, and its view gives it back. A code the table cannot number
// is refused, and costs the job its insights (evaluateJob), not a wrong one.
func TestInsightCodesAgree(t *testing.T) {
	d := insights.NewDecider(insights.DefaultConfig())
	codes := map[string]bool{}
	for _, p := range darshanLogs(t, corpus.Fixtures(t, "darshan")) {
		l, err := darshan.Open(p)
		if err != nil {
			continue
		}
		tot, err := insights.FromLog(l)
		l.Close()
		if err != nil {
			continue
		}
		fired, decided := d.Fired(nil, tot)
		views := newJobInsights(fired, decided, 1).fired
		for i := range fired {
			in, v := &fired[i], &views[i]
			codes[in.Code] = true
			rec := ""
			if len(in.Recommendations) > 0 {
				rec = in.Recommendations[0]
			}
			if v.Code() != in.Code || v.Level() != in.Level || v.Recommendation() != rec ||
				math.Float64bits(v.Value) != math.Float64bits(in.Value) || math.Float64bits(v.Threshold) != math.Float64bits(in.Threshold) {
				t.Errorf("%s: view %s %v %q %v, insight %+v", filepath.Base(p), v.Code(), v.Level(), v.Recommendation(), v.Value, in)
			}
		}
	}
	if len(codes) < 3 {
		t.Fatalf("codes fired across the fixtures: %v; too few to check", codes)
	}
	t.Logf("%d codes fired", len(codes))
	var zero InsightView // made elsewhere than newJobInsights: no code, no panic
	if zero.Code() != "" || zero.Level() != insights.OK || zero.Recommendation() != "" {
		t.Errorf("a zero InsightView: %q %v %q", zero.Code(), zero.Level(), zero.Recommendation())
	}
	if _, ok := insightCodes.index(&insights.Insight{Code: "X01", Level: insights.High}); ok {
		t.Error("a code outside insights.Codes was numbered")
	}
	if _, ok := insightCodes.index(&insights.Insight{Code: "M01", Level: insights.High}); codes["M01"] && ok {
		t.Error("M01 at another level than its own was taken")
	}
}
