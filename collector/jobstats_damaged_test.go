package collector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
)

// Damaged job_stats output, read as lctl prints it, through the tracker to
// what a scrape shows: a job_id printed twice for one target, and a job_id
// cut short that came before its whole id.

// jobstatsDialect writes job_stats entries as one Lustre release prints
// them; the layouts are those of the shared corpus (Lustre 2.10: GSI-HPC's
// lustre_exporter test tree; 2.14: whamcloud's lustrefs-exporter
// jobstats_only/2.14.0_162.txt; 2.16 MDT: DataDog's mds_jobstats.txt).
type jobstatsDialect struct {
	name, component, target string
	// entry writes one entry of id, started at start (not printed before
	// 2.12), read at now, that wrote write bytes.
	entry func(id string, start, now float64, write uint64) string
}

func (d jobstatsDialect) param() string {
	prefix := "obdfilter."
	if d.component == "mdt" {
		prefix = "mdt."
	}
	return prefix + d.target + ".job_stats=\njob_stats:\n"
}

func (d jobstatsDialect) output(entries ...string) string {
	return d.param() + strings.Join(entries, "")
}

var jobstatsDialects = []jobstatsDialect{
	{name: "2.10", component: "ost", target: "fs-OST0000", entry: func(id string, _, now float64, write uint64) string {
		// No start_time, integer snapshot_time, unit reqs, ids unquoted.
		return fmt.Sprintf("- job_id:          %s\n  snapshot_time:   %d\n", id, int64(now)) +
			"  read_bytes:      { samples:         125, unit: bytes, min:    4096, max:    4096, sum:          512000 }\n" +
			fmt.Sprintf("  write_bytes:     { samples: %11d, unit: bytes, min:    4096, max: 4194304, sum: %15d }\n", write/10, write) +
			"  getattr:         { samples:           7, unit:  reqs }\n" +
			"  setattr:         { samples:          43, unit:  reqs }\n" +
			"  punch:           { samples:           1, unit:  reqs }\n" +
			"  sync:            { samples:           8, unit:  reqs }\n" +
			"  destroy:         { samples:          12, unit:  reqs }\n" +
			"  create:          { samples:           5, unit:  reqs }\n" +
			"  statfs:          { samples:           6, unit:  reqs }\n" +
			"  get_info:        { samples:          23, unit:  reqs }\n" +
			"  set_info:        { samples:          74, unit:  reqs }\n" +
			"  quotactl:        { samples:           9, unit:  reqs }\n"
	}},
	{name: "2.14", component: "ost", target: "fs-OST0001", entry: func(id string, start, now float64, write uint64) string {
		if strings.Contains(id, ":") {
			id = `"` + id + `"` // quoted when it holds a colon
		}
		return fmt.Sprintf("- job_id:          %s\n  snapshot_time:   %.9f secs.nsecs\n  start_time:      %.9f secs.nsecs\n  elapsed_time:    %.9f secs.nsecs\n", id, now, start, now-start) +
			"  read_bytes:      { samples:           0, unit: bytes, min:        0, max:        0, sum:                0, sumsq:                  0, hist: {  } }\n" +
			fmt.Sprintf("  write_bytes:     { samples: %11d, unit: bytes, min:    24576, max: 16777216, sum: %16d, sumsq: %18d, hist: { 32K: 1, 16M: 2 } }\n", write/10, write, write*write) +
			"  read:            { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n" +
			fmt.Sprintf("  write:           { samples: %11d, unit: usecs, min:       65, max:    34699, sum: %16d, sumsq:        80724646151 }\n", write/10, write*7) +
			"  getattr:         { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n" +
			"  setattr:         { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n" +
			"  punch:           { samples:          85, unit: usecs, min:       96, max:      354, sum:            16840, sumsq:            3813568 }\n" +
			"  sync:            { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n" +
			"  destroy:         { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n" +
			"  create:          { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n"
	}},
	{name: "2.16 MDT", component: "mdt", target: "fs-MDT0000", entry: func(id string, start, now float64, write uint64) string {
		if strings.Contains(id, ":") {
			id = `"` + id + `"`
		}
		var b strings.Builder
		fmt.Fprintf(&b, "- job_id:          %s\n  snapshot_time:   %.9f secs.nsecs\n  start_time:      %.9f secs.nsecs\n  elapsed_time:    %.9f secs.nsecs\n", id, now, start, now-start)
		for _, op := range []string{"open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr", "setattr", "getxattr", "setxattr",
			"statfs", "sync", "samedir_rename", "parallel_rename_file", "parallel_rename_dir", "crossdir_rename", "read", "write", "read_bytes", "write_bytes", "punch", "migrate", "fallocate"} {
			switch op {
			case "open":
				fmt.Fprintf(&b, "  %-16s { samples: %11d, unit: usecs, min:       80, max:      182, sum: %16d, sumsq:              79601 }\n", op+":", write/10, write*3)
			case "write_bytes":
				fmt.Fprintf(&b, "  %-16s { samples: %11d, unit: bytes, min:     4096, max:  1048576, sum: %16d, sumsq: %18d, hist: { 4K: 1 } }\n", op+":", write/10, write, write*write)
			case "read_bytes":
				fmt.Fprintf(&b, "  %-16s { samples:           0, unit: bytes, min:        0, max:        0, sum:                0, sumsq:                  0, hist: {  } }\n", op+":")
			default:
				fmt.Fprintf(&b, "  %-16s { samples:           0, unit: usecs, min:        0, max:        0, sum:                0, sumsq:                  0 }\n", op+":")
			}
		}
		return b.String()
	}},
}

// jobstatsWant checks series of one scrape.
func jobstatsWant(t *testing.T, run int, text string, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		if got := value(t, text, series); got != w {
			t.Errorf("run %d: %s = %v, want %v", run+1, series, got, w)
		}
	}
}

// Two entries of one job_id in one target, whose order swaps between
// outputs: the job's counter is their sum at every scrape, and so is the
// target's total. On e27eef4 the first entry printed stood for the job_id,
// and a swap read as a restart (the other entry's start_time): 1,000 /
// 1,050 / 2,100 against the truth 1,050 / 1,100 / 1,150.
func TestJobstatsDuplicateEntriesSwapped(t *testing.T) {
	type e struct {
		start float64
		write uint64
	}
	// A and B: A grows 1,000 → 1,050 → 1,050, B 50 → 50 → 100.
	runs := [][]e{{{1000, 1000}, {1010, 50}}, {{1010, 50}, {1000, 1050}}, {{1000, 1050}, {1010, 100}}}
	sums := []float64{1050, 1100, 1150}
	for _, d := range jobstatsDialects {
		t.Run(d.name, func(t *testing.T) {
			onlyCollectors(t, "jobstats")
			var texts []string
			for i, entries := range runs {
				now := 2000 + 30*float64(i)
				var out []string
				for k, x := range entries {
					entry := d.entry("7:1000:n1", x.start, now, x.write)
					if d.name == "2.14" && k == 1 {
						// The second one as ≤ 2.12 prints it, unquoted:
						// the parser reads both alike.
						entry = strings.Replace(entry, `"7:1000:n1"`, "7:1000:n1", 1)
					}
					out = append(out, entry)
				}
				texts = append(texts, d.output(out...))
			}
			if d.name == "2.14" && !strings.Contains(texts[0], "- job_id:          7:1000:n1\n") {
				t.Fatal("the unquoted entry is quoted")
			}
			r := newTestRegistry(t, &textSource{texts: texts})
			labels := fmt.Sprintf(`component="%s",target="%s"`, d.component, d.target)
			for i := range runs {
				text := scrapeText(t, r, expfmt.FmtText)
				jobstatsWant(t, i, text, map[string]float64{
					`lustre_job_write_bytes_total{` + labels + `,jobid="7",uid="1000",node="n1"}`:   sums[i],
					`lustre_job_write_samples_total{` + labels + `,jobid="7",uid="1000",node="n1"}`: sums[i] / 10,
					`lustre_jobstats_write_bytes_total{` + labels + `}`:                             sums[i],
					`lustre_jobstats_duplicate_entries_total{` + labels + `}`:                       float64(i + 1),
				})
			}
		})
	}
}

// A job_id cut short ("11317854", the job field alone) met in an output
// without its whole id is counted under "_untrusted"; when its whole id
// comes, in the same output, the cut id's increments of that output count
// under the job, before or after the whole id in the output. On e27eef4
// they counted under "_untrusted", and only the next output's went to the
// job: 900 of the 2,100 the job's entries wrote.
func TestJobstatsCutIDBeforeWholeID(t *testing.T) {
	const cut, whole = "11317854", "11317854:17627127:r01c01"
	for _, d := range jobstatsDialects {
		for _, cutFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/cut id printed first=%v", d.name, cutFirst), func(t *testing.T) {
				onlyCollectors(t, "jobstats")
				pair := func(now float64, c, w uint64) string {
					a, b := d.entry(cut, 1000, now, c), d.entry(whole, 1005, now, w)
					if !cutFirst {
						a, b = b, a
					}
					return d.output(a, b)
				}
				texts := []string{
					d.output(d.entry(cut, 1000, 2000, 0)), // the cut id alone: nothing written yet
					pair(2030, 1200, 900),
					pair(2060, 1300, 950),
				}
				labels := fmt.Sprintf(`component="%s",target="%s"`, d.component, d.target)
				job := `lustre_job_write_bytes_total{` + labels + `,jobid="11317854",uid="17627127",node="r01c01"}`
				untrusted := `lustre_job_write_bytes_total{` + labels + `,jobid="_untrusted"}`
				total := `lustre_jobstats_write_bytes_total{` + labels + `}`
				want := []map[string]float64{
					{job: -1, untrusted: -1, total: 0},
					{job: 2100, untrusted: -1, total: 2100}, // the job's whole truth
					{job: 2250, untrusted: -1, total: 2250},
				}
				r := newTestRegistry(t, &textSource{texts: texts})
				for i := range texts {
					jobstatsWant(t, i, scrapeText(t, r, expfmt.FmtText), want[i])
				}
			})
		}
	}
}

// A cut id and its whole id both new in one output were already repaired
// from that output on e27eef4, in either order; so they stay.
func TestJobstatsCutIDWithWholeIDNew(t *testing.T) {
	d := jobstatsDialects[1]
	onlyCollectors(t, "jobstats")
	text := d.output(d.entry("11317854", 1000, 2000, 1200), d.entry("11317854:17627127:r01c01", 1000, 2000, 900))
	r := newTestRegistry(t, &textSource{texts: []string{text}})
	labels := fmt.Sprintf(`component="%s",target="%s"`, d.component, d.target)
	jobstatsWant(t, 0, scrapeText(t, r, expfmt.FmtText), map[string]float64{
		`lustre_job_write_bytes_total{` + labels + `,jobid="11317854",uid="17627127",node="r01c01"}`: 2100,
		`lustre_job_write_bytes_total{` + labels + `,jobid="_untrusted"}`:                            -1,
	})
}

// Identities a user's job_id must not make, in every dialect: a job_id
// holding a line break followed by "- job_id: fake:666:n66" (the real tail
// of %j:%u:%H on the line after it), and job_ids that name the exporter's
// own aggregates. Each entry's bytes count under "_untrusted", the
// target's total stays exact, and no series names the forged job. Before,
// the first made jobid="fake",uid="666",node="n66" with the bytes, and the
// others counted as the jobs "_other", "_untrusted" and "_nojob" with their
// uid and node.
func TestJobstatsForgedIdentities(t *testing.T) {
	for _, d := range jobstatsDialects {
		t.Run(d.name, func(t *testing.T) {
			onlyCollectors(t, "jobstats")
			setFlag(t, &jobstatsUntrustedBucket, true)
			// x\n- job_id: fake:666:n66\n:1000:n1, as Lustre before 2.15
			// prints it (2.15 and later escape the break in quotes).
			forged := strings.Replace(d.entry("x", 1000, 2000, 4096), "- job_id:          x\n",
				"- job_id:          x\n- job_id: fake:666:n66\n:1000:n1\n", 1)
			if d.name != "2.10" {
				forged = strings.Replace(d.entry("x", 1000, 2000, 4096), "- job_id:          x\n",
					`- job_id:          "x\x0A-\x20job_id:\x20fake:666:n66\x0A:1000:n1"`+"\n", 1)
			}
			text := d.output(forged, d.entry("_other:1000:n1", 1000, 2000, 8192), d.entry("_untrusted:1000:n1", 1000, 2000, 16384),
				d.entry("_nojob:1000:n1", 1000, 2000, 32768), d.entry("7:1000:n1", 1000, 2000, 65536))
			r := newTestRegistry(t, &textSource{texts: []string{text}})
			scrape := scrapeText(t, r, expfmt.FmtText)
			labels := fmt.Sprintf(`component="%s",target="%s"`, d.component, d.target)
			jobstatsWant(t, 0, scrape, map[string]float64{
				`lustre_job_write_bytes_total{` + labels + `,jobid="_untrusted"}`:             4096 + 8192 + 16384 + 32768,
				`lustre_job_write_bytes_total{` + labels + `,jobid="7",uid="1000",node="n1"}`: 65536,
				`lustre_jobstats_write_bytes_total{` + labels + `}`:                           4096 + 8192 + 16384 + 32768 + 65536,
				jobidEntries(d, "discarded_invalid"):                                          1,
				jobidEntries(d, "discarded_reserved"):                                         3,
				jobidEntries(d, "ok"):                                                         1,
			})
			for _, line := range strings.Split(scrape, "\n") {
				if strings.HasPrefix(line, "lustre_job_") && (strings.Contains(line, `"fake"`) || strings.Contains(line, `uid="666"`) ||
					(strings.Contains(line, `jobid="_`) && strings.Contains(line, `uid="1000"`))) {
					t.Errorf("a forged identity: %s", line)
				}
			}
		})
	}
}

// jobidEntries is the series of lustre_jobid_entries_total of d's target
// and outcome, its labels in the exposition's order.
func jobidEntries(d jobstatsDialect, outcome string) string {
	return fmt.Sprintf(`lustre_jobid_entries_total{component="%s",outcome="%s",target="%s"}`, d.component, outcome, d.target)
}
