package jobid

import (
	"path/filepath"
	"strconv"
	"strings"
)

// OfDarshanLog returns the jobid label of a Darshan log whose header holds
// job id id: the id in decimal, or SyntheticJob when it has none or when
// it is darshan-runtime's fallback. The runtime records its process id when
// it finds no batch job id in the environment, and names its logs
// <user>_<exe>_id<jobid>-<pid>_<month>-<day>-<seconds>-<hash>_<n>.darshan:
// a log so named whose job id equals its pid was made outside a job. The
// sidecar and the job report both label logs with it, so that a job is the
// same job in both.
func OfDarshanLog(id int64, path string) string {
	if id <= 0 {
		return SyntheticJob
	}
	if j, p, ok := DarshanLogName(filepath.Base(path)); ok && j == p && j == id {
		return SyntheticJob
	}
	return strconv.FormatInt(id, 10)
}

// DarshanLogName reads the job id and pid of a log named by
// darshan-runtime (see OfDarshanLog); ok is false for any other name.
func DarshanLogName(name string) (job, pid int64, ok bool) {
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
