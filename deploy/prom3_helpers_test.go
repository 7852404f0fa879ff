package deploy

// prometheus3 is the Prometheus 3 release deploy/prometheus3 is written for
// and tested against, built from its Go module as VictoriaMetrics is:
// Debian ships only Prometheus 2. Prometheus 3.16.0 is module version
// v0.316.0 (the module is tagged v0.3xx.y for 3.xx.y); it asks for go
// 1.26.7, which the machine's 1.26.8 satisfies. A first build is heavy
// (prometheus pulls in every service discovery's SDK): 10.6 CPU-minutes
// (9m09s user, 1m28s system), 14 minutes of wall time on 2 cores shared
// with other builds, about 6 on idle ones, downloads included; 11 s when
// Go's build cache still holds it; none once cached.
var prometheus3 = &goTools{
	name: "Prometheus 3", dirName: "prometheus", module: "github.com/prometheus/prometheus", version: "v0.316.0",
	pkgDir: "cmd", commands: []string{"prometheus", "promtool"},
}
