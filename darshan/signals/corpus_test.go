package signals

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The report of every log of the shared corpus is compared, signal by
// signal, with the independent computation of reference_test.go from the
// log's darshan-parser 3.5.0 text. Where darshan-util prints wrong counters
// the signals built on them cannot agree; each such reference bug is named
// below with the logs and the lines it affects, and nothing else may differ.

// referenceBug is a known error of the reference text.
type referenceBug struct {
	name string
	why  string
	logs []string // relative to the corpus, without ".darshan"
	// affects reports whether a line of the report (its key) is built on
	// the wrong counters; e is the reference's expectation, for bugs that
	// predict the wrong value.
	affects func(key string, e expectation) bool
	// extraModules are modules whose lines only our report has: records
	// the reference lost.
	extraModules []string
}

var ppc64POSIXv1v3 = []string{
	"release/mpi-io-test-ppc64-3.0.0", "release/mpi-io-test-ppc64-3.1.1", "release/mpi-io-test-ppc64-3.1.2",
	"release/mpi-io-test-ppc64-3.1.3", "release/mpi-io-test-ppc64-3.1.5", "release/mpi-io-test-ppc64-3.1.6",
}

var posixV3Logs = []string{
	"release/mpi-io-test-x86_64-3.1.0", "release/mpi-io-test-x86_64-3.1.1", "release/mpi-io-test-x86_64-3.1.2",
	"release/mpi-io-test-x86_64-3.1.3", "release/mpi-io-test-x86_64-3.1.5",
	"release/mpi-io-test-ppc64-3.1.1", "release/mpi-io-test-ppc64-3.1.2", "release/mpi-io-test-ppc64-3.1.3",
	"release/mpi-io-test-ppc64-3.1.5", "release/mpi-io-test-ppc64-3.1.6",
	"apps/pydarshan_sample",
}

func keyField(key string, i int) string { return strings.Split(key, "\t")[i] }

var referenceBugs = []referenceBug{
	{
		name: "unswapped POSIX_F_META_TIME in big-endian logs before POSIX v4 (SOURCES.md quirk 1)",
		why: "darshan-util does not byte-swap POSIX float counters 10-12 of POSIX v1-v3 records; the " +
			"reference prints ~±0 for POSIX_F_META_TIME. Every signal that adds the meta time differs: the " +
			"POSIX module rates (time = read + write + meta) and each record's meta_fraction. Our reader " +
			"swaps them (e.g. 0.146657 s for ppc64-3.1.6).",
		logs: ppc64POSIXv1v3,
		affects: func(key string, _ expectation) bool {
			if keyField(key, 0) != "POSIX" {
				return false
			}
			sig := keyField(key, 3)
			if keyField(key, 2) == "MODULE" {
				return strings.HasSuffix(sig, "_BW") || strings.HasSuffix(sig, "_IOPS")
			}
			return sig == "SIGNAL_META_FRACTION"
		},
	},
	{
		name: "POSIX v3 F_VARIANCE_RANK_BYTES zeroed by darshan-util's up-conversion",
		why: "darshan-posix-logutils' v3→v4 conversion never copies the record's last 16 bytes, so the " +
			"reference prints 0.000000 for POSIX_F_VARIANCE_RANK_BYTES of shared records; bw_variance_proxy " +
			"is that counter. The log holds the value (701.663086 in pydarshan_sample).",
		logs: posixV3Logs,
		affects: func(key string, e expectation) bool {
			return keyField(key, 3) == "SIGNAL_BW_VARIANCE_PROXY" && e.na == "" && e.val.contains(0)
		},
	},
	{
		name: "darshan-parser gives up on every module after a zlib error (SOURCES.md quirk 3)",
		why: "after the POSIX region of corrupt_flip_posix_region fails to inflate, darshan-util fails the " +
			"intact STDIO and HEATMAP regions too. We report their signals; the job totals include STDIO.",
		logs: []string{"corrupt/corrupt_flip_posix_region"},
		affects: func(key string, _ expectation) bool {
			return keyField(key, 0) == "JOB"
		},
		extraModules: []string{"STDIO", "HEATMAP"},
	},
	{
		name: "darshan-parser reads nothing of a region that runs past the end of the file",
		why: "corrupt_truncated_tail16 lacks the last 16 bytes of its HEATMAP region; the first of its two " +
			"records inflates from the bytes present and has signals in our report.",
		logs:         []string{"corrupt/corrupt_truncated_tail16"},
		extraModules: []string{"HEATMAP"},
	},
	// Two more reference bugs of SOURCES.md touch the signals' counters but
	// no log of this corpus: the HEATMAP read bins that darshan-util shifts
	// by one in records one bin shorter than the first (quirk 2; the
	// reader's conformance test finds every HEATMAP line of the corpus
	// identical), and the DAOS records of pre-3.4.7 development builds that
	// darshan-util reads with the wrong record size (no such log here: the
	// corpus has no odd/ directory). A log showing either fails this test
	// until the bug is named here with its lines.
}

func bugsOf(rel string) []referenceBug {
	var out []referenceBug
	for _, b := range referenceBugs {
		if slices.Contains(b.logs, rel) {
			out = append(out, b)
		}
	}
	return out
}

// corpusLog is the outcome of comparing one log.
type corpusLog struct {
	rel         string
	checked     int            // signals compared with a definite reference value or NA
	ambiguous   int            // signals the reference's 6 decimals cannot decide (NA or value)
	ambiguousNA int            // … of which our report has NA
	byBug       map[string]int // report lines explained by each named bug
	problems    []string
}

func TestCorpusMatchesReference(t *testing.T) {
	dir := corpus.Dir(t, "darshan")
	logs, err := filepath.Glob(filepath.Join(dir, "*", "*.darshan"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs in %s (%v)", dir, err)
	}
	slices.Sort(logs)
	matched, withBugs := 0, 0
	totals := map[string]int{}
	var checked, ambiguous, ambiguousNA int
	for _, path := range logs {
		rel := strings.TrimSuffix(strings.TrimPrefix(path, dir+string(filepath.Separator)), ".darshan")
		res := compareLog(t, path, rel)
		checked += res.checked
		ambiguous += res.ambiguous
		ambiguousNA += res.ambiguousNA
		for b, n := range res.byBug {
			totals[b] += n
		}
		if len(res.problems) > 0 {
			t.Errorf("%s: %d differences; first: %s", rel, len(res.problems), strings.Join(res.problems[:min(5, len(res.problems))], "\n\t"))
			continue
		}
		matched++
		if len(res.byBug) > 0 {
			withBugs++
		}
	}
	summary := fmt.Sprintf("%d of %d logs match the reference (%d of them only through the named reference bugs); "+
		"%d signals checked; %d undecidable at darshan-parser's 6 decimals, a divisor printed as 0.000000 "+
		"(NA or a value accepted; %d of ours are NA)",
		matched, len(logs), withBugs, checked, ambiguous, ambiguousNA)
	t.Log(summary)
	fmt.Println("signals:", summary)
	for _, b := range referenceBugs {
		t.Logf("  %d report lines explained by %q", totals[b.name], b.name)
	}
}

// compareLog compares our report of one log with the reference text.
func compareLog(t *testing.T, path, rel string) corpusLog {
	res := corpusLog{rel: rel, byBug: map[string]int{}}
	fail := func(format string, args ...any) { res.problems = append(res.problems, fmt.Sprintf(format, args...)) }
	ref, ok, err := readReference(strings.TrimSuffix(path, ".darshan") + ".darshan.txt")
	if !ok || err != nil {
		t.Fatalf("%s: no reference text (%v)", rel, err)
	}

	l, openErr := darshan.Open(path)
	if l == nil {
		// darshan-parser fails on the same logs: an empty reference.
		if len(ref.header) > 0 || len(ref.records) > 0 {
			fail("the reader cannot open the log (%v), darshan-parser could", openErr)
		}
		return res
	}
	defer l.Close()
	var report bytes.Buffer
	repErr := WriteReport(&report, l)
	if repErr != nil && !strings.HasPrefix(rel, "corrupt/") {
		fail("report error on an intact log: %v", repErr)
	}
	header, keys, got, err := reportLines(report.Bytes())
	if err != nil {
		fail("%v", err)
		return res
	}
	compareHeader(header, ref.header, fail)

	want := refSignals(ref)
	bugs := bugsOf(rel)
	for k, e := range want {
		for _, b := range bugs {
			if b.affects != nil && b.affects(k, e) {
				e.quirk = b.name
				want[k] = e
				break
			}
		}
	}
	for _, k := range keys {
		e, ok := want[k]
		if !ok {
			if b := extraModuleBug(bugs, keyField(k, 0)); b != "" {
				res.byBug[b]++
				continue
			}
			fail("line %q only in our report", k+"\t"+got[k])
			continue
		}
		switch {
		case e.quirk != "":
			res.byBug[e.quirk]++
		case !e.accepts(got[k]):
			fail("%s = %s, the reference gives %s", k, got[k], e)
		case e.maybeNA != "":
			res.ambiguous++
			if strings.HasPrefix(got[k], "NA(") {
				res.ambiguousNA++
			}
		default:
			res.checked++
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			fail("line %q missing from our report (reference: %s)", k, want[k])
		}
	}
	compareSummary(l, ref, rel, fail)
	return res
}

func extraModuleBug(bugs []referenceBug, module string) string {
	for _, b := range bugs {
		if slices.Contains(b.extraModules, module) {
			return b.name
		}
	}
	return ""
}

// compareHeader checks the report's header against darshan-parser's.
func compareHeader(got, want []string, fail func(string, ...any)) {
	if len(got) < 3 || got[1] != "# ORIGINAL DARSHAN LOG HEADER" {
		fail("report does not start with the banner")
		return
	}
	got = got[3:]
	if !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				fail("header line %d is %q, darshan-parser prints %q", i+1, g, w)
				return
			}
		}
	}
}

// compareSummary checks the values the sidecar exports — the job-level
// POSIX access-pattern signals and the per-layer HEATMAP signals — against
// the same independent computation applied to the sums of the text's
// records.
func compareSummary(l *darshan.Log, ref *refLog, rel string, fail func(string, ...any)) {
	s := Summarize(l, 0)
	var posix, shared []*refRecord
	layers := map[string][]*refRecord{}
	for _, r := range ref.records {
		switch r.module {
		case "POSIX":
			posix = append(posix, r)
			if r.rank == "-1" {
				shared = append(shared, r)
			}
		case "HEATMAP":
			name := strings.TrimPrefix(r.name, "heatmap:")
			layers[name] = append(layers[name], r)
		}
	}
	bugs := bugsOf(rel)
	if len(posix) > 0 && len(bugs) == 0 {
		want := refPOSIX(sumOf(posix), true)
		if len(shared) > 0 {
			want["RANK_IMBALANCE_RATIO"] = refPOSIX(sumOf(shared), true)["RANK_IMBALANCE_RATIO"]
		} else {
			want["RANK_IMBALANCE_RATIO"] = expectation{na: "not_shared_file"}
		}
		for _, sig := range POSIXJobSignals {
			name := strings.TrimPrefix(sig.ReportName(), "SIGNAL_")
			if got := s.POSIXJobSignal(sig).String(); !want[name].accepts(got) {
				fail("job-level POSIX %s = %s, the reference gives %s", sig, got, want[name])
			}
		}
	}
	if len(bugs) > 0 {
		return
	}
	if len(layers) != len(s.Layers) {
		fail("summary has %d heatmap layers, the reference %d", len(s.Layers), len(layers))
		return
	}
	for i := range s.Layers {
		ly := &s.Layers[i]
		recs := layers[ly.Name]
		if len(recs) == 0 {
			fail("summary layer %q not in the reference", ly.Name)
			continue
		}
		want := refHeatmap(sumHeatmaps(recs))
		vals := ly.Signals()
		for k, sig := range HeatmapSignals {
			name := strings.TrimPrefix(sig.ReportName(), "SIGNAL_")
			if got := vals[k].String(); !want[name].accepts(got) {
				fail("layer %s %s = %s, the reference gives %s (%d records)", ly.Name, sig, got, want[name], len(recs))
			}
		}
	}
}

// sumHeatmaps adds the bins of records of one layer (same width, as every
// log of the corpus has).
func sumHeatmaps(recs []*refRecord) *refRecord {
	out := &refRecord{module: "HEATMAP", vals: map[string]string{}}
	sums := map[string]int64{}
	for _, r := range recs {
		for k, v := range r.vals {
			if k == "HEATMAP_F_BIN_WIDTH_SECONDS" {
				out.vals[k] = v
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			sums[k] += n
		}
	}
	for k, n := range sums {
		out.vals[k] = strconv.FormatInt(n, 10)
	}
	return out
}
