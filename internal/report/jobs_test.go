package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// Which logs are one job, as the sidecar decides: the job id and the
// user; outside a batch job (no job id, or the runtime's fallback: the
// pid, recognized in the log's name), also the program. A copy of a log
// is not summed twice.
func TestLogsOfOneJob(t *testing.T) {
	dir := t.TempDir()
	end := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	write := func(name string, j darshantest.Job) string {
		b, err := j.Log()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("u_a_id77-1_1-1-1-1_1.darshan", darshantest.Job{JobID: 77, UID: 5, Exe: "/bin/a", End: end, Ranks: 2, Bytes: 10})
	b := write("u_b_id77-2_1-1-1-1_1.darshan", darshantest.Job{JobID: 77, UID: 5, Exe: "/bin/b", End: end.Add(time.Hour), Ranks: 1, Bytes: 10})
	copyA := write("copy_of_a.darshan", darshantest.Job{JobID: 77, UID: 5, Exe: "/bin/a", End: end, Ranks: 2, Bytes: 10})
	otherUser := write("v_a_id77-3_1-1-1-1_1.darshan", darshantest.Job{JobID: 77, UID: 6, Exe: "/bin/a", End: end, Ranks: 2, Bytes: 10})
	// The runtime's fallback: job id = pid, in the name and the header.
	pidA := write("u_a_id4242-4242_1-1-1-1_1.darshan", darshantest.Job{JobID: 4242, UID: 5, Exe: "/bin/a --secret-arg", End: end, Ranks: 1, Bytes: 10})
	pidA2 := write("u_a_id5151-5151_1-1-1-1_1.darshan", darshantest.Job{JobID: 5151, UID: 5, Exe: "/bin/a", End: end.Add(time.Hour), Ranks: 1, Bytes: 10})
	pidB := write("u_b_id6161-6161_1-1-1-1_1.darshan", darshantest.Job{JobID: 6161, UID: 5, Exe: "/bin/b --secret-arg", End: end, Ranks: 1, Bytes: 10})

	opts := LogOptions{Insights: insights.DefaultConfig()}
	job, app, err := FromLogs([]string{b, a, copyA}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if job.JobID != "77" || len(app.Logs) != 2 || len(app.Copies) != 1 || app.Copies[0] != "copy_of_a.darshan" {
		t.Errorf("job %s, %d logs, copies %v", job.JobID, len(app.Logs), app.Copies)
	}
	if job.Processes != 2 || job.RunTime != 3660.5 {
		t.Errorf("processes %d, run time %v", job.Processes, job.RunTime)
	}
	if _, _, err := FromLogs([]string{a, otherUser}, opts); err == nil || !strings.Contains(err.Error(), "uid 6") {
		t.Errorf("two users' logs: %v", err)
	}
	job, _, err = FromLogs([]string{pidA, pidA2}, opts)
	if err != nil || job.JobID != "_nojob" {
		t.Errorf("two runs of one program outside a job: %v, job %s", err, job.JobID)
	}
	_, _, err = FromLogs([]string{pidA, pidB}, opts)
	if err == nil || !strings.Contains(err.Error(), "outside a batch job by different programs") || strings.Contains(err.Error(), "secret") {
		t.Errorf("two programs outside a job: %v", err)
	}
}

// A job whose steps ran on different numbers of processes: the heatmap's
// rows are the job's (groups of ranks past maxRows), each step's ranks in
// the row that holds them, and its bytes add up.
func TestHeatmapRowsOfSteps(t *testing.T) {
	dir := t.TempDir()
	end := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var paths []string
	for i, ranks := range []int{4, 128} {
		b, err := darshantest.Job{JobID: 88, UID: 5, Exe: "/bin/a", End: end.Add(time.Duration(i) * time.Hour), Ranks: ranks, Bytes: 1 << 10}.Log()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(t.Name())+strings.Repeat("x", i)+".darshan")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	_, app, err := FromLogs(paths, LogOptions{Insights: insights.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Heatmaps) != 1 {
		t.Fatalf("%d heatmaps", len(app.Heatmaps))
	}
	h := app.Heatmaps[0]
	if len(h.Rows) != maxRows || h.Rows[0] != "0–1" || h.Rows[1] != "2–3" {
		t.Fatalf("rows %v", h.Rows)
	}
	// Each rank moves 3 KiB in the first step's heatmap (darshantest:
	// one read bin, two write bins), and in the second: row 1 (ranks 2
	// and 3) holds 2+2 ranks' worth.
	if got, want := h.RankBytes[1], int64(4*3<<10); got != want {
		t.Errorf("row 1 holds %d bytes, want %d", got, want)
	}
	var total int64
	for _, v := range h.RankBytes {
		total += v
	}
	if want := int64((4 + 128) * 3 << 10); total != want {
		t.Errorf("%d bytes in the rows, want %d", total, want)
	}
}
