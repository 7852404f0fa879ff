package logwatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The sidecar on real directories: logs appear one by one, some still
// being written, some damaged, one renamed from *.darshan_partial.
func TestSidecarLifecycle(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	clk := &clock{t: now}
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, Workers: 2, ExeLabel: true,
		Settle: time.Minute, NoInotify: true, Now: clk.now})
	day := filepath.Join(root, "2026", "1", "15")
	end := now.Add(-time.Hour).Unix()
	step1 := logSpec{jobID: 4242, uid: 1000, exe: "/opt/app/bin/solver --in /scratch/x", start: end - 100, end: end, ranks: 2, bytes: 1 << 20}
	step2 := step1
	step2.start, step2.end = end+10, end+20

	writeFile(t, filepath.Join(day, "alice_solver_id4242-100_1-15-100-1_1.darshan"), step1.make(t))
	snap := syncNow(t, s)
	if snap.Processed != 1 || len(snap.Jobs) != 1 {
		t.Fatalf("processed %d, jobs %d", snap.Processed, len(snap.Jobs))
	}
	j := snap.Jobs[0]
	if j.JobID != "4242" || j.UID != "1000" || j.Exe != "solver" || j.Logs != 1 || j.NProcs != 2 {
		t.Errorf("job %+v", j.Identity)
	}
	if j.Job[0].V != 1<<20 { // bytes read: 2 ranks × 512 KiB
		t.Errorf("bytes read %v", j.Job[0])
	}

	// The second step, first under its temporary name, then renamed.
	partial := filepath.Join(day, "alice_solver_id4242-101_1-15-200-2_1.darshan_partial")
	writeFile(t, partial, step2.make(t))
	snap = syncNow(t, s)
	if snap.Processed != 1 || snap.Waiting[WaitingPartial] != 1 {
		t.Fatalf("partial file: processed %d, waiting %v", snap.Processed, snap.Waiting)
	}
	if err := os.Rename(partial, strings.TrimSuffix(partial, "_partial")); err != nil {
		t.Fatal(err)
	}
	snap = syncNow(t, s)
	if snap.Processed != 2 || snap.Waiting[WaitingPartial] != 0 || len(snap.Jobs) != 1 || snap.Jobs[0].Logs != 2 {
		t.Fatalf("renamed: processed %d, waiting %v, jobs %d", snap.Processed, snap.Waiting, len(snap.Jobs))
	}
	if got := snap.Jobs[0].Job[0].V; got != 2<<20 {
		t.Errorf("two steps read %g bytes", got)
	}
	if snap.Jobs[0].Start != float64(step1.start) || snap.Jobs[0].End != float64(step2.end) {
		t.Errorf("job span %f-%f", snap.Jobs[0].Start, snap.Jobs[0].End)
	}

	// A log still being written: header zero, then complete.
	other := logSpec{jobID: 777, uid: 1001, exe: "/bin/ior", start: end - 50, end: end, ranks: 1, bytes: 4096}
	data := other.make(t)
	inProgress := filepath.Join(day, "bob_ior_id777-5_1-15-300-3_1.darshan")
	zeroed := append(make([]byte, 1328), data[1328:]...)
	writeFile(t, inProgress, zeroed)
	snap = syncNow(t, s)
	if snap.Waiting[WaitingIncomplete] != 1 || snap.Failed[ReasonIncomplete] != 0 {
		t.Fatalf("zero header: waiting %v failed %v", snap.Waiting, snap.Failed)
	}
	writeFile(t, inProgress, data)
	snap = syncNow(t, s)
	if snap.Waiting[WaitingIncomplete] != 0 || len(snap.Jobs) != 2 || snap.Processed != 3 {
		t.Fatalf("completed: waiting %v, jobs %d, processed %d", snap.Waiting, len(snap.Jobs), snap.Processed)
	}

	// A corrupt log is counted once and changes nothing else.
	before := snap
	writeFile(t, filepath.Join(day, "bad_id9-9_1-1-1-1_1.darshan"), corruptPOSIX(t, data))
	writeFile(t, filepath.Join(day, "garbage.darshan"), append([]byte("3.41\x00\x00\x00\x00"), make([]byte, 2000)...))
	writeFile(t, filepath.Join(day, "notes.txt"), []byte("ignored"))
	snap = syncNow(t, s)
	failed := 0
	for _, n := range snap.Failed {
		failed += int(n)
	}
	if failed != 2 || snap.Failed[ReasonNotDarshan] != 1 || snap.Failed[ReasonCorrupt] != 1 {
		t.Errorf("failed %v", snap.Failed)
	}
	if snap.Processed != before.Processed || len(snap.Jobs) != len(before.Jobs) || snap.Jobs[0] != before.Jobs[0] || snap.Jobs[1] != before.Jobs[1] {
		t.Errorf("a bad log changed the exported jobs")
	}
	// Read once: scanning again reads nothing and counts nothing.
	snap = syncNow(t, s)
	if snap.Processed != before.Processed || snap.Failed[ReasonNotDarshan] != 1 {
		t.Errorf("rescan read logs again: processed %d failed %v", snap.Processed, snap.Failed)
	}

	// A truncated log waits while it may still be growing, then fails.
	writeFile(t, filepath.Join(day, "cut_id8-8_1-1-1-1_1.darshan"), data[:len(data)-40])
	snap = syncNow(t, s)
	if snap.Waiting[WaitingIncomplete] != 1 {
		t.Errorf("fresh truncated log: waiting %v failed %v", snap.Waiting, snap.Failed)
	}
	clk.set(now.Add(2 * time.Minute))
	snap = syncNow(t, s)
	if snap.Waiting[WaitingIncomplete] != 0 || snap.Failed[ReasonTruncated] != 1 {
		t.Errorf("settled truncated log: waiting %v failed %v", snap.Waiting, snap.Failed)
	}

	// A removed log leaves its job.
	if err := os.Remove(filepath.Join(day, "alice_solver_id4242-100_1-15-100-1_1.darshan")); err != nil {
		t.Fatal(err)
	}
	snap = syncNow(t, s)
	if j := jobsByID(snap)["4242"]; j == nil || j.Logs != 1 || j.Job[0].V != 1<<20 {
		t.Errorf("after removing a step: %+v", j)
	}
	if snap.RetainedJobs != 2 || snap.RetainedLogs != 2 {
		t.Errorf("retained %d jobs, %d logs", snap.RetainedJobs, snap.RetainedLogs)
	}
}

func TestRetentionAndMaxJobs(t *testing.T) {
	root := t.TempDir()
	now := time.Now().Truncate(time.Second)
	clk := &clock{t: now}
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, Retention: 10 * time.Hour,
		MaxJobs: 2, NoInotify: true, Now: clk.now})
	for i, age := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Hour} {
		spec := logSpec{jobID: int64(100 + i), uid: 1, exe: "/bin/a", start: now.Add(-age).Unix() - 10, end: now.Add(-age).Unix(), bytes: 10}
		writeFile(t, filepath.Join(root, spec.exe[5:]+"_"+string(rune('a'+i))+".darshan"), spec.make(t))
	}
	// An old log (ended 20 h ago, retention 10 h) is read and expires at once.
	old := logSpec{jobID: 99, uid: 1, start: now.Add(-20 * time.Hour).Unix(), end: now.Add(-20 * time.Hour).Unix(), bytes: 10}
	writeFile(t, filepath.Join(root, "old.darshan"), old.make(t))
	snap := syncNow(t, s)
	ids := jobsByID(snap)
	if len(ids) != 2 || ids["101"] == nil || ids["102"] == nil {
		t.Fatalf("jobs %v: want the 2 that ended last", ids)
	}
	if snap.Dropped[DropMaxJobs] != 1 || snap.Expired != 1 || snap.Processed != 4 {
		t.Errorf("dropped %v, expired %d, processed %d", snap.Dropped, snap.Expired, snap.Processed)
	}
	// The dropped job's log is not read again.
	snap = syncNow(t, s)
	if snap.Processed != 4 || len(snap.Jobs) != 2 {
		t.Errorf("rescan: processed %d jobs %d", snap.Processed, len(snap.Jobs))
	}
	// 8.5 hours later job 101 (ended 2 h before) has left the window.
	clk.set(now.Add(8*time.Hour + 30*time.Minute))
	snap = syncNow(t, s)
	if ids := jobsByID(snap); len(ids) != 1 || ids["102"] == nil || snap.Expired != 2 {
		t.Errorf("after 8.5 h: jobs %v, expired %d", ids, snap.Expired)
	}
}

// A restart reads the drop directory again and exports the same jobs.
func TestRestartExposesAgain(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	for i := range 3 {
		spec := logSpec{jobID: int64(10 + i), uid: 5, exe: "/bin/x", start: now.Add(-time.Hour).Unix(), end: now.Add(-time.Minute).Unix(), ranks: 3, bytes: 100}
		writeFile(t, filepath.Join(root, "2026", "3", string(rune('1'+i)), "log.darshan"), spec.make(t))
	}
	cfg := Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true, ExeLabel: true}
	first, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := syncNow(t, first)
	first.Close()
	second := startSidecar(t, cfg)
	b := syncNow(t, second)
	if len(a.Jobs) != 3 || len(b.Jobs) != 3 {
		t.Fatalf("%d jobs before, %d after", len(a.Jobs), len(b.Jobs))
	}
	for i := range a.Jobs {
		if a.Jobs[i].Identity != b.Jobs[i].Identity || a.Jobs[i].Job != b.Jobs[i].Job {
			t.Errorf("job %d differs after restart: %+v vs %+v", i, a.Jobs[i].Identity, b.Jobs[i].Identity)
		}
	}
}

// Copies of a log count once; moving a log keeps it exported.
func TestCopiesAndMoves(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	spec := logSpec{jobID: 5, uid: 5, exe: "/bin/x", start: now.Add(-time.Hour).Unix(), end: now.Add(-time.Minute).Unix(), bytes: 1000}
	data := spec.make(t)
	writeFile(t, filepath.Join(root, "a", "one.darshan"), data)
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true})
	syncNow(t, s)
	writeFile(t, filepath.Join(root, "b", "copy.darshan"), data)
	snap := syncNow(t, s)
	if snap.Duplicates != 1 || len(snap.Jobs) != 1 || snap.Jobs[0].Logs != 1 {
		t.Fatalf("copy: duplicates %d, jobs %d", snap.Duplicates, len(snap.Jobs))
	}
	if err := os.Remove(filepath.Join(root, "a", "one.darshan")); err != nil {
		t.Fatal(err)
	}
	snap = syncNow(t, s)
	if len(snap.Jobs) != 1 || snap.Jobs[0].Logs != 1 || snap.RetainedLogs != 1 {
		t.Errorf("after removing the original: jobs %d", len(snap.Jobs))
	}
}

// A day directory older than the retention window is listed once; after
// that only a change of its modification time makes a scan list it again.
func TestOldDirectoriesNotListedAgain(t *testing.T) {
	root := t.TempDir()
	day := filepath.Join(root, "2025", "1", "1")
	old := time.Now().Add(-48 * time.Hour)
	spec := logSpec{jobID: 1, uid: 1, start: old.Unix(), end: old.Unix(), bytes: 1}
	writeFile(t, filepath.Join(day, "old.darshan"), spec.make(t))
	os.Chtimes(filepath.Join(day, "old.darshan"), old, old)
	os.Chtimes(day, old, old)
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true})
	snap := syncNow(t, s)
	if snap.Processed != 0 {
		t.Errorf("a log modified before the retention window was read")
	}
	if known := s.watcher.Stats().Files; known != 0 {
		t.Errorf("%d old files kept in memory", known)
	}
	// A log slipped in without changing the directory's time: not seen.
	recent := logSpec{jobID: 2, uid: 1, start: time.Now().Unix() - 5, end: time.Now().Unix(), bytes: 1}
	writeFile(t, filepath.Join(day, "late.darshan"), recent.make(t))
	os.Chtimes(day, old, old)
	if snap = syncNow(t, s); snap.Processed != 0 {
		t.Fatalf("the old directory was listed again")
	}
	// The directory's time moves (as any create or rename does): listed.
	now := time.Now()
	os.Chtimes(day, now, now)
	if snap = syncNow(t, s); snap.Processed != 1 || len(snap.Jobs) != 1 {
		t.Errorf("a changed old directory was not listed: processed %d", snap.Processed)
	}
}

// With inotify, a log renamed into a watched directory is read without
// waiting for the rescan.
func TestInotifyFindsLogsBeforeTheRescan(t *testing.T) {
	root := t.TempDir()
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour})
	syncNow(t, s)
	if s.Snapshot().InotifyWatches == 0 {
		t.Skip("inotify unavailable here")
	}
	now := time.Now()
	spec := logSpec{jobID: 31, uid: 1, start: now.Unix() - 5, end: now.Unix(), bytes: 1}
	tmp := filepath.Join(root, "x_id31-7_1-1-1-1_1.darshan_partial")
	writeFile(t, tmp, spec.make(t))
	os.Rename(tmp, strings.TrimSuffix(tmp, "_partial"))
	// and a new day directory, with a log written in place
	writeFile(t, filepath.Join(root, "2026", "2", "3", "y.darshan"), logSpec{jobID: 32, uid: 1, start: now.Unix() - 5, end: now.Unix(), bytes: 1}.make(t))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ids := jobsByID(s.Snapshot()); ids["31"] != nil && ids["32"] != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("inotify did not find the logs: %v", jobsByID(s.Snapshot()))
}

func TestMissingDirectoryAppearsLater(t *testing.T) {
	root := filepath.Join(t.TempDir(), "later")
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true})
	if snap := syncNow(t, s); len(snap.Jobs) != 0 || snap.Scans == 0 {
		t.Fatalf("scans %d", snap.Scans)
	}
	now := time.Now()
	writeFile(t, filepath.Join(root, "a.darshan"), logSpec{jobID: 3, uid: 1, start: now.Unix() - 5, end: now.Unix(), bytes: 1}.make(t))
	if snap := syncNow(t, s); len(snap.Jobs) != 1 {
		t.Errorf("jobs %d", len(snap.Jobs))
	}
}

func TestRecordsKept(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	writeFile(t, filepath.Join(root, "a.darshan"), logSpec{jobID: 3, uid: 1, start: now.Unix() - 5, end: now.Unix(), ranks: 5, bytes: 100}.make(t))
	s := startSidecar(t, Config{Dirs: []string{root}, RescanInterval: time.Hour, NoInotify: true, MaxRecords: 3})
	snap := syncNow(t, s)
	if len(snap.Jobs) != 1 || len(snap.Jobs[0].Records) != 3 {
		t.Fatalf("records %+v", snap.Jobs)
	}
	r := snap.Jobs[0].Records[0]
	if r.Module != "POSIX" || len(r.ID) != 16 || strings.Contains(r.ID, "/") || r.Rank != "0" {
		t.Errorf("record %+v", r)
	}
}
