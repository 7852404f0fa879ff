// Command hpcio_exporter is a Prometheus exporter for HPC I/O: Lustre
// jobstats and server metrics read with lctl (server mode), and Darshan logs
// and HDF5 VOL/VFD stats from a drop directory (sidecar mode).
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/common/version"
)

const (
	exporterName   = "hpcio_exporter"
	defaultAddress = ":9848"
)

// Exit statuses, as the --help text documents them. kingpin's own failures
// (unknown command or flag, missing or malformed argument) are usage errors,
// told apart from a command that ran and failed so that scripts can tell a
// wrong invocation from a damaged input.
const (
	exitOK      = 0
	exitFailure = 1 // bad input (a damaged log, an unreadable file), or the server could not run
	exitUsage   = 2 // the command line
)

const appHelp = `A Prometheus exporter for HPC I/O: Lustre jobstats and server metrics, Darshan logs and HDF5 VOL/VFD stats.

Without a command, or with flags that are not global, it runs "serve": its flags ("serve --help" lists them) may be given without naming it.

Exit status: 0 ok; 1 the command failed (bad input: a damaged log, an unreadable file or directory; or the server could not run); 2 usage error (unknown command or flag, missing or malformed argument).`

func main() {
	bi, _ := debug.ReadBuildInfo() // nil without build info
	setVersion(bi)
	app := kingpin.CommandLine
	app.Help = appHelp
	// --version prints the whole stamp; a man page (--help-man) puts the
	// version on its one .TH line, where the stamp's lines would break it.
	appVersion := version.Print(exporterName)
	if slices.Contains(os.Args[1:], "--help-man") {
		appVersion = version.Version
	}
	app.Version(appVersion)
	app.HelpFlag.Short('h')
	// --help goes to stdout, as --help-long and --version do, so that it
	// can be paged; errors stay on stderr.
	app.UsageWriter(os.Stdout)

	opts, logConfig := addServeFlags(serveCmd)

	command, err := app.Parse(os.Args[1:])
	if err != nil {
		// kingpin.MustParse would exit 1, the status of a failed command.
		app.Errorf("%s, try --help", err)
		os.Exit(exitUsage)
	}

	if command == serveCmd.FullCommand() {
		logger := promslog.New(logConfig)
		if err := runServer(*opts, logger); err != nil {
			logger.Error("exporter stopped", "err", err)
			os.Exit(exitFailure)
		}
		return
	}
	for _, sc := range subcommands {
		if sc.cmd.FullCommand() == command {
			if err := sc.run(); err != nil {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n", exporterName, command, err)
				os.Exit(exitFailure)
			}
			return // exitOK
		}
	}
	fmt.Fprintf(os.Stderr, "%s: unknown command %q\n", exporterName, command)
	os.Exit(exitUsage)
}
