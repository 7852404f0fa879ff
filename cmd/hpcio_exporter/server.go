package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	webflag "github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/handler"
	"github.com/hpcio/hpcio_exporter/lctl"
	"github.com/hpcio/hpcio_exporter/lustresim"
	"github.com/hpcio/hpcio_exporter/toolrun"
)

// addServeFlags declares the server's flags on serve, its command, and
// returns where they land: no other command shows or takes them.
func addServeFlags(serve *kingpin.CmdClause) (*serveOptions, *promslog.Config) {
	opts := &serveOptions{}
	opts.webConfig = webflag.AddFlags(serve, defaultAddress)
	serve.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&opts.metricsPath)
	serve.Flag("web.max-requests", "Maximum number of parallel scrape requests. Use 0 to disable.").Default("40").IntVar(&opts.maxRequests)
	serve.Flag("web.disable-exporter-metrics", "Exclude metrics about the exporter itself (promhttp_*, process_*, go_*).").BoolVar(&opts.disableExporterMetrics)
	serve.Flag("web.enable-pprof", "Serve Go's profiles (CPU, heap, goroutines) under /debug/pprof/ and link them from the landing page. Off by default: a profile costs CPU while it runs and tells whoever can reach the port how the process works.").BoolVar(&opts.enablePprof)
	serve.Flag("demo", "Serve a simulated Lustre server (2 MDTs, 8 OSTs, a few hundred jobs) instead of running lctl and lnetctl.").BoolVar(&opts.demo)
	addFleetFlags(serve, opts) // fleet.go
	serve.Flag("lustre.lctl-path", "The lctl binary (a name looked up in $PATH, or a path).").
		Default("lctl").StringVar(&opts.lctlPath)
	serve.Flag("lustre.lnetctl-path", "The lnetctl binary (a name looked up in $PATH, or a path); each scrape runs `net show -v 4` and `stats show`.").
		Default("lnetctl").StringVar(&opts.lnetctlPath)
	collector.RegisterFlags(serve)
	watchDropFlags(serve, &opts.drop) // demo_drop.go
	logConfig := &promslog.Config{}
	addLogFlags(serve, logConfig)
	return opts, logConfig
}

// addLogFlags is promslog/flag.AddFlags on a command: that one takes only a
// *kingpin.Application, which would give every command flags only the
// server logs with. Names, help, defaults and values are promslog's own
// (TestLogFlagsAsPromslog holds them to it).
func addLogFlags(cmd *kingpin.CmdClause, config *promslog.Config) {
	config.Level = promslog.NewLevel()
	cmd.Flag(promslogflag.LevelFlagName, promslogflag.LevelFlagHelp).
		Default("info").HintOptions(promslog.LevelFlagOptions...).
		SetValue(config.Level)
	config.Format = promslog.NewFormat()
	cmd.Flag(promslogflag.FormatFlagName, promslogflag.FormatFlagHelp).
		Default("logfmt").HintOptions(promslog.FormatFlagOptions...).
		SetValue(config.Format)
}

type serveOptions struct {
	webConfig              *web.FlagConfig
	metricsPath            string
	maxRequests            int
	disableExporterMetrics bool
	enablePprof            bool
	demo                   bool
	fleet                  fleetOptions
	drop                   dropFlags // whether --darshan.dir, --dayu.dir were given
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
	if opts.fleet.oss > 0 {
		return runFleet(opts, logger) // fleet.go: a simulated site, one target per server
	}

	if opts.demo {
		// The sidecar collectors get files to read too (demo_drop.go).
		remove, err := setUpDemoDrop(opts.drop, logger, time.Now())
		if err != nil {
			return err
		}
		if remove != nil {
			defer remove()
		}
	}
	lctlSource, lnetctl := lustreTools(opts)
	registry, err := collector.NewRegistry(collector.Env{Logger: logger, LctlSource: lctlSource, Lnetctl: lnetctl})
	if err != nil {
		return err
	}
	for _, name := range registry.Enabled() {
		logger.Info("collector enabled", "collector", name)
	}

	exporterMetrics := newExporterMetrics(opts)
	mux := http.NewServeMux()
	mux.Handle(opts.metricsPath, handler.New(registry, exporterMetrics, handler.Options{MaxRequests: opts.maxRequests, Instrument: !opts.disableExporterMetrics, Logger: logger}))
	if err := addLandingPage(mux, opts); err != nil {
		return err
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

// newExporterMetrics returns a registry of the exporter's own metrics. The
// Go, process and promhttp metrics live on their own registry, as in
// node_exporter, so that --web.disable-exporter-metrics can drop them
// without touching the collectors.
func newExporterMetrics(opts serveOptions) *prometheus.Registry {
	exporterMetrics := prometheus.NewRegistry()
	exporterMetrics.MustRegister(versioncollector.NewCollector(exporterName))
	if !opts.disableExporterMetrics {
		exporterMetrics.MustRegister(
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			collectors.NewGoCollector(),
		)
	}
	return exporterMetrics
}

// addLandingPage serves the landing page at "/", linking the metrics and
// extra, unless the metrics themselves are there; and the profiles under
// /debug/pprof/ with --web.enable-pprof. The landing page links the
// profiles only when they are served: without the flag, /debug/pprof/ is
// a 404 (the landing page's, which answers only "/").
func addLandingPage(mux *http.ServeMux, opts serveOptions, extra ...web.LandingLinks) error {
	if opts.enablePprof {
		// net/http/pprof's handlers, on this mux: its init registers them
		// on http.DefaultServeMux, which the exporter never serves.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	if opts.metricsPath == "/" {
		return nil
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        exporterName,
		Description: "Prometheus exporter for HPC I/O: Lustre jobstats and server metrics, Darshan logs, HDF5 VOL/VFD stats",
		Version:     version.Info(),
		Links:       append([]web.LandingLinks{{Address: opts.metricsPath, Text: "Metrics"}}, extra...),
		Profiling:   strconv.FormatBool(opts.enablePprof),
	})
	if err != nil {
		return fmt.Errorf("landing page: %w", err)
	}
	mux.Handle("/", landing)
	return nil
}
