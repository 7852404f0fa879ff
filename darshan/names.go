package darshan

import (
	"bytes"
	"io"
)

// readNames reads the name region: the record id → name table. From format
// 3.10 on an entry is {uint64 id; NUL-terminated name}, in 3.00 it is
// {uint64 id; uint32 length; name bytes}. Ids repeat (one copy per rank);
// the first non-empty name wins, as in darshan-util.
//
// The entries are decoded as the region inflates, so that only the table
// is held, never the whole inflated region; each entry kept is charged to
// the log's budget before it is made (see budget.go).
func (l *Log) readNames() error {
	h := &l.Header
	l.Names = map[uint64]string{}
	if h.NameRegion.Length == 0 {
		return nil
	}
	rr := l.openRegion("name records", slotNames, h.NameRegion)
	defer rr.release()
	big := h.BigEndian
	var left int // bytes of an entry cut short by the end of the data
	if h.Minor == 0 {
		for {
			b := rr.window(12)
			if len(b) < 12 {
				left = len(b)
				break
			}
			n := uint64(getUint32(b[8:], big))
			if int64(n) > l.mem.remaining() { // a name the budget cannot keep: fail before inflating it
				return rr.fail(l.mem.charge(int64(n)))
			}
			if uint64(len(b)-12) < n {
				if rr.err != nil {
					left = len(b)
					break
				}
				rr.fill(12 + int(n))
				continue
			}
			id := getUint64(b, big)
			if _, dup := l.Names[id]; !dup {
				if err := l.keepName(id, b[12:12+n], true); err != nil {
					return rr.fail(err)
				}
			}
			rr.r += 12 + int(n)
		}
	} else {
		scanned := 0 // bytes of the current entry's name known to hold no NUL
		for {
			b := rr.window(9)
			if len(b) < 9 {
				left = len(b)
				break
			}
			end := bytes.IndexByte(b[8+scanned:], 0)
			if end < 0 {
				if rr.err != nil {
					left = len(b)
					break
				}
				scanned = len(b) - 8
				rr.fill(len(b) + 1)
				continue
			}
			end += 8 + scanned
			scanned = 0
			id, name := getUint64(b, big), b[8:end]
			if old, dup := l.Names[id]; !dup || (old == "" && len(name) > 0) {
				if err := l.keepName(id, name, !dup); err != nil {
					return rr.fail(err)
				}
			}
			rr.r += end + 1
		}
	}
	switch {
	case rr.err != io.EOF:
		return rr.fail(rr.err)
	case left > 0:
		return rr.fail(causef(ErrTruncated, "name table ends in the middle of an entry (%d bytes left)", left))
	}
	return nil
}

// keepName charges a name, then keeps it: its bytes, and a map entry when
// the id is new. name is cut at its first NUL.
func (l *Log) keepName(id uint64, name []byte, newEntry bool) error {
	name = name[:cLen(name)]
	cost := int64(len(name))
	if newEntry {
		cost += nameEntryCost
	}
	if err := l.mem.charge(cost); err != nil {
		return err
	}
	l.Names[id] = string(name)
	return nil
}

// cLen is the length of the C string in b: up to its first NUL.
func cLen(b []byte) int {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return i
	}
	return len(b)
}

// window returns the unread bytes of the region, n of them or more when
// the data has them (fewer only at its end or damage: see rr.err).
func (rr *regionReader) window(n int) []byte {
	if rr.w-rr.r < n {
		rr.fill(n)
	}
	return rr.buf[rr.r:rr.w]
}
