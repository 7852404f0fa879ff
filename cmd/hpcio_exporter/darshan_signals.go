package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/hpcio/hpcio_exporter/darshan/signals"
)

// `hpcio_exporter darshan signals LOG` prints the Darshan I/O signals v2.2
// of a log (docs/signals.md, "The report"); --format=table prints
// them for a person instead of a program.
func init() {
	c := darshanCmd.Command("signals", "Print the I/O signals v2.2 of a Darshan log: darshan-parser's header, then one tab-separated line per job, module and record signal (--format=table: aligned, with units, grouped by module and record).")
	path := c.Arg("log", "Darshan log file.").Required().String()
	format := c.Flag("format", "tsv: the exact report, one tab-separated line per signal, for programs; table: aligned columns, units, 4 significant digits, a section per module and record, for people.").
		Default("tsv").Enum("tsv", "table")
	budget := maxLogMemoryFlag(c)
	addCommand(c, func() error { return darshanSignals(*path, *format, int64(*budget)) })
}

// darshanSignals prints the report of what it can read, then returns the
// damage it met, so that the process exits non-zero on a damaged log.
func darshanSignals(path, format string, budget int64) error {
	l, openErr := openLog(path, budget)
	if l == nil || firstOverBudget(openErr) != nil {
		if l != nil {
			l.Close()
		}
		return openErr // a log over its budget is refused whole
	}
	defer l.Close()
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var err error
	if format == "table" {
		// The table is made from the report, so that both always show the
		// same signals and values; a damaged log's table shows what its
		// report holds.
		var report bytes.Buffer
		err = signals.WriteReport(&report, l)
		if terr := writeSignalsTable(out, report.Bytes()); err == nil {
			err = terr
		}
	} else {
		err = signals.WriteReport(out, l)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return overBudget(errors.Join(openErr, err))
}

// signalRow is one line of the report, and what the table shows of it.
type signalRow struct {
	module, rank, record, signal, value string
	name, shown, unit                   string
}

// signalSection is the rows of one module's signals or one record's.
type signalSection struct {
	title string
	rows  []signalRow
}

// writeSignalsTable rewrites a report (signals.WriteReport) as a table: the
// log's header lines as they are, then a section per level — the job, each
// module with its module-level signals, then each of its records (rank and
// record id in the section's title) — each signal on a line with its name
// (lower case, as SIGNALS.md names it), its value to 4 significant digits
// and its unit. Sizes and bandwidths are in B, KiB, MiB, …; counts and
// rates of 10,000 and more in k, M, G.
func writeSignalsTable(w io.Writer, report []byte) error {
	var header []string
	var order []string // modules, in report order
	modules := map[string][]*signalSection{}
	var last *signalSection
	for line := range strings.Lines(string(report)) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "#") {
			header = append(header, line)
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			continue
		}
		r := signalRow{module: f[0], rank: f[1], record: f[2], signal: f[3], value: f[4]}
		if last == nil || last.rows[0].module != r.module || last.rows[0].rank != r.rank || last.rows[0].record != r.record {
			if _, seen := modules[r.module]; !seen {
				order = append(order, r.module)
			}
			last = &signalSection{title: sectionTitle(r)}
			modules[r.module] = append(modules[r.module], last)
		}
		last.rows = append(last.rows, r)
	}

	nameW, valueW := len("signal"), len("value")
	for _, m := range order {
		for _, sec := range modules[m] {
			for i := range sec.rows {
				r := &sec.rows[i]
				r.name = strings.ToLower(strings.TrimPrefix(r.signal, "SIGNAL_"))
				r.shown, r.unit = tableValue(r.name, r.value)
				nameW, valueW = max(nameW, len(r.name)), max(valueW, len(r.shown))
			}
		}
	}

	bw := bufio.NewWriter(w)
	for _, h := range header {
		bw.WriteString(h)
		bw.WriteByte('\n')
	}
	for _, m := range order {
		for _, sec := range modules[m] {
			fmt.Fprintf(bw, "\n%s\n", sec.title)
			line := fmt.Appendf(nil, "  %-*s  %*s  %s", nameW, "signal", valueW, "value", "unit")
			bw.Write(append(line, '\n'))
			for _, r := range sec.rows {
				line = fmt.Appendf(line[:0], "  %-*s  %*s  %s", nameW, r.name, valueW, r.shown, r.unit)
				bw.Write(append(bytes.TrimRight(line, " "), '\n'))
			}
		}
	}
	return bw.Flush()
}

// sectionTitle names the section of a report line's level.
func sectionTitle(r signalRow) string {
	switch {
	case r.module == "JOB":
		return "== job"
	case r.record == "MODULE":
		return "== " + r.module + " (module)"
	case r.rank == "-1":
		return fmt.Sprintf("-- %s record %s, shared by every rank", r.module, r.record)
	default:
		return fmt.Sprintf("-- %s record %s, rank %s", r.module, r.record, r.rank)
	}
}

// signalUnits is the unit of each signal (SIGNALS.md); a signal not listed
// is a ratio. Bytes and MiB/s are scaled to binary prefixes.
var signalUnits = map[string]string{
	"total_bytes_read": "B", "total_bytes_written": "B", "total_reads": "ops", "total_writes": "ops",
	"read_bw": "MiB/s", "write_bw": "MiB/s", "read_iops": "ops/s", "write_iops": "ops/s",
	"avg_read_size": "B", "avg_write_size": "B",
	"meta_ops": "ops", "meta_intensity": "ops/access", "bw_variance_proxy": "B²",
	"total_read_events": "B", "total_write_events": "B", "active_bins": "bins",
	"active_time": "s", "activity_span": "s", "peak_activity_bin": "bin index", "peak_activity_value": "B",
}

// tableValue formats a report value for the table: 4 significant digits
// and its unit; NA, with its reason in place of the unit.
func tableValue(signal, text string) (value, unit string) {
	if reason, ok := strings.CutPrefix(text, "NA("); ok {
		// The reason goes where the unit would be, so that the values
		// stay a narrow column.
		return "NA", "(" + reason
	}
	x, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return text, ""
	}
	unit, ok := signalUnits[signal]
	switch {
	case signal == "is_shared":
		if x != 0 {
			return "yes", ""
		}
		return "no", ""
	case !ok:
		return sig4(x), "ratio"
	case unit == "B":
		return binaryScaled(x, "B")
	case unit == "MiB/s":
		return binaryScaled(x*(1<<20), "B/s")
	case signal == "peak_activity_bin" || signal == "active_bins":
		return strconv.FormatFloat(x, 'f', -1, 64), unit
	}
	return siScaled(x, unit)
}

// sig4 formats x with 4 significant digits, without an exponent between
// 0.0001 and 10,000 (the callers scale larger numbers).
func sig4(x float64) string {
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// binaryScaled scales bytes to the largest binary prefix that leaves at
// least 1.
func binaryScaled(x float64, unit string) (string, string) {
	prefixes := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	i := 0
	for math.Abs(x) >= 1024 && i < len(prefixes)-1 {
		x /= 1024
		i++
	}
	return sig4(x), prefixes[i] + unit
}

// siScaled scales counts and rates of 10,000 and more by k, M, G, T, so
// that 4 significant digits need no exponent.
func siScaled(x float64, unit string) (string, string) {
	prefixes := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for math.Abs(x) >= 10000 && i < len(prefixes)-1 {
		x /= 1000
		i++
	}
	if i == 0 {
		return sig4(x), unit
	}
	return sig4(x), prefixes[i] + " " + unit
}
