package logwatch

import (
	"strings"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
	"github.com/hpcio/hpcio_exporter/jobid"
)

// Identity is what the series of a job are labelled with. Several logs
// share an identity — the steps of a batch job, the runs of one program
// outside jobs — and are exported as one job, their counters summed.
type Identity struct {
	JobID string // the batch job id in decimal, or jobid.SyntheticJob
	UID   string
	Exe   string // the executable's base name; "" without --darshan.exe-label
}

func (id Identity) less(o Identity) bool {
	if id.JobID != o.JobID {
		return id.JobID < o.JobID
	}
	if id.UID != o.UID {
		return id.UID < o.UID
	}
	return id.Exe < o.Exe
}

// jobID returns the jobid label of a log (jobid.OfDarshanLog).
func jobID(id int64, path string) string { return jobid.OfDarshanLog(id, path) }

// maxExeLen bounds the exe label; base names are short.
const maxExeLen = 64

// exeName returns the base name of the executable of a command line (its
// first word), cleaned to be a label value: valid UTF-8 without control
// characters, at most maxExeLen bytes. It never returns a path or an
// argument; "" when there is no name.
func exeName(cmdline string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(cmdline, " \t"), " ")
	first, _, _ = strings.Cut(first, "\t")
	base := first
	if i := strings.LastIndexByte(first, '/'); i >= 0 {
		base = first[i+1:]
	}
	base = strings.TrimSuffix(base, "<TRUNCATED>")
	return labelvalue.Clean(base, maxExeLen)
}
