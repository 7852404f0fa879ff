package logwatch

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/jobid"
)

func TestExeName(t *testing.T) {
	for cmd, want := range map[string]string{
		"/opt/hpcio-demo/bin/seqrw ":            "seqrw",
		"/usr/bin/python3 /home/alice/train.py": "python3",
		"  ./a.out -x":                          "a.out",
		"ior\t-a POSIX":                         "ior",
		"":                                      "",
		"/home/alice/":                          "",
		"/bin/sol\x00ver\x07":                   "solver",
		"/x/" + strings.Repeat("é", 60):         strings.Repeat("é", 32),
		"/p/verylongname<TRUNCATED>":            "verylongname",
	} {
		if got := exeName(cmd); got != want {
			t.Errorf("exeName(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// FuzzIdentity: whatever the file name and command line hold, the labels
// are valid UTF-8, short, and never a path.
func FuzzIdentity(f *testing.F) {
	f.Add(int64(19136), "0_threads_id19136-19136_11-21-77822-13668241026959423735_1.darshan", "/opt/bin/x --y /scratch/z")
	f.Add(int64(1), "u_e_id1-1_1-1-1-1_1.darshan", "a")
	f.Add(int64(99), "_id99-99_-1--1_1.darshan", "/\xff\xfe")
	f.Fuzz(func(t *testing.T, id int64, name, cmd string) {
		j := jobID(id, "/d/"+name)
		if j != jobid.SyntheticJob && (j == "" || strings.ContainsAny(j, "/ ")) {
			t.Fatalf("jobid %q", j)
		}
		e := exeName(cmd)
		if strings.Contains(e, "/") || !utf8.ValidString(e) || len(e) > maxExeLen || strings.ContainsAny(e, " \t\n") {
			t.Fatalf("exe %q from %q", e, cmd)
		}
	})
}
