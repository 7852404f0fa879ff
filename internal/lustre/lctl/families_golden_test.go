package lctl

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// familyKind is the parser of a family parameter, by the parameter's name:
// the same decision the collectors make, written out independently here.
func familyKind(param string) string {
	leaf := ParamLeaf(param)
	switch {
	case strings.HasSuffix(param, ".job_stats"), leaf == "rpc_stats", leaf == "uuid", leaf == "fstype",
		leaf == "io_latency_stats", leaf == "state", leaf == "changelog_mask", strings.HasPrefix(leaf, "jobid_"),
		strings.HasPrefix(leaf, "threads_"):
		return ""
	case leaf == "brw_stats":
		return "brw"
	case leaf == "recovery_status":
		return "recovery"
	case leaf == "changelog_users":
		return "changelog"
	case strings.Contains(param, ".quota_slave.acct_"), strings.HasPrefix(param, "qmt.") && strings.HasPrefix(leaf, "glb-"):
		return "quota"
	case leaf == "stats" || leaf == "md_stats":
		return "stats"
	case param == "health_check" || param == "version":
		return "text"
	}
	switch leaf {
	case "kbytestotal", "kbytesfree", "kbytesavail", "filestotal", "filesfree", "num_exports", "memused",
		"memused_max", "lnet_memused", "tot_dirty", "tot_granted", "tot_pending", "eviction_count", "active",
		"max_create_count", "lock_count", "lock_unused_count", "resource_count", "lock_timeouts",
		"contended_locks", "contention_seconds", "lru_size", "lru_max_age":
		return "value"
	}
	return ""
}

// familySummary renders what the family parsers made of an output, for
// golden files: one block per parameter.
type familySummary struct {
	out       strings.Builder
	malformed int
}

func (s *familySummary) route(param string) SectionParser {
	kind := familyKind(param)
	if kind == "" {
		return nil
	}
	fmt.Fprintf(&s.out, "%s %s\n", kind, param)
	end := func(complete bool, malformed int) {
		s.malformed += malformed
		fmt.Fprintf(&s.out, "  end complete=%v malformed=%d\n", complete, malformed)
	}
	switch kind {
	case "brw":
		return NewBrwStatsParser(func(st *BrwStats, complete bool) {
			fmt.Fprintf(&s.out, "  snapshot=%.9f start=%.9f\n", st.SnapshotTime, st.StartTime)
			for _, h := range st.Hists {
				fmt.Fprintf(&s.out, "  hist %q log2=%v\n", h.Kind, h.Kind.Log2())
				for _, r := range h.Rows {
					fmt.Fprintf(&s.out, "    %d read=%d write=%d\n", r.Bucket, r.Read, r.Write)
				}
			}
			end(complete, st.Malformed)
		})
	case "recovery":
		return NewRecoveryParser(func(r *Recovery, complete bool) {
			fmt.Fprintf(&s.out, "  status=%q has=%09b start=%g duration=%g remaining=%g completed=%d connected=%d recoverable=%d evicted=%d replayed=%d\n",
				r.Status, r.Has, r.Start, r.Duration, r.TimeRemaining, r.CompletedClients, r.ConnectedClients, r.RecoverableClients, r.EvictedClients, r.ReplayedRequests)
			end(complete, r.Malformed)
		})
	case "changelog":
		return NewChangelogParser(func(cl *Changelog, complete bool) {
			fmt.Fprintf(&s.out, "  current=%d (%v)\n", cl.CurrentIndex, cl.HasCurrentIndex)
			for _, u := range cl.Users {
				fmt.Fprintf(&s.out, "  user %q index=%d idle=%g (%v)\n", u.ID, u.Index, u.Idle, u.HasIdle)
			}
			end(complete, cl.Malformed)
		})
	case "quota":
		return NewQuotaParser(func(e *QuotaEntry) {
			fmt.Fprintf(&s.out, "  id=%d", e.ID)
			if e.HasUsage {
				fmt.Fprintf(&s.out, " inodes=%d kbytes=%d", e.Inodes, e.KBytes)
			}
			if e.HasLimits {
				fmt.Fprintf(&s.out, " hard=%d soft=%d granted=%d time=%d", e.Hard, e.Soft, e.Granted, e.Time)
			}
			s.out.WriteByte('\n')
		}, func(malformed int, complete bool) { end(complete, malformed) })
	case "stats":
		return NewStatsParser(func(sec *StatsSection, complete bool) {
			fmt.Fprintf(&s.out, "  snapshot=%.9f start=%.9f\n", sec.SnapshotTime, sec.StartTime)
			for _, st := range sec.Stats {
				fmt.Fprintf(&s.out, "  %s samples=%d unit=%s", st.Name, st.Samples, st.Unit)
				if st.HasSum {
					fmt.Fprintf(&s.out, " min=%d max=%d sum=%d", st.Min, st.Max, st.Sum)
				}
				if st.HasSumSq {
					fmt.Fprintf(&s.out, " sumsq=%d", st.SumSq)
				}
				s.out.WriteByte('\n')
			}
			end(complete, sec.Malformed)
		})
	case "text":
		return NewTextParser(func(lines [][]byte, truncated, complete bool) {
			if param == "health_check" {
				healthy, known := Health(lines)
				fmt.Fprintf(&s.out, "  healthy=%v known=%v\n", healthy, known)
			} else {
				v, b, ok := Version(lines)
				fmt.Fprintf(&s.out, "  version=%q build=%q ok=%v\n", v, b, ok)
			}
			bad := 0
			if truncated {
				bad = 1
			}
			end(complete, bad)
		})
	default:
		return NewValueParser(func(v *Value, complete bool) {
			n, ok := v.Number()
			bad := 0
			if !ok {
				bad = 1
			}
			fmt.Fprintf(&s.out, "  %q number=%g ok=%v\n", v.Text, n, ok)
			end(complete, bad)
		})
	}
}

func summarizeFamilies(t *testing.T, r io.Reader, unnamed string) (string, int) {
	t.Helper()
	var s familySummary
	if err := Scan(r, unnamed, s.route); err != nil {
		t.Fatal(err)
	}
	return s.out.String(), s.malformed
}

// procParam names the parameter of a bare procfs or sysfs file by its path,
// as lctl would: proc/fs/lustre/obdfilter/fs-OST0000/stats is
// obdfilter.fs-OST0000.stats. DataDog's fixtures are bodies printed by
// `lctl get_param -n` and are named by hand.
func procParam(rel string) string {
	rel = filepath.ToSlash(rel)
	switch filepath.Base(rel) {
	case "mds_mdt_stats.txt":
		return "mds.MDS.mdt.stats"
	case "oss_obdfilter_stats.txt":
		return "obdfilter.lustre-OST0001.stats"
	case "brw_stats_empty.txt", "brw_stats_with_data.txt":
		return "osd-ldiskfs.fixture-OST0000.brw_stats"
	}
	for _, root := range []string{"proc/fs/lustre/", "sys/fs/lustre/", "sys/kernel/debug/lnet/"} {
		if i := strings.Index(rel, root); i >= 0 {
			return strings.ReplaceAll(rel[i+len(root):], "/", ".")
		}
	}
	return ""
}

// corpusSkip tells why a corpus file is not a family this package parses,
// or "" when it is one.
func corpusSkip(rel string, data []byte) string {
	base := filepath.Base(rel)
	switch {
	case base == "SOURCES.md" || strings.HasSuffix(base, ".tsv"):
		return "not lctl output"
	case base == "job_stats" || strings.Contains(rel, "jobstats"):
		return "job_stats (the jobstats parser's)"
	case strings.Contains(rel, "lnetctl") || strings.Contains(base, "lnet_net") || strings.Contains(base, "lnet_stats") ||
		strings.HasSuffix(filepath.ToSlash(rel), "debug/lnet/stats"):
		return "LNet (lnetctl, the LNet collector's)"
	case base == "oss_dl_yaml.txt":
		return "lctl dl, not get_param"
	case base == "rpc_stats":
		return "client rpc_stats: not a family of this issue"
	case base == "changelog_mask" || base == "jobid_name" || base == "jobid_var":
		return "configuration, not a metric"
	case base == "mgs-fs.txt" || base == "osc_states.txt":
		return "mgs.MGS.filesystems / osc.*.state: not a family of this issue"
	}
	return ""
}

// TestFamiliesCorpusGolden parses every non-jobstats file of the shared
// corpus with the family parsers and compares what they read with golden
// files. Real output must parse without a malformed line.
func TestFamiliesCorpusGolden(t *testing.T) {
	root := corpus.Dir(t, "lustre")
	covered, skipped := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if why := corpusSkip(rel, data); why != "" {
			t.Logf("skip %s: %s", rel, why)
			skipped++
			return nil
		}
		unnamed := ""
		if _, _, ok := header(firstLine(data)); !ok {
			if unnamed = procParam(rel); unnamed == "" {
				t.Errorf("%s: neither lctl output with headers nor a known procfs path", rel)
				return nil
			}
		}
		got, malformed := summarizeFamilies(t, bytes.NewReader(data), unnamed)
		if got == "" {
			t.Errorf("%s: no family parameter found", rel)
		}
		if malformed != 0 {
			t.Errorf("%s: real Lustre output has %d lines or values the parsers reject:\n%s", rel, malformed, got)
		}
		checkGolden(t, "families/corpus/"+strings.ReplaceAll(rel, string(filepath.Separator), "__"), got)
		covered++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if covered < 100 {
		t.Errorf("only %d family files found in the corpus", covered)
	}
	t.Logf("%d files parsed, %d skipped", covered, skipped)
}

func firstLine(data []byte) []byte {
	data = bytes.TrimLeft(data, "\n")
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i]
	}
	return data
}

// TestFamiliesFixturesGolden does the same for the project's own fixtures,
// which hold the dialect quirks on purpose: their malformed count is part
// of the golden file.
func TestFamiliesFixturesGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus.Fixtures(t, "lustre"), "families-*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no families fixtures: %v", err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, malformed := summarizeFamilies(t, bytes.NewReader(data), "")
		checkGolden(t, "families/fixtures/"+filepath.Base(path), fmt.Sprintf("%smalformed total %d\n", got, malformed))
	}
}
