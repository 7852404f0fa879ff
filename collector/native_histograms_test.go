package collector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

var testHistDesc = prometheus.NewDesc("lustre_test_histogram", "Test.", []string{"operation"}, nil)

// written is what m writes.
func written(t *testing.T, m prometheus.Metric) *dto.Histogram {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.Histogram
}

// densityBucketsOf counts rates as the rate density does: bounds base^k
// from 1e-3 to 1e11, rates counted below each bound.
func densityBucketsOf(base int, rates []float64) (map[float64]uint64, float64) {
	b := float64(base)
	lo := int(math.Floor(math.Log(1e-3) / math.Log(b)))
	hi := int(math.Ceil(math.Log(1e11) / math.Log(b)))
	buckets := map[float64]uint64{}
	var sum float64
	for k := lo; k <= hi; k++ {
		bound := math.Pow(b, float64(k))
		for _, r := range rates {
			if r < bound {
				buckets[bound]++
			}
		}
	}
	for _, r := range rates {
		sum += r
	}
	return buckets, sum
}

// testRates: idle jobs (0), and rates spread over 16 decades, some beyond
// the highest bound.
func testRates(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		switch i % 10 {
		case 0:
			out[i] = 0
		case 1:
			out[i] = 1e12 * (1 + r.Float64())
		default:
			out[i] = math.Pow(10, -4+15*r.Float64())
		}
	}
	return out
}

// nativeBound is the upper bound of bucket idx of schema.
func nativeBound(schema int32, idx int) float64 {
	if schema >= 0 {
		return math.Pow(2, math.Ldexp(float64(idx), -int(schema)))
	}
	return math.Ldexp(1, idx<<-schema)
}

// nativeCounts expands h's positive spans: bucket index → count.
func nativeCounts(t *testing.T, h *dto.Histogram) map[int]uint64 {
	t.Helper()
	counts := map[int]uint64{}
	idx, count, d := 0, int64(0), 0
	for _, s := range h.PositiveSpan {
		idx += int(s.GetOffset())
		for range s.GetLength() {
			count += h.PositiveDelta[d]
			d++
			if count < 0 {
				t.Fatalf("negative bucket count: %v", h)
			}
			if count > 0 {
				counts[idx] = uint64(count)
			}
			idx++
		}
	}
	return counts
}

// TestNativeDensity: the rate density of each base maps to the schema
// whose bounds are the base's powers (or stays classic), and at each
// classic bound the native cumulative count is the classic one, so that
// histogram_fraction agrees with the buckets there.
func TestNativeDensity(t *testing.T) {
	// 8 = 2³: schema 0, every third bucket used.
	schemas := map[int]int32{2: 0, 4: -1, 8: 0, 16: -2, 256: -3, 65536: -4}
	for _, zero := range []bool{true, false} {
		for _, base := range []int{2, 3, 4, 8, 10, 16, 256, 65536} {
			rs := testRates(2000, uint64(base))
			buckets, sum := densityBucketsOf(base, rs)
			h := written(t, histogram(testHistDesc, uint64(len(rs)), sum, buckets, time.Time{}, exponential{base: float64(base), zeroBucket: zero}, "read"))
			want, native := schemas[base]
			if (h.Schema != nil) != native {
				t.Errorf("base %d: native %v, want %v", base, h.Schema != nil, native)
				continue
			}
			if len(h.Bucket) != len(buckets) || h.GetSampleCount() != uint64(len(rs)) {
				t.Errorf("base %d: classic buckets %d, count %d", base, len(h.Bucket), h.GetSampleCount())
			}
			if !native {
				continue
			}
			if h.GetSchema() != want {
				t.Errorf("base %d: schema %d, want %d", base, h.GetSchema(), want)
			}
			if zero && h.GetZeroThreshold() != h.Bucket[0].GetUpperBound() {
				t.Errorf("base %d: zero threshold %v, lowest bound %v", base, h.GetZeroThreshold(), h.Bucket[0].GetUpperBound())
			}
			if !zero && (h.GetZeroThreshold() != emptyZeroThreshold || h.GetZeroCount() != 0) {
				t.Errorf("base %d: zero bucket %v ≤ %v", base, h.GetZeroCount(), h.GetZeroThreshold())
			}
			counts := nativeCounts(t, h)
			total := h.GetZeroCount()
			for _, c := range counts {
				total += c
			}
			if total != h.GetSampleCount() || total != uint64(len(rs)) {
				t.Errorf("base %d: native buckets hold %d, count %d", base, total, h.GetSampleCount())
			}
			for _, b := range h.Bucket {
				cum := h.GetZeroCount()
				for i, c := range counts {
					if nativeBound(want, i) <= b.GetUpperBound() {
						cum += c
					}
				}
				if cum != b.GetCumulativeCount() {
					t.Errorf("base %d: at %v native %d, classic %d", base, b.GetUpperBound(), cum, b.GetCumulativeCount())
				}
			}
		}
	}
}

// Histograms whose bounds are not all powers of the base's schema stay
// classic; brw_stats' sizes (4 KiB pages, rows printed sparsely) are
// schema 0 whichever rows are printed.
func TestNativeBounds(t *testing.T) {
	hist := func(e exponential, bounds ...float64) *dto.Histogram {
		buckets := map[float64]uint64{}
		for i, b := range bounds {
			buckets[b] = uint64(i + 1)
		}
		return written(t, histogram(testHistDesc, uint64(len(bounds)), 1, buckets, time.Time{}, e, "read"))
	}
	pages := hist(log2Buckets, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
	if pages.Schema == nil || pages.GetSchema() != 0 || pages.GetZeroThreshold() != emptyZeroThreshold || pages.GetZeroCount() != 0 ||
		fmt.Sprint(nativeCounts(t, pages)) != "map[12:1 13:1 14:1 15:1 16:1 17:1 18:1]" {
		t.Errorf("brw_stats RPC sizes: %v", pages)
	}
	// Rows 2^20, 2^22, 2^24: buckets 20, 22 and 24, the zero bucket as
	// before (a lower row appearing later changes no threshold).
	sparse := hist(log2Buckets, 1<<20, 1<<22, 1<<24)
	if sparse.Schema == nil || sparse.GetSchema() != 0 || sparse.GetZeroThreshold() != emptyZeroThreshold ||
		fmt.Sprint(nativeCounts(t, sparse)) != "map[20:1 22:1 24:1]" {
		t.Errorf("sparse brw_stats RPC sizes: %v", sparse)
	}
	for _, tc := range []struct {
		e      exponential
		bounds []float64
	}{
		{log2Buckets, []float64{0.001, 0.002, 0.004, 0.008}}, // brw_stats I/O times, in seconds
		{log2Buckets, []float64{0, 1, 2, 4}},                 // a bound of 0
		{exponential{base: 10}, []float64{1, 2, 4}},
		{exponential{base: 4}, []float64{1, 2, 4}}, // 2 is no power of 4
		{classicOnly, []float64{1, 2, 4}},          // rows 1, 2 and 4 of a linear histogram
		{log2Buckets, nil},                         // nothing counted, yet a sum
	} {
		if h := hist(tc.e, tc.bounds...); h.Schema != nil || len(h.PositiveSpan) != 0 || len(h.Bucket) != len(tc.bounds) {
			t.Errorf("base %v, bounds %v: %v", tc.e.base, tc.bounds, h)
		}
	}
	// Decreasing cumulative counts: classic.
	if h := written(t, histogram(testHistDesc, 3, 1, map[float64]uint64{2: 2, 4: 1}, time.Time{}, log2Buckets, "read")); h.Schema != nil {
		t.Errorf("decreasing counts made native: %v", h)
	}
	// Nothing observed (an MDT's brw_stats): an empty native histogram of
	// the same schema, with or without the +Inf bucket.
	for _, buckets := range []map[float64]uint64{nil, {math.Inf(1): 0}} {
		h := written(t, histogram(testHistDesc, 0, 0, buckets, time.Time{}, log2Buckets, "read"))
		if h.Schema == nil || h.GetSchema() != 0 || h.GetZeroThreshold() != emptyZeroThreshold || h.GetZeroCount() != 0 || len(nativeCounts(t, h)) != 0 {
			t.Errorf("empty brw_stats histogram: %v", h)
		}
	}
	// A created timestamp is the classic histogram's.
	at := time.Unix(1700000000, 0)
	if h := written(t, histogram(testHistDesc, 1, 1, map[float64]uint64{2: 1}, at, log2Buckets, "read")); h.Schema == nil || !h.GetCreatedTimestamp().AsTime().Equal(at) {
		t.Errorf("created %v: %v", at, h)
	}
}
