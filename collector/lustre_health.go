package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// The health collector: Lustre's own health_check.

func init() {
	register("health", true, func(env Env) (Collector, error) {
		return newTextCollector(env, "health", "health_check", readHealth), nil
	})
}

var healthCheckDesc = prometheus.NewDesc("lustre_health_check",
	"Whether Lustre reports itself healthy (1): health_check prints \"healthy\"; 0 when it prints anything else (\"NOT HEALTHY\", \"LBUG\", unhealthy devices).",
	nil, nil)

func readHealth(lines [][]byte) ([]prometheus.Metric, string) {
	healthy, known := lctl.Health(lines)
	if !known {
		return nil, "empty health_check"
	}
	v := 0.0
	if healthy {
		v = 1
	}
	return []prometheus.Metric{gauge(healthCheckDesc, v)}, ""
}
