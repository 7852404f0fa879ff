package collector

import (
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Native histograms. A classic histogram whose buckets are the powers of
// a base 2^m is, bucket for bucket, a native histogram of an exponential
// schema: schema s has bounds 2^(i·2^-s). With m = 2^k (base 2, 4, 16,
// 256, 65536) that is schema -k, the base's own; --lustre.rate-density.base
// 2, 4, 16, 256, 65536 is schema 0, -1, -2, -3, -4, brw_stats' RPC and I/O
// sizes schema 0. Any other power of two maps to the schema of the largest
// power of two dividing m (8 and 32 to 0, 64 to -1), each classic bucket's
// count in the highest native bucket under its bound: exact at the classic
// bounds, placed high between them. Other bases (3, 10…) have bounds no
// schema has, and stay classic, as do histograms with a bound that is no
// power of the base's schema (brw_stats' times, in milliseconds scaled to
// seconds). Only the collector knows a histogram's base: a sparsely
// printed linear brw_stats histogram may show powers of two alone (rows
// 1, 2 and 4), and a log2 one only some of its powers (2^20 and 2^22),
// which says nothing of its base.
//
// Such a histogram is one metric with both bucket sets (bothHistogram),
// the native ones made by client_golang's NewConstNativeHistogram: the
// protobuf exposition carries both in the same Histogram message, a
// Prometheus with native histograms on stores the native one, and the
// classic buckets too only when asked to (always_scrape_classic_histograms);
// the text formats carry the classic buckets alone. (Until issue 37 the
// exposition added the native fields to the gathered families; measured
// against this way on a protobuf scrape of these families, it saved
// nothing: docs/performance.md.)
//
// The lowest classic bucket holds what is at most its bound. Where that
// is the values near zero (the rate density counts idle identities there,
// at rate 0) it is the native zero bucket, whose threshold is that bound,
// fixed as the density's bounds are. Elsewhere (brw_stats' rows, each a
// power of two, printed from the lowest one seen) it is the native bucket
// of its bound, and the zero bucket is empty, of a fixed threshold: a
// threshold that went down as a lower row appeared would be a counter
// reset to Prometheus. Either way, at each classic bound the native
// cumulative count is the classic one, so that histogram_fraction agrees
// with the buckets there. Counts above the highest bound (the +Inf
// bucket) go to the next native bucket, the one place an exponential
// schema has for them.
//
// The rate density is a gauge histogram (GaugeHistograms): each scrape's
// is the last interval's, made afresh, and its counts go down as often as
// up. As a native counter histogram, each decrease would be a counter
// reset to Prometheus, which cuts a chunk there. client_golang's registry
// types every histogram a counter one; the protobuf exposition retypes
// these families.

// exponential says how a histogram's buckets relate to a base: its
// buckets are powers of base, and with zeroBucket the lowest one holds the
// values near zero (the native zero bucket).
type exponential struct {
	base       float64
	zeroBucket bool
}

var (
	// log2Buckets: brw_stats' log2 histograms (lctl.BrwKind.Log2).
	log2Buckets = exponential{base: 2}
	// classicOnly: a histogram that is not exponential.
	classicOnly = exponential{}
)

// densityBuckets is the rate density's: powers of
// --lustre.rate-density.base, idle identities in the lowest bucket.
func densityBuckets() exponential {
	return exponential{base: float64(rateDensityBase), zeroBucket: true}
}

// GaugeHistograms names the histogram families that are snapshots, not
// counts since a start (MetricType GAUGE_HISTOGRAM in protobuf, whose
// series Prometheus names as a histogram's).
func GaugeHistograms() map[string]bool {
	return map[string]bool{"lustre_job_bytes_rate_density": true, "lustre_job_ops_rate_density": true}
}

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

// bothHistogram is a classic histogram with its native buckets.
type bothHistogram struct {
	classic, native prometheus.Metric
}

func (h bothHistogram) Desc() *prometheus.Desc { return h.classic.Desc() }

func (h bothHistogram) Write(m *dto.Metric) error {
	if err := h.classic.Write(m); err != nil {
		return err
	}
	var n dto.Metric
	if err := h.native.Write(&n); err != nil {
		return err
	}
	c, nh := m.Histogram, n.Histogram
	c.Schema, c.ZeroThreshold, c.ZeroCount = nh.Schema, nh.ZeroThreshold, nh.ZeroCount
	c.PositiveSpan, c.PositiveDelta = nh.PositiveSpan, nh.PositiveDelta
	return nil
}

// histogram returns the classic histogram of cumulative buckets (bound →
// count at or below it), with its native buckets too when e's base and
// every bound are powers of two of one schema; createdAt may be zero.
func histogram(desc *prometheus.Desc, count uint64, sum float64, buckets map[float64]uint64, createdAt time.Time, e exponential, labels ...string) prometheus.Metric {
	var classic prometheus.Metric
	if createdAt.IsZero() {
		classic = prometheus.MustNewConstHistogram(desc, count, sum, buckets, labels...)
	} else {
		classic = prometheus.MustNewConstHistogramWithCreatedTimestamp(desc, count, sum, buckets, createdAt, labels...)
	}
	shift, ok := nativeShift(e.base)
	if !ok {
		return classic
	}
	positive, zeroThreshold, zeroCount, ok := nativeBuckets(count, sum, buckets, shift, e.zeroBucket)
	if !ok {
		return classic
	}
	native, err := prometheus.NewConstNativeHistogram(desc, count, sum, positive, nil, zeroCount, int32(-shift), zeroThreshold, createdAt, labels...)
	if err != nil {
		return classic
	}
	return bothHistogram{classic: classic, native: native}
}

// nativeBuckets maps cumulative classic buckets onto the native buckets
// of schema -shift (index → count), or returns false when a bound is no
// power of that schema or the counts decrease.
func nativeBuckets(count uint64, sum float64, buckets map[float64]uint64, shift int, zeroBucket bool) (positive map[int]int64, zeroThreshold float64, zeroCount uint64, ok bool) {
	bounds := make([]float64, 0, len(buckets))
	for b := range buckets {
		if !math.IsInf(b, 1) {
			bounds = append(bounds, b)
		}
	}
	slices.Sort(bounds)
	positive = make(map[int]int64, len(bounds)+1)
	zeroThreshold = emptyZeroThreshold
	if len(bounds) == 0 {
		// Nothing observed (an MDT's brw_stats print no row): an empty
		// native histogram of the same schema, not a classic one, which
		// Prometheus would store as custom buckets that no sum with the
		// other targets' exponential ones accepts.
		return positive, zeroThreshold, 0, count == 0 && sum == 0
	}
	var below uint64 // the cumulative count at the previous bound
	var last int     // the native index of the highest bound
	for i, b := range bounds {
		frac, exp := math.Frexp(b)
		c := buckets[b]
		if b <= 0 || frac != 0.5 || (exp-1)%(1<<shift) != 0 || c < below {
			return nil, 0, 0, false
		}
		last = (exp - 1) >> shift
		switch {
		case i == 0 && zeroBucket:
			zeroThreshold, zeroCount = b, c
		case c > below:
			positive[last] = int64(c - below)
		}
		below = c
	}
	if count < below {
		return nil, 0, 0, false
	}
	if count > below {
		positive[last+1] = int64(count - below)
	}
	return positive, zeroThreshold, zeroCount, true
}
