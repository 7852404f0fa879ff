package darshan

import "encoding/binary"

// RecordID returns the record id the runtime gives a record named name (a
// file path, "heatmap:POSIX", …): Bob Jenkins' 64-bit hash ("lookup8",
// public domain) of the name's bytes with level 0, as darshan-core's
// darshan_core_gen_record_id computes it.
func RecordID(name string) uint64 {
	k := []byte(name)
	a, b := uint64(0), uint64(0)    // the level
	c := uint64(0x9e3779b97f4a7c13) // the golden ratio
	for len(k) >= 24 {
		a += binary.LittleEndian.Uint64(k)
		b += binary.LittleEndian.Uint64(k[8:])
		c += binary.LittleEndian.Uint64(k[16:])
		a, b, c = mix64(a, b, c)
		k = k[24:]
	}
	c += uint64(len(name))
	// The last 0-23 bytes: a and b take bytes 0-7 and 8-15 in little-endian
	// order; c takes bytes 16-22 shifted up by one byte, its low byte being
	// reserved for the length.
	var tail [24]byte
	copy(tail[:], k)
	a += binary.LittleEndian.Uint64(tail[0:])
	b += binary.LittleEndian.Uint64(tail[8:])
	c += binary.LittleEndian.Uint64(tail[16:]) << 8
	_, _, c = mix64(a, b, c)
	return c
}

func mix64(a, b, c uint64) (uint64, uint64, uint64) {
	a -= b
	a -= c
	a ^= c >> 43
	b -= c
	b -= a
	b ^= a << 9
	c -= a
	c -= b
	c ^= b >> 8
	a -= b
	a -= c
	a ^= c >> 38
	b -= c
	b -= a
	b ^= a << 23
	c -= a
	c -= b
	c ^= b >> 5
	a -= b
	a -= c
	a ^= c >> 35
	b -= c
	b -= a
	b ^= a << 49
	c -= a
	c -= b
	c ^= b >> 11
	a -= b
	a -= c
	a ^= c >> 12
	b -= c
	b -= a
	b ^= a << 18
	c -= a
	c -= b
	c ^= b >> 22
	return a, b, c
}
