package collector

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// The capacity collector: space and inodes of every target's backing file
// system, osd-*.*.{kbytestotal,kbytesfree,kbytesavail,filestotal,filesfree}.
// Lustre prints kilobytes (KiB); the metrics are in bytes.

func init() {
	leaves := map[string]struct {
		desc  *prometheus.Desc
		scale float64
	}{
		"kbytestotal": {capacityBytesDesc, 1024},
		"kbytesfree":  {freeBytesDesc, 1024},
		"kbytesavail": {availableBytesDesc, 1024},
		"filestotal":  {inodesMaximumDesc, 1},
		"filesfree":   {inodesFreeDesc, 1},
	}
	var patterns []string
	for leaf := range leaves {
		patterns = append(patterns, "osd-*.*."+leaf)
	}
	slices.Sort(patterns)
	registerValues("capacity", patterns, func(param string) (valueMetric, bool) {
		component, target, leaf, ok := osdParam(param)
		l, known := leaves[leaf]
		if !ok || !known {
			return valueMetric{}, false
		}
		return valueMetric{desc: l.desc, valueType: prometheus.GaugeValue, scale: l.scale, labels: []string{component, target}}, true
	})
}

var (
	capacityTargetLabels = []string{"component", "target"}
	capacityBytesDesc    = prometheus.NewDesc("lustre_capacity_bytes",
		"Size of the target's file system in bytes (kbytestotal).", capacityTargetLabels, nil)
	freeBytesDesc = prometheus.NewDesc("lustre_free_bytes",
		"Free space of the target's file system in bytes, reserved blocks included (kbytesfree).", capacityTargetLabels, nil)
	availableBytesDesc = prometheus.NewDesc("lustre_available_bytes",
		"Space of the target's file system available to clients in bytes (kbytesavail).", capacityTargetLabels, nil)
	inodesMaximumDesc = prometheus.NewDesc("lustre_inodes_maximum",
		"Inodes (objects) the target's file system can hold (filestotal).", capacityTargetLabels, nil)
	inodesFreeDesc = prometheus.NewDesc("lustre_inodes_free",
		"Inodes (objects) still free on the target's file system (filesfree).", capacityTargetLabels, nil)
)
