package darshan

import "encoding/binary"

// Adler-32 (RFC 1950), 16 bytes at a step. hash/adler32 adds one byte per
// step to two running sums, a chain of dependent additions (about a byte
// per cycle). Here each step adds the bytes of two words into 16-bit lanes
// of four column-sum accumulators and one running total; the second sum is
// rebuilt from those once per block. Inflating a DXT region checksums
// every byte it produces, ~10 MB for the largest corpus log.

const (
	adlerMod = 65521
	// adlerSteps is the number of 16-byte steps per block: a 16-bit lane
	// sums one byte of each step, 255·257 < 65536.
	adlerSteps = 256
	evenBytes  = 0x00ff00ff00ff00ff
)

// adler32Update returns the Adler-32 of the data summed into adler,
// followed by p.
func adler32Update(adler uint32, p []byte) uint32 {
	s1, s2 := uint64(adler&0xffff), uint64(adler>>16)
	for len(p) >= 16 {
		k := min(len(p)/16, adlerSteps)
		// Lanes of e0, o0, e1, o1 sum bytes 0,2,4,6 / 1,3,5,7 / 8,10,12,14 /
		// 9,11,13,15 of the steps; run is the running total of all bytes,
		// and prefix the sum of its values after each step, so that a
		// byte of step j (of k) counts k-j times in prefix.
		var e0, o0, e1, o1, run, prefix uint64
		for q := p[:16*k]; len(q) >= 16; q = q[16:] {
			w := (*[16]byte)(q)
			v0, v1 := binary.LittleEndian.Uint64(w[:8]), binary.LittleEndian.Uint64(w[8:])
			a, b, c, d := v0&evenBytes, v0>>8&evenBytes, v1&evenBytes, v1>>8&evenBytes
			e0 += a
			o0 += b
			e1 += c
			o1 += d
			run += (a + b + c + d) * 0x0001000100010001 >> 48 // the step's 16 bytes, < 4096
			prefix += run
		}
		// Byte i of step j counts 16(k-j)-i times in s2: 16·prefix minus
		// i times each byte's column sum.
		var weighted uint64
		for lane := range 4 {
			shift := 16 * uint(lane)
			i := uint64(2 * lane)
			weighted += i*(e0>>shift&0xffff) + (i+1)*(o0>>shift&0xffff) + (i+8)*(e1>>shift&0xffff) + (i+9)*(o1>>shift&0xffff)
		}
		s2 = (s2 + uint64(16*k)*s1 + 16*prefix - weighted) % adlerMod
		s1 = (s1 + run) % adlerMod
		p = p[16*k:]
	}
	for _, b := range p {
		s1 += uint64(b)
		s2 += s1
	}
	return uint32(s2%adlerMod)<<16 | uint32(s1%adlerMod)
}
