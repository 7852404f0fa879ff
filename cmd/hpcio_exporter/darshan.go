package main

import (
	"bufio"
	"errors"
	"os"

	"github.com/alecthomas/kingpin/v2"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/parsertext"
)

// `hpcio_exporter darshan dump LOG [--total] [--dxt]` prints a Darshan log
// as darshan-parser (or darshan-dxt-parser) does, without darshan-util.
func init() {
	c := darshanCmd.Command("dump", "Print a Darshan log as darshan-parser --show-incomplete does.")
	path := c.Arg("log", "Darshan log file.").Required().String()
	total := c.Flag("total", "Print aggregated counters, as darshan-parser --total.").Bool()
	dxt := c.Flag("dxt", "Print the DXT traces, as darshan-dxt-parser.").Bool()
	// A usage error, checked while parsing: it exits 2, as kingpin's own.
	c.Validate(func(*kingpin.CmdClause) error {
		if *total && *dxt {
			return errors.New("--total and --dxt are different outputs; give one")
		}
		return nil
	})
	addCommand(c, func() error { return darshanDump(*path, *total, *dxt) })
}

// darshanDump prints what it can of the log, then returns the damage it met
// (so that the process exits non-zero on a damaged log). total and dxt are
// not both set (the command's validator).
func darshanDump(path string, total, dxt bool) error {
	l, openErr := darshan.Open(path)
	if l == nil {
		return openErr
	}
	defer l.Close()
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	var err error
	switch {
	case total:
		err = parsertext.Total(out, os.Stderr, l)
	case dxt:
		err = parsertext.DXT(out, os.Stderr, l)
	default:
		err = parsertext.Dump(out, os.Stderr, l)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return errors.Join(openErr, err)
}
