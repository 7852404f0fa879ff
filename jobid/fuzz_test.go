package jobid

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalize: any bytes, any format among the usual ones. Nothing
// panics; a kept id has a job; every field of a kept identity is valid
// UTF-8 without control characters, so it can become a label; the result
// does not depend on anything but the input.
func FuzzNormalize(f *testing.F) {
	for _, raw := range []string{
		"11317854:17627127:r01c01", ":17627127:r01c01", "11317854", "11317854:", "113178544",
		"11317854:17627127", "11317854:17627127:", "11317854:17627127:r01c01.bullx",
		":17627127:r01c01.bullx", ":1317854:17627127:r01c01", "bash.1000", "", "\xff", "a:b:c:d:e",
	} {
		for format := 0; format < 4; format++ {
			f.Add([]byte(raw), uint8(format), true)
		}
	}
	formats := []string{DefaultFormat, FallbackFormat, "%j", "%j.%h.%e.%u.%g.%p"}
	f.Fuzz(func(t *testing.T, raw []byte, format uint8, withKnown bool) {
		n := NewNormalizer(MustParseFormat(formats[int(format)%len(formats)]))
		var known *Known
		if withKnown {
			known = NewKnown()
			known.Add(Identity{Job: "11317854", UID: "17627127", Node: "r01c01"})
			known.Add(Identity{Job: "11317855", UID: "17627127", Node: "r01c02"})
		}
		id, outcome := n.Normalize(raw, known)
		if outcome >= NumOutcomes {
			t.Fatalf("outcome %d", outcome)
		}
		if !outcome.Kept() {
			if id != (Identity{}) {
				t.Fatalf("discarded id with identity %+v", id)
			}
			return
		}
		if id.Job == "" {
			t.Fatalf("kept %q without a job", raw)
		}
		for _, v := range []string{id.Job, id.UID, id.GID, id.Node, id.Exe} {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("kept %q with unprintable field %q", raw, v)
			}
		}
		id2, outcome2 := n.Normalize(raw, known)
		if id2 != id || outcome2 != outcome {
			t.Fatal("not deterministic")
		}
	})
}
