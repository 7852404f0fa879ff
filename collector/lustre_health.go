package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
)

// The health collector: Lustre's own health_check.

func init() {
	registerLustre("health", true, lustre.Health, []string{"health_check"}, nil,
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Health, "health") {
				v := 0.0
				if p.V {
					v = 1
				}
				ch <- gauge(healthCheckDesc, v)
			}
		})
}

var healthCheckDesc = prometheus.NewDesc("lustre_health_check",
	"Whether Lustre reports itself healthy (1): health_check prints \"healthy\"; 0 when it prints anything else (\"NOT HEALTHY\", \"LBUG\", unhealthy devices).",
	nil, nil)
