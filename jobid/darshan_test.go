package jobid

import "testing"

func TestOfDarshanLog(t *testing.T) {
	for _, c := range []struct {
		id   int64
		path string
		want string
	}{
		{11317854, "/d/2026/1/2/alice_solver_id11317854-4242_1-2-300-17417065676046418211_1.darshan", "11317854"},
		// darshan-runtime fell back to the pid: outside a batch job
		{19136, "/d/0_threads_id19136-19136_11-21-77822-13668241026959423735_1.darshan", SyntheticJob},
		// the same ids but another log's name: a job id that is its pid is rare, not impossible
		{19136, "/d/custom.darshan", "19136"},
		{19136, "/d/0_threads_id19136-19136_x.darshan", "19136"},
		{0, "/d/a.darshan", SyntheticJob},
		{-5, "/d/a.darshan", SyntheticJob},
		// the name's ids disagree with the log: trust the log
		{7, "/d/u_e_id8-8_1-1-1-1_1.darshan", "7"},
		{8, "/d/my_id_tool_id8-9_1-1-1-1_1.darshan", "8"},
	} {
		if got := OfDarshanLog(c.id, c.path); got != c.want {
			t.Errorf("OfDarshanLog(%d, %q) = %q, want %q", c.id, c.path, got, c.want)
		}
	}
}
