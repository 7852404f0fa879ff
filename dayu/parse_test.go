package dayu

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDayuParseLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want line
		ok   bool
	}{
		{"- file-1:", line{indent: 0, dash: true, key: "file-1", hasKey: true}, true},
		{`    file_name: "wrfout_00:00:00.nc"`, line{indent: 4, key: "file_name", hasKey: true, value: `"wrfout_00:00:00.nc"`}, true},
		{"    file_name: wrfout_00:00:00.nc", line{indent: 4, key: "file_name", hasKey: true, value: "wrfout_00:00:00.nc"}, true},
		{"    VOL-Total-Overhead(ms): 836", line{indent: 4, key: "VOL-Total-Overhead(ms)", hasKey: true, value: "836"}, true},
		{`    - "cloudid_20150506_000000.nc"`, line{indent: 4, dash: true, value: `"cloudid_20150506_000000.nc"`}, true},
		{"  - /rcfs/a:b/c.h5", line{indent: 2, dash: true, value: "/rcfs/a:b/c.h5"}, true},
		{"        write_ranges: {83:(0,0),89:(1,1)}", line{indent: 8, key: "write_ranges", hasKey: true, value: "{83:(0,0),89:(1,1)}"}, true},
		{"Task:", line{key: "Task", hasKey: true}, true},
		{"-", line{dash: true}, true},
		{"   ", line{}, false},
		{"# comment", line{}, false},
	} {
		got, ok := parseLine(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseLine(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDayuParseValue(t *testing.T) {
	ranges := func(s string) []PageRange {
		t.Helper()
		n, err := parseValue(s)
		if err != nil {
			t.Fatalf("parseValue(%q): %v", s, err)
		}
		r, err := n.ranges()
		if err != nil {
			t.Fatalf("ranges(%q): %v", s, err)
		}
		return r
	}
	if got := ranges("{83:(0,0),89:(1,166)}"); !reflect.DeepEqual(got, []PageRange{{83, 0, 0}, {89, 1, 166}}) {
		t.Errorf("tuple ranges: %v", got)
	}
	if got := ranges("{1:[0,0],4:[33,33]}"); !reflect.DeepEqual(got, []PageRange{{1, 0, 0}, {4, 33, 33}}) {
		t.Errorf("list ranges: %v", got)
	}
	if got := ranges("{}"); len(got) != 0 {
		t.Errorf("empty ranges: %v", got)
	}
	ints := func(s string) []int64 {
		n, err := parseValue(s)
		if err != nil {
			t.Fatal(err)
		}
		v, err := n.ints()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := ints("[1, 25, 1000, 1000, ]"); !reflect.DeepEqual(got, []int64{1, 25, 1000, 1000}) {
		t.Errorf("trailing comma list: %v", got)
	}
	if got := ints("[0, 1904, ]"); !reflect.DeepEqual(got, []int64{0, 1904}) {
		t.Errorf("pages: %v", got)
	}
	strs := func(s string) []string {
		n, err := parseValue(s)
		if err != nil {
			t.Fatal(err)
		}
		return n.strs()
	}
	if got := strs(`["H5F_ACC_RDWR","H5F_ACC_TRUNC","H5F_ACC_CREAT"]`); !reflect.DeepEqual(got, []string{"H5F_ACC_RDWR", "H5F_ACC_TRUNC", "H5F_ACC_CREAT"}) {
		t.Errorf("intents: %q", got)
	}
	if got := strs(`["'H5F_ACC_RDWR','H5F_ACC_TRUNC'"]`); !reflect.DeepEqual(got, []string{"H5F_ACC_RDWR", "H5F_ACC_TRUNC"}) {
		t.Errorf("JSON-style intents: %q", got)
	}
	if got := strs("[]"); got != nil {
		t.Errorf("empty intents: %q", got)
	}
	for _, bad := range []string{"{83:(0,0),89:(1", `"unterminated`, "[1, 2", "{1:[0,0]"} {
		if _, err := parseValue(bad); !errors.Is(err, errUnbalanced) {
			t.Errorf("parseValue(%q) = %v, want errUnbalanced", bad, err)
		}
	}
	if _, err := parseValue("[1] trailing"); err == nil {
		t.Error("text after a closed list accepted")
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := parseValue(deep); err == nil {
		t.Error("deep nesting accepted")
	}
	n, _ := parseValue("12abc")
	if _, err := n.int(); err == nil {
		t.Error("12abc read as a number")
	}
}

func TestDayuSplitTaskName(t *testing.T) {
	for in, want := range map[string]struct {
		name string
		pid  int64
		ok   bool
	}{
		"arldm_saveh5-1126849": {"arldm_saveh5", 1126849, true},
		"openmm-138070":        {"openmm", 138070, true},
		"run-idfeature":        {"run-idfeature", 0, false},
		"-42":                  {"-42", 0, false},
		"":                     {"", 0, false},
	} {
		name, pid, ok := splitTaskName(in)
		if name != want.name || pid != want.pid || ok != want.ok {
			t.Errorf("splitTaskName(%q) = %q, %d, %v", in, name, pid, ok)
		}
	}
}

// TestUnknownKeysKept: fields this reader does not know never fail a file;
// they are kept where a record can hold them.
func TestDayuUnknownKeysKept(t *testing.T) {
	in := `- file-1:
    file_name: "a.h5"
    task_name: "s-7"
    new_field: {x: 1}
    nested_block:
      deeper: 1
      - odd item
    datasets:
        dset_name: "d"
        future_metric: 42
    data:
      H5FD_MEM_DRAW:
        read_bytes: 10
        read_cnt: 1
        write_bytes: 0
        write_cnt: 0
        ranges_v2: {1:[0,0]}
      H5FD_MEM_GHEAP:
        read_bytes: 5
        read_cnt: 1
        write_bytes: 0
        write_cnt: 0
- Task:
  task_id: 7
  Tracker-New-Time(ms): 3
  mode: fast
`
	sf, err := ParseStats("7-vfd_data_stat.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	e := sf.Entries[0]
	if e.Extra["new_field"] != "{x: 1}" || e.Datasets[0].Extra["future_metric"] != "42" {
		t.Errorf("extras %v %v", e.Extra, e.Datasets[0].Extra)
	}
	if e.IO[MemType("GHEAP")].ReadBytes != 5 || e.IO[MemDRAW].ReadBytes != 10 {
		t.Errorf("io %+v", e.IO)
	}
	task := sf.Tasks[0]
	if task.TimersMS["Tracker-New-Time(ms)"] != 3 || task.Extra["mode"] != "fast" {
		t.Errorf("task %+v", task)
	}
}

func TestDayuMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		reason   Reason
	}{
		{"empty", " \n\n", ReasonEmpty},
		{"binary", "\x00\x01\x02garbage\n", ReasonSyntax},
		{"bad number", "- file-1:\n    file_name: a\n    open_time: 12x\n- Task:\n  task_id: 1\n", ReasonSyntax},
		{"bad range", "- file-1:\n    file_name: a\n    data:\n      H5FD_MEM_DRAW:\n        read_ranges: {1:(0)}\n", ReasonSyntax},
		{"cut line", "- file-1:\n    file_name: \"a.h5", ReasonTruncated},
		{"cut block", "- file-1:\n    file_name: a\n    data:\n    - H5FD_MEM_DRAW:\n        read_bytes: 1\n", ReasonTruncated},
		{"no task after record", "- Task:\n  task_id: 1\n- file-2:\n    file_name: a\n", ReasonTruncated},
		{"not stats", "title: x\n", ReasonNotStats},
		{"json cut", `[{"file-1": {"file_name": "a"`, ReasonTruncated},
		{"json bad", `[{"file-1": {"file_name": "a"}}] x`, ReasonSyntax},
		{"json bad value", `[{"file-1": {"file_name": "a", "open_time": "soon"}}]`, ReasonSyntax},
		{"json not stats", `{"a": 1}`, ReasonNotStats},
	} {
		_, err := ParseStats("1_vfd-data-stat.yaml", []byte(tc.in))
		if err == nil {
			t.Errorf("%s: parsed", tc.name)
			continue
		}
		if got := ReasonOf(err); got != tc.reason {
			t.Errorf("%s: reason %s (%v), want %s", tc.name, got, err, tc.reason)
		}
	}
	for _, tc := range []struct {
		name, in string
		reason   Reason
	}{
		{"empty", "", ReasonEmpty},
		{"cut", "run:\n  input: [a.h5", ReasonTruncated},
		{"stray item", "run:\n  order: 1\n  - a.h5\n", ReasonSyntax},
		{"no stages", "# nothing\n", ReasonNotStats},
		{"json cut", `{"a-1": {"order": 0`, ReasonTruncated},
		{"json bad order", `{"a-1": {"order": "first"}}`, ReasonSyntax},
	} {
		_, err := ParseStageMap("task_to_file.yaml", []byte(tc.in))
		if got := ReasonOf(err); err == nil || got != tc.reason {
			t.Errorf("stage map %s: %v, want %s", tc.name, err, tc.reason)
		}
	}
}

func TestDayuKindOf(t *testing.T) {
	for name, want := range map[string]FileKind{
		"210263_vol-data-stat-dl.yaml":  KindStats,
		"25138_data-stat-dl.yaml":       KindStats,
		"271485-vfd_data_stat.json":     KindStats,
		"task_to_file.yaml":             KindStageMap,
		"ddmd_12p4s-task_to_file.yaml":  KindStageMap,
		"task_order_list.json":          KindStageMap,
		"SOURCES.md":                    KindOther,
		"210263_vfd-data-stat-dl.yaml~": KindOther,
		"notes.yaml":                    KindOther,
	} {
		if got := KindOf(name); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", name, got, want)
		}
	}
}
