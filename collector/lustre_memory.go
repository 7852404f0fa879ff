package collector

import "github.com/prometheus/client_golang/prometheus"

// The memory collector: memory Lustre and LNet allocated (memused,
// memused_max, lnet_memused), in bytes.

var (
	memoryUsedDesc = prometheus.NewDesc("lustre_memory_used_bytes",
		"Memory the Lustre modules have allocated, in bytes (memused).", nil, nil)
	memoryUsedMaxDesc = prometheus.NewDesc("lustre_memory_used_max_bytes",
		"Most memory the Lustre modules had allocated at once since they were loaded, in bytes (memused_max).", nil, nil)
	lnetMemoryUsedDesc = prometheus.NewDesc("lustre_lnet_memory_used_bytes",
		"Memory LNet has allocated, in bytes (lnet_memused).", nil, nil)
)

func init() {
	descs := map[string]*prometheus.Desc{
		"memused":      memoryUsedDesc,
		"memused_max":  memoryUsedMaxDesc,
		"lnet_memused": lnetMemoryUsedDesc,
	}
	match := func(param string) (valueMetric, bool) {
		d, ok := descs[param]
		return valueMetric{desc: d, valueType: prometheus.GaugeValue, scale: 1}, ok
	}
	registerValues("memory", []string{"memused", "memused_max", "lnet_memused"}, match)
}
