package dropdir

import (
	"encoding/binary"
	"strings"
	"testing"
)

// FuzzParseEvents: a buffer of inotify events, however cut, is parsed
// within its bounds.
func FuzzParseEvents(f *testing.F) {
	ev := make([]byte, 16)
	binary.NativeEndian.PutUint32(ev[0:], 1)
	binary.NativeEndian.PutUint32(ev[4:], 0x80)
	binary.NativeEndian.PutUint32(ev[12:], 16)
	ev = append(ev, "a.darshan\x00\x00\x00\x00\x00\x00\x00"...)
	f.Add(ev)
	f.Add(ev[:20])
	f.Fuzz(func(t *testing.T, buf []byte) {
		total := 0
		parseEvents(buf, func(wd int32, mask uint32, name string) {
			total += 16 + len(name)
			if strings.IndexByte(name, 0) >= 0 {
				t.Fatalf("name %q keeps a NUL", name)
			}
		})
		if total > len(buf) {
			t.Fatalf("parsed %d bytes of %d", total, len(buf))
		}
	})
}

func TestParseEvents(t *testing.T) {
	var buf []byte
	for _, n := range []string{"a.darshan", ""} {
		ev := make([]byte, 16)
		binary.NativeEndian.PutUint32(ev[0:], 3)
		binary.NativeEndian.PutUint32(ev[4:], 8)
		pad := 0
		if n != "" {
			pad = 16
		}
		binary.NativeEndian.PutUint32(ev[12:], uint32(pad))
		name := make([]byte, pad)
		copy(name, n)
		buf = append(append(buf, ev...), name...)
	}
	var got []string
	parseEvents(buf, func(wd int32, mask uint32, name string) {
		if wd != 3 || mask != 8 {
			t.Errorf("wd %d mask %d", wd, mask)
		}
		got = append(got, name)
	})
	if len(got) != 2 || got[0] != "a.darshan" || got[1] != "" {
		t.Errorf("events %q", got)
	}
}
