// Package parsertext prints Darshan logs as darshan-util 3.5.0 does:
// Dump as `darshan-parser --show-incomplete`, Total as `darshan-parser
// --total --show-incomplete`, DXT as `darshan-dxt-parser --show-incomplete`.
// The output is byte for byte that of the C tools, including their
// presentation quirks, except where they print wrong values (see
// ../README.md).
//
// Unlike the C tools, a damaged region does not end the output: the records
// decoded before the damage are printed, the following modules too, and the
// damage is returned as an error (a join of *darshan.FormatError).
package parsertext

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Dump writes the text of `darshan-parser --show-incomplete` for l to w.
// warn receives what darshan-parser writes to stderr about skipped modules;
// it may be nil. The error reports damage in l, or the first write error.
func Dump(w, warn io.Writer, l *darshan.Log) error {
	return parse(w, warn, l, false)
}

// Total writes the text of `darshan-parser --total --show-incomplete`: the
// counters of the POSIX, MPI-IO, STDIO, DFS and DAOS modules aggregated over
// all records. Arguments and errors are those of Dump.
func Total(w, warn io.Writer, l *darshan.Log) error {
	return parse(w, warn, l, true)
}

// dumper holds the state of one darshan-parser run.
type dumper struct {
	p      *printer
	l      *darshan.Log
	mounts []mount
	warn   io.Writer
	damage []error

	// per record: the line start "<module>\t<rank>\t<id>\t" and end
	// "\t<name>\t<mount>\t<fs>\n" shared by all its counters, and both
	// together (joint: suffix then prefix), the text between two counters
	prefix, suffix, joint []byte

	layouts map[*darshan.Layout]*layoutText // counters' names as printed, per layout

	readBins, writeBins []string      // "HEATMAP_READ_BIN_<i>" … names, built once
	apmpiSync           bool          // the APMPI header's sync flag
	lustre              []*lustreComp // LUSTRE_COMP<i>_… names, built once
}

func (d *dumper) warnf(format string, args ...any) {
	if d.warn != nil {
		fmt.Fprintf(d.warn, format, args...)
	}
}

// hasTotals reports whether darshan-parser aggregates the module's records
// (and so reads it even without --base).
func hasTotals(m darshan.ModuleID) bool {
	mod := m.Module()
	return mod != nil && mod.Totals != nil
}

func parse(w, warn io.Writer, l *darshan.Log, total bool) error {
	d := &dumper{p: newPrinter(w), l: l, mounts: mounts(l), warn: warn}
	p := d.p
	base := !total
	jobHeader(p, l, d.mounts)
	if base {
		p.str(columnsDescription)
	}
	empty := 0
	for i := range darshan.MaxModules {
		if p.err != nil {
			// Nothing more can be written, and the write error is what
			// parse returns: reading on would cost the rest of the log
			// for nothing (package signals stops a dump this way once it
			// has the header).
			break
		}
		m := darshan.ModuleID(i)
		reg := l.Header.ModuleRegions[i]
		partial := l.Header.PartialModule(m)
		switch {
		case reg.Length == 0:
			empty++
			if !partial {
				continue
			}
		case !m.Known():
			d.warnf("# Warning: module id %d is unknown. You may need a newer version of the Darshan utilities to parse it.\n", i)
			continue
		case m.Module().NoParser: // no handler in darshan-util 3.5.0
			d.warnf("# Warning: no log utility handlers defined for module %s, SKIPPING.\n", m)
			continue
		case m.Module().Traces: // darshan-dxt-parser's business
			continue
		case !hasTotals(m) && !base:
			continue
		}
		p.str("\n# *******************************************************\n# ")
		p.str(m.String())
		p.str(" module data\n# *******************************************************\n")
		if partial {
			partialWarning(p, m, "unnecessary")
			if reg.Length == 0 {
				continue
			}
		}
		ver := l.Header.ModuleVersions[i]
		if base {
			describe(p, m, ver)
			p.str("\n#<module>\t<rank>\t<record id>\t<counter>\t<value>\t<file name>\t<mount pt>\t<fs type>\n")
		}
		var acc *accumulator
		if total && hasTotals(m) {
			acc = newAccumulator(m)
		}
		rd := l.Records(m)
		for rd.Next() {
			rec := rd.Record()
			if base {
				d.record(rec)
				p.maybeFlush()
			}
			if acc != nil {
				acc.add(rec)
			}
			if p.err != nil {
				rd.Close()
				break
			}
		}
		if err := rd.Err(); err != nil {
			d.damage = append(d.damage, err)
			continue // darshan-parser prints no totals for a module it could not read to the end
		}
		if acc != nil {
			describe(p, m, ver)
			p.byte('\n')
			acc.print(p)
		}
	}
	if empty == darshan.MaxModules {
		p.str("\n# no module data available.\n")
	}
	p.flush()
	if p.err != nil {
		return p.err
	}
	return errors.Join(d.damage...)
}

const columnsDescription = `
# description of columns:
#   <module>: module responsible for this I/O record.
#   <rank>: MPI rank.  -1 indicates that the file is shared
#      across all processes and statistics are aggregated.
#   <record id>: hash of the record's file path
#   <counter name> and <counter value>: statistical counters.
#      A value of -1 indicates that Darshan could not monitor
#      that counter, and its value should be ignored.
#   <file name>: full file path for the record.
#   <mount pt>: mount point that the file resides on.
#   <fs type>: type of file system that the file resides on.
`

// recordName returns the name, mount point and fs type darshan-parser
// prints for a record: the mount is looked up only for named records;
// unnamed ones print as "(null)" (printf of a NULL string), except the BG/Q
// record.
func (d *dumper) recordName(k darshan.Key) (name, mnt, fs string) {
	name, ok := d.l.Names[k.ID]
	if !ok {
		unnamed := "(null)"
		if mod := k.Module.Module(); mod != nil {
			unnamed = mod.Unnamed
		}
		return unnamed, "UNKNOWN", "UNKNOWN"
	}
	mnt, fs = mountOf(d.mounts, name)
	return name, mnt, fs
}

// begin prepares the line start and end of a record's counters.
func (d *dumper) begin(k darshan.Key, name, mnt, fs string) {
	d.prefix = append(d.prefix[:0], k.Module.String()...)
	d.prefix = append(d.prefix, '\t')
	d.prefix = appendInt(d.prefix, k.Rank)
	d.prefix = append(d.prefix, '\t')
	d.prefix = appendUint(d.prefix, k.ID)
	d.prefix = append(d.prefix, '\t')
	d.suffix = append(d.suffix[:0], '\t')
	d.suffix = append(d.suffix, name...)
	d.suffix = append(d.suffix, '\t')
	d.suffix = append(d.suffix, mnt...)
	d.suffix = append(d.suffix, '\t')
	d.suffix = append(d.suffix, fs...)
	d.suffix = append(d.suffix, '\n')
	d.joint = append(append(d.joint[:0], d.suffix...), d.prefix...)
}

// beginNamed is begin with the record's name and mount looked up.
func (d *dumper) beginNamed(k darshan.Key) {
	name, mnt, fs := d.recordName(k)
	d.begin(k, name, mnt, fs)
}

// Counter lines, as the DARSHAN_*_COUNTER_PRINT macros print them. They
// are most of a dump's text (a line per counter of every record): each is
// built in a local slice, the values through appendCounter and
// appendFixed's fast paths.
func (d *dumper) intLine(counter string, v int64) {
	b := append(d.p.buf, d.prefix...)
	b = append(b, counter...)
	b = append(b, '\t')
	b = appendCounter(b, v)
	d.p.buf = append(b, d.suffix...)
}

func (d *dumper) uintLine(counter string, v uint64) {
	b := append(d.p.buf, d.prefix...)
	b = append(b, counter...)
	b = append(b, '\t')
	b = appendUint(b, v)
	d.p.buf = append(b, d.suffix...)
}

func (d *dumper) floatLine(counter string, v float64) {
	b := append(d.p.buf, d.prefix...)
	b = append(b, counter...)
	b = append(b, '\t')
	b = appendFixed(b, v, 6)
	d.p.buf = append(b, d.suffix...)
}

func (d *dumper) strLine(counter, v string) {
	b := append(d.p.buf, d.prefix...)
	b = append(b, counter...)
	b = append(b, '\t')
	b = append(b, v...)
	d.p.buf = append(b, d.suffix...)
}

// layoutText is what counters prints of a layout's names: each followed
// by its tab, and which integer counters print unsigned.
type layoutText struct {
	ints, floats []string
	unsigned     []bool
}

func (d *dumper) layoutText(l *darshan.Layout) *layoutText {
	if t := d.layouts[l]; t != nil {
		return t
	}
	t := &layoutText{ints: make([]string, len(l.Ints)), floats: make([]string, len(l.Floats)), unsigned: make([]bool, len(l.Ints))}
	unsigned := l.Module.Module().UnsignedInts
	for i, n := range l.Ints {
		t.ints[i] = n + "\t"
		t.unsigned[i] = slices.Contains(unsigned, n)
	}
	for i, n := range l.Floats {
		t.floats[i] = n + "\t"
	}
	if d.layouts == nil {
		d.layouts = map[*darshan.Layout]*layoutText{}
	}
	d.layouts[l] = t
	return t
}

// counters prints a record's integer then floating point counters. A
// line's end and the next line's start are appended as one (d.joint): the
// record's lines start with its prefix, each counter is followed by the
// joint, and the prefix the last joint leaves is cut back off.
func (d *dumper) counters(r *darshan.CounterRecord) {
	t := d.layoutText(r.Layout)
	joint := d.joint
	b := append(d.p.buf, d.prefix...)
	for i, v := range r.Ints[:len(t.ints)] {
		b = append(b, t.ints[i]...)
		if t.unsigned[i] {
			b = appendUint(b, uint64(v))
		} else {
			b = appendCounter(b, v)
		}
		b = append(b, joint...)
	}
	for i, v := range r.Floats[:len(t.floats)] {
		b = append(b, t.floats[i]...)
		b = appendFixed(b, v, 6)
		b = append(b, joint...)
	}
	d.p.buf = b[:len(b)-len(d.prefix)]
}

// record prints one record the way the module's log_print_record does.
func (d *dumper) record(rec darshan.Record) {
	switch r := rec.(type) {
	case *darshan.CounterRecord:
		d.beginNamed(r.Key)
		d.counters(r)
	case *darshan.DatasetRecord:
		d.beginNamed(r.Key)
		d.counters(&r.CounterRecord)
		d.uintLine(r.Module.String()+"_FILE_REC_ID", r.FileRecID)
	case *darshan.DFSRecord:
		d.dfsRecord(r)
	case *darshan.DAOSRecord:
		d.daosRecord(r)
	case *darshan.MDHIMRecord:
		d.mdhimRecord(r)
	case *darshan.LustreRecord:
		d.lustreRecord(r)
	case *darshan.HeatmapRecord:
		d.heatmapRecord(r)
	case *darshan.APMPIHeader:
		d.apmpiHeader(r)
	case *darshan.APMPIRecord:
		d.apmpiRecord(r)
	}
}

// describe prints the module's description of its counters for module
// version ver, as log_print_description does.
func describe(p *printer, m darshan.ModuleID, ver uint32) {
	p.str(m.Module().Describe(ver))
}
