package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// reportEnd is when the fixture jobs of fixtures/report end.
var reportEnd = time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)

// reportFixtures are the logs of fixtures/report, made with the project's
// writer: job 7001 ran two steps (two logs, names as darshan-runtime
// writes them), job 7002 made many small writes (P06 fires).
func reportFixtures() (map[string][]byte, error) {
	out := map[string][]byte{}
	step1, err := darshantest.Job{JobID: 7001, UID: 1000, Exe: "/apps/sim/bin/sim --steps 10", End: reportEnd.Add(-2 * time.Minute), Ranks: 4, Bytes: 1 << 20}.Log()
	if err != nil {
		return nil, err
	}
	step2, err := darshantest.Job{JobID: 7001, UID: 1000, Exe: "/apps/sim/bin/post", End: reportEnd, Ranks: 2, Bytes: 3 << 20}.Log()
	if err != nil {
		return nil, err
	}
	small, err := darshantest.SmallWrites(7002, reportEnd, 5000, "/apps/logger/bin/logger -v", "/scratch/alice/small.log")
	if err != nil {
		return nil, err
	}
	out["alice_sim_id7001-31001_11-27-34080-1111_1.darshan"] = step1
	out["alice_post_id7001-31077_11-27-34200-2222_1.darshan"] = step2
	out["alice_logger_id7002-40001_11-27-34200-3333_1.darshan"] = small
	return out, nil
}

// The fixture logs are what reportFixtures makes (go test -update writes
// them): they can be made again from this code.
func TestReportFixtures(t *testing.T) {
	logs, err := reportFixtures()
	if err != nil {
		t.Fatal(err)
	}
	dir := corpus.Fixtures(t, "report")
	for name, data := range logs {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s is not what reportFixtures makes (go test -update writes it)", name)
		}
	}
}

// reportFixture returns the path of a log of fixtures/report.
func reportFixture(t *testing.T, name string) string {
	return corpus.Fixtures(t, "report", name)
}
