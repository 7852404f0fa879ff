package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A user's jobs can make up job_ids without end (%e, %p, an environment
// variable in jobid_name): the exporter's memory must not follow them. The
// test binary is the fake lctl here (jobidFloodEnv), so that millions of
// entries cost no file and no shell.

// jobidFloodEnv makes the test binary an lctl that prints one OST's
// job_stats with that many job_ids never printed before (from the clock),
// or without end for "endless".
const jobidFloodEnv = "HPCIO_TEST_JOBID_FLOOD"

func init() {
	if n := os.Getenv(jobidFloodEnv); n != "" {
		os.Exit(printJobidFlood(n))
	}
}

func printJobidFlood(arg string) int {
	n := -1
	if arg != "endless" {
		var err error
		if n, err = strconv.Atoi(arg); err != nil {
			return 2
		}
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	base := time.Now().UnixNano() % 1e12
	fmt.Fprint(w, "jobid_name=%j:%u:%H\nobdfilter.fs-OST0000.job_stats=\njob_stats:\n")
	idle := "{ samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n"
	for i := 0; n < 0 || i < n; i++ {
		id := base + int64(i)
		_, err := fmt.Fprintf(w, "- job_id:          \"%d:%d:n%05d\"\n"+
			"  snapshot_time:   1700003601.000000000 secs.nsecs\n  start_time:      1700003600.000000000 secs.nsecs\n  elapsed_time:    1.000000000 secs.nsecs\n"+
			"  write_bytes:     { samples:           1, unit: bytes, min:     4096, max:     4096, sum:             4096, sumsq:           16777216, hist: { 4K: 1 } }\n"+
			"  write:           { samples:           1, unit: usecs, min:      500, max:      500, sum:              500, sumsq:             250000 }\n"+
			"  getattr:         %s  setattr:         %s  punch:           %s  sync:            %s",
			id, 20000+id%1000, id%4096, idle, idle, idle, idle)
		if err != nil {
			return 0 // killed reader: the pipe is gone
		}
	}
	return 0
}

// TestJobidFlood: an lctl printing new job_ids without end, with the
// default flags, and one printing a million distinct ids with
// --lustre.jobstats.max-series=1000. Before the entry budget, the first
// took the exporter to 4.4 GB in three scrapes (every killed run's ids
// kept and published, 29 million series), the second to 1.5 GB at the
// first scrape. Now each run stops at --lustre.jobstats.max-entries
// (200,000), counts over_budget, publishes nothing, and gives back what it
// held: the process lives through five scrapes within the bounds the issue
// set (1 GB, 500 MB; about 120 MB measured).
func TestJobidFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("long: five scrapes of 200,000 job_stats entries each")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildExporter(t)
	for _, tc := range []struct {
		name    string
		ids     string
		flags   []string
		maxPeak int64
	}{
		{"endless", "endless", nil, 1 << 30},
		{"million-max-series-1000", "1000000", []string{"--lustre.jobstats.max-series=1000"}, 500 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lctl := fakeLctl(t, jobidFloodEnv+"="+tc.ids+" exec "+self)
			args := append(onlyCollectors(lustreCollectors()...), "--lustre.lctl-path="+lctl)
			e := startExporter(t, bin, append(args, tc.flags...)...)
			for scrape := 1; scrape <= 5; scrape++ {
				text, _ := scrapeMetrics(t, e, map[string]string{"X-Prometheus-Scrape-Timeout-Seconds": "25"})
				if got := sampleValue(text, `hpcio_exporter_lctl_runs_total{result="over_budget"}`); got != float64(scrape) {
					t.Errorf("scrape %d: over_budget runs %v, want %d", scrape, got, scrape)
				}
				if got := sampleValue(text, `hpcio_exporter_scrape_collector_success{collector="jobstats"}`); got != 0 {
					t.Errorf("scrape %d: jobstats success %v, want 0", scrape, got)
				}
				if strings.Contains(text, "\nlustre_job_") || strings.Contains(text, "\nlustre_jobstats_") {
					t.Errorf("scrape %d: a run over its budget published job series", scrape)
				}
				if e.Exited() {
					t.Fatalf("scrape %d: the exporter died:\n%s", scrape, e.Tail(20))
				}
			}
			peak, err := peakRSS(e.Cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("peak RSS over five scrapes: %.0f MiB", float64(peak)/(1<<20))
			if peak > tc.maxPeak {
				t.Errorf("peak RSS %d MiB, over %d MiB", peak>>20, tc.maxPeak>>20)
			}
			if logs := e.Tail(200); !strings.Contains(logs, "more than 200000 entries in one run (--lustre.jobstats.max-entries)") {
				t.Errorf("no log line names the budget:\n%s", logs)
			}
		})
	}
}
