package collector

import "github.com/hpcio/hpcio_exporter/internal/web/exposition"

// ExponentialHistograms gives the histogram families whose buckets are the
// powers of a base, with the base: the rate density (powers of
// --lustre.rate-density.base) and brw_stats' log2 histograms
// (lctl.BrwKind.Log2). The protobuf exposition makes native histograms of
// those whose base and bounds are powers of two
// (internal/web/exposition). Only the collector knows: a sparsely printed
// linear brw_stats histogram may show powers of two alone (rows 1, 2 and
// 4), and a log2 one only some of its powers (2^20 and 2^22), which says
// nothing of its base.
//
// The rate density is a gauge histogram: each scrape's is the last
// interval's, made afresh, and its counts go down as often as up. As a
// native counter histogram, each decrease would be a counter reset to
// Prometheus, which cuts a chunk there. Its lowest bucket (below 1e-3 per
// second) holds the idle identities, at rate 0: the native zero bucket.
// brw_stats' lowest row is one power of two like the others.
func ExponentialHistograms() map[string]exposition.Exponential {
	density := exposition.Exponential{Base: float64(rateDensityBase), Gauge: true, ZeroBucket: true}
	log2 := exposition.Exponential{Base: 2}
	return map[string]exposition.Exponential{
		"lustre_job_bytes_rate_density": density,
		"lustre_job_ops_rate_density":   density,
		"lustre_brw_rpc_size_bytes":     log2,
		"lustre_brw_io_size_bytes":      log2,
		"lustre_brw_io_time_seconds":    log2,
		"lustre_brw_block_maps_seconds": log2,
	}
}
