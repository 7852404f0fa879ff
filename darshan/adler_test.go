package darshan

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// TestAdler32 checks the 16-bytes-a-step Adler-32 against hash/adler32 on
// lengths around the block size, on all-0xff data (the largest lane sums)
// and when continued from a previous sum.
func TestAdler32(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	block := 16 * adlerSteps
	for _, n := range []int{0, 1, 15, 16, 17, 63, 1000, block - 1, block, block + 17, 3*block + 5, 1 << 20} {
		random := make([]byte, n)
		for i := range random {
			random[i] = byte(r.Uint32())
		}
		ones := make([]byte, n)
		for i := range ones {
			ones[i] = 0xff
		}
		for _, p := range [][]byte{random, ones} {
			if got, want := adler32Update(1, p), adler32.Checksum(p); got != want {
				t.Fatalf("%d bytes: %08x, want %08x", n, got, want)
			}
			cut := n / 3
			if got, want := adler32Update(adler32Update(1, p[:cut]), p[cut:]), adler32.Checksum(p); got != want {
				t.Fatalf("%d bytes in two parts: %08x, want %08x", n, got, want)
			}
		}
	}
}

func FuzzAdler32(f *testing.F) {
	f.Add([]byte("darshan"), uint16(3))
	f.Fuzz(func(t *testing.T, p []byte, cut uint16) {
		c := min(int(cut), len(p))
		if got, want := adler32Update(adler32Update(1, p[:c]), p[c:]), adler32.Checksum(p); got != want {
			t.Fatalf("%08x, want %08x", got, want)
		}
	})
}

// BenchmarkAdler32: go test ./darshan -run XXX -bench Adler32
func BenchmarkAdler32(b *testing.B) {
	p := make([]byte, 64<<10)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.Run("steps", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			adler32Update(1, p)
		}
	})
	b.Run("hash-adler32", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}
