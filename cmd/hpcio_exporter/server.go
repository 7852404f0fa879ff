package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/handler"
	"github.com/hpcio/hpcio_exporter/lctl"
	"github.com/hpcio/hpcio_exporter/lustresim"
	"github.com/hpcio/hpcio_exporter/toolrun"
)

type serveOptions struct {
	webConfig              *web.FlagConfig
	metricsPath            string
	maxRequests            int
	disableExporterMetrics bool
	demo                   bool
	lctlPath, lnetctlPath  string
}

// lustreTools are what the Lustre collectors run: lctl and lnetctl, or
// with --demo the simulated server, which needs neither.
func lustreTools(opts serveOptions) (lctl.Source, toolrun.StartFunc) {
	if opts.demo {
		return lustresim.Default(), lustresim.StartLnetctl
	}
	return &lctl.Command{Path: opts.lctlPath}, toolrun.Path(opts.lnetctlPath)
}

func runServer(opts serveOptions, logger *slog.Logger) error {
	logger.Info("starting "+exporterName, "version", version.Info())
	logger.Info("build context", "build_context", version.BuildContext())

	lctlSource, lnetctl := lustreTools(opts)
	registry, err := collector.NewRegistry(collector.Env{Logger: logger, LctlSource: lctlSource, Lnetctl: lnetctl})
	if err != nil {
		return err
	}
	for _, name := range registry.Enabled() {
		logger.Info("collector enabled", "collector", name)
	}

	// The exporter's own Go, process and promhttp metrics live on their own
	// registry, as in node_exporter, so that --web.disable-exporter-metrics
	// can drop them without touching the collectors.
	exporterMetrics := prometheus.NewRegistry()
	exporterMetrics.MustRegister(versioncollector.NewCollector(exporterName))
	if !opts.disableExporterMetrics {
		exporterMetrics.MustRegister(
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			collectors.NewGoCollector(),
		)
	}

	mux := http.NewServeMux()
	mux.Handle(opts.metricsPath, handler.New(registry, exporterMetrics, handler.Options{MaxRequests: opts.maxRequests, Instrument: !opts.disableExporterMetrics, Logger: logger}))
	if opts.metricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        exporterName,
			Description: "Prometheus exporter for HPC I/O: Lustre jobstats and server metrics, Darshan logs, HDF5 VOL/VFD stats",
			Version:     version.Info(),
			Links: []web.LandingLinks{
				{Address: opts.metricsPath, Text: "Metrics"},
			},
		})
		if err != nil {
			return fmt.Errorf("landing page: %w", err)
		}
		mux.Handle("/", landing)
	}
	if opts.demo {
		// The simulator's ground truth, for tests that check the numbers
		// Prometheus computes from the demo (deploy/'s end-to-end test).
		mux.HandleFunc("/demo/truth", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(lustresim.Default().Truth(time.Now()))
		})
		// Per target, what its job_stats showed at each read of the last
		// half hour and what the target counted: the truth of jobstats
		// coverage.
		mux.HandleFunc("/demo/coverage", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(lustresim.Default().Coverage())
		})
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := web.ListenAndServe(server, opts.webConfig, logger); err != nil {
		return err
	}
	return nil
}
