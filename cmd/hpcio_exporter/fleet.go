package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
	"github.com/hpcio/hpcio_exporter/internal/web/authgate"
	"github.com/hpcio/hpcio_exporter/internal/web/handler"
)

// --demo --demo.fleet.oss=N simulates a whole site (lustresim.Fleet): an
// MDS and N OSS sharing one job population, each server its own scrape
// target on its own port after --web.listen-address's, as each would run
// its own exporter. The main address is the site's index: the exporter's
// own metrics, the servers as Prometheus HTTP service discovery
// (/demo/fleet) and the site's true rates (/demo/fleet/truth), which
// Prometheus' sums over the servers are checked against.

// fleetOptions are the --demo.fleet.* flags.
type fleetOptions struct {
	oss, ostsPerOSS, mdts, jobs int
	hotJobs                     float64
	// set tells which flags were given, by name: they all need --demo,
	// and the others need --demo.fleet.oss.
	set map[string]*bool
}

func addFleetFlags(serve *kingpin.CmdClause, opts *serveOptions) {
	f := &opts.fleet
	f.set = map[string]*bool{}
	flag := func(name, help, def string) *kingpin.FlagClause {
		f.set[name] = new(bool)
		return serve.Flag(name, help).Default(def).IsSetByUser(f.set[name])
	}
	flag("demo.fleet.oss", "With --demo, simulate a site of this many OSS and one MDS instead of one server, each served on its own port after --web.listen-address's (the MDS first); 0: one server.", "0").IntVar(&f.oss)
	flag("demo.fleet.osts-per-oss", "OSTs on each simulated OSS.", "2").IntVar(&f.ostsPerOSS)
	flag("demo.fleet.mdts", "MDTs on the simulated MDS.", "1").IntVar(&f.mdts)
	flag("demo.fleet.jobs", "Jobs of the simulated site, all active at constant rates.", "5000").IntVar(&f.jobs)
	flag("demo.fleet.hot-jobs", "Fraction of the simulated site's jobs striped over every OST.", "0.01").Float64Var(&f.hotJobs)
	// validateFleet is called by serve's validator (addServeFlags).
}

// validateFleet rejects the fleet flags where they would do nothing
// (without --demo, or without --demo.fleet.oss) and values no site has.
func (opts *serveOptions) validateFleet() error {
	f := opts.fleet
	for _, name := range []string{"demo.fleet.oss", "demo.fleet.osts-per-oss", "demo.fleet.mdts", "demo.fleet.jobs", "demo.fleet.hot-jobs"} {
		switch {
		case !*f.set[name]:
		case !opts.demo:
			return fmt.Errorf("--%s needs --demo", name)
		case name != "demo.fleet.oss" && f.oss == 0:
			return fmt.Errorf("--%s needs --demo.fleet.oss", name)
		}
	}
	switch {
	case f.oss < 0:
		return errors.New("--demo.fleet.oss must not be negative")
	case f.ostsPerOSS < 1 || f.mdts < 1 || f.jobs < 1:
		return errors.New("--demo.fleet.osts-per-oss, --demo.fleet.mdts and --demo.fleet.jobs must be at least 1")
	case f.hotJobs < 0 || f.hotJobs > 1:
		return errors.New("--demo.fleet.hot-jobs is a fraction, from 0 to 1")
	}
	return nil
}

func (f fleetOptions) config() lustresim.FleetConfig {
	hot := f.hotJobs
	if hot == 0 {
		hot = -1 // none; lustresim takes 0 for its default
	}
	return lustresim.FleetConfig{Seed: 1, OSS: f.oss, OSTsPerOSS: f.ostsPerOSS, MDTs: f.mdts, Jobs: f.jobs, HotJobs: hot}
}

// runFleet serves a simulated site: each server on its own listener, then
// the site's index on --web.listen-address, until SIGTERM or SIGINT stops
// them all (serveUntilStopped). The servers are shut down when the index
// cannot be served. One guard keeps the connections of all: the open
// files are the process's.
func runFleet(opts serveOptions, logger *slog.Logger, sigs chan os.Signal, guard *connGuard, gate *authgate.Gate, scrapes *handler.Scrapes) error {
	host, port, err := fleetBase(opts.webConfig)
	if err != nil {
		return err
	}
	fleet := lustresim.NewFleet(opts.fleet.config())
	servers, err := startFleet(fleet, host, port, opts, logger, guard, scrapes)
	if err != nil {
		return err
	}

	exporterMetrics := newExporterMetrics(opts)
	// The process's connections, on the index only: each server's own
	// metrics would repeat them.
	if !opts.disableExporterMetrics {
		exporterMetrics.MustRegister(guard, gate)
	}
	mux := http.NewServeMux()
	mux.Handle(opts.metricsPath, handler.OnlyScrapeMethods(exporterOnly(exporterMetrics, opts, logger)))
	mux.Handle("GET /demo/fleet", servers.discovery(host, opts.metricsPath))
	mux.HandleFunc("GET /demo/fleet/truth", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, fleet.Truth())
	})
	err = addLandingPage(mux, opts,
		web.LandingLinks{Address: "/demo/fleet", Text: "Simulated servers", Description: "Prometheus HTTP service discovery of the site's simulated servers"},
		web.LandingLinks{Address: "/demo/fleet/truth", Text: "Site truth", Description: "The simulated site's true rates, per job, user and target"})
	if err != nil {
		servers.shutdown(logger)
		return err
	}
	server := guard.server(mux, gate)
	all := []*http.Server{server}
	for _, s := range servers {
		all = append(all, s.http)
	}
	err = serveUntilStopped(logger, sigs, scrapes, all, func() error {
		return web.ListenAndServe(server, opts.webConfig, logger)
	})
	if err != nil {
		servers.shutdown(logger)
	}
	return err
}

// fleetBase returns the host and port of --web.listen-address: the
// servers listen on the same host, on the ports after it.
func fleetBase(webConfig *web.FlagConfig) (string, int, error) {
	if webConfig.WebSystemdSocket != nil && *webConfig.WebSystemdSocket {
		return "", 0, errors.New("--demo.fleet.oss needs --web.listen-address, not --web.systemd-socket")
	}
	addrs := *webConfig.WebListenAddresses
	if len(addrs) == 0 {
		return "", 0, errors.New("--demo.fleet.oss needs --web.listen-address")
	}
	host, portText, err := net.SplitHostPort(addrs[0])
	if err != nil {
		return "", 0, fmt.Errorf("--web.listen-address %q: %w", addrs[0], err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 {
		return "", 0, fmt.Errorf("--demo.fleet.oss needs a fixed port in --web.listen-address, not %q", addrs[0])
	}
	return host, port, nil
}

// exporterOnly serves the exporter's own metrics: the site's index is no
// Lustre server, and has no collector to run.
func exporterOnly(exporterMetrics *prometheus.Registry, opts serveOptions, logger *slog.Logger) http.Handler {
	h := promhttp.HandlerFor(exporterMetrics, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(logger.Handler(), slog.LevelError),
		MaxRequestsInFlight: opts.maxRequests,
	})
	if opts.disableExporterMetrics {
		return h
	}
	return promhttp.InstrumentMetricHandler(exporterMetrics, h)
}

// fleetServer is one simulated server being served.
type fleetServer struct {
	lustresim.FleetServer
	port int
	http *http.Server
}

type fleetServers []*fleetServer

// startFleet serves each server of the fleet on host and the ports after
// port, in order, as its own exporter would: its own collectors, its own
// exporter metrics, its own handler. If one cannot listen, those started
// are shut down.
func startFleet(fleet *lustresim.Fleet, host string, port int, opts serveOptions, logger *slog.Logger, guard *connGuard, scrapes *handler.Scrapes) (fleetServers, error) {
	var servers fleetServers
	for i, srv := range fleet.Servers() {
		s, registry, err := startServer(srv, host, port+1+i, opts, logger, guard, scrapes)
		if err != nil {
			servers.shutdown(logger)
			return nil, err
		}
		if i == 0 {
			// The same on every server: the flags enable them.
			for _, name := range registry.Enabled() {
				logger.Info("collector enabled", "collector", name)
			}
		}
		logger.Info("simulated Lustre server", "server", srv.Name, "role", srv.Role,
			"address", s.http.Addr, "targets", strings.Join(srv.Targets, ","))
		servers = append(servers, s)
	}
	return servers, nil
}

func startServer(srv lustresim.FleetServer, host string, port int, opts serveOptions, logger *slog.Logger, guard *connGuard, scrapes *handler.Scrapes) (*fleetServer, *collector.Registry, error) {
	slogger := logger.With("server", srv.Name)
	registry, err := collector.NewRegistry(collector.Env{Logger: slogger, LctlSource: srv.Source, Lnetctl: lustresim.StartLnetctl})
	if err != nil {
		return nil, nil, fmt.Errorf("simulated server %s: %w", srv.Name, err)
	}
	mux := http.NewServeMux()
	mux.Handle(opts.metricsPath, handler.New(registry, newExporterMetrics(opts), opts.handlerOptions(slogger, scrapes, guard)))
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("simulated server %s: %w", srv.Name, err)
	}
	// Without the web configuration (served here, not by the toolkit):
	// no password to check.
	hs := guard.server(mux, nil)
	hs.Addr = addr
	s := &fleetServer{FleetServer: srv, port: port, http: hs}
	go func() {
		if err := s.http.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			slogger.Error("simulated server stopped", "err", err)
		}
	}()
	return s, registry, nil
}

// shutdown stops the servers when the index could not be served, letting
// scrapes under way finish for a while.
func (servers fleetServers) shutdown(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.http.Shutdown(ctx); err != nil {
			logger.Warn("simulated server shutdown", "server", s.Name, "err", err)
		}
	}
}

// sdGroup is a target group of Prometheus' HTTP service discovery.
type sdGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// discovery lists the servers for http_sd_configs, one group each. Where
// they listen on every interface, their host is the one Prometheus asked
// the index by: it reaches the servers there too.
func (servers fleetServers) discovery(host, metricsPath string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := host
		if h == "" || net.ParseIP(h).IsUnspecified() {
			h = r.Host
			if rh, _, err := net.SplitHostPort(r.Host); err == nil {
				h = rh
			}
		}
		groups := make([]sdGroup, len(servers))
		for i, s := range servers {
			labels := map[string]string{"server": s.Name, "role": s.Role}
			if metricsPath != "/metrics" {
				labels["__metrics_path__"] = metricsPath
			}
			groups[i] = sdGroup{Targets: []string{net.JoinHostPort(h, strconv.Itoa(s.port))}, Labels: labels}
		}
		writeJSON(w, groups)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
