package dayu

import (
	"path"
	"strings"
)

// Every message a ParseError carries is one of these. The collector logs
// them, and a drop directory is written by anyone: a message names what was
// expected, where (the line, the ordinal of a record), and the reader's own
// limits, never a byte of the file (no key, value, name or number the file
// holds). FuzzDayuParseStats holds every error to this list.
const (
	msgTooLarge     = "file of %d bytes is larger than the limit of %d bytes"
	msgOverBudget   = "parsing needs more memory than the budget of the file (proportional to its size)"
	msgGrew         = "file grew past the size limit while it was read"
	msgReadFailed   = "cannot read the file"
	msgNoContent    = "no content"
	msgNoRecords    = "no file records"
	msgNoStages     = "no stages"
	msgNotObject    = "not a JSON object"
	msgNotKeyValue  = "line is not key: value"
	msgTrailing     = "text after a closing bracket"
	msgUnbalanced   = "unbalanced brackets or quotes"
	msgTooDeep      = "values nested too deep"
	msgMapNoValue   = "map key without a value"
	msgBadInList    = "unexpected character in a list"
	msgBadInMap     = "unexpected character in a map"
	msgNotNumber    = "expected a number"
	msgCollection   = "expected a number, got a collection"
	msgNotNumbers   = "expected a list of numbers"
	msgNegative     = "negative count"
	msgNotRanges    = "expected a map of page ranges"
	msgRangeIndex   = "page range index is not a number"
	msgRangePair    = "page range is not a (first,last) pair"
	msgOrderRange   = "stage order out of range"
	msgListItem     = "list item outside a list"
	msgNoTask       = "record %d has no task block after it"
	msgNoFileName   = "last record %d has no file_name"
	msgBlockLacks   = "last I/O block of record %d lacks %s"
	msgJSONCut      = "JSON ends before its last value closes"
	msgJSONSyntax   = "invalid JSON"
	msgJSONTrailing = "text after the JSON value"
)

// knownKeys are the field names the reader gives a meaning to: a message
// may name them (they are the reader's vocabulary, not the file's).
var knownKeys = map[string]bool{}

func init() {
	for _, k := range []string{
		"file_name", "task_name", "open_time", "close_time", "file_size", "file_intent", "access_type",
		"file_type", "file_read_cnt", "file_write_cnt", "total_io_bytes", "io_bytes", "header_size",
		"sieve_buf_size", "ds_created", "ds_accessed", "grp_created", "grp_accessed", "dtypes_created",
		"dtypes_accessed", "dset_name", "start_time", "end_time", "dt_class", "ds_class", "layout",
		"storage_size", "dset_n_elements", "dimension_cnt", "dimensions", "dset_type_size",
		"dataset_read_cnt", "total_bytes_read", "dataset_write_cnt", "total_bytes_written",
		"dset_offset", "dset_select_type", "dset_select_npoints", "data_file_pages",
		"metadata_file_pages", "access_orders", "read_bytes", "read_cnt", "write_bytes", "write_cnt",
		"read_ranges", "write_ranges", "task_id", "tracker_vfd_page_size", "hermes_page_size",
		"order", "task_pid", "io_cnt", "op_count_range", "input", "output", "datasets", "data",
		"metadata", "Task",
	} {
		knownKeys[k] = true
	}
}

// keyName names a key in a message: itself when the reader knows it, else
// "a field" (an unknown key is the file's text).
func keyName(k string) string {
	if knownKeys[k] {
		return k
	}
	if strings.HasSuffix(k, "(ms)") {
		return "a timer"
	}
	return "a field"
}

func baseOf(name string) string {
	return path.Base(strings.ReplaceAll(name, `\`, "/"))
}
