package logwatch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/logtest"
)

// The sidecar's bounds take from the user holding the most, never from
// another: what one user drops into the directory can push out that
// user's jobs only.

// dropJob writes the log of job j (one rank) into dir.
func dropJob(t *testing.T, dir string, j darshantest.Job) {
	t.Helper()
	data, err := j.Log()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, fmt.Sprintf("u%d_app_id%d-1_1-1-1-1_1.darshan", j.UID, j.JobID)), data)
}

// jobsOf returns the jobids of each uid in snap.
func jobsOf(snap Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, v := range snap.Jobs {
		out[v.UID] = append(out[v.UID], v.JobID)
	}
	return out
}

// One user drops 200 logs of jobs that ended after every other user's:
// past --darshan.max-jobs-per-user its own jobs that ended first go, and
// every other user's stay. The drops are counted per user and said once.
func TestOneUserFloodsOnlyItself(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Truncate(time.Second)
	for u := range 5 {
		for k := range 4 {
			dropJob(t, dir, darshantest.Job{JobID: int64(100 + 10*u + k), UID: int64(2000 + u), Exe: "/bin/app",
				End: now.Add(-3*time.Hour - time.Duration(10*u+k)*time.Minute), Bytes: 100})
		}
	}
	const flood, share = 200, 10
	for i := range flood {
		dropJob(t, dir, darshantest.Job{JobID: int64(9000 + i), UID: 6666, Exe: "/bin/spam",
			End: now.Add(-time.Hour + time.Duration(i)*time.Second), Bytes: 100})
	}
	c := &logtest.Capture{}
	s := startSidecar(t, Config{Dirs: []string{dir}, RescanInterval: time.Hour, NoInotify: true, Now: (&clock{t: now}).now,
		Logger: c.Logger(), MaxJobs: 60, MaxJobsPerUser: share})
	snap := syncNow(t, s)
	byUID := jobsOf(snap)
	for u := range 5 {
		if n := len(byUID[strconv.Itoa(2000+u)]); n != 4 {
			t.Errorf("uid %d kept %d of its 4 jobs", 2000+u, n)
		}
	}
	kept := byUID["6666"]
	if len(kept) != share {
		t.Fatalf("the flooding uid holds %d jobs, want %d", len(kept), share)
	}
	for _, id := range kept { // the jobs that ended last
		if n, _ := strconv.Atoi(id); n < 9000+flood-share {
			t.Errorf("the flooding uid kept job %s, not one of those that ended last", id)
		}
	}
	if snap.Dropped[DropUserShare] != flood-share || snap.Dropped[DropMaxJobs] != 0 || snap.UserDropped["6666"] != flood-share || len(snap.UserDropped) != 1 {
		t.Errorf("dropped %v, by user %v: want %d user_share drops, all of uid 6666", snap.Dropped, snap.UserDropped, flood-share)
	}
	said := 0
	for _, r := range c.Next(t) {
		if r["level"] == "WARN" && r["reason"] == DropUserShare {
			said++
			if r["uid"] != "6666" {
				t.Errorf("a drop is said of uid %v", r["uid"])
			}
		}
	}
	if said != 1 {
		t.Errorf("the drops of the flooding uid are said %d times, want once", said)
	}
}

// Past --darshan.max-jobs, the user holding the most jobs loses its job
// that ended first, whoever's log came in; between users holding as many,
// the user of the log that came in loses first, then the least uid.
func TestMaxJobsTakesFromTheHeaviest(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Truncate(time.Second)
	end := now.Add(-5 * time.Hour)
	s := startSidecar(t, Config{Dirs: []string{dir}, RescanInterval: time.Hour, NoInotify: true, Now: (&clock{t: now}).now, MaxJobs: 8})
	add := func(uid int64, ids ...int64) Snapshot {
		t.Helper()
		var snap Snapshot
		for _, id := range ids { // one at a time, each ending after the one before
			end = end.Add(time.Minute)
			dropJob(t, dir, darshantest.Job{JobID: id, UID: uid, Exe: "/bin/app", End: end, Bytes: 100})
			snap = syncNow(t, s)
		}
		return snap
	}
	want := func(snap Snapshot, what string, jobs map[string][]string) {
		t.Helper()
		if got := jobsOf(snap); fmt.Sprint(got) != fmt.Sprint(jobs) {
			t.Errorf("%s: jobs by uid %v, want %v", what, got, jobs)
		}
	}
	add(1, 100, 101, 102, 103, 104, 105)
	add(2, 200)
	add(3, 300)
	// uid 4's first jobs push out uid 1's oldest: it holds the most.
	want(add(4, 400, 401), "uid 1 holds the most", map[string][]string{
		"1": {"102", "103", "104", "105"}, "2": {"200"}, "3": {"300"}, "4": {"400", "401"}})
	// Once uid 4 holds the most, its own oldest go.
	want(add(4, 402, 403), "uid 4 holds the most", map[string][]string{
		"1": {"103", "104", "105"}, "2": {"200"}, "3": {"300"}, "4": {"401", "402", "403"}})
	// uid 3's second job: uids 1 and 4 hold as many, the least uid loses;
	// its third: uid 3 holds as many as uid 4, and loses its own oldest.
	snap := add(3, 301, 302)
	want(snap, "equals", map[string][]string{
		"1": {"104", "105"}, "2": {"200"}, "3": {"301", "302"}, "4": {"401", "402", "403"}})
	if snap.Dropped[DropMaxJobs] != 6 || snap.UserDropped["1"] != 4 || snap.UserDropped["4"] != 1 || snap.UserDropped["3"] != 1 {
		t.Errorf("dropped %v, by user %v", snap.Dropped, snap.UserDropped)
	}
}

// Past the series budget, at a scrape, the user whose jobs cost the most
// series loses its job that ended first, until the views fit.
func TestSeriesBudget(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Truncate(time.Second)
	for k := range 6 {
		dropJob(t, dir, darshantest.Job{JobID: int64(100 + k), UID: 1, Exe: "/bin/app", End: now.Add(-time.Duration(10-k) * time.Hour), Bytes: 100})
	}
	// uid 2's jobs hold 3 logs each (ranks: the stub's cost), 3 jobs.
	for k := range 3 {
		dropJob(t, dir, darshantest.Job{JobID: int64(200 + k), UID: 2, Exe: "/bin/app", End: now.Add(-time.Duration(20-k) * time.Hour), Ranks: 3, Bytes: 100})
	}
	cost := func(v *JobView) int { return 10 * int(v.NProcs) } // 10 per job of uid 1, 30 per job of uid 2
	s := startSidecar(t, Config{Dirs: []string{dir}, RescanInterval: time.Hour, NoInotify: true, Now: (&clock{t: now}).now,
		MaxSeries: 100, SeriesOf: cost})
	snap := syncNow(t, s)
	// 60 + 90 = 150: uid 2 costs the most and loses its oldest (90 → 60);
	// then 120: uid 1 and 2 cost 60 each, uid 1 (the least uid) loses its
	// oldest; 110: uid 2 (60 > 50) loses another; 80.
	byUID := jobsOf(snap)
	if snap.JobSeries != 80 || len(byUID["1"]) != 5 || len(byUID["2"]) != 1 || byUID["2"][0] != "202" || byUID["1"][0] != "101" {
		t.Errorf("series %d, jobs %v", snap.JobSeries, byUID)
	}
	if snap.Dropped[DropMaxSeries] != 3 || snap.UserDropped["2"] != 2 || snap.UserDropped["1"] != 1 {
		t.Errorf("dropped %v, by user %v", snap.Dropped, snap.UserDropped)
	}
	total := 0
	for _, v := range snap.Jobs {
		total += cost(v)
	}
	if total != snap.JobSeries {
		t.Errorf("the views cost %d series, the snapshot says %d", total, snap.JobSeries)
	}
}

// A log rewritten in place counts its bytes once in the site totals,
// however many versions are read; one that shrinks counts the difference
// as retracted, never less in the total; a copy of a log adds nothing.
func TestRewrittenLogCountsOnce(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Truncate(time.Second)
	path := filepath.Join(dir, "alice_sim_id42-1_1-1-1-1_1.darshan")
	j := darshantest.Job{JobID: 42, UID: 1000, Exe: "/bin/sim", End: now.Add(-time.Hour), Ranks: 4, Bytes: 1 << 20}
	data, err := j.Log()
	if err != nil {
		t.Fatal(err)
	}
	s := startSidecar(t, Config{Dirs: []string{dir}, RescanInterval: time.Hour, NoInotify: true, Now: (&clock{t: now}).now})
	const versions = 20
	for k := range versions {
		writeFile(t, path, data)
		// Each a new version, whatever the file system's timestamps.
		mtime := now.Add(-time.Duration(versions-k) * time.Minute)
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		syncNow(t, s)
	}
	snap := syncNow(t, s)
	posix := func(snap Snapshot) float64 {
		for _, m := range snap.Jobs[0].Modules {
			if m.Name == "POSIX" {
				return m.BytesWritten
			}
		}
		return -1
	}
	wrote := posix(snap)
	if snap.Processed != versions || len(snap.Jobs) != 1 || wrote != 10<<20 {
		t.Fatalf("processed %d versions, %d jobs, the job wrote %g", snap.Processed, len(snap.Jobs), wrote)
	}
	if got := snap.WriteBytes["POSIX"]; got != wrote {
		t.Errorf("site total %g for a log that wrote %g, read %d times", got, wrote, versions)
	}
	// A version that reports less: the total stays, the difference is
	// retracted.
	j.Bytes = 1 << 19
	small, _ := j.Log()
	writeFile(t, path, small)
	snap = syncNow(t, s)
	if got, retracted := snap.WriteBytes["POSIX"], snap.WriteRetracted["POSIX"]; got != wrote || retracted != wrote-posix(snap) || got-retracted != posix(snap) {
		t.Errorf("shrunk to %g: total %g, retracted %g", posix(snap), got, retracted)
	}
	// Grown back: the growth over the version before is added.
	writeFile(t, path, data)
	snap = syncNow(t, s)
	if got, retracted := snap.WriteBytes["POSIX"], snap.WriteRetracted["POSIX"]; got-retracted != wrote || got != wrote+wrote/2 {
		t.Errorf("grown again: total %g, retracted %g, want their difference %g", got, retracted, wrote)
	}
	before := snap.WriteBytes["POSIX"]
	// A copy elsewhere adds nothing; removing the original takes nothing.
	writeFile(t, filepath.Join(dir, "copy", "c.darshan"), data)
	snap = syncNow(t, s)
	if snap.Duplicates != 1 || snap.WriteBytes["POSIX"] != before {
		t.Errorf("a copy: duplicates %d, total %g, want %g", snap.Duplicates, snap.WriteBytes["POSIX"], before)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if snap = syncNow(t, s); snap.WriteBytes["POSIX"] != before || len(snap.Jobs) != 1 {
		t.Errorf("the original removed: total %g, jobs %d", snap.WriteBytes["POSIX"], len(snap.Jobs))
	}
}
