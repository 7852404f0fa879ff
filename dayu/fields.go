package dayu

import (
	"fmt"
	"strings"
)

// The setters below give tracker keys their meaning; both the YAML-ish and
// the JSON readers call them. A known key with a value of the wrong kind is
// an error (the file is damaged); an unknown key is kept in Extra.

func intInto(dst *int64, key string, v *node) error {
	n, err := v.int()
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	*dst = n
	return nil
}

// countInto reads a counter that cannot be negative: a measured byte or
// operation count.
func countInto(dst *int64, key string, v *node) error {
	n, err := v.int()
	if err == nil && n < 0 {
		err = fmt.Errorf("negative count %d", n)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	*dst = n
	return nil
}

func intsInto(dst *[]int64, key string, v *node) error {
	n, err := v.ints()
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	*dst = n
	return nil
}

// setEntry sets one scalar field of a file record.
func (e *Entry) set(key string, v *node) error {
	switch key {
	case "file_name":
		e.Path = v.str()
	case "task_name":
		e.TaskName = v.str()
	case "open_time":
		return intInto(&e.Open, key, v)
	case "close_time":
		return intInto(&e.Close, key, v)
	case "file_size":
		return intInto(&e.Size, key, v)
	case "file_intent":
		e.Intents = v.strs()
	case "access_type":
		e.AccessType = v.str()
	case "file_type":
		e.FileType = v.str()
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
	default:
		keep(&e.Extra, key, v)
	}
	return nil
}

// set sets one field of a dataset record (the VOL fields of the seed).
func (d *Dataset) set(key string, v *node) error {
	switch key {
	case "dset_name":
		d.Name = v.str()
	case "start_time":
		return intInto(&d.Start, key, v)
	case "end_time":
		return intInto(&d.End, key, v)
	case "dt_class":
		d.DTClass = v.str()
	case "ds_class":
		d.DSClass = v.str()
	case "layout":
		d.Layout = v.str()
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
		keep(&d.Extra, key, v)
	case "dimensions":
		return intsInto(&d.Dimensions, key, v)
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
		d.AccessType = v.str()
	case "dset_offset":
		return intInto(&d.Offset, key, v)
	case "dset_select_type":
		d.SelectType = v.str()
	case "dset_select_npoints":
		return intInto(&d.SelectPoints, key, v)
	case "data_file_pages":
		return intsInto(&d.DataPages, key, v)
	case "metadata_file_pages":
		return intsInto(&d.MetadataPages, key, v)
	case "access_orders":
		return intsInto(&d.AccessOrders, key, v)
	default:
		keep(&d.Extra, key, v)
	}
	return nil
}

// memCounters are the fields every VFD block has; a block missing one at the
// end of a file means the file was cut.
var memCounters = []string{"read_bytes", "read_cnt", "write_bytes", "write_cnt"}

// set sets one field of a VFD block; unknown fields are skipped.
func (b *memBlock) set(key string, v *node) error {
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[key] = true
	var err error
	switch key {
	case "read_bytes":
		return countInto(&b.io.ReadBytes, key, v)
	case "read_cnt":
		return countInto(&b.io.ReadOps, key, v)
	case "write_bytes":
		return countInto(&b.io.WriteBytes, key, v)
	case "write_cnt":
		return countInto(&b.io.WriteOps, key, v)
	case "read_ranges":
		b.io.ReadRanges, err = v.ranges()
	case "write_ranges":
		b.io.WriteRanges, err = v.ranges()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// setRanges sets ranges read by scanRanges.
func (b *memBlock) setRanges(key string, rs []PageRange) {
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[key] = true
	if key == "read_ranges" {
		b.io.ReadRanges = rs
	} else {
		b.io.WriteRanges = rs
	}
}

func (b *memBlock) missing() []string {
	var out []string
	for _, k := range memCounters {
		if !b.seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// set sets one field of a task block. fileLayer names the layer of a bare
// "Total-Overhead(ms)", which the earliest files write without VOL-/VFD-.
func (t *Task) set(key string, v *node, fileLayer Layer) error {
	switch key {
	case "task_id":
		return intInto(&t.PID, key, v)
	case "task_name":
		t.Name = v.str()
		return nil
	case "tracker_vfd_page_size", "hermes_page_size":
		return intInto(&t.PageSize, key, v)
	}
	if strings.HasSuffix(key, "(ms)") {
		ms, err := v.float()
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if t.TimersMS == nil {
			t.TimersMS = map[string]float64{}
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
	keep(&t.Extra, key, v)
	return nil
}
