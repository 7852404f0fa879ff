package collector

import "github.com/prometheus/client_golang/prometheus"

// The exports collector: how many clients (exports) each target has, the
// grant accounting of OSTs, and evictions. The per-client stats are the
// export_stats collector's, off by default.

var (
	exportsTargetLabels = []string{"component", "target"}
	exportsDesc         = prometheus.NewDesc("lustre_exports",
		"Exports of the target: the clients (and other servers) connected to it (num_exports).", exportsTargetLabels, nil)
	exportsDirtyDesc = prometheus.NewDesc("lustre_exports_dirty_bytes",
		"Dirty data the target's clients hold in their caches, in bytes, as the OST accounts it (tot_dirty).", exportsTargetLabels, nil)
	exportsGrantedDesc = prometheus.NewDesc("lustre_exports_granted_bytes",
		"Space the OST granted to its clients for writeback, in bytes (tot_granted).", exportsTargetLabels, nil)
	exportsPendingDesc = prometheus.NewDesc("lustre_exports_pending_bytes",
		"Space of writes under way on the OST, in bytes (tot_pending).", exportsTargetLabels, nil)
	evictionsDesc = prometheus.NewDesc("lustre_evictions_total",
		"Clients the target evicted since it started (eviction_count).", exportsTargetLabels, nil)
)

func init() {
	leaves := map[string]struct {
		desc      *prometheus.Desc
		valueType prometheus.ValueType
	}{
		"num_exports":    {exportsDesc, prometheus.GaugeValue},
		"tot_dirty":      {exportsDirtyDesc, prometheus.GaugeValue},
		"tot_granted":    {exportsGrantedDesc, prometheus.GaugeValue},
		"tot_pending":    {exportsPendingDesc, prometheus.GaugeValue},
		"eviction_count": {evictionsDesc, prometheus.CounterValue},
	}
	match := func(param string) (valueMetric, bool) {
		component, target, leaf, ok := obdParam(param)
		l, known := leaves[leaf]
		if !ok || !known {
			return valueMetric{}, false
		}
		return valueMetric{desc: l.desc, valueType: l.valueType, scale: 1, labels: []string{component, target}}, true
	}
	registerValues("exports", []string{
		"obdfilter.*.num_exports", "mdt.*.num_exports", "mgs.MGS.num_exports",
		"obdfilter.*.tot_dirty", "obdfilter.*.tot_granted", "obdfilter.*.tot_pending",
		"obdfilter.*.eviction_count", "mdt.*.eviction_count", "mgs.MGS.eviction_count"}, match)
}
