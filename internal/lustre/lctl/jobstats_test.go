package lctl

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// summarizer renders what the parser made of an output, one line per
// entry, for golden files.
type summarizer struct {
	out strings.Builder
}

func (s *summarizer) route(param string) SectionParser {
	if param == "jobid_name" {
		return &lineRecorder{s: s, param: param}
	}
	component, target, ok := JobStatsParam(param)
	if !ok {
		fmt.Fprintf(&s.out, "skip %s\n", param)
		return nil
	}
	fmt.Fprintf(&s.out, "param %s component=%s target=%s\n", param, component, target)
	return NewJobStatsParser(s)
}

func (s *summarizer) Job(js *JobStat) {
	fmt.Fprintf(&s.out, "  job %q snapshot=%.9f start=%.9f malformed=%d\n", js.JobID, js.SnapshotTime, js.StartTime, js.Malformed)
	for _, op := range js.Ops {
		if op.HasSum {
			fmt.Fprintf(&s.out, "    %s %s samples=%d sum=%d\n", op.Op, op.Unit, op.Samples, op.Sum)
		} else {
			fmt.Fprintf(&s.out, "    %s %s samples=%d\n", op.Op, op.Unit, op.Samples)
		}
	}
}

func (s *summarizer) End(complete bool, st SectionStats) {
	fmt.Fprintf(&s.out, "  end complete=%v jobs=%d stray=%d\n", complete, st.Jobs, st.Stray)
}

type lineRecorder struct {
	s     *summarizer
	param string
}

func (r *lineRecorder) Line(b []byte) { fmt.Fprintf(&r.s.out, "value %s=%q\n", r.param, b) }
func (r *lineRecorder) End(bool)      {}

func summarize(t *testing.T, r io.Reader, unnamed string) string {
	t.Helper()
	var s summarizer
	if err := Scan(r, unnamed, s.route); err != nil {
		t.Fatal(err)
	}
	return s.out.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name+".golden"), got, *update)
}

// unnamedParam names the parameter of a bare proc file, by its path:
// …/obdfilter/<target>/job_stats, …/mdt/<target>/job_stats, or a file
// named like mds_jobstats.txt.
func unnamedParam(path string) string {
	dir, file := filepath.Split(path)
	if file == "job_stats" {
		parts := strings.Split(filepath.Clean(dir), string(filepath.Separator))
		n := len(parts)
		return parts[n-2] + "." + parts[n-1] + ".job_stats"
	}
	if strings.Contains(file, "mds") {
		return "mdt.unnamed-MDT0000.job_stats"
	}
	return "obdfilter.unnamed-OST0000.job_stats"
}

// TestCorpusGolden parses every job_stats output in the shared corpus:
// Lustre 2.10 to 2.16, with and without headers.
func TestCorpusGolden(t *testing.T) {
	root := corpus.Dir(t, "lustre")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, []byte("job_stats:")) || strings.HasSuffix(path, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		unnamed := ""
		if !bytes.Contains(data, []byte(".job_stats=")) {
			unnamed = unnamedParam(rel)
		}
		got := summarize(t, bytes.NewReader(data), unnamed)
		if strings.Count(got, "  job ") != bytes.Count(data, []byte("- job_id:")) {
			t.Errorf("%s: %d entries parsed, %d in the file", rel, strings.Count(got, "  job "), bytes.Count(data, []byte("- job_id:")))
		}
		if strings.Contains(got, "malformed=1") || strings.Contains(got, "stray=1") {
			t.Errorf("%s: real Lustre output has lines the parser rejects", rel)
		}
		checkGolden(t, "corpus/"+strings.ReplaceAll(rel, string(filepath.Separator), "__"), got)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Errorf("only %d job_stats files found in the corpus", n)
	}
	t.Logf("%d job_stats files parsed", n)
}

func TestFixturesGolden(t *testing.T) {
	dir := corpus.Fixtures(t, "lustre")
	files, err := filepath.Glob(filepath.Join(dir, "jobstats-*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "fixtures/"+filepath.Base(path), summarize(t, bytes.NewReader(data), ""))
	}
}

// Values straight from the files, checked by hand.
func TestCorpusValues(t *testing.T) {
	root := corpus.Dir(t, "lustre")
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	// Lustre 2.14 (DDN): quoted ids, secs.nsecs, hist.
	got := summarize(t, strings.NewReader(read("whamcloud-lustrefs-exporter/lustrefs-exporter/fixtures/jobstats_only/2.14.0_162.txt")), "")
	for _, want := range []string{
		`job "SLURM_JOB10:0:es18kxe-co-client" snapshot=1723114647.887515783 start=1723102025.057286263`,
		"    write_bytes bytes samples=861 sum=11025514496\n",
		"    punch usecs samples=85 sum=16840\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("2.14.0_162: missing %q", want)
		}
	}
	// Lustre 2.10 (GSI): an empty job_id, reqs.
	got = summarize(t, strings.NewReader(read("GSI-HPC-lustre_exporter/proc/fs/lustre/obdfilter/lustrefs-OST0000/job_stats")), "obdfilter.lustrefs-OST0000.job_stats")
	if !strings.Contains(got, "  job \"\" snapshot=1510782606.000000000") || !strings.Contains(got, "    write_bytes bytes samples=64575 sum=215147593728\n    getattr reqs samples=7\n") {
		t.Errorf("GSI OST0000: empty job_id entry not parsed as expected:\n%s", got[:400])
	}
	// An OST with no jobs.
	got = summarize(t, strings.NewReader(read("GSI-HPC-lustre_exporter/proc/fs/lustre/obdfilter/lustrefs-OST0004/job_stats")), "obdfilter.lustrefs-OST0004.job_stats")
	if !strings.Contains(got, "end complete=true jobs=0 stray=0") {
		t.Errorf("empty job_stats: %s", got)
	}
}

func TestEdgeFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "lustre"), "jobstats-edge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(t, bytes.NewReader(data), "")
	for _, want := range []string{
		`value jobid_name="%j:%u:%H"`,
		"param obdfilter.edge-OST0000.job_stats component=ost target=edge-OST0000",
		// Glued values, no sumsq; unknown scalar skipped; new op kept.
		"  job \"22:1000:n1\" snapshot=1723114647.887515783 start=1723102025.057286263 malformed=0\n    write_bytes bytes samples=3 sum=33554432\n    fancy_new_op usecs samples=7 sum=10\n",
		// The malformed punch and the cut setattr are dropped, the rest kept.
		"  job \"23:1000:n1\" snapshot=1723114647.887515783 start=1723102025.057286263 malformed=2\n    write_bytes bytes samples=5 sum=5000\n    sync usecs samples=2 sum=3600\n",
		"  job \"\" snapshot=1723114647.000000000 start=0.000000000 malformed=0",
		"skip obdfilter.edge-OST0000.stats",
		// The last line has no newline.
		"  job \"31:1000:n2\"",
		"    punch usecs samples=1 sum=250\n  end complete=true jobs=1 stray=0",
		"    open reqs samples=5\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("edge fixture: missing %q", want)
		}
	}
}

// An output cut in the middle of an entry: the entry is not handed on, and
// the section ends incomplete.
func TestCutOutput(t *testing.T) {
	text := "obdfilter.x-OST0000.job_stats=\njob_stats:\n- job_id: 1:2:n\n  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 5 }\n- job_id: 3:4:n\n  write_bytes: { samp"
	var s summarizer
	err := Scan(io.MultiReader(strings.NewReader(text), errReader{}), "", s.route)
	if err == nil {
		t.Fatal("no error from a failing reader")
	}
	got := s.out.String()
	if !strings.Contains(got, `job "1:2:n"`) || strings.Contains(got, `job "3:4:n"`) || !strings.Contains(got, "end complete=false jobs=1") {
		t.Errorf("cut output:\n%s", got)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestHeader(t *testing.T) {
	tests := []struct {
		line, name, value string
		ok                bool
	}{
		{"obdfilter.fs-OST0000.job_stats=", "obdfilter.fs-OST0000.job_stats", "", true},
		{"jobid_name=%j:%u:%H", "jobid_name", "%j:%u:%H", true},
		{"obdfilter.fs-OST0000.exports.10.0.0.1@o2ib.stats=", "obdfilter.fs-OST0000.exports.10.0.0.1@o2ib.stats", "", true},
		{"job_stats:", "", "", false},
		{"- job_id: a=b", "", "", false},
		{"  snapshot_time: 1", "", "", false},
		{"status: COMPLETE", "", "", false},
		{"key with space=1", "", "", false},
	}
	for _, tt := range tests {
		name, value, ok := header([]byte(tt.line))
		if ok != tt.ok || string(name) != tt.name || string(value) != tt.value {
			t.Errorf("header(%q) = %q, %q, %v", tt.line, name, value, ok)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"obdfilter.*.job_stats", "obdfilter.fs-OST0000.job_stats", true},
		{"obdfilter.*.job_stats", "mdt.fs-MDT0000.job_stats", false},
		{"*.job_stats", "mdt.fs-MDT0000.job_stats", false}, // '*' stays within a component
		{"*.*.job_stats", "mdt.fs-MDT0000.job_stats", true},
		{"obdfilter.*.stats", "obdfilter.fs-OST0000.exports.10.0.0.1@o2ib.stats", false},
		{"obdfilter.*.exports.*.stats", "obdfilter.fs-OST0000.exports.[2001:db8::1]@tcp.stats", true},
		{"obdfilter.*.exports.*.stats", "obdfilter.fs-OST0000.exports.10.0.0.1@o2ib.stats", true},
		{"jobid_name", "jobid_name", true},
		{"jobid_?ame", "jobid_name", true},
		{"jobid_name", "jobid_var", false},
	}
	for _, tt := range tests {
		if got := MatchPattern(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchPattern(%q, %q) = %v", tt.pattern, tt.name, got)
		}
	}
}
