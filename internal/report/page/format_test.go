package page

import (
	"math"
	"strings"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{bytesIEC(0), "0 B"},
		{bytesIEC(1023), "1023 B"},
		{bytesIEC(1536), "1.5 KiB"},
		{bytesIEC(64 << 20), "64 MiB"},
		{bytesIEC(math.NaN()), "–"},
		{seconds(0.0721), "72.1 ms"},
		{seconds(727), "12m7s (727 s)"},
		{seconds(3e-6), "3 µs"},
		{percent(0.4), "40 %"},
		{percent(1e-6), "< 0.01 %"},
		{si(936071), "936 k"},
		{si(1.5e9), "1.5 G"},
		{count(1234567), "1\u202f234\u202f567"},
		{shorten("/scratch/a/very/long/path/to/the/file.dat", 20), "/scrat…/the/file.dat"},
	} {
		if got := strings.ReplaceAll(c.got, nb, " "); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestTicks: the axis starts at 0, rises in equal steps and ends at or
// past the largest value, with few ticks.
func TestTicks(t *testing.T) {
	for _, max := range []float64{0, 0.07, 1, 7, 99, 1000, 12345, 3 << 30, 1e15} {
		for _, binary := range []bool{false, true} {
			tk := ticks(max, binary)
			if tk[0] != 0 || tk[len(tk)-1] < max || len(tk) < 2 || len(tk) > 13 {
				t.Errorf("ticks(%g, %v) = %v", max, binary, tk)
				continue
			}
			step := tk[1] - tk[0]
			for i := 2; i < len(tk); i++ {
				if d := tk[i] - tk[i-1]; math.Abs(d-step) > step*1e-9 {
					t.Errorf("ticks(%g, %v) = %v: uneven steps", max, binary, tk)
					break
				}
			}
		}
	}
}
