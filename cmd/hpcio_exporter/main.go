// Command hpcio_exporter is a Prometheus exporter for HPC I/O: Lustre
// jobstats and server metrics read with lctl (server mode), and Darshan logs
// and HDF5 VOL/VFD stats from a drop directory (sidecar mode).
package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	webflag "github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/hpcio/hpcio_exporter/collector"
)

const (
	exporterName   = "hpcio_exporter"
	defaultAddress = ":9848"
	// devVersion is reported when the build did not set one with
	// -ldflags "-X github.com/prometheus/common/version.Version=…".
	devVersion = "0.1.0-dev"
)

func main() {
	if version.Version == "" {
		version.Version = devVersion
	}
	app := kingpin.CommandLine
	app.Help = "A Prometheus exporter for HPC I/O: Lustre jobstats and server metrics, Darshan logs and HDF5 VOL/VFD stats."
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')

	var opts serveOptions
	serve := app.Command("serve", "Run the exporter (the default command).").Default()
	opts.webConfig = webflag.AddFlags(app, defaultAddress)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&opts.metricsPath)
	app.Flag("web.max-requests", "Maximum number of parallel scrape requests. Use 0 to disable.").Default("40").IntVar(&opts.maxRequests)
	app.Flag("web.disable-exporter-metrics", "Exclude metrics about the exporter itself (promhttp_*, process_*, go_*).").BoolVar(&opts.disableExporterMetrics)
	app.Flag("demo", "Serve a simulated Lustre server (2 MDTs, 8 OSTs, a few hundred jobs) instead of running lctl and lnetctl.").BoolVar(&opts.demo)
	app.Flag("lustre.lctl-path", "The lctl binary (a name looked up in $PATH, or a path).").
		Default("lctl").StringVar(&opts.lctlPath)
	app.Flag("lustre.lnetctl-path", "The lnetctl binary (a name looked up in $PATH, or a path); each scrape runs `net show -v 4` and `stats show`.").
		Default("lnetctl").StringVar(&opts.lnetctlPath)
	collector.RegisterFlags(app)

	promslogConfig := &promslog.Config{}
	promslogflag.AddFlags(app, promslogConfig)

	command := kingpin.MustParse(app.Parse(os.Args[1:]))
	logger := promslog.New(promslogConfig)

	if command == serve.FullCommand() {
		if err := runServer(opts, logger); err != nil {
			logger.Error("exporter stopped", "err", err)
			os.Exit(1)
		}
		return
	}
	for _, sc := range subcommands {
		if sc.cmd.FullCommand() == command {
			if err := sc.run(); err != nil {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n", exporterName, command, err)
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "%s: unknown command %q\n", exporterName, command)
	os.Exit(2)
}
