package parsertext

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendFixedMatchesStrconv checks the fast %f path against strconv's
// exact (round-half-even) formatting, on random values, ties and edges.
func TestAppendFixedMatchesStrconv(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, 1.5, 2.5, 1.0 / 128, 3.0 / 128, -1.0 / 128, 0.0000005, 0.0000015,
		1e-300, 5e-324, 123456789.123456789, 9.2e12, 9.3e12, 1e15, 1 << 53, 1 << 60, 1e20, 1e300,
		0.00025, 0.00035, 1.00005, 2.00005, math.Nextafter(0.5e-6, 1), math.Nextafter(0.5e-6, 0)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		vals = append(vals, r.Float64()*math.Pow(10, float64(r.IntN(20)-8)))
		vals = append(vals, float64(r.IntN(1<<20))/float64(int(1)<<r.IntN(30)))
		vals = append(vals, math.Float64frombits(r.Uint64()))
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		for _, prec := range []int{4, 6} {
			for _, x := range []float64{v, -v} {
				got := string(appendFixed(nil, x, prec))
				want := strconv.FormatFloat(x, 'f', prec, 64)
				if got != want {
					t.Fatalf("appendFixed(%v (%#x), %d) = %s, want %s", x, math.Float64bits(x), prec, got, want)
				}
			}
		}
	}
	for v, want := range map[float64]string{math.NaN(): "nan", math.Inf(1): "inf", math.Inf(-1): "-inf",
		math.Copysign(0, -1): "-0.000000", -1e-9: "-0.000000"} {
		if got := string(appendFixed(nil, v, 6)); got != want {
			t.Errorf("appendFixed(%v) = %s, want %s", v, got, want)
		}
	}
}

// appendCounter's shortcuts (0 to 9, -1) write what strconv writes.
func TestAppendCounterMatchesStrconv(t *testing.T) {
	vals := []int64{math.MinInt64, math.MaxInt64, -11, -10, -9, -2, 10, 11, 99, 100, 1 << 40}
	for v := int64(-3); v <= 12; v++ {
		vals = append(vals, v)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		vals = append(vals, int64(r.Uint64()), r.Int64N(1000)-500)
	}
	for _, v := range vals {
		if got, want := string(appendCounter([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendCounter(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestAppendCtime(t *testing.T) {
	for sec, want := range map[int64]string{
		0:             "Thu Jan  1 00:00:00 1970\n",
		1573096468:    "Thu Nov  7 03:14:28 2019\n",
		1795296986:    "Sat Nov 21 21:36:26 2026\n",
		-1:            "Wed Dec 31 23:59:59 1969\n",
		951782400:     "Tue Feb 29 00:00:00 2000\n",
		-86400 * 366:  "Tue Dec 31 00:00:00 1968\n",
		math.MaxInt64: "(null)",
	} {
		if got := string(appendCtime(nil, sec)); got != want {
			t.Errorf("ctime(%d) = %q, want %q", sec, got, want)
		}
	}
}
