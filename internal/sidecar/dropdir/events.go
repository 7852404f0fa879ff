package dropdir

import (
	"bytes"
	"encoding/binary"
)

// inotifyEventSize is the fixed part of struct inotify_event: wd, mask,
// cookie, len.
const inotifyEventSize = 16

// parseEvents splits a buffer read from an inotify descriptor into events:
// each is the fixed part, then len bytes of NUL-padded name. A short or
// inconsistent buffer ends the parse; nothing in it is trusted beyond its
// bounds.
func parseEvents(buf []byte, fn func(wd int32, mask uint32, name string)) {
	for len(buf) >= inotifyEventSize {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		n := binary.NativeEndian.Uint32(buf[12:])
		if uint64(n) > uint64(len(buf)-inotifyEventSize) {
			return
		}
		name := buf[inotifyEventSize : inotifyEventSize+int(n)]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		fn(wd, mask, string(name))
		buf = buf[inotifyEventSize+int(n):]
	}
}
