package jobid

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// knownPuhti is the context the repairs get: the well-formed id of the
// seed's example job, as the same server printed it for other entries.
func knownPuhti() *Known {
	k := NewKnown()
	k.Add(Identity{Job: "11317854", UID: "17627127", Node: "r01c01"})
	return k
}

func TestNormalizeShapes(t *testing.T) {
	n := NewNormalizer(MustParseFormat(DefaultFormat))
	full := Identity{Job: "11317854", UID: "17627127", Node: "r01c01"}
	tests := []struct {
		raw     string
		known   *Known
		want    Identity
		outcome Outcome
	}{
		// The ten shapes of observed_job_ids.tsv, with and without context.
		{"11317854:17627127:r01c01", nil, full, OK},
		{":17627127:r01c01", nil, Identity{Job: SyntheticJob, UID: "17627127", Node: "r01c01"}, SyntheticJobID},
		{"11317854", nil, Identity{}, DiscardedTruncated},
		{"11317854", knownPuhti(), full, RepairedTruncated},
		{"11317854:", nil, Identity{Job: "11317854"}, RepairedTruncated},
		{"11317854:", knownPuhti(), full, RepairedTruncated},
		{"113178544", nil, Identity{}, DiscardedTruncated},
		{"113178544", knownPuhti(), Identity{}, DiscardedExtraChar},
		{"11317854:17627127", nil, Identity{Job: "11317854"}, RepairedTruncated},
		{"11317854:17627127", knownPuhti(), full, RepairedTruncated},
		{"11317854:1762", knownPuhti(), full, RepairedTruncated},
		{"11317854:17627127:", nil, Identity{Job: "11317854", UID: "17627127"}, RepairedTruncated},
		{"11317854:17627127:", knownPuhti(), full, RepairedTruncated},
		{"11317854:17627127:r01c01.bullx", nil, full, RepairedFQDN},
		{":17627127:r01c01.bullx", nil, Identity{Job: SyntheticJob, UID: "17627127", Node: "r01c01"}, SyntheticJobID},
		{":1317854:17627127:r01c01", nil, Identity{}, DiscardedOverwritten},
		{":1317854:17627127:r01c01", knownPuhti(), full, RepairedOverwritten},
		// Login nodes: the fallback format.
		{"bash.1000", nil, Identity{Job: SyntheticJob, Exe: "bash", UID: "1000"}, OKFallback},
		{"python3.11.0", nil, Identity{Job: SyntheticJob, Exe: "python3.11", UID: "0"}, OKFallback},
		// Not a fallback id: the primary separator is there.
		{"11317854:17627127:r01c01.123", nil, Identity{Job: "11317854", UID: "17627127", Node: "r01c01"}, RepairedFQDN},
		// The exporter's own aggregates are not a user's to name: a
		// job field starting with "_" is never a job (before, these were
		// ok, or a repair of them was).
		{"_other:17627127:r01c01", nil, Identity{}, DiscardedReserved},
		{"_untrusted:666:n66", nil, Identity{}, DiscardedReserved},
		{"_nojob:17627127:r01c01", nil, Identity{}, DiscardedReserved},
		{"_other:", nil, Identity{}, DiscardedReserved},
		{"_x:17627127:r01c01.bullx", nil, Identity{}, DiscardedReserved},
		{"_.1000", nil, Identity{Job: SyntheticJob, Exe: "_", UID: "1000"}, OKFallback},
		// Empty ids, garbage.
		{"", nil, Identity{Job: SyntheticJob}, SyntheticJobID},
		{"x\n- job_id: fake:666:n66", nil, Identity{}, DiscardedInvalid},
		{"1131\x01854:1:n", nil, Identity{}, DiscardedInvalid},
		{"\xff\xfe:1:n", nil, Identity{}, DiscardedInvalid},
		{"123:abc:node", nil, Identity{}, DiscardedInvalid},
		{"123:1:2:3:4", knownPuhti(), Identity{}, DiscardedOverwritten},
		// The uid of a cut id is not a prefix of the known one: not restored.
		{"11317854:999", knownPuhti(), Identity{Job: "11317854"}, RepairedTruncated},
	}
	for _, tt := range tests {
		got, outcome := n.Normalize([]byte(tt.raw), tt.known)
		if got != tt.want || outcome != tt.outcome {
			t.Errorf("Normalize(%q, known=%v) = %+v, %s; want %+v, %s", tt.raw, tt.known != nil, got, outcome, tt.want, tt.outcome)
		}
		if outcome.Kept() != (outcome < DiscardedTruncated) {
			t.Errorf("%s: Kept inconsistent", outcome)
		}
	}
}

// A multi-node job: the uid is the same on every node, the node is not.
func TestCompleteMultiNode(t *testing.T) {
	k := NewKnown()
	k.Add(Identity{Job: "77", UID: "1000", Node: "n1"})
	k.Add(Identity{Job: "77", UID: "1000", Node: "n2"})
	n := NewNormalizer(MustParseFormat(DefaultFormat))
	got, outcome := n.Normalize([]byte("77:"), k)
	if want := (Identity{Job: "77", UID: "1000"}); got != want || outcome != RepairedTruncated {
		t.Fatalf("got %+v %s, want %+v repaired_truncated", got, outcome, want)
	}
	// An overwritten id that fits both nodes' ids is ambiguous: none fits
	// uniquely, so it is discarded rather than guessed.
	k.Add(Identity{Job: "87", UID: "1000", Node: "n1"})
	if _, outcome := n.Normalize([]byte(":7:1000:n1"), k); outcome != DiscardedOverwritten {
		t.Fatalf("ambiguous overwritten id: got %s", outcome)
	}
}

func TestOtherFormats(t *testing.T) {
	tests := []struct {
		format, raw string
		want        Identity
		outcome     Outcome
	}{
		{"%j", "4242", Identity{Job: "4242"}, OK},
		{"%j", "", Identity{Job: SyntheticJob}, SyntheticJobID},
		{"%j.%h", "4242.node1.cluster", Identity{Job: "4242", Node: "node1.cluster"}, OK},
		{"%e.%u.%g", "dd.1000.100", Identity{Job: SyntheticJob, Exe: "dd", UID: "1000", GID: "100"}, OK},
		{"%u-%j-%p", "1000-55-4711", Identity{Job: "55", UID: "1000"}, OK},
		{"%j_%H", "55_node1", Identity{Job: "55", Node: "node1"}, OK},
		{"job%%%j", "job%55", Identity{Job: "55"}, OK},
	}
	for _, tt := range tests {
		n := NewNormalizer(MustParseFormat(tt.format))
		got, outcome := n.Normalize([]byte(tt.raw), nil)
		if got != tt.want || outcome != tt.outcome {
			t.Errorf("%s: Normalize(%q) = %+v, %s; want %+v, %s", tt.format, tt.raw, got, outcome, tt.want, tt.outcome)
		}
	}
}

func TestParseFormatErrors(t *testing.T) {
	for _, f := range []string{"", "%", "%x", "abc", "%j%"} {
		if _, err := ParseFormat(f); err == nil {
			t.Errorf("ParseFormat(%q): no error", f)
		}
	}
}

// Every shape in the thesis' table is classified, and the classification
// agrees with the note beside it.
func TestObservedJobIDs(t *testing.T) {
	path := filepath.Join(corpus.Dir(t, "lustre", "jaantollander-masters-thesis"), "observed_job_ids.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := NewNormalizer(MustParseFormat(DefaultFormat))
	wantByNote := map[string]Outcome{
		"correct format (%j:%u:%H)":                          OK,
		"job missing":                                        SyntheticJobID,
		"job field only":                                     RepairedTruncated,
		"job field and separator":                            RepairedTruncated,
		"job field with extra character at the end":          DiscardedExtraChar,
		"job and uid fields":                                 RepairedTruncated,
		"job and uid fields ending with a separator":         RepairedTruncated,
		"fully-qualified hostname instead of short hostname": RepairedFQDN,
		"job missing and fully-qualified hostname":           SyntheticJobID,
		"first character of job overwritten by separator":    RepairedOverwritten,
	}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	rows := 0
	for sc.Scan() {
		raw, note, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("bad row %q", sc.Text())
		}
		want, ok := wantByNote[note]
		if !ok {
			t.Errorf("row %q: note %q has no expectation", raw, note)
			continue
		}
		id, got := n.Normalize([]byte(raw), knownPuhti())
		if got != want {
			t.Errorf("%q (%s): outcome %s, want %s", raw, note, got, want)
		}
		if got.Kept() && id.Job != "11317854" && id.Job != SyntheticJob {
			t.Errorf("%q: kept with job %q", raw, id.Job)
		}
		rows++
	}
	if rows != len(wantByNote) {
		t.Errorf("%d rows, want %d", rows, len(wantByNote))
	}
}
