package collector

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// The ldlm collector: lock and resource counts of every LDLM namespace
// (ldlm.namespaces.*). The service statistics of ldlm_canceld and ldlm_cbd
// are the service_stats collector's.

var (
	ldlmLabels    = []string{"component", "target"}
	lockCountDesc = prometheus.NewDesc("lustre_locks",
		"Locks the namespace holds (lock_count).", ldlmLabels, nil)
	lockUnusedCountDesc = prometheus.NewDesc("lustre_locks_unused",
		"Unused locks kept in the namespace's LRU (lock_unused_count).", ldlmLabels, nil)
	lockResourceCountDesc = prometheus.NewDesc("lustre_lock_resources",
		"Resources (objects) the namespace's locks cover (resource_count).", ldlmLabels, nil)
	lockTimeoutsDesc = prometheus.NewDesc("lustre_lock_timeout_total",
		"Lock callbacks that timed out in the namespace, each an eviction (lock_timeouts).", ldlmLabels, nil)
	lockContendedDesc = prometheus.NewDesc("lustre_lock_contended_locks",
		"Setting: locks on a resource from which it counts as contended (contended_locks).", ldlmLabels, nil)
	lockContentionDesc = prometheus.NewDesc("lustre_lock_contention_seconds",
		"Setting: how long a resource stays contended once it was, in seconds (contention_seconds).", ldlmLabels, nil)
)

func init() {
	leaves := map[string]struct {
		desc      *prometheus.Desc
		valueType prometheus.ValueType
	}{
		"lock_count":         {lockCountDesc, prometheus.GaugeValue},
		"lock_unused_count":  {lockUnusedCountDesc, prometheus.GaugeValue},
		"resource_count":     {lockResourceCountDesc, prometheus.GaugeValue},
		"lock_timeouts":      {lockTimeoutsDesc, prometheus.CounterValue},
		"contended_locks":    {lockContendedDesc, prometheus.GaugeValue},
		"contention_seconds": {lockContentionDesc, prometheus.GaugeValue},
	}
	match := func(param string) (valueMetric, bool) {
		rest, ok := strings.CutPrefix(param, "ldlm.namespaces.")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot <= 0 {
			return valueMetric{}, false
		}
		l, known := leaves[rest[dot+1:]]
		if !known {
			return valueMetric{}, false
		}
		component, target := ldlmNamespace(rest[:dot])
		return valueMetric{desc: l.desc, valueType: l.valueType, scale: 1, labels: []string{component, target}}, true
	}
	var patterns []string
	for _, leaf := range []string{"lock_count", "lock_unused_count", "resource_count", "lock_timeouts", "contended_locks", "contention_seconds"} {
		patterns = append(patterns, "ldlm.namespaces.*."+leaf)
	}
	registerValues("ldlm", patterns, match)
}

// ldlmNamespace names a namespace by its target: the server namespaces are
// "filter-<ost>_UUID", "mdt-<mdt>_UUID" and "MGS"; any other (a client's
// "<fs>-OST0000-osc-ffff…", "MGC…") keeps its name, with no component.
func ldlmNamespace(ns string) (component, target string) {
	if ns == "MGS" {
		return "mgs", ns
	}
	if t, ok := strings.CutSuffix(ns, "_UUID"); ok {
		if t, ok := strings.CutPrefix(t, "filter-"); ok {
			return "ost", t
		}
		if t, ok := strings.CutPrefix(t, "mdt-"); ok {
			return "mdt", t
		}
	}
	return "", ns
}
