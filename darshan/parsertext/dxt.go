package parsertext

import (
	"errors"
	"io"
	"slices"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// DXT writes the text of `darshan-dxt-parser --show-incomplete` for l to w:
// the job header, then every DXT_POSIX and DXT_MPIIO segment, with the
// Lustre OSTs each POSIX segment touched when the file has a LUSTRE record.
// Arguments and errors are those of Dump.
func DXT(w, warn io.Writer, l *darshan.Log) error {
	d := &dumper{p: newPrinter(w), l: l, mounts: mounts(l), warn: warn}
	p := d.p
	jobHeader(p, l, d.mounts)
	h := &l.Header
	if h.ModuleRegions[darshan.DXTPOSIX].Length == 0 && h.ModuleRegions[darshan.DXTMPIIO].Length == 0 {
		p.str("\n# no DXT module data available for this Darshan log.\n")
		p.flush()
		return p.err
	}
	lustre := map[uint64]*darshan.LustreRecord{}
	for i := range darshan.MaxModules {
		m := darshan.ModuleID(i)
		switch {
		case h.ModuleRegions[i].Length == 0:
			continue
		case !m.Known():
			d.warnf("# Warning: module id %d is unknown. You may need a newer version of the Darshan utilities to parse it.\n", i)
			continue
		case m == darshan.NullModule || m == darshan.APXC:
			d.warnf("Warning: no log utility handlers defined for module %s, SKIPPING.\n", m)
			continue
		case m == darshan.DXTPOSIX || m == darshan.DXTMPIIO:
			p.str("\n# ***************************************************\n# ")
			p.str(m.String())
			p.str(" module data\n# ***************************************************\n")
		case m != darshan.Lustre:
			continue
		}
		if h.PartialModule(m) {
			partialWarning(p, m, "unecessary")
		}
		rd := l.Records(m)
		for rd.Next() {
			switch r := rd.Record().(type) {
			case *darshan.LustreRecord:
				// darshan-dxt-parser keeps LUSTRE records in a hash by record
				// id; all ranks' records of a file describe the same layout.
				if _, ok := lustre[r.ID]; !ok {
					lustre[r.ID] = r.Clone().(*darshan.LustreRecord)
				}
			case *darshan.DXTRecord:
				d.dxtRecord(r, h.ModuleVersions[m], lustre[r.ID])
				p.maybeFlush()
			}
		}
		if err := rd.Err(); err != nil {
			d.damage = append(d.damage, err)
		}
	}
	p.flush()
	if p.err != nil {
		return p.err
	}
	return errors.Join(d.damage...)
}

// dxtRecord prints a record as dxt_log_print_posix_file and
// dxt_log_print_mpiio_file do.
func (d *dumper) dxtRecord(r *darshan.DXTRecord, ver uint32, lustre *darshan.LustreRecord) {
	p := d.p
	name, ok := d.l.Names[r.ID]
	mnt, fs := "UNKNOWN", "UNKNOWN"
	if ok {
		mnt, fs = mountOf(d.mounts, name)
	} else {
		name = "(null)"
	}
	posix := r.Module == darshan.DXTPOSIX
	if !posix {
		lustre = nil
	}
	nthreads := 1
	if r.HasThreads && len(r.Writes)+len(r.Reads) > 0 {
		nthreads = countThreads(r)
	}
	p.str("\n# DXT, file_id: ")
	p.uint(r.ID)
	p.str(", file_name: ")
	p.str(name)
	p.str("\n# DXT, rank: ")
	p.int(r.Rank)
	p.str(", hostname: ")
	p.str(r.Hostname)
	p.str("\n# DXT, number of threads: ")
	p.int(int64(nthreads))
	p.str("\n# DXT, write_count: ")
	p.int(int64(len(r.Writes)))
	p.str(", read_count: ")
	p.int(int64(len(r.Reads)))
	p.str("\n# DXT, mnt_pt: ")
	p.str(mnt)
	p.str(", fs_type: ")
	p.str(fs)
	p.byte('\n')
	if lustre != nil {
		p.str("# DXT, Lustre stripe components:\n")
		ost := 0
		for i, c := range lustre.Components {
			p.str("#\t[Component ")
			p.int(int64(i + 1))
			p.str("] stripe_ext: ")
			p.int(c.ExtentStart)
			p.str(" - ")
			if c.ExtentEnd == -1 {
				p.str("EOF, ")
			} else {
				p.int(c.ExtentEnd)
				p.str(", ")
			}
			p.str("stripe_size: ")
			p.int(c.StripeSize)
			p.str(", stripe_count: ")
			p.int(c.StripeCount)
			p.str(", OSTs:")
			for j := int64(0); j < c.StripeCount && ost < len(lustre.OSTs); j, ost = j+1, ost+1 {
				p.byte(' ')
				p.int(lustre.OSTs[ost])
			}
			p.byte('\n')
		}
	}
	p.str("# Module    Rank  Wt/Rd  Segment          Offset          Length    Start(s)      End(s)")
	if lustre != nil {
		p.str("   [OST]")
	}
	p.str("   Pthread-ID\n")
	module := "X_MPIIO"
	if posix {
		module = "X_POSIX"
	}
	var rank [24]byte
	rankText := appendInt(rank[:0], r.Rank)
	for _, ops := range []struct {
		kind string
		segs []darshan.Segment
	}{{"write", r.Writes}, {"read", r.Reads}} {
		for i, s := range ops.segs {
			d.segment(module, rankText, ops.kind, i, s, lustre, r.HasThreads)
		}
		p.maybeFlush()
	}
}

// segment prints one trace line:
// "%8s%8ld%7s%9d%16ld%16ld%12.4f%12.4f  " then OSTs and the thread id.
func (d *dumper) segment(module string, rank []byte, kind string, i int, s darshan.Segment, lustre *darshan.LustreRecord, threads bool) {
	p := d.p
	var num [32]byte
	p.padLeft([]byte(module), 8)
	p.padLeft(rank, 8)
	p.padLeft([]byte(kind), 7)
	p.padLeft(appendInt(num[:0], int64(int32(i))), 9)
	p.padLeft(appendInt(num[:0], s.Offset), 16)
	p.padLeft(appendInt(num[:0], s.Length), 16)
	p.padLeft(appendFixed(num[:0], s.Start, 4), 12)
	p.padLeft(appendFixed(num[:0], s.End, 4), 12)
	p.str("  ")
	if lustre != nil {
		d.segmentOSTs(s, lustre)
		if len(lustre.Components) > 0 {
			p.str("  ")
		}
	}
	if !threads {
		p.str(" N/A\n")
		return
	}
	p.byte(' ')
	p.padLeft(appendUint(num[:0], s.PthreadID), 4)
	p.byte('\n')
}

// segmentOSTs prints " [ost]" for each OST the segment's bytes fall on,
// walking the layout components as darshan-dxt-parser does (including its
// shared stripe count across components).
func (d *dumper) segmentOSTs(s darshan.Segment, l *darshan.LustreRecord) {
	p := d.p
	offset, end := s.Offset, s.Offset+s.Length
	cur := offset
	ostBase := int64(0)
	printed := int64(0)
	for _, c := range l.Components {
		size, count := c.StripeSize, c.StripeCount
		if count == 0 {
			continue // data on the MDT
		}
		inComp := func(x int64) bool { return x < c.ExtentEnd || c.ExtentEnd == -1 }
		if size > 0 && count > 0 && cur >= c.ExtentStart && inComp(cur) {
			compOff := cur - c.ExtentStart
			idx := (compOff / size) % count
			for cur < end && inComp(cur) {
				if k := ostBase + idx; k >= 0 && k < int64(len(l.OSTs)) {
					p.str(" [")
					p.int(l.OSTs[k])
					p.byte(']')
				}
				if idx == count-1 {
					idx = 0
				} else {
					idx++
				}
				compOff = (compOff/size + 1) * size
				cur = c.ExtentStart + compOff
				printed++
				if printed >= count {
					cur = c.ExtentEnd
					if cur == -1 {
						cur = end
					}
					break
				}
			}
		}
		ostBase += count
	}
}

// countThreads counts the distinct thread ids of a record's segments.
func countThreads(r *darshan.DXTRecord) int {
	ids := make([]uint64, 0, len(r.Writes)+len(r.Reads))
	for _, s := range r.Writes {
		ids = append(ids, s.PthreadID)
	}
	for _, s := range r.Reads {
		ids = append(ids, s.PthreadID)
	}
	slices.Sort(ids)
	return len(slices.Compact(ids))
}
