package signals

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/parsertext"
)

// WriteReport writes the report of docs/signals.md for l: darshan-parser's
// header lines under a banner, then one tab-separated line per signal —
// module (JOB for level 1), rank, record id (0 for level 1, MODULE for
// level 2), SIGNAL_<NAME>, value — job level first, then the data modules
// in module id order, then every record of the data modules and HEATMAP in
// module id order and log order.
//
// A damaged log gets the report of the records read before the damage;
// the damage is returned (a join of *darshan.FormatError), or the first
// write error.
func WriteReport(w io.Writer, l *darshan.Log) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(banner)
	bw.Write(parserHeader(l))

	a := Analyze(l)
	var line []byte
	job := a.JobInputs()
	for _, s := range JobSignals {
		line = appendLine(line[:0], "JOB", -1, "0", s, job.JobSignal(s))
		bw.Write(line)
	}
	for i := range a.Modules {
		in := &a.Modules[i]
		for _, s := range ModuleSignals {
			line = appendLine(line[:0], in.Module.String(), -1, "MODULE", s, in.ModuleSignal(s))
			bw.Write(line)
		}
	}

	var x extractor
	var in Inputs
	var id []byte
	_ = walk(l, func(r darshan.Record) {
		k := r.RecordKey()
		id = strconv.AppendUint(id[:0], k.ID, 10)
		if h, ok := r.(*darshan.HeatmapRecord); ok {
			hm := HeatmapOf(h)
			vals := hm.Signals()
			for i, s := range HeatmapSignals {
				line = appendLine(line[:0], "HEATMAP", k.Rank, string(id), s, vals[i])
				bw.Write(line)
			}
			return
		}
		if !x.inputs(r, &in) {
			return
		}
		for _, s := range RecordSignalsOf(k.Module) {
			line = appendLine(line[:0], k.Module.String(), k.Rank, string(id), s, in.RecordSignal(s, k.Rank))
			bw.Write(line)
		}
	})
	if err := bw.Flush(); err != nil {
		return err
	}
	return a.Err
}

const banner = "# ============================================================\n" +
	"# ORIGINAL DARSHAN LOG HEADER\n" +
	"# ============================================================\n"

func appendLine(b []byte, module string, rank int64, id string, s Signal, v Value) []byte {
	b = append(b, module...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, rank, 10)
	b = append(b, '\t')
	b = append(b, id...)
	b = append(b, '\t')
	b = append(b, s.ReportName()...)
	b = append(b, '\t')
	b = v.Append(b)
	return append(b, '\n')
}

// parserHeader returns the header lines darshan-parser prints for l — job
// data, log file regions, mount table — without the empty lines between
// them. package parsertext prints them as darshan-parser does but has no
// function for the header alone, so this takes the start of its Dump and
// stops it at the description of columns that follows the header.
func parserHeader(l *darshan.Log) []byte {
	c := &headerCapture{}
	_ = parsertext.Dump(c, nil, l) // the damage is Analyze's to report
	var out []byte
	for line := range bytes.Lines(c.head()) {
		if len(bytes.TrimSpace(line)) > 0 {
			out = append(out, line...)
		}
	}
	return out
}

// headerMark starts what darshan-parser prints after the header.
var headerMark = []byte("\n# description of columns:\n")

var errHeaderDone = errors.New("header captured")

// headerCapture keeps what is written to it until headerMark appears, then
// refuses further writes so that the printer stops writing.
type headerCapture struct {
	buf  []byte
	done bool
}

func (c *headerCapture) Write(p []byte) (int, error) {
	if c.done {
		return 0, errHeaderDone
	}
	c.buf = append(c.buf, p...)
	if i := bytes.Index(c.buf, headerMark); i >= 0 {
		c.buf, c.done = c.buf[:i+1], true
	}
	return len(p), nil
}

func (c *headerCapture) head() []byte { return c.buf }
