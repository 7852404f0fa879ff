package lctl

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

type fuzzHandler struct {
	t     *testing.T
	jobs  int
	ended bool
}

func (h *fuzzHandler) Job(js *JobStat) {
	h.jobs++
	for _, op := range js.Ops {
		if op.Op == "" || !utf8.ValidString(op.Op) {
			h.t.Fatalf("operation name %q", op.Op)
		}
	}
	if js.Malformed < 0 {
		h.t.Fatal("negative malformed count")
	}
}

func (h *fuzzHandler) End(complete bool, st SectionStats) {
	if h.ended {
		h.t.Fatal("End called twice")
	}
	h.ended = true
	if st.Jobs != h.jobs {
		h.t.Fatalf("stats say %d jobs, handler got %d", st.Jobs, h.jobs)
	}
}

// FuzzScan feeds arbitrary output to the scanner and the job_stats parser:
// nothing panics, every section is ended once, and no more entries come
// out than "- " lines went in.
func FuzzScan(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("obdfilter.a.job_stats=\njob_stats:\n- job_id: x\n  write_bytes: { samples: 1, unit: bytes, sum: 2 }"))
	f.Add([]byte("- job_id: \"\n  x: {{{ samples: 99999999999999999999999 }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var handlers []*fuzzHandler
		err := Scan(bytes.NewReader(data), "obdfilter.fuzz.job_stats", func(param string) SectionParser {
			h := &fuzzHandler{t: t}
			handlers = append(handlers, h)
			return NewJobStatsParser(h)
		})
		if err != nil {
			t.Fatal(err)
		}
		jobs := 0
		for _, h := range handlers {
			if !h.ended {
				t.Fatal("a section was never ended")
			}
			jobs += h.jobs
		}
		if max := bytes.Count(data, []byte("-")); jobs > max {
			t.Fatalf("%d entries from %d dashes", jobs, max)
		}
	})
}

// addSeeds adds the project's fixtures and, when present, the corpus'
// job_stats files to the seed corpus.
func addSeeds(f *testing.F) {
	dirs := []string{corpus.Fixtures(f, "lustre")}
	if root := corpus.Root(); root != "" {
		dirs = append(dirs, filepath.Join(root, "corpus", "lustre"))
	}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err == nil && bytes.Contains(data, []byte("job_stats")) && len(data) < 1<<20 {
				f.Add(data)
			}
			return nil
		})
	}
}
