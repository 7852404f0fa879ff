package main

import (
	"bufio"
	"errors"
	"os"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
)

// `hpcio_exporter darshan signals LOG` prints the Darshan I/O signals v2.2
// of a log (../shared/SIGNALS.md, "Report format").
func init() {
	c := darshanCmd.Command("signals", "Print the I/O signals v2.2 of a Darshan log: darshan-parser's header, then one tab-separated line per job, module and record signal.")
	path := c.Arg("log", "Darshan log file.").Required().String()
	addCommand(c, func() error { return darshanSignals(*path) })
}

// darshanSignals prints the report of what it can read, then returns the
// damage it met, so that the process exits non-zero on a damaged log.
func darshanSignals(path string) error {
	l, openErr := darshan.Open(path)
	if l == nil {
		return openErr
	}
	defer l.Close()
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	err := signals.WriteReport(out, l)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return errors.Join(openErr, err)
}
