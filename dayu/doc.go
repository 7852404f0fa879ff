// Package dayu reads the HDF5 workflow stats of the DaYu tracker and puts
// them together into one model of a workflow run and its dataflow.
//
// For each task of a workflow the tracker's VOL connector writes which files
// and datasets the task opened, and its VFD writes the I/O underneath, per
// HDF5 memory type (H5FD_MEM_DRAW for raw data; OHDR, SUPER, BTREE, LHEAP
// for metadata) with byte and operation counts and page ranges. A stage map
// (task_to_file.yaml, task_order_list.*) names the stages and orders them.
//
// Three generations of output exist, and this package reads them all:
//
//   - 2023 "YAML" that no YAML library accepts: `Task:` blocks at column 0
//     between list items, over-indented fields, dataset lists indented less
//     than their parent, `{83:(0,0)}` tuple ranges, `ata:` for `data:`, and
//     no task names, so stages of one process are told apart only through
//     the stage map (see Assemble).
//   - 2024 YAML: task_name "<stage>-<pid>" on every record, `- Task:` items,
//     `{1:[0,0]}` ranges.
//   - JSON: an array of {"file-N": …, "Task": …}, with the VFD's I/O keyed by
//     dataset, then memory type.
//
// ReadStats and ReadStageMap read one file each, as a stream, into its
// records as written (ParseStats and ParseStageMap from memory); unknown
// keys are kept (Extra) or skipped, never an error. What a file may cost is
// bounded before it is read (budget.go, Limits): a file over the size cap
// is refused by its size, and one under it is parsed within a memory
// budget proportional to its size. A file that is cut short, has a line
// that is not "key: value", a known number that is not a number, no
// records at all, or that is over its cap or budget fails with a
// *ParseError whose Reason is a bounded label value and whose message
// names no byte of the file (messages.go): files come from directories
// anyone writes to, and the errors are logged. Assemble merges the records of a
// directory into Workflow → Stage → File → Dataset with I/O per MemType;
// Workflow.Dataflow gives the stage → file (write) and file → stage (read)
// edges, and WriteGraph draws them as Graphviz DOT or Mermaid.
//
// The package does not import Prometheus; the dayu collector does.
package dayu
