package report

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// TestDXTOverBudget: a log whose DXT traces pass its memory budget, which
// `darshan signals` and `darshan insights` read (they never read the
// traces), makes a report too: the same report as with a budget that
// holds the traces, but for the heatmap from DXT, left out and named.
func TestDXTOverBudget(t *testing.T) {
	const budget = 4 << 20
	data, err := darshantest.Traced(testEnd, 100_000)
	path := writeTestLog(t, "traced.darshan", data, err)

	// What the darshan commands read of it under the budget.
	l, err := darshan.OpenWith(path, darshan.Options{MemoryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	if sum := signals.Summarize(l, 0); sum.Err != nil {
		t.Fatalf("darshan signals' summary under %d bytes: %v", budget, sum.Err)
	}
	if _, err := insights.FromLog(l); err != nil {
		t.Fatalf("darshan insights' totals under %d bytes: %v", budget, err)
	}
	l.Close()

	o := LogOptions{Insights: insights.DefaultConfig()}
	job, whole, err := FromLogs([]string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Heatmaps) != 1 || whole.Heatmaps[0].Source != "DXT" || len(whole.DXTLeftOut) != 0 {
		t.Fatalf("default budget: %d heatmaps, %v left out; want the DXT one, none", len(whole.Heatmaps), whole.DXTLeftOut)
	}
	o.MemoryBudget = budget
	job2, app, err := FromLogs([]string{path}, o)
	if err != nil {
		t.Fatalf("a budget the traces pass: %v", err)
	}
	if want := []LeftOut{{File: "traced.darshan", Region: "DXT_POSIX", MemoryBudget: budget}}; !slices.Equal(app.DXTLeftOut, want) {
		t.Errorf("left out %+v, want %+v", app.DXTLeftOut, want)
	}
	if len(app.Heatmaps) != 0 {
		t.Errorf("%d heatmaps with the traces left out", len(app.Heatmaps))
	}
	// All else the same.
	app.Heatmaps, app.DXTLeftOut = whole.Heatmaps, whole.DXTLeftOut
	var a, b bytes.Buffer
	WriteJSON(&a, &Report{Job: job, App: whole})
	WriteJSON(&b, &Report{Job: job2, App: app})
	if a.String() != b.String() {
		t.Error("the report with the traces left out differs beyond its heatmap")
	}

	// A job of two traced logs, one over the budget: no heatmap from DXT
	// (one of some of its logs would show the others' time as idle).
	small, err := darshantest.Traced(testEnd.Add(time.Hour), 1000)
	other := writeTestLog(t, "small.darshan", small, err)
	_, both, err := FromLogs([]string{other, path}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(both.Heatmaps) != 0 || len(both.DXTLeftOut) != 1 || both.DXTLeftOut[0].File != "traced.darshan" {
		t.Errorf("two logs, one over the budget: %d heatmaps, left out %+v", len(both.Heatmaps), both.DXTLeftOut)
	}
	if _, both, err = FromLogs([]string{other}, o); err != nil || len(both.Heatmaps) != 1 {
		t.Errorf("the small log alone: %v, %d heatmaps; want its DXT heatmap", err, len(both.Heatmaps))
	}
}
