package darshan

import (
	"bytes"
	"io"
)

// readNames reads the name region: the record id → name table. From format
// 3.10 on an entry is {uint64 id; NUL-terminated name}, in 3.00 it is
// {uint64 id; uint32 length; name bytes}. Ids repeat (one copy per rank);
// the first non-empty name wins, as in darshan-util.
func (l *Log) readNames() error {
	h := &l.Header
	l.Names = map[uint64]string{}
	if h.NameRegion.Length == 0 {
		return nil
	}
	rr := l.openRegion("name records", h.NameRegion)
	data, err := rr.all()
	rr.release()
	big := h.BigEndian
	for len(data) > 0 {
		var id uint64
		var name string
		if h.Minor == 0 {
			if len(data) < 12 {
				break
			}
			n := uint64(getUint32(data[8:], big))
			if uint64(len(data)-12) < n {
				break
			}
			id, name = getUint64(data, big), cString(data[12:12+n])
			data = data[12+n:]
			if _, dup := l.Names[id]; dup {
				continue
			}
		} else {
			if len(data) < 9 {
				break
			}
			end := bytes.IndexByte(data[8:], 0)
			if end < 0 {
				break
			}
			id, name = getUint64(data, big), string(data[8:8+end])
			data = data[9+end:]
			if old, dup := l.Names[id]; dup && (old != "" || name == "") {
				continue
			}
		}
		l.Names[id] = name
	}
	if err == nil && len(data) > 0 {
		err = rr.fail(causef(ErrTruncated, "name table ends in the middle of an entry (%d bytes left)", len(data)))
	}
	return err
}

// all returns every remaining byte of the region (bounded by the inflate
// limit); err reports damage, with the bytes before it returned.
func (rr *regionReader) all() ([]byte, error) {
	var out []byte
	for {
		b, err := rr.next(64 << 10)
		out = append(out, b...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			if rr.err == io.EOF { // a short last chunk is the clean end
				return out, nil
			}
			return out, err
		}
	}
}
