package jobstats

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// FuzzTrackerRuns feeds outputs of lctl, one run after another (split at
// "\n=====\n"), and checks what must hold whatever the text: no panic,
// totals that never go down, and each target's Counted equal to what its
// identities hold (no eviction, no cap: every increment stays where it was
// counted). Duplicate entries, which the tracker sums with corrections
// taken back within a run, are in the seeds.
func FuzzTrackerRuns(f *testing.F) {
	swap := ostText("fs-OST0000", entry("7:1:a", 10, 4096000), entry("7:1:a", 20, 204800)) + "\n=====\n" +
		ostText("fs-OST0000", entry("7:1:a", 20, 204800), entry("7:1:a", 10, 4300800)) + "\n=====\n" +
		ostText("fs-OST0000", entry("7:1:a", 30, 100), entry("7:1:a", 10, 4300800), entry("4711", 5, 9))
	f.Add(swap)
	f.Add(ostText("fs-OST0000", entry("4711", 10, 0)) + "\n=====\n" +
		ostText("fs-OST0000", entry("4711", 10, 3*4096), entry("4711:1:n1", 10, 8192), entry("4711", 10, 4096)))
	if data, err := os.ReadFile(filepath.Join(corpus.Fixtures(f, "lustre"), "jobstats-edge.txt")); err == nil {
		f.Add(string(data) + "\n=====\n" + strings.ReplaceAll(string(data), "41943040", "41943041"))
	}
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := New(Config{JobIDName: "%j:%u:%H", TTL: time.Hour, UntrustedBucket: true, Labels: []string{"jobid", "uid", "node"}})
		if err != nil {
			t.Fatal(err)
		}
		last := map[string]uint64{}
		now := time.Unix(1_700_000_000, 0)
		for _, out := range strings.Split(text, "\n=====\n") {
			now = now.Add(30 * time.Second)
			tr.BeginRun(now)
			_ = lctl.Scan(bytes.NewReader([]byte(out)), "", func(param string) lctl.SectionParser {
				if h := tr.Target(param); h != nil {
					return lctl.NewJobStatsParser(h)
				}
				return nil
			})
			v := tr.EndRun(nil, nil)
			for _, tv := range v.Targets {
				if tv.Counted == nil {
					continue
				}
				held := make([]uint64, len(tv.Counted))
				for i := range tv.Rows {
					vals := tv.Values(i)
					for slot := range held {
						x, _ := vals.Get(slot)
						held[slot] += x
						k := tv.Component + "\x00" + tv.Target + "\x00" + strings.Join(tv.Rows[i].Key[:], "\x00") + "\x00" + string(rune(slot))
						if x < last[k] {
							t.Fatalf("%s %v slot %d went down from %d to %d", tv.Target, *tv.Rows[i].Key, slot, last[k], x)
						}
						last[k] = x
					}
				}
				for slot, c := range tv.Counted {
					if held[slot] != c {
						t.Fatalf("%s slot %d: the identities hold %d, the target counted %d", tv.Target, slot, held[slot], c)
					}
				}
			}
		}
	})
}
