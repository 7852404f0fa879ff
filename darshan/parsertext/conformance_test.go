package parsertext

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The conformance test runs Dump, Total and DXT on every log of the shared
// corpus and compares the output, byte for byte, with darshan-util 3.5.0's
// (the .darshan.txt, .total.txt and .dxt.txt files beside each log).
//
// Every difference must be one of the reference bugs below: places where
// darshan-util prints a wrong value (or loses data), each named with the
// logs and lines it affects and the reason our value is the right one.

// output is one of the three outputs of the reference tools.
type output string

const (
	dumpOut  output = "darshan" // darshan-parser --show-incomplete
	totalOut output = "total"   // darshan-parser --total --show-incomplete
	dxtOut   output = "dxt"     // darshan-dxt-parser --show-incomplete
)

// referenceBug is a known error of darshan-util 3.5.0. A difference is
// explained by it when it is in one of its logs and outputs and either
//   - a counter line whose value alone differs, for one of its counters,
//     with the reference value the bug predicts (refValue, given the log); or
//   - for its extraModules, lines of ours the reference lacks: records (and
//     totals) that darshan-util did not print because it gave up on the log.
type referenceBug struct {
	name         string
	why          string
	logs         []string // paths relative to the corpus, without ".darshan"
	outputs      []output
	counters     []string // counter names; "total_" is added for Total
	refValue     func(l *darshan.Log, counter, value string) bool
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

func isZero(_ *darshan.Log, _, v string) bool { return v == "0.000000" || v == "-0.000000" }

// unswapped reports whether v is what darshan-util prints for counter when
// it does not byte-swap POSIX floats 10-12: the value of a record's (or the
// sum or max over the records') float with its bytes reversed, or for the
// *_MAX_*_TIME_SIZE totals, 0 or a record's size.
func unswapped(l *darshan.Log, counter, v string) bool {
	recs, _ := l.ReadModule(darshan.POSIX)
	var sum, maxv float64 // darshan-util's aggregate starts at 0
	for _, rec := range recs {
		r := rec.(*darshan.CounterRecord)
		if n, ok := r.Int(counter); ok && (v == "0" || v == fmt.Sprint(n)) {
			return true
		}
		f, ok := r.Float(counter)
		if !ok {
			continue
		}
		sw := math.Float64frombits(bits.ReverseBytes64(math.Float64bits(f)))
		sum += sw
		if sw > maxv {
			maxv = sw
		}
		if v == string(appendFixed(nil, sw, 6)) {
			return true
		}
	}
	return v == string(appendFixed(nil, sum, 6)) || v == string(appendFixed(nil, maxv, 6))
}

var referenceBugs = []referenceBug{
	{
		name: "unswapped POSIX floats in big-endian logs before POSIX v4 (SOURCES.md quirk 1)",
		why: "darshan-posix-logutils skips byte-swapping float indexes 10-12 when the POSIX version is < 4: " +
			"its float loop compares the float index with the integer indexes of the RENAME counters, which it " +
			"meant to skip in the integer loop. The unswapped bytes of a small positive time read as ~±0. We " +
			"swap them (e.g. 0.146657, 0.321217, 0.045751 for ppc64-3.1.6, times consistent with the other " +
			"timers of the record). Totals inherit the error, and so do the *_MAX_*_TIME_SIZE totals, which " +
			"darshan-util takes from the record with the largest max time.",
		logs:     ppc64POSIXv1v3,
		outputs:  []output{dumpOut, totalOut},
		counters: []string{"POSIX_F_META_TIME", "POSIX_F_MAX_READ_TIME", "POSIX_F_MAX_WRITE_TIME", "POSIX_MAX_READ_TIME_SIZE", "POSIX_MAX_WRITE_TIME_SIZE"},
		refValue: unswapped,
	},
	{
		name: "POSIX v3 variance counters zeroed by darshan-util's up-conversion",
		why: "darshan-posix-logutils turns a v3 record (664 bytes) into v4 (704) with two memmoves that both " +
			"copy rec_len - offset bytes with the old rec_len; the second one starts after the record already " +
			"grew by 16 bytes, so the record's last 16 bytes — POSIX_F_VARIANCE_RANK_TIME and " +
			"POSIX_F_VARIANCE_RANK_BYTES — are never copied and read as the zeros of the scratch buffer. The " +
			"log holds the values (e.g. 95.434243 and 701.663086 in pydarshan_sample, a 2048-rank shared " +
			"file); we print them. --total is unaffected: it always prints 0 for variances.",
		logs:     posixV3Logs,
		outputs:  []output{dumpOut},
		counters: []string{"POSIX_F_VARIANCE_RANK_TIME", "POSIX_F_VARIANCE_RANK_BYTES"},
		refValue: isZero,
	},
	{
		name: "darshan-parser gives up on every module after a zlib error (SOURCES.md quirk 3)",
		why: "darshan-util never resets its z_stream after inflate fails in the POSIX region, so every later " +
			"region fails too. The STDIO and HEATMAP regions of corrupt_flip_posix_region are intact; we " +
			"print their records (and STDIO totals) and report the POSIX damage as an error.",
		logs:         []string{"corrupt/corrupt_flip_posix_region"},
		outputs:      []output{dumpOut, totalOut},
		extraModules: []string{"STDIO", "HEATMAP"},
	},
	{
		name: "darshan-parser reads nothing of a region that runs past the end of the file",
		why: "darshan_log_dzload reads a region's compressed bytes in one go and fails when the file is " +
			"shorter. corrupt_truncated_tail16 lacks the last 16 bytes of its HEATMAP region, but the first " +
			"of its two records inflates from the bytes present; we print it and report the truncation.",
		logs:         []string{"corrupt/corrupt_truncated_tail16"},
		outputs:      []output{dumpOut},
		extraModules: []string{"HEATMAP"},
	},
}

func TestConformance(t *testing.T) {
	dir := corpus.Dir(t, "darshan")
	logs, err := filepath.Glob(filepath.Join(dir, "*", "*.darshan"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs in %s (%v)", dir, err)
	}
	slices.Sort(logs)
	for _, out := range []output{dumpOut, totalOut, dxtOut} {
		var total, identical, explained int
		for _, path := range logs {
			rel := strings.TrimSuffix(strings.TrimPrefix(path, dir+string(filepath.Separator)), ".darshan")
			want, ok := reference(t, strings.TrimSuffix(path, ".darshan")+"."+string(out)+".txt")
			if !ok {
				continue
			}
			total++
			got := render(t, path, out)
			if bytes.Equal(got, want) {
				identical++
				continue
			}
			if msg := explain(path, rel, out, string(want), string(got)); msg != "" {
				t.Errorf("%s (%s): %s", rel, out, msg)
				continue
			}
			explained++
		}
		line := fmt.Sprintf("%s: %d of %d logs identical; %d differ only by the named reference bugs", out, identical, total, explained)
		t.Log(line)
		fmt.Println("conformance", line)
	}
}

// render runs our printer for out on the log at path.
func render(t *testing.T, path string, out output) []byte {
	var buf bytes.Buffer
	l, _ := darshan.Open(path) // a nil Log prints nothing, as the reference does
	if l == nil {
		return nil
	}
	defer l.Close()
	var err error
	switch out {
	case dumpOut:
		err = Dump(&buf, nil, l)
	case totalOut:
		err = Total(&buf, nil, l)
	case dxtOut:
		err = DXT(&buf, nil, l)
	}
	if err != nil && !strings.Contains(path, "corrupt") {
		t.Errorf("%s (%s): unexpected error %v", path, out, err)
	}
	return buf.Bytes()
}

// reference reads a reference output, gzipped or not.
func reference(t *testing.T, path string) ([]byte, bool) {
	if b, err := os.ReadFile(path); err == nil {
		return b, true
	}
	f, err := os.Open(path + ".gz")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s.gz: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s.gz: %v", path, err)
	}
	return b, true
}

// explain returns "" when every difference between want (the reference) and
// got is explained by a reference bug, else a description of the first one
// that is not.
func explain(path, rel string, out output, want, got string) string {
	var bugs []referenceBug
	for _, b := range referenceBugs {
		if slices.Contains(b.logs, rel) && slices.Contains(b.outputs, out) {
			bugs = append(bugs, b)
		}
	}
	if len(bugs) == 0 {
		return "differs from the reference and no reference bug covers it:\n" + firstDifference(want, got)
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var extra []string
	for _, b := range bugs {
		extra = append(extra, b.extraModules...)
	}
	if len(extra) > 0 {
		var err string
		if gl, err = dropInsertions(wl, gl, extra); err != "" {
			return err
		}
	}
	if len(wl) != len(gl) {
		return fmt.Sprintf("%d lines, the reference has %d:\n%s", len(gl), len(wl), firstDifference(want, got))
	}
	l, _ := darshan.Open(path)
	if l == nil {
		return "cannot open the log"
	}
	defer l.Close()
	for i := range wl {
		if wl[i] == gl[i] {
			continue
		}
		counter, refVal, ok := sameCounterLine(wl[i], gl[i], out)
		covered := false
		for _, b := range bugs {
			if ok && slices.Contains(b.counters, counter) && (b.refValue == nil || b.refValue(l, counter, refVal)) {
				covered = true
			}
		}
		if !covered {
			return fmt.Sprintf("line %d not explained by %q:\nreference: %s\nours:      %s", i+1, bugs[0].name, wl[i], gl[i])
		}
	}
	return ""
}

// sameCounterLine reports whether two lines are the same counter line but
// for the value, and returns the counter name and the reference value.
func sameCounterLine(want, got string, out output) (counter, refValue string, ok bool) {
	if out == totalOut {
		wk, wv, wok := strings.Cut(want, ": ")
		gk, _, gok := strings.Cut(got, ": ")
		if !wok || !gok || wk != gk || !strings.HasPrefix(wk, "total_") {
			return "", "", false
		}
		return strings.TrimPrefix(wk, "total_"), wv, true
	}
	w, g := strings.Split(want, "\t"), strings.Split(got, "\t")
	if len(w) != 8 || len(g) != 8 {
		return "", "", false
	}
	for i := range w {
		if i != 4 && w[i] != g[i] {
			return "", "", false
		}
	}
	return w[3], w[4], true
}

// dropInsertions removes from got the lines the reference lacks, provided
// that the reference is got with whole blocks of the given modules taken
// out: their counter lines ("MOD\t…"), totals ("total_MOD_…"), and the
// description lines and blank lines between them.
func dropInsertions(want, got []string, modules []string) ([]string, string) {
	var kept []string
	j := 0
	for i := 0; i < len(got); i++ {
		if j < len(want) && got[i] == want[j] {
			kept = append(kept, got[i])
			j++
			continue
		}
		if !insertable(got[i], modules) {
			if j < len(want) {
				return nil, fmt.Sprintf("line %d differs and is not a record of %v:\nreference: %s\nours:      %s", i+1, modules, want[j], got[i])
			}
			return nil, fmt.Sprintf("line %d is extra and not a record of %v: %s", i+1, modules, got[i])
		}
	}
	if j != len(want) {
		return nil, fmt.Sprintf("reference line %d is missing from ours: %s", j+1, want[j])
	}
	return kept, ""
}

func insertable(line string, modules []string) bool {
	if line == "" || strings.HasPrefix(line, "#") {
		return true
	}
	for _, m := range modules {
		if strings.HasPrefix(line, m+"\t") || strings.HasPrefix(line, "total_"+m+"_") {
			return true
		}
	}
	return false
}

// firstDifference shows the first differing line of two texts.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nreference: %q\nours:      %q", i+1, w, g)
		}
	}
	return "(no line differs: only the end of file)"
}

// TestReferenceBugsInFixtures names the reference bugs that no corpus log
// shows, on fixtures made to show them, with the lines darshan-parser would
// print instead.
func TestReferenceBugsInFixtures(t *testing.T) {
	dump := func(name string) string {
		l, err := darshan.Open(filepath.Join(corpus.Fixtures(t, "darshan"), name))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		var out bytes.Buffer
		if err := Dump(&out, nil, l); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	// HEATMAP: rank 2's record has 4 bins where the first record has 5.
	// darshan-heatmap-logutils adds the bin by moving the read bins one
	// place right over the end of the write bins, so it prints
	// HEATMAP_READ_BIN_0 = 0 and READ_BIN_1..4 = 300..303, losing nothing
	// but shifting every read to a bin 0.2 s later. We print 300..303, 0.
	heat := dump("heatmap_off_by_one.darshan")
	for bin, want := range []string{"300", "301", "302", "303", "0"} {
		line := fmt.Sprintf("HEATMAP\t2\t%d\tHEATMAP_READ_BIN_%d\t%s\t", darshan.RecordID("heatmap:POSIX"), bin, want)
		if !strings.Contains(heat, line) {
			t.Errorf("heatmap: no line %q", line)
		}
	}
	// DAOS: darshan-util reads 688-byte pre-release records as 696-byte
	// ones, so from the second record on every counter is shifted. We
	// print DAOS_NB_OPS -1 (not recorded) and the right object ids.
	daos := dump("daos_prerelease.darshan")
	for i := range 3 {
		line := fmt.Sprintf("DAOS\t-1\t%d\tDAOS_NB_OPS\t-1\t%d.42\t", 1000+i, i)
		if !strings.Contains(daos, line) {
			t.Errorf("daos: no line %q", line)
		}
	}
}
