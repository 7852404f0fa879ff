package darshan

import (
	"path/filepath"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

func TestRecordID(t *testing.T) {
	// ids as darshan-runtime computed them, from darshan-parser outputs
	for name, id := range map[string]uint64{
		"<STDOUT>":      15920181672442173319,
		"heatmap:POSIX": 16592106915301738621,
		"/projects/radix-io/snyder/tmp/test/mpi-io-test.tmp.dat": 5367110662850514526,
	} {
		if got := RecordID(name); got != id {
			t.Errorf("RecordID(%q) = %d, want %d", name, got, id)
		}
	}
}

// TestRecordIDCorpus checks every name of the corpus against its id, but
// for the logs whose names were anonymized (replaced by numbers) and the
// DFS/DAOS records, whose ids do not hash a path.
func TestRecordIDCorpus(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(corpus.Dir(t, "darshan"), "*", "*.darshan"))
	skip := map[string]bool{"pydarshan_noposix.darshan": true, "pydarshan_noposixopens.darshan": true,
		"skew-autobench-ior.darshan": true, "snyder_ior-DFS_id4681120-53379_5-8-15060-3270540599978592154_1.darshan": true}
	checked := 0
	for _, path := range logs {
		l, _ := Open(path)
		if l == nil || skip[filepath.Base(path)] {
			continue
		}
		for id, name := range l.Names {
			if RecordID(name) != id {
				t.Errorf("%s: %q hashes to %d, the log has %d", filepath.Base(path), name, RecordID(name), id)
			}
			checked++
		}
		l.Close()
	}
	t.Logf("%d names checked", checked)
}
