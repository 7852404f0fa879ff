package exposition

import (
	"math"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// A classic histogram whose buckets are the powers of a base 2^m is, bucket
// for bucket, a native histogram of an exponential schema: schema s has
// bounds 2^(i·2^-s). With m = 2^k (base 2, 4, 16, 256, 65536) that is
// schema -k, the base's own; --lustre.rate-density.base 2, 4, 16, 256,
// 65536 is schema 0, -1, -2, -3, -4, brw_stats' RPC and I/O sizes schema 0.
// Any other power of two maps to the schema of the largest power of two
// dividing m (8 and 32 to 0, 64 to -1), each classic bucket's count in the
// highest native bucket under its bound: exact at the classic bounds,
// placed high between them. Other bases (3, 10…) have bounds no schema
// has, and stay classic, as do histograms with a bound that is no power of
// the base's schema (brw_stats' times, in milliseconds scaled to seconds).
// The protobuf exposition carries both in the same Histogram message
// (addNative): a Prometheus with native histograms on stores the native
// one, and the classic buckets too only when asked to
// (always_scrape_classic_histograms).
//
// The lowest classic bucket holds what is at most its bound. Where that
// is the values near zero (Exponential.ZeroBucket: the rate density counts
// idle identities there, at rate 0) it is the native zero bucket, whose
// threshold is that bound, fixed as the density's bounds are. Elsewhere
// (brw_stats' rows, each a power of two, printed from the lowest one
// seen) it is the native bucket of its bound, and the zero bucket is
// empty, of a fixed threshold: a threshold that went down as a lower row
// appeared would be a counter reset to Prometheus. Either way, at each
// classic bound the native cumulative count is the classic one, so that
// histogram_fraction agrees with the buckets there. Counts above the
// highest bound (the +Inf bucket) go to the next native bucket, the one
// place an exponential schema has for them.

// maxNativeShift is the coarsest schema's: -4, bounds 2^(16i).
const maxNativeShift = 4

// emptyZeroThreshold is the zero bucket's threshold when it holds nothing
// (client_golang's DefNativeHistogramZeroThreshold, 2^-128).
var emptyZeroThreshold = math.Ldexp(1, -128)

// nativeShift returns k, the schema -k of base, or false when base is no
// power of two.
func nativeShift(base float64) (int, bool) {
	frac, exp := math.Frexp(base)
	m := exp - 1
	if frac != 0.5 || m < 1 {
		return 0, false
	}
	k := 0
	for k < maxNativeShift && m%(2<<k) == 0 {
		k++
	}
	return k, true
}

// addNative adds the native fields of e.Base's schema to h when its bounds
// are that schema's; a histogram already native, with float counts, or
// with decreasing cumulative counts is left as it is.
func addNative(h *dto.Histogram, e Exponential) {
	shift, ok := nativeShift(e.Base)
	if !ok || h == nil || h.Schema != nil || len(h.PositiveSpan) > 0 || h.GetSampleCountFloat() > 0 {
		return
	}
	exps := make([]int, 0, len(h.Bucket))
	cums := make([]uint64, 0, len(h.Bucket))
	for i, b := range h.Bucket {
		ub := b.GetUpperBound()
		if math.IsInf(ub, 1) && i == len(h.Bucket)-1 {
			break
		}
		frac, exp := math.Frexp(ub)
		if ub <= 0 || frac != 0.5 || (exp-1)%(1<<shift) != 0 || b.GetCumulativeCountFloat() > 0 {
			return
		}
		if i > 0 && (exp-1 <= exps[len(exps)-1] || b.GetCumulativeCount() < cums[len(cums)-1]) {
			return
		}
		exps = append(exps, exp-1)
		cums = append(cums, b.GetCumulativeCount())
	}
	if len(exps) == 0 {
		// Nothing observed (an MDT's brw_stats print no row): an empty
		// native histogram of the same schema, not a classic one, which
		// Prometheus would store as custom buckets that no sum with the
		// other targets' exponential ones accepts. Its zero threshold
		// marks it native.
		if h.GetSampleCount() == 0 && h.GetSampleSum() == 0 {
			h.Schema = proto.Int32(int32(-shift))
			h.ZeroThreshold = proto.Float64(emptyZeroThreshold)
			h.ZeroCount = proto.Uint64(0)
		}
		return
	}
	if h.GetSampleCount() < cums[len(cums)-1] {
		return
	}
	var spans []*dto.BucketSpan
	var deltas []int64
	var prevIdx int32
	var prevCount int64
	add := func(idx int32, count uint64) {
		if count == 0 {
			return
		}
		switch {
		case len(spans) == 0:
			spans = append(spans, &dto.BucketSpan{Offset: proto.Int32(idx), Length: proto.Uint32(1)})
		case idx == prevIdx+1:
			spans[len(spans)-1].Length = proto.Uint32(spans[len(spans)-1].GetLength() + 1)
		default:
			spans = append(spans, &dto.BucketSpan{Offset: proto.Int32(idx - prevIdx - 1), Length: proto.Uint32(1)})
		}
		deltas = append(deltas, int64(count)-prevCount)
		prevIdx, prevCount = idx, int64(count)
	}
	zeroThreshold, zeroCount := emptyZeroThreshold, uint64(0)
	if e.ZeroBucket {
		zeroThreshold, zeroCount = math.Ldexp(1, exps[0]), cums[0]
	} else {
		add(int32(exps[0]>>shift), cums[0])
	}
	for i := 1; i < len(exps); i++ {
		add(int32(exps[i]>>shift), cums[i]-cums[i-1])
	}
	add(int32(exps[len(exps)-1]>>shift)+1, h.GetSampleCount()-cums[len(cums)-1])
	h.Schema = proto.Int32(int32(-shift))
	h.ZeroThreshold = proto.Float64(zeroThreshold)
	h.ZeroCount = proto.Uint64(zeroCount)
	h.PositiveSpan, h.PositiveDelta = spans, deltas
}

// addNativeFamilies adds native fields to the histograms of the families
// named in native, and makes the gauge ones gauge histograms. Gathered
// families are made afresh by each Gather, so this changes no one else's.
func addNativeFamilies(families []*dto.MetricFamily, native map[string]Exponential) {
	for _, mf := range families {
		e, ok := native[mf.GetName()]
		if !ok || (mf.GetType() != dto.MetricType_HISTOGRAM && mf.GetType() != dto.MetricType_GAUGE_HISTOGRAM) {
			continue
		}
		if e.Gauge {
			mf.Type = dto.MetricType_GAUGE_HISTOGRAM.Enum()
		}
		for _, m := range mf.Metric {
			addNative(m.Histogram, e)
		}
	}
}
