package exposition

import (
	"math/rand/v2"
	"testing"
)

// AppendMicros against the float formatting it replaces: every value up to
// a few million, each power of ten and its neighbours, and random values
// of every length up to and past 10^15.
func TestAppendMicrosMatchesAppendFloat(t *testing.T) {
	check := func(v uint64) {
		t.Helper()
		got, want := string(AppendMicros(nil, v)), string(AppendFloat(nil, float64(v)/1e6))
		if got != want {
			t.Fatalf("AppendMicros(%d) = %q, want %q", v, got, want)
		}
	}
	for v := uint64(0); v < 3_000_000; v++ {
		check(v)
	}
	for p := uint64(1); p < 1e19; p *= 10 {
		for _, v := range []uint64{p - 1, p, p + 1, 3 * p, 9*p + p/2} {
			check(v)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2_000_000 {
		check(r.Uint64() >> r.UintN(64))
	}
	check(1<<64 - 1)
}

func FuzzAppendMicros(f *testing.F) {
	for _, v := range []uint64{0, 1, 99, 100, 123456, 999999999, 1e15 - 1, 1e15, 1<<64 - 1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint64) {
		if got, want := string(AppendMicros(nil, v)), string(AppendFloat(nil, float64(v)/1e6)); got != want {
			t.Fatalf("AppendMicros(%d) = %q, want %q", v, got, want)
		}
	})
}

func BenchmarkAppendMicros(b *testing.B) {
	vals := make([]uint64, 1024)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range vals {
		vals[i] = r.Uint64N(1e10)
	}
	buf := make([]byte, 0, 32)
	b.Run("micros", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = AppendMicros(buf[:0], vals[i%len(vals)])
		}
	})
	b.Run("float", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = AppendFloat(buf[:0], float64(vals[i%len(vals)])/1e6)
		}
	})
}
