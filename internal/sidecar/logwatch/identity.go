package logwatch

import (
	"path/filepath"
	"strconv"
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

// jobID returns the jobid label of a log: its job id in decimal, or jobid.SyntheticJob
// when it has none. darshan-runtime records the process id when it finds
// no batch job id in the environment, and names its logs
// <user>_<exe>_id<jobid>-<pid>_<month>-<day>-<seconds>-<hash>_<n>.darshan;
// a log so named whose job id equals its pid was made outside a job.
func jobID(id int64, path string) string {
	if id <= 0 {
		return jobid.SyntheticJob
	}
	if j, p, ok := namedIDs(filepath.Base(path)); ok && j == p && j == id {
		return jobid.SyntheticJob
	}
	return strconv.FormatInt(id, 10)
}

// namedIDs reads the job id and pid of a runtime-chosen log name; ok is
// false for any other name.
func namedIDs(name string) (job, pid int64, ok bool) {
	i := strings.LastIndex(name, "_id")
	if i < 0 {
		return 0, 0, false
	}
	rest := name[i+3:]
	j, rest, ok := cutNumber(rest, '-')
	if !ok {
		return 0, 0, false
	}
	p, rest, ok := cutNumber(rest, '_')
	if !ok {
		return 0, 0, false
	}
	// <month>-<day>-<seconds>-<hash>_<n>.darshan
	for _, sep := range []byte{'-', '-', '-', '_'} {
		if _, rest, ok = cutNumber(rest, sep); !ok {
			return 0, 0, false
		}
	}
	if _, tail, ok := cutNumber(rest, '.'); !ok || tail != "darshan" {
		return 0, 0, false
	}
	return j, p, true
}

// cutNumber reads decimal digits up to sep; the value saturates (the hash
// field is a 64-bit unsigned number, and only the ids are compared).
func cutNumber(s string, sep byte) (int64, string, bool) {
	i := strings.IndexByte(s, sep)
	if i <= 0 {
		return 0, "", false
	}
	var n int64
	for _, c := range []byte(s[:i]) {
		if c < '0' || c > '9' {
			return 0, "", false
		}
		if n >= 0 && n <= (1<<62)/10 {
			n = n*10 + int64(c-'0')
		} else {
			n = -1 // too large: equals no id
		}
	}
	return n, s[i+1:], true
}

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
