package dayu

import (
	"errors"
	"fmt"
	"strings"
)

// The setters below give tracker keys their meaning; both the YAML-ish and
// the JSON readers call them. A known key with a value of the wrong kind is
// an error (the file is damaged); an unknown key is kept in Extra. What a
// setter keeps (a string, a list) is charged to the parse's budget first.

// fieldErr names the field in an error, if the reader knows it (messages.go).
func fieldErr(key string, err error) error {
	if errors.Is(err, errBudget) {
		return err
	}
	return fmt.Errorf("%s: %w", keyName(key), err)
}

func intInto(dst *int64, key string, v *node) error {
	n, err := v.int()
	if err != nil {
		return fieldErr(key, err)
	}
	*dst = n
	return nil
}

// countInto reads a counter that cannot be negative: a measured byte or
// operation count.
func countInto(dst *int64, key string, v *node) error {
	n, err := v.int()
	if err == nil && n < 0 {
		err = errors.New(msgNegative)
	}
	if err != nil {
		return fieldErr(key, err)
	}
	*dst = n
	return nil
}

func (p *parse) intsInto(dst *[]int64, key string, v *node) error {
	if v.kind == listNode {
		if err := p.keep(int64(len(v.items))*8 + 24); err != nil {
			return err
		}
	}
	n, err := v.ints()
	if err != nil {
		return fieldErr(key, err)
	}
	*dst = n
	return nil
}

// strInto keeps a string field.
func (p *parse) strInto(dst *string, v *node) error {
	if v.kind != scalarNode {
		if err := p.hold(v.size()); err != nil {
			return err
		}
	}
	s, err := p.str(v.str())
	*dst = s
	return err
}

// strsInto keeps a list of strings.
func (p *parse) strsInto(dst *[]string, v *node) error {
	list := v.strs()
	if err := p.keep(24 + 16*int64(len(list))); err != nil { // the strings charge themselves
		return err
	}
	for i, s := range list {
		c, err := p.str(s)
		if err != nil {
			return err
		}
		list[i] = c
	}
	*dst = list
	return nil
}

// extra keeps an unknown field as written.
func (p *parse) extra(extra *map[string]string, key string, v *node) error {
	cost := int64(len(key)) + v.size() + costMapEntry
	if *extra == nil {
		cost += costMap + 8*8 // its slots hold two strings
	}
	if err := p.keep(cost); err != nil {
		return err
	}
	if *extra == nil {
		*extra = map[string]string{}
	}
	(*extra)[string([]byte(key))] = string([]byte(v.String()))
	return nil
}

// set sets one scalar field of a file record.
func (e *Entry) set(p *parse, key string, v *node) error {
	switch key {
	case "file_name":
		return p.strInto(&e.Path, v)
	case "task_name":
		return p.strInto(&e.TaskName, v)
	case "open_time":
		return intInto(&e.Open, key, v)
	case "close_time":
		return intInto(&e.Close, key, v)
	case "file_size":
		return intInto(&e.Size, key, v)
	case "file_intent":
		return p.strsInto(&e.Intents, v)
	case "access_type":
		return p.strInto(&e.AccessType, v)
	case "file_type":
		return p.strInto(&e.FileType, v)
	case "file_read_cnt":
		return countInto(&e.ReadOps, key, v)
	case "file_write_cnt":
		return countInto(&e.WriteOps, key, v)
	case "total_io_bytes", "io_bytes":
		return countInto(&e.IOBytes, key, v)
	case "header_size":
		return intInto(&e.HeaderSize, key, v)
	case "sieve_buf_size":
		return intInto(&e.SieveBufSize, key, v)
	case "ds_created":
		return intInto(&e.Objects.DatasetsCreated, key, v)
	case "ds_accessed":
		return intInto(&e.Objects.DatasetsAccessed, key, v)
	case "grp_created":
		return intInto(&e.Objects.GroupsCreated, key, v)
	case "grp_accessed":
		return intInto(&e.Objects.GroupsAccessed, key, v)
	case "dtypes_created":
		return intInto(&e.Objects.TypesCreated, key, v)
	case "dtypes_accessed":
		return intInto(&e.Objects.TypesAccessed, key, v)
	}
	return p.extra(&e.Extra, key, v)
}

// set sets one field of a dataset record (the VOL fields of the seed).
func (d *Dataset) set(p *parse, key string, v *node) error {
	switch key {
	case "dset_name":
		return p.strInto(&d.Name, v)
	case "start_time":
		return intInto(&d.Start, key, v)
	case "end_time":
		return intInto(&d.End, key, v)
	case "dt_class":
		return p.strInto(&d.DTClass, v)
	case "ds_class":
		return p.strInto(&d.DSClass, v)
	case "layout":
		return p.strInto(&d.Layout, v)
	case "storage_size":
		return intInto(&d.StorageSize, key, v)
	case "dset_n_elements":
		return intInto(&d.Elements, key, v)
	case "dimension_cnt":
		// Implied by dimensions; checked by nobody, kept for the record.
		var n int64
		if err := intInto(&n, key, v); err != nil {
			return err
		}
		return p.extra(&d.Extra, key, v)
	case "dimensions":
		return p.intsInto(&d.Dimensions, key, v)
	case "dset_type_size":
		return intInto(&d.TypeSize, key, v)
	case "dataset_read_cnt":
		return intInto(&d.ReadCount, key, v)
	case "total_bytes_read":
		return intInto(&d.BytesRead, key, v)
	case "dataset_write_cnt":
		return intInto(&d.WriteCount, key, v)
	case "total_bytes_written":
		return intInto(&d.BytesWritten, key, v)
	case "access_type":
		return p.strInto(&d.AccessType, v)
	case "dset_offset":
		return intInto(&d.Offset, key, v)
	case "dset_select_type":
		return p.strInto(&d.SelectType, v)
	case "dset_select_npoints":
		return intInto(&d.SelectPoints, key, v)
	case "data_file_pages":
		return p.intsInto(&d.DataPages, key, v)
	case "metadata_file_pages":
		return p.intsInto(&d.MetadataPages, key, v)
	case "access_orders":
		return p.intsInto(&d.AccessOrders, key, v)
	}
	return p.extra(&d.Extra, key, v)
}

// memCounters are the fields every VFD block has; a block missing one at the
// end of a file means the file was cut.
var memCounters = []string{"read_bytes", "read_cnt", "write_bytes", "write_cnt"}

// memSeen are the bits of memBlock.seen, one per field.
var memSeen = map[string]uint8{"read_bytes": 1, "read_cnt": 2, "write_bytes": 4, "write_cnt": 8, "read_ranges": 16, "write_ranges": 32}

// set sets one field of a VFD block; unknown fields are skipped.
func (b *memBlock) set(p *parse, key string, v *node) error {
	b.seen |= memSeen[key]
	var err error
	var rs []PageRange
	switch key {
	case "read_bytes":
		return countInto(&b.io.ReadBytes, key, v)
	case "read_cnt":
		return countInto(&b.io.ReadOps, key, v)
	case "write_bytes":
		return countInto(&b.io.WriteBytes, key, v)
	case "write_cnt":
		return countInto(&b.io.WriteOps, key, v)
	case "read_ranges", "write_ranges":
		rs, err = v.ranges()
		if err != nil {
			return fieldErr(key, err)
		}
		if !p.keepRanges {
			rs = nil
		} else if v.kind != rangesNode { // the JSON reader charged its own
			if err := p.keep(int64(len(rs)) * costRange); err != nil {
				return err
			}
		}
		b.setRanges(key, rs)
	}
	return nil
}

// setRanges sets ranges read by scanRanges.
func (b *memBlock) setRanges(key string, rs []PageRange) {
	b.seen |= memSeen[key]
	if key == "read_ranges" {
		b.io.ReadRanges = rs
	} else {
		b.io.WriteRanges = rs
	}
}

func (b *memBlock) missing() []string {
	var out []string
	for _, k := range memCounters {
		if b.seen&memSeen[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// set sets one field of a task block. fileLayer names the layer of a bare
// "Total-Overhead(ms)", which the earliest files write without VOL-/VFD-.
func (t *Task) set(p *parse, key string, v *node, fileLayer Layer) error {
	switch key {
	case "task_id":
		return intInto(&t.PID, key, v)
	case "task_name":
		return p.strInto(&t.Name, v)
	case "tracker_vfd_page_size", "hermes_page_size":
		return intInto(&t.PageSize, key, v)
	}
	if strings.HasSuffix(key, "(ms)") {
		ms, err := v.float()
		if err != nil {
			return fieldErr(key, err)
		}
		if t.TimersMS == nil {
			if err := p.keep(2 * costMap); err != nil { // and OverheadMS
				return err
			}
			t.TimersMS = map[string]float64{}
		}
		if _, ok := t.TimersMS[key]; !ok {
			if err := p.keep(int64(len(key)) + costMapEntry); err != nil {
				return err
			}
			key = string([]byte(key))
		}
		t.TimersMS[key] = ms
		if strings.Contains(key, "Overhead") {
			layer := fileLayer
			switch {
			case strings.HasPrefix(key, "VOL-"):
				layer = LayerVOL
			case strings.HasPrefix(key, "VFD-"):
				layer = LayerVFD
			}
			if t.OverheadMS == nil {
				t.OverheadMS = map[Layer]float64{}
			}
			t.OverheadMS[layer] = ms
		}
		return nil
	}
	return p.extra(&t.Extra, key, v)
}
