package main

import (
	"github.com/alecthomas/kingpin/v2"
)

// Tools beside the exporter add themselves to the command line from an init
// function in their own file (darshan.go, dayu.go, …), so that a tool can be
// added without touching main.go. The exporter itself is the default command.
type subcommand struct {
	cmd *kingpin.CmdClause
	run func() error
}

var subcommands []subcommand

// Parent commands shared by several tools' files.
var (
	darshanCmd = kingpin.Command("darshan", "Read Darshan logs without darshan-util.")
	dayuCmd    = kingpin.Command("dayu", "Read HDF5 VOL/VFD workflow stats (DaYu).")
)

// addCommand registers cmd; run is called when kingpin selected it. A
// non-nil error from run makes the process exit with status 1.
func addCommand(cmd *kingpin.CmdClause, run func() error) {
	subcommands = append(subcommands, subcommand{cmd: cmd, run: run})
}
