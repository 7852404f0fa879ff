package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

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
	budget := maxLogMemoryFlag(c)
	// A usage error, checked while parsing: it exits 2, as kingpin's own.
	c.Validate(func(*kingpin.CmdClause) error {
		if *total && *dxt {
			return errors.New("--total and --dxt are different outputs; give one")
		}
		return nil
	})
	addCommand(c, func() error { return darshanDump(*path, *total, *dxt, int64(*budget)) })
}

// logMemory is the value of --max-log-memory: bytes, as a number or with a
// binary unit (256MiB, 1.5GiB; KB, MB, GB are binary too, as in kingpin's
// Bytes).
type logMemory int64

// byteUnits are the units --max-log-memory accepts, all powers of 1024.
var byteUnits = []struct {
	names []string
	size  float64
}{
	{[]string{"TiB", "TB", "T"}, 1 << 40}, {[]string{"GiB", "GB", "G"}, 1 << 30},
	{[]string{"MiB", "MB", "M"}, 1 << 20}, {[]string{"KiB", "KB", "K"}, 1 << 10}, {[]string{"B", ""}, 1},
}

func (m *logMemory) Set(s string) error {
	for _, u := range byteUnits {
		for _, name := range u.names {
			num, ok := strings.CutSuffix(s, name)
			if !ok {
				continue
			}
			x, err := strconv.ParseFloat(num, 64)
			if err != nil || math.IsNaN(x) || x*u.size >= math.MaxInt64 {
				return fmt.Errorf("%q is not a size in bytes (e.g. 268435456, 256MiB, 1GiB)", s)
			}
			if x*u.size < 1 {
				return fmt.Errorf("%q: the memory budget must be at least one byte", s)
			}
			*m = logMemory(x * u.size)
			return nil
		}
	}
	return fmt.Errorf("%q is not a size in bytes (e.g. 268435456, 256MiB, 1GiB)", s)
}

func (m *logMemory) String() string { return sizeString(int64(*m)) }

// sizeString writes n bytes in the largest binary unit that divides it.
func sizeString(n int64) string {
	for _, u := range byteUnits {
		if k := int64(u.size); k > 1 && n%k == 0 && n != 0 {
			return strconv.FormatInt(n/k, 10) + u.names[0]
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// maxLogMemoryHelp is the help of --max-log-memory.
const maxLogMemoryHelp = "The most memory reading the log may take, in bytes (256MiB, 1GiB): a log whose names, records and traces cost more is refused (exit 1). No real log comes near the default; raise it to read one that does."

// maxLogMemoryFlag adds --max-log-memory to a command that reads one log.
func maxLogMemoryFlag(c *kingpin.CmdClause) *logMemory {
	return maxLogMemoryFlagHelp(c, maxLogMemoryHelp)
}

// maxLogMemoryFlagHelp adds --max-log-memory with its help.
func maxLogMemoryFlagHelp(c *kingpin.CmdClause, help string) *logMemory {
	m := new(logMemory)
	c.Flag("max-log-memory", help).Default(sizeString(darshan.DefaultMemoryBudget)).SetValue(m)
	return m
}

// openLog opens the log of a darshan command with its memory budget.
func openLog(path string, budget int64) (*darshan.Log, error) {
	l, err := darshan.OpenWith(path, darshan.Options{MemoryBudget: budget})
	return l, overBudget(err)
}

// overBudget turns an error of a log over its memory budget into one line
// that names the region and the flag to raise; other errors are returned
// as they are. A log over its budget fails every region read after the one
// that passed it: only that first one is worth saying.
func overBudget(err error) error {
	fe := firstOverBudget(err)
	if fe == nil {
		return err
	}
	var be *darshan.BudgetError
	errors.As(fe, &be)
	return fmt.Errorf("%w; raise --max-log-memory (now %s) to read it", fe, sizeString(be.Budget))
}

// firstOverBudget returns the first *darshan.FormatError in err's tree
// whose cause is a *darshan.BudgetError.
func firstOverBudget(err error) *darshan.FormatError {
	var fe *darshan.FormatError
	if errors.As(err, &fe) {
		var be *darshan.BudgetError
		if errors.As(fe.Err, &be) {
			return fe
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if fe := firstOverBudget(e); fe != nil {
				return fe
			}
		}
	case interface{ Unwrap() error }:
		return firstOverBudget(u.Unwrap())
	}
	return nil
}

// darshanDump prints what it can of the log, then returns the damage it met
// (so that the process exits non-zero on a damaged log). total and dxt are
// not both set (the command's validator).
func darshanDump(path string, total, dxt bool, budget int64) error {
	l, openErr := openLog(path, budget)
	if l == nil || firstOverBudget(openErr) != nil {
		if l != nil {
			l.Close()
		}
		return openErr // a log over its budget is refused whole
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
	return overBudget(errors.Join(openErr, err))
}
