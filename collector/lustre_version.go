package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
)

// The version collector: the Lustre version the node runs, as an info
// metric.

func init() {
	registerLustre("version", true, lustre.Versions, []string{"version"}, nil,
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Versions, "version") {
				ch <- gauge(lustreBuildInfoDesc, 1, p.V.Version, p.V.Build)
			}
		})
}

var lustreBuildInfoDesc = prometheus.NewDesc("lustre_build_info",
	"Lustre version of the node (the version parameter), as labels; build is the build string Lustre before 2.12 prints, else empty. Always 1.",
	[]string{"version", "build"}, nil)
