package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The brw_stats collector: the block I/O histograms of every target's
// backing file system (osd-*.*.brw_stats), as Prometheus histograms, one
// for reads and one for writes (label operation), with le in base units.
//
// A row of a log2 histogram labelled L counts values in (L/2, L], so L is
// the bucket's upper bound as is. A row of a linear histogram counts one
// exact value; its last row (31) also counts every larger value, so it goes
// to the +Inf bucket only. Lustre keeps no sum: _sum is the sum of each
// row's count times its value, exact for the linear histograms (but for
// the last row, counted as 31) and an upper bound for the log2 ones, exact
// when the values are powers of two, as RPC and disk I/O sizes mostly are.

func init() {
	registerLustre("brw_stats", true, lustre.BrwStats, []string{"osd-*.*.brw_stats"},
		func(param string) bool {
			_, _, leaf, ok := osdParam(param)
			return ok && leaf == "brw_stats"
		},
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Brw, "brw_stats") {
				component, target, _, _ := osdParam(p.Name)
				sendBrwStats(ch, &p.V, component, target)
			}
		})
}

// pageSize is the size of a page in "pages per bulk r/w"; Lustre servers
// run on 4 KiB pages.
const pageSize = 4096

var brwLabels = []string{"component", "target", "operation"}

// brwHistograms gives each histogram Lustre prints its metric and the
// factor from the row label to base units.
var brwHistograms = map[lctl.BrwKind]struct {
	desc  *prometheus.Desc
	scale float64
}{
	lctl.BrwPagesPerRPC: {prometheus.NewDesc("lustre_brw_rpc_size_bytes",
		"Size of the bulk read and write RPCs the target served, in bytes (brw_stats \"pages per bulk r/w\", 4 KiB pages).", brwLabels, nil), pageSize},
	lctl.BrwDiscontiguousPages: {prometheus.NewDesc("lustre_brw_discontiguous_pages",
		"Discontinuities in the file offsets of the pages of each bulk RPC (brw_stats \"discontiguous pages\").", brwLabels, nil), 1},
	lctl.BrwDiscontiguousBlock: {prometheus.NewDesc("lustre_brw_discontiguous_blocks",
		"Discontinuities in the disk blocks of each bulk RPC (brw_stats \"discontiguous blocks\").", brwLabels, nil), 1},
	lctl.BrwFragmentedIOs: {prometheus.NewDesc("lustre_brw_fragmented_ios",
		"Disk I/Os each bulk RPC was split into (brw_stats \"disk fragmented I/Os\").", brwLabels, nil), 1},
	lctl.BrwIOsInFlight: {prometheus.NewDesc("lustre_brw_ios_in_flight",
		"Disk I/Os already in flight on the target when each disk I/O started (brw_stats \"disk I/Os in flight\").", brwLabels, nil), 1},
	lctl.BrwIOTime: {prometheus.NewDesc("lustre_brw_io_time_seconds",
		"Time the target's disk I/Os took (brw_stats \"I/O time (1/1000s)\").", brwLabels, nil), 1e-3},
	lctl.BrwIOSize: {prometheus.NewDesc("lustre_brw_io_size_bytes",
		"Size of the target's disk I/Os (brw_stats \"disk I/O size\").", brwLabels, nil), 1},
	lctl.BrwBlockMaps: {prometheus.NewDesc("lustre_brw_block_maps_seconds",
		"Time block mapping took per RPC (brw_stats \"block maps msec\", EXAScaler).", brwLabels, nil), 1e-3},
}

// sendBrwStats sends the histograms of one target; the source checked
// their rows and kept the first of each kind.
func sendBrwStats(ch chan<- prometheus.Metric, st *lctl.BrwStats, component, target string) {
	createdAt := created(st.StartTime, st.SnapshotTime)
	for i := range st.Hists {
		h := &st.Hists[i]
		spec, known := brwHistograms[h.Kind]
		if !known {
			continue
		}
		e := classicOnly
		if h.Kind.Log2() {
			e = log2Buckets // native too where its bounds are powers of two
		}
		for _, op := range [...]string{"read", "write"} {
			count, sum, buckets := brwBuckets(h, op == "write", spec.scale)
			ch <- histogram(spec.desc, count, sum, buckets, createdAt, e, component, target, op)
		}
	}
}

// brwBuckets turns the rows of one side (read or write) of a histogram into
// cumulative buckets in base units, with the count and sum.
func brwBuckets(h *lctl.BrwHist, write bool, scale float64) (count uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(h.Rows))
	for _, r := range h.Rows {
		n := r.Read
		if write {
			n = r.Write
		}
		count += n
		value := float64(r.Bucket) * scale
		sum += float64(n) * value
		if !h.Kind.Log2() && r.Bucket >= lctl.BrwLinearOverflow {
			continue // this row also counts larger values: +Inf only
		}
		buckets[value] = count
	}
	return count, sum, buckets
}
