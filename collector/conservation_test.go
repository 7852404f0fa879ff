package collector

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// With the default flags, the per-job series of a target add up to what
// its job_stats counted, exactly: every family, every operation, whatever
// the job_ids (repaired, discarded into "_untrusted", aggregated over the
// labels not kept). Checked on every job_stats output of the shared corpus,
// on the project's fixtures, and on the simulator's mix of broken ids.
func TestJobSumsEqualJobStats(t *testing.T) {
	inputs := map[string]string{}
	jobs := 10000
	if testing.Short() {
		jobs = 1000
	}
	inputs["simulator"] = string(lustresim.JobStatsText(jobs, 0))
	// The mix of broken ids of seeds/lustre-jobstats-methods.md: jobs come
	// and go, and some nodes print broken shadows of their ids.
	var mix bytes.Buffer
	sim := lustresim.New(lustresim.Config{Seed: 7, FSName: "mix", OSTs: 1, Jobs: jobs})
	if err := sim.WriteParams(&mix, lustresim.BenchTime, "jobid_name", "obdfilter.*.job_stats"); err != nil {
		t.Fatal(err)
	}
	inputs["simulator, broken ids"] = mix.String()
	fixtures, err := filepath.Glob(filepath.Join(corpus.Fixtures(t, "lustre"), "jobstats-*.txt"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no job_stats fixtures: %v", err)
	}
	for _, path := range fixtures {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs["fixtures/"+filepath.Base(path)] = string(data)
	}
	if root := corpus.Root(); root == "" {
		t.Log("shared corpus not found (../shared beside the repository, or $HPCIO_SHARED): checking the fixtures and the simulator only")
	} else {
		dir := filepath.Join(root, "corpus", "lustre")
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, ".md") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil || !bytes.Contains(data, []byte("job_stats:")) {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			text := string(data)
			if !strings.Contains(text, ".job_stats=") {
				// A bare /proc file: name its parameter.
				param := "obdfilter.corpus-OST0000.job_stats="
				if strings.Contains(rel, "mdt") || strings.Contains(rel, "mds") {
					param = "mdt.corpus-MDT0000.job_stats="
				}
				text = param + "\n" + text
			}
			inputs["corpus/"+rel] = text
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("simulator, a second scrape", func(t *testing.T) {
		// The same jobs 30 s later, every counter grown: the increments
		// add up to the growth, so the sums equal the later totals.
		later := string(lustresim.JobStatsText(jobs, 30*time.Second))
		want, _ := jobStatsTotals(t, later)
		onlyCollectors(t, "jobstats")
		r := newTestRegistry(t, &textSource{texts: []string{inputs["simulator"], later}})
		scrapeText(t, r, expfmt.FmtText)
		got := exportedTotals(t, scrapeText(t, r, expfmt.FmtText))
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: the per-job series sum to %d, job_stats counted %d", k, got[k], w)
			}
		}
	})
	for name, text := range inputs {
		t.Run(name, func(t *testing.T) {
			want, dups := jobStatsTotals(t, text)
			onlyCollectors(t, "jobstats")
			r := newTestRegistry(t, &textSource{texts: []string{text}})
			out := scrapeText(t, r, expfmt.FmtText)
			got := exportedTotals(t, out)
			if len(want) == 0 && strings.Contains(text, "job_id:") {
				t.Fatal("no job_stats totals read")
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: the per-job series sum to %d, job_stats counted %d", k, got[k], w)
				}
			}
			for k, g := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: the per-job series sum to %d, job_stats counted nothing", k, g)
				}
			}
			// The per-target totals say the same.
			for k, w := range want {
				f := strings.Fields(k)
				var series string
				switch f[0] {
				case "lustre_job_read_bytes", "lustre_job_write_bytes":
					series = fmt.Sprintf(`lustre_jobstats_%s_total{component="%s",target="%s"}`, strings.TrimPrefix(f[0], "lustre_job_"), componentOf(f[1]), f[1])
				case "lustre_job_stats":
					series = fmt.Sprintf(`lustre_jobstats_stats_total{component="%s",operation="%s",target="%s"}`, componentOf(f[1]), f[2], f[1])
				default:
					continue
				}
				if v := value(t, out, series); v != float64(w) {
					t.Errorf("%s = %v, job_stats counted %d", series, v, w)
				}
			}
			for target, n := range dups {
				series := fmt.Sprintf(`lustre_jobstats_duplicate_entries_total{component="%s",target="%s"}`, componentOf(target), target)
				if v := value(t, out, series); v != float64(n) {
					t.Errorf("%s = %v, want %d (the entries that repeated a job_id)", series, v, n)
				}
			}
		})
	}
}

func componentOf(target string) string {
	if strings.Contains(target, "MDT") {
		return "mdt"
	}
	return "ost"
}

// jobStatsTotals reads the job_stats of text as lctl prints them: by
// "family target [operation]", the sum of every entry's counter, in the
// units the exporter's families count (microseconds for operation
// seconds). A job_id printed more than once for a target (damaged output)
// counts the sum of its entries, as the exporter counts it at first sight
// (internal/mechanism/rates/dups.go); dups says how many entries repeated a job_id.
func jobStatsTotals(t *testing.T, text string) (map[string]uint64, map[string]int) {
	t.Helper()
	totals := map[string]uint64{}
	dups := map[string]int{}
	err := lctl.Scan(strings.NewReader(text), "", func(param string) lctl.SectionParser {
		_, target, ok := lctl.JobStatsParam(param)
		if !ok {
			return nil
		}
		return lctl.NewJobStatsParser(&totalsHandler{target: target, totals: totals, dups: dups, seen: map[string]bool{}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return totals, dups
}

type totalsHandler struct {
	target string
	totals map[string]uint64
	dups   map[string]int
	seen   map[string]bool
}

func (h *totalsHandler) Job(js *lctl.JobStat) {
	if h.seen[string(js.JobID)] {
		h.dups[h.target]++
	}
	h.seen[string(js.JobID)] = true
	for _, op := range js.Ops {
		switch op.Op {
		case "read_bytes", "write_bytes":
			dir := strings.TrimSuffix(op.Op, "_bytes")
			h.totals[fmt.Sprintf("lustre_job_%s_samples %s", dir, h.target)] += op.Samples
			if op.HasSum {
				h.totals[fmt.Sprintf("lustre_job_%s_bytes %s", dir, h.target)] += op.Sum
			}
		default:
			h.totals[fmt.Sprintf("lustre_job_stats %s %s", h.target, op.Op)] += op.Samples
		}
		if op.Unit == lctl.UnitUsecs && op.HasSum {
			h.totals[fmt.Sprintf("lustre_job_operation_seconds %s %s", h.target, op.Op)] += op.Sum
		}
	}
}

func (h *totalsHandler) End(bool, lctl.SectionStats) {}

var (
	jobSample   = regexp.MustCompile(`(?m)^(lustre_job_(?:read_bytes|write_bytes|read_samples|write_samples|stats|operation_seconds))_total\{(.*)\} (\S+)$`)
	targetLabel = regexp.MustCompile(`target="([^"]*)"`)
	opLabel     = regexp.MustCompile(`operation="([^"]*)"\s*$`)
)

// exportedTotals sums the per-job series of a response by "family target
// [operation]", operation seconds in microseconds.
func exportedTotals(t *testing.T, text string) map[string]uint64 {
	t.Helper()
	totals := map[string]uint64{}
	for _, m := range jobSample.FindAllStringSubmatch(text, -1) {
		family, labels := m[1], m[2]
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		key := family + " " + targetLabel.FindStringSubmatch(labels)[1]
		if op := opLabel.FindStringSubmatch(labels); op != nil {
			key += " " + op[1]
		}
		if family == "lustre_job_operation_seconds" {
			v = math.Round(v * 1e6)
		}
		totals[key] += uint64(v)
	}
	return totals
}
