package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
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
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
	"github.com/hpcio/hpcio_exporter/internal/web/authgate"
	"github.com/hpcio/hpcio_exporter/internal/web/handler"
)

// addServeFlags declares the server's flags on serve, its command, and
// returns where they land: no other command shows or takes them.
func addServeFlags(serve *kingpin.CmdClause) (*serveOptions, *promslog.Config) {
	opts := &serveOptions{}
	opts.webConfig = webflag.AddFlags(serve, defaultAddress)
	serve.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&opts.metricsPath)
	serve.Flag("web.max-requests", "Maximum number of parallel scrape requests. Use 0 to disable.").Default("40").IntVar(&opts.maxRequests)
	serve.Flag("web.max-connections", "Maximum number of open HTTP connections; at the cap, the connection the longest without a complete request (silent, or idle) is closed to admit a new one (with no other, the new one is closed). 0: the open-file limit less "+strconv.Itoa(reserveFiles)+" kept for lctl, drop directories and inotify.").
		Default("0").IntVar(&opts.maxConnections)
	serve.Flag("web.max-connections-per-address", "Maximum number of open HTTP connections from one source address (an IPv4 address, an IPv6 /64; every address of this host counts as one); past it, that address's connection the longest without a complete request is closed. 0: a quarter of --web.max-connections, at least 16.").
		Default("0").IntVar(&opts.maxConnectionsPerAddr)
	serve.Flag("web.max-password-checks", "Maximum number of basic auth password checks (bcrypt, --web.config.file's basic_auth_users) running at once; a request that needs one more is answered 429 at once. A right password is checked once, then remembered. 0: a quarter of the cores, at least 1.").
		Default("0").IntVar(&opts.maxPasswordChecks)
	serve.Flag("web.idle-timeout", "How long an idle keep-alive connection is kept open between requests: longer than the scrape interval, so that Prometheus keeps its connection.").
		Default("90s").DurationVar(&opts.idleTimeout)
	serve.Flag("web.disable-exporter-metrics", "Exclude metrics about the exporter itself (promhttp_*, process_*, go_*, hpcio_exporter_http_*).").BoolVar(&opts.disableExporterMetrics)
	serve.Flag("web.openmetrics-created-samples", "Write a _created line beside each counter in OpenMetrics, as client_golang does when asked. Off by default: Prometheus stores each as a series of its own unless it ingests created timestamps; the protobuf format carries them as fields whatever this flag.").BoolVar(&opts.createdSamples)
	serve.Flag("web.enable-pprof", "Serve Go's profiles (CPU, heap, goroutines) under /debug/pprof/ and link them from the landing page. Off by default: a profile costs CPU while it runs and tells whoever can reach the port how the process works.").BoolVar(&opts.enablePprof)
	serve.Flag("demo", "Serve a simulated Lustre server (2 MDTs, 8 OSTs, a few hundred jobs) instead of running lctl and lnetctl.").BoolVar(&opts.demo)
	addFleetFlags(serve, opts) // fleet.go
	// Usage errors, checked while parsing: they exit 2, as kingpin's own.
	// (A command has one validator.)
	serve.Validate(func(*kingpin.CmdClause) error {
		if err := opts.validateWeb(); err != nil {
			return err
		}
		return opts.validateFleet()
	})
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
	maxConnections         int
	maxConnectionsPerAddr  int // --web.max-connections-per-address
	maxPasswordChecks      int
	idleTimeout            time.Duration
	disableExporterMetrics bool
	createdSamples         bool // --web.openmetrics-created-samples
	enablePprof            bool
	demo                   bool
	fleet                  fleetOptions
	drop                   dropFlags // whether --darshan.dir, --dayu.dir were given
	lctlPath, lnetctlPath  string
}

func (opts *serveOptions) validateWeb() error {
	switch {
	case opts.maxConnections < 0:
		return errors.New("--web.max-connections must not be negative (0: from the open-file limit)")
	case opts.maxConnectionsPerAddr < 0:
		return errors.New("--web.max-connections-per-address must not be negative (0: a quarter of --web.max-connections)")
	case opts.maxPasswordChecks < 0:
		return errors.New("--web.max-password-checks must not be negative (0: a quarter of the cores)")
	case opts.idleTimeout <= 0:
		return errors.New("--web.idle-timeout must be above zero")
	}
	return nil
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
	// From the start: a signal while the server starts up is handled once
	// it serves, not by the default action (exit 143 with nothing said).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	logger.Info("starting "+exporterName, "version", version.Info())
	logger.Info("build context", "build_context", version.BuildContext())
	guard := newGuard(opts, logger)
	gate := newGate(opts, logger)
	scrapes := &handler.Scrapes{}
	if opts.fleet.oss > 0 {
		return runFleet(opts, logger, sigs, guard, gate, scrapes) // fleet.go: a simulated site, one target per server
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
	if !opts.disableExporterMetrics {
		exporterMetrics.MustRegister(guard, gate)
	}
	mux := http.NewServeMux()
	mux.Handle(opts.metricsPath, handler.New(registry, exporterMetrics, opts.handlerOptions(logger, scrapes, guard)))
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
	server := guard.server(mux, gate)
	return serveUntilStopped(logger, sigs, scrapes, []*http.Server{server}, func() error {
		return web.ListenAndServe(server, opts.webConfig, logger)
	})
}

// requestTimeout bounds a request that is not a scrape (the landing page,
// /demo/*, pprof) and what reaches no handler of ours: as long as a scrape
// without a timeout header.
const requestTimeout = handler.DefaultTimeout + handler.WriteGrace

func (opts serveOptions) handlerOptions(logger *slog.Logger, scrapes *handler.Scrapes, guard *connGuard) handler.Options {
	return handler.Options{MaxRequests: opts.maxRequests, Instrument: !opts.disableExporterMetrics, Logger: logger,
		Scrapes: scrapes, OnCut: guard.cut, CreatedSamples: opts.createdSamples}
}

// newGuard returns the guard of the process's connections, with its cap:
// --web.max-connections, or derived from the open-file limit.
func newGuard(opts serveOptions, logger *slog.Logger) *connGuard {
	maxConns, limit := defaultMaxConnections()
	if opts.maxConnections > 0 {
		if opts.maxConnections > maxConns {
			logger.Warn("--web.max-connections is above what the open-file limit leaves for connections: past it, accepting fails (too many open files) and scrapes time out",
				"max_connections", opts.maxConnections, "open_file_limit", limit, "reserved_files", reserveFiles)
		}
		maxConns = opts.maxConnections
	}
	perAddr := opts.maxConnectionsPerAddr
	if perAddr == 0 {
		perAddr = defaultMaxPerAddress(maxConns)
	}
	logger.Info("HTTP connections", "max_connections", maxConns, "max_connections_per_address", perAddr, "open_file_limit", limit, "idle_timeout", opts.idleTimeout)
	return newConnGuard(maxConns, perAddr, opts.idleTimeout, logger)
}

// newGate returns the password checks of the web configuration's basic
// auth, made before exporter-toolkit's (internal/web/authgate), with
// --web.max-password-checks.
func newGate(opts serveOptions, logger *slog.Logger) *authgate.Gate {
	checks := opts.maxPasswordChecks
	if checks == 0 {
		checks = authgate.DefaultMaxChecks(runtime.GOMAXPROCS(0))
	}
	path := ""
	if opts.webConfig != nil && opts.webConfig.WebConfigFile != nil {
		path = *opts.webConfig.WebConfigFile
	}
	if path != "" {
		logger.Info("basic auth password checks", "max_password_checks", checks,
			"wrong_passwords_per_address", authgate.DefaultBurst, "then_one_every", authgate.DefaultRefill)
	}
	return authgate.New(authgate.Config{WebConfigFile: path, MaxChecks: checks, Logger: logger})
}

// serveUntilStopped runs serve, which serves servers until they are shut
// down, until SIGTERM or SIGINT: then it stops (stop) and returns nil.
// SIGHUP is logged and changes nothing. An error of serve (a listener that
// cannot be opened) is returned.
func serveUntilStopped(logger *slog.Logger, sigs chan os.Signal, scrapes *handler.Scrapes, servers []*http.Server, serve func() error) error {
	served := make(chan error, 1)
	go func() { served <- serve() }()
	for {
		select {
		case err := <-served:
			return err
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				logger.Info("SIGHUP received: nothing to reload (the web config file is read at each request), still serving")
				continue
			}
			stop(logger, sig, sigs, scrapes, servers)
			return nil
		}
	}
}

// stop stops the servers on sig: they accept no more connections, close
// their idle ones, and let the scrapes in flight finish until their
// deadline (plus the write grace) and no longer, or until a second SIGTERM
// or SIGINT; then the Lustre tools still running (a run outlives a scrape
// that went away) are killed with their process groups. One line says so.
func stop(logger *slog.Logger, sig os.Signal, sigs chan os.Signal, scrapes *handler.Scrapes, servers []*http.Server) {
	begin := time.Now()
	inFlight, latest := scrapes.InFlight()
	ended := scrapes.Ended()
	// Other requests (the landing page) get a second.
	ctx, cancel := context.WithDeadline(context.Background(), later(latest, begin.Add(time.Second)))
	defer cancel()
	go func() {
		for {
			select {
			case s := <-sigs:
				if s != syscall.SIGHUP {
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			if err := s.Shutdown(ctx); err != nil {
				s.Close() // the deadline passed: cut what is left
			}
		})
	}
	wg.Wait()
	toolrun.KillAll()
	left, _ := scrapes.InFlight()
	logger.Info("stopping", "signal", signalName(sig), "scrapes_in_flight", inFlight,
		"scrapes_finished", scrapes.Ended()-ended, "scrapes_cut", left, "took", time.Since(begin).Round(time.Millisecond))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
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
