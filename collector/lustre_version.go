package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// The version collector: the Lustre version the node runs, as an info
// metric.

func init() {
	register("version", true, func(env Env) (Collector, error) {
		return newTextCollector(env, "version", "version", readVersion), nil
	})
}

var lustreBuildInfoDesc = prometheus.NewDesc("lustre_build_info",
	"Lustre version of the node (the version parameter), as labels; build is the build string Lustre before 2.12 prints, else empty. Always 1.",
	[]string{"version", "build"}, nil)

func readVersion(lines [][]byte) ([]prometheus.Metric, string) {
	version, build, ok := lctl.Version(lines)
	if !ok {
		return nil, "unrecognized version"
	}
	return []prometheus.Metric{gauge(lustreBuildInfoDesc, 1, version, build)}, ""
}
