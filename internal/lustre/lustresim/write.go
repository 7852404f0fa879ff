package lustresim

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
)

// writer formats lctl text without fmt, so that benchmarks can produce
// hundreds of megabytes quickly.
type writer struct {
	bw  *bufio.Writer
	buf []byte
	// scope, when set, holds the targets of the server printing: its RPC
	// services carry their traffic alone (a fleet's servers).
	scope *targetScope
}

func newWriter(w io.Writer) *writer { return &writer{bw: bufio.NewWriterSize(w, 256<<10)} }

func (w *writer) str(s string) { w.bw.WriteString(s) }
func (w *writer) nl()          { w.bw.WriteByte('\n') }
func (w *writer) flush() error { return w.bw.Flush() }

// padded writes v right-aligned in width columns, as printf("%*llu").
func (w *writer) padded(v uint64, width int) {
	w.buf = strconv.AppendUint(w.buf[:0], v, 10)
	for i := len(w.buf); i < width; i++ {
		w.bw.WriteByte(' ')
	}
	w.bw.Write(w.buf)
}

// key writes "  name:" padded as Lustre's "%-16s" does.
func (w *writer) key(indent, name string) {
	w.str(indent)
	w.str(name)
	w.bw.WriteByte(':')
	for i := len(name) + 1; i < 16; i++ {
		w.bw.WriteByte(' ')
	}
	w.bw.WriteByte(' ')
}

// seconds writes Unix time t as "secs.nsecs".
func (w *writer) seconds(t float64) {
	sec := math.Floor(t)
	nsec := uint64((t - sec) * 1e9)
	w.buf = strconv.AppendUint(w.buf[:0], uint64(sec), 10)
	w.buf = append(w.buf, '.')
	n := strconv.AppendUint(nil, nsec, 10)
	for i := len(n); i < 9; i++ {
		w.buf = append(w.buf, '0')
	}
	w.buf = append(w.buf, n...)
	w.bw.Write(w.buf)
	w.str(" secs.nsecs\n")
}

// histLabel names a power-of-two bucket as Lustre's job_stats histograms do.
func histLabel(size uint64) string {
	switch {
	case size >= 1<<30:
		return strconv.FormatUint(size>>30, 10) + "G"
	case size >= 1<<20:
		return strconv.FormatUint(size>>20, 10) + "M"
	case size >= 1<<10:
		return strconv.FormatUint(size>>10, 10) + "K"
	}
	return strconv.FormatUint(size, 10)
}

// writeEntry writes one "- job_id:" entry at time t, if Lustre holds it,
// and tells read (when not nil) what it printed. An entry's times are its
// job's shifted by its phase.
func (s *Sim) writeEntry(w *writer, j *Job, e *entry, t float64, read *coverageRead) {
	t -= e.phase
	start, ok := s.lifetime(j, t, s.cleanup(e))
	if !ok {
		return
	}
	last, _ := j.lastActive(t)
	start, last = start+e.phase, last+e.phase
	t += e.phase
	modern := s.cfg.Dialect == Lustre215
	w.str("- ")
	w.key("", "job_id")
	if modern && strings.IndexByte(e.rawID, ':') >= 0 {
		w.str(`"` + e.rawID + `"`)
	} else {
		w.str(e.rawID)
	}
	w.nl()
	if modern {
		w.key("  ", "snapshot_time")
		w.seconds(last)
		w.key("  ", "start_time")
		w.seconds(start)
		w.key("  ", "elapsed_time")
		w.seconds(last - start)
	} else {
		w.key("  ", "snapshot_time")
		w.buf = strconv.AppendUint(w.buf[:0], uint64(last), 10)
		w.bw.Write(w.buf)
		w.nl()
	}
	var vals []uint64
	if read != nil {
		vals = make([]uint64, 0, 2*len(e.ops))
		defer func() { read.entry(e, start, vals) }()
	}
	for _, o := range e.ops {
		n, sum := j.samples(o, start-e.phase, t-e.phase)
		if read != nil {
			vals = append(vals, n, sum)
		}
		w.key("  ", o.name)
		w.str("{ samples: ")
		w.padded(n, 11)
		w.str(", unit: ")
		for i := len(o.unit); i < 5; i++ {
			w.bw.WriteByte(' ')
		}
		w.str(o.unit)
		if o.unit == "reqs" {
			w.str(" }\n")
			continue
		}
		min, max := uint64(0), uint64(0)
		if n > 0 {
			min, max = o.perSample, o.perSample
			if o.unit == "usecs" {
				min, max = o.perSample/3, o.perSample*4
			}
		}
		w.str(", min: ")
		w.padded(min, 8)
		w.str(", max: ")
		w.padded(max, 8)
		w.str(", sum: ")
		w.padded(sum, 16)
		if modern {
			// Wraps around like Lustre's own 64-bit sum of squares.
			w.str(", sumsq: ")
			w.padded(n*o.perSample*o.perSample, 18)
			if o.unit == "bytes" {
				w.str(", hist: { ")
				if n > 0 {
					w.str(histLabel(o.perSample))
					w.str(": ")
					w.buf = strconv.AppendUint(w.buf[:0], n, 10)
					w.bw.Write(w.buf)
				}
				w.str(" }")
			}
		}
		w.str(" }\n")
	}
}
