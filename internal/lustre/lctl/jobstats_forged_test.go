package lctl

import (
	"fmt"
	"strings"
	"testing"
)

// A job_id holding a line break (Lustre before 2.15 printed job_ids raw;
// 2.15 and later escape it as "\x0A" in quotes) must never make an entry,
// or an identity, of the text after the break: each of these outputs holds
// one entry, the user's, whose job_id ends up holding a line break, with
// the entry's operations. Before, the first one made the entry
// "fake:666:n66" with the bytes (and "x" with none), and the others an
// entry "fake:666:n66" with them. Legitimate entries, with or without the
// time keys, stay as they were.
func TestJobIDWithLineBreak(t *testing.T) {
	const ops = "  write_bytes:     { samples: 3, unit: bytes, min: 1, max: 1, sum: 4096 }\n  getattr:         { samples: 2, unit: usecs, min: 1, max: 1, sum: 7 }\n"
	const times = "  snapshot_time:   1700000100.000000000 secs.nsecs\n  start_time:      1700000000.000000000 secs.nsecs\n  elapsed_time:    100.000000000 secs.nsecs\n"
	legit := "- job_id:          \"7:1000:n1\"\n" + times + ops
	forged := map[string]string{
		// x\n- job_id: fake:666:n66 (and the id's real tail on the next line)
		"entry": "- job_id:          x\n- job_id: fake:666:n66\n" + times + ops,
		// the real tail of "%j:%u:%H" after the break
		"stray line":        "- job_id:          fake:666:n66\n:1000:n1\n" + times + ops,
		"empty line":        "- job_id:          fake:666:n66\n\n" + times + ops,
		"key":               "- job_id:          fake:666:n66\n  foo: bar:1000:n1\n" + times + ops,
		"snapshot_time":     "- job_id:          fake:666:n66\n  snapshot_time: 1:1000:n1\n" + times + ops,
		"start_time first":  "- job_id:          fake:666:n66\n  start_time: 1:1000:n1\n" + times + ops,
		"elapsed_time":      "- job_id:          fake:666:n66\n  snapshot_time: 1\n  elapsed_time: 1:1000:n1\n" + times + ops,
		"operation":         "- job_id:          fake:666:n66\n  x: { samples: 9 }:1000:n1\n" + times + ops,
		"two breaks":        "- job_id:          x\n- job_id: y\n- job_id: fake:666:n66\n" + times + ops,
		"entry, time first": "- job_id:          x\n  snapshot_time: 1\n- job_id: fake:666:n66\n" + times + ops,
		"escaped":           "- job_id:          \"x\\x0A-\\x20job_id:\\x20fake:666:n66\"\n" + times + ops,
	}
	for name, entry := range forged {
		for _, order := range []string{"alone", "between"} {
			text := entry
			if order == "between" {
				text = legit + entry + legit
			}
			data := []byte("obdfilter.x-OST0000.job_stats=\njob_stats:\n" + text)
			for _, chunk := range []int{0, 1, 64, 1 << 16} {
				t.Run(fmt.Sprintf("%s/%s/chunk=%d", name, order, chunk), func(t *testing.T) {
					got := trace(data, chunk)
					var ids []string
					for _, line := range strings.Split(got, "\n") {
						if id, ok := strings.CutPrefix(strings.TrimSpace(line), "job "); ok {
							ids = append(ids, id[:strings.LastIndex(id, " snapshot=")])
						}
					}
					want := 1
					if order == "between" {
						want = 3
					}
					if len(ids) != want || !strings.Contains(got, fmt.Sprintf("jobs=%d ", want)) {
						t.Fatalf("%d entries, want %d:\n%s", len(ids), want, got)
					}
					user := ids[len(ids)/2]
					if !strings.Contains(user, `\n`) {
						t.Errorf("job_id %s holds no line break:\n%s", user, got)
					}
					if !strings.Contains(got, "write_bytes bytes samples=3 sum=4096") {
						t.Errorf("the entry lost its operations:\n%s", got)
					}
					for i, id := range ids {
						if i != len(ids)/2 && id != `"7:1000:n1"` {
							t.Errorf("a legitimate entry became %s", id)
						}
					}
				})
			}
		}
	}
	for name, entry := range map[string]string{
		"2.15":          legit,
		"2.12":          "- job_id:          7:1000:n1\n  snapshot_time:   1700000100\n" + ops,
		"no time keys":  "- job_id:          7:1000:n1\n" + ops,
		"escaped space": "- job_id:          \"7:1000:n1\\x20\"\n" + times + ops,
	} {
		data := []byte("obdfilter.x-OST0000.job_stats=\njob_stats:\n" + entry + entry)
		for _, chunk := range []int{0, 1} {
			if got := trace(data, chunk); strings.Contains(got, `\n"`) || !strings.Contains(got, "jobs=2 ") {
				t.Errorf("%s, chunk %d: a legitimate entry changed:\n%s", name, chunk, got)
			}
		}
	}
	if got := trace([]byte("obdfilter.x-OST0000.job_stats=\njob_stats:\n- job_id: \"a\\x20b\\x5c\\x\"\n"+times+ops), 0); !strings.Contains(got, `job "a b\\\\x"`) {
		t.Errorf("escapes not decoded:\n%s", got)
	}
}
