package main

import (
	"github.com/alecthomas/kingpin/v2"
)

// Tools beside the exporter add themselves to the command line from an init
// function in their own file (darshan.go, dayu.go, …), so that a tool can be
// added without touching main.go. Each declares its own flags on its own
// command: a one-shot tool's --help shows what applies to it, and a server
// flag given to it is a usage error.
type subcommand struct {
	cmd *kingpin.CmdClause
	run func() error
}

var subcommands []subcommand

// The commands, in the order --help lists them (package variables are
// initialized in declaration order, before any init function adds a tool).
var (
	// serveCmd runs the exporter and holds every server flag (addServeFlags).
	// It is the default: kingpin selects it when the first word is not a
	// command, or when a flag is not a global one, so that
	// `hpcio_exporter --web.listen-address=:9848 --demo`, as the systemd
	// units and every existing deployment run it, is `serve` with those flags.
	serveCmd = kingpin.Command("serve", "Run the exporter: the default command, whose flags may be given without naming it.").Default()

	// Parent commands shared by several tools' files.
	darshanCmd = kingpin.Command("darshan", "Read Darshan logs without darshan-util.")
	dayuCmd    = kingpin.Command("dayu", "Read HDF5 VOL/VFD workflow stats (DaYu).")
)

// addCommand registers cmd; run is called when kingpin selected it. A
// non-nil error from run makes the process exit with exitFailure. What is
// wrong with the command line itself (a flag combination, say) belongs in
// cmd.Validate, so that kingpin reports it as a usage error (exitUsage).
func addCommand(cmd *kingpin.CmdClause, run func() error) {
	subcommands = append(subcommands, subcommand{cmd: cmd, run: run})
}
