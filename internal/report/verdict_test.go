package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
)

// appWith is an application's view with POSIX numbers and the given
// insights fired.
func appWith(reads, writes int64, bytesRead, bytesWritten, metaTime float64, fired ...Insight) *App {
	a := &App{Modules: []Module{{Name: "POSIX", BytesRead: bytesRead, BytesWritten: bytesWritten, Time: TimeSplit{Meta: metaTime},
		Operations: []Count{{Name: "Read", Count: reads}, {Name: "Write", Count: writes}}}}}
	for _, in := range fired {
		in.Fired = true
		if in.Level == "" {
			in.Level = "HIGH"
		}
		a.Insights = append(a.Insights, in)
	}
	return a
}

// serversWith is a servers' view of the job on the given OSTs.
func serversWith(osts ...OST) *Servers {
	s := &Servers{Found: true, MDTOps: Num(0), PeakMDTRate: Num(0)}
	var rb, wb, rr, wr float64
	for i := range osts {
		o := &osts[i]
		rb, wb, rr, wr = rb+o.ReadBytes.V, wb+o.WriteBytes.V, rr+o.ReadRPCs.V, wr+o.WriteRPCs.V
	}
	s.OSTs = osts
	s.ReadBytes, s.WriteBytes, s.ReadRPCs, s.WriteRPCs = Num(rb), Num(wb), Num(rr), Num(wr)
	if rr > 0 {
		s.ReadPerRPC = Num(rb / rr)
	}
	if wr > 0 {
		s.WritePerRPC = Num(wb / wr)
	}
	return s
}

func ost(target string, rb, wb, rr, wr, share, peak float64) OST {
	return OST{Target: target, ReadBytes: Num(rb), WriteBytes: Num(wb), ReadRPCs: Num(rr), WriteRPCs: Num(wr),
		Share: Num(share), PeakShare: Num(peak)}
}

// outcomes maps each verdict's first code to its outcome.
func outcomes(vs []Verdict) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.Codes[0]] = v.Outcome
	}
	return out
}

func TestVerdicts(t *testing.T) {
	const mib = 1 << 20
	small := Insight{Code: "P06", Value: Num(1), Threshold: Num(0.1)}
	smallShared := Insight{Code: "P16", Value: Num(1), Threshold: Num(0.1)}
	smallReads := Insight{Code: "P05", Value: Num(0.9), Threshold: Num(0.1)}
	for _, tc := range []struct {
		name string
		app  *App
		srv  *Servers
		want map[string]string // first code → outcome
		// codes: the codes of each verdict, when the grouping matters.
		codes [][]string
		why   string // a word the first verdict's Why must hold
	}{
		{name: "small writes reach the servers as small RPCs",
			app:  appWith(0, 10000, 0, 10000*4096, 0, small, smallShared),
			srv:  serversWith(ost("fs-OST0000", 0, 10000*4096, 0, 10000, 0.3, 0.4)),
			want: map[string]string{"P06": Confirms}, codes: [][]string{{"P06", "P16"}}, why: "4 KiB"},
		{name: "small writes merged by the client cache",
			app:  appWith(0, 10000, 0, 10000*4096, 0, small),
			srv:  serversWith(ost("fs-OST0000", 0, 10000*4096, 0, 10, 0.3, 0.4)),
			want: map[string]string{"P06": Contradicts}, why: "merged"},
		{name: "small writes partly merged",
			app:  appWith(0, 10000, 0, 10000*4096, 0, small),
			srv:  serversWith(ost("fs-OST0000", 0, 10000*4096, 0, 1000, 0.3, 0.4)),
			want: map[string]string{"P06": Inconclusive}},
		{name: "small reads the OSTs never saw",
			app:  appWith(5000, 0, 5000*1024, 0, 0, smallReads),
			srv:  serversWith(ost("fs-OST0000", 0, 4096, 0, 1, 0.1, 0.1)),
			want: map[string]string{"P05": NoData}, why: "no read RPC"},
		{name: "re-reads absorbed by the page cache",
			app:  appWith(100, 0, 10*mib, 0, 0, Insight{Code: "P09", Level: "WARN"}),
			srv:  serversWith(ost("fs-OST0000", 2*mib, 0, 2, 0, 0.1, 0.1)),
			want: map[string]string{"P09": Contradicts}},
		{name: "re-reads sent to the OSTs",
			app:  appWith(100, 0, 10*mib, 0, 0, Insight{Code: "P09", Level: "WARN"}),
			srv:  serversWith(ost("fs-OST0000", 9*mib, 0, 9, 0, 0.1, 0.1)),
			want: map[string]string{"P09": Confirms}},
		{name: "metadata storm",
			app: appWith(0, 0, 0, 0, 300, Insight{Code: "P17"}),
			srv: func() *Servers {
				s := serversWith()
				s.MDTOps, s.PeakMDTRate = Num(3e6), Num(12000)
				s.Alerts = []Alert{{Name: "LustreJobMetadataStorm"}}
				return s
			}(),
			want: map[string]string{"P17": Confirms}, why: "LustreJobMetadataStorm"},
		{name: "metadata time waiting on a loaded MDS",
			app: appWith(0, 0, 0, 0, 300, Insight{Code: "P17"}),
			srv: func() *Servers {
				s := serversWith()
				s.MDTOps, s.PeakMDTRate = Num(2000), Num(10)
				return s
			}(),
			want: map[string]string{"P17": Contradicts}, why: "others"},
		{name: "imbalance: one OST loaded alone",
			app:  appWith(0, 100, 0, 100*mib, 0, Insight{Code: "P18", Value: Num(0.5)}, Insight{Code: "P19", Value: Num(0.6)}),
			srv:  serversWith(ost("fs-OST0000", 0, 90*mib, 0, 90, 0.8, 0.9), ost("fs-OST0001", 0, 10*mib, 0, 10, 0.05, 0.05)),
			want: map[string]string{"P18": Confirms}, codes: [][]string{{"P18", "P19"}}},
		{name: "imbalance: OSTs loaded by others",
			app:  appWith(0, 100, 0, 100*mib, 0, Insight{Code: "P19", Value: Num(0.6)}),
			srv:  serversWith(ost("fs-OST0000", 0, 30*mib, 0, 30, 0.05, 0.1), ost("fs-OST0001", 0, 35*mib, 0, 35, 0.05, 0.1), ost("fs-OST0002", 0, 35*mib, 0, 35, 0.05, 0.1)),
			want: map[string]string{"P19": Contradicts}, why: "P19 without P18"},
		{name: "write-intensive, the same on the servers",
			app:  appWith(10, 90, 10*mib, 90*mib, 0, Insight{Code: "P01", Level: "INFO"}, Insight{Code: "P03", Level: "INFO"}),
			srv:  serversWith(ost("fs-OST0000", 12*mib, 88*mib, 12, 88, 0.1, 0.1)),
			want: map[string]string{"P01": Confirms, "P03": Confirms}},
		{name: "read-intensive, but the servers saw writes",
			app:  appWith(90, 10, 90*mib, 10*mib, 0, Insight{Code: "P04", Level: "INFO"}),
			srv:  serversWith(ost("fs-OST0000", 5*mib, 10*mib, 5, 10, 0.1, 0.1)),
			want: map[string]string{"P04": Contradicts}},
		{name: "read-intensive, servers differ, coverage low",
			app: appWith(90, 10, 90*mib, 10*mib, 0, Insight{Code: "P04", Level: "INFO"}),
			srv: func() *Servers {
				s := serversWith(ost("fs-OST0000", 5*mib, 10*mib, 5, 10, 0.1, 0.1))
				s.CoverageLow = true
				return s
			}(),
			want: map[string]string{"P04": Inconclusive}},
		{name: "what job_stats cannot see",
			app: appWith(100, 100, mib, mib, 0, Insight{Code: "S01"}, Insight{Code: "P13"}, Insight{Code: "M01", Level: "WARN"},
				Insight{Code: "P12", Level: "OK"}),
			srv:  serversWith(ost("fs-OST0000", mib, mib, 1, 100, 0.1, 0.1)),
			want: map[string]string{"S01": NotComparable, "P13": NotComparable, "M01": NotComparable}},
		{name: "no job_stats in the window",
			app:  appWith(0, 10000, 0, 10000*4096, 0, small),
			srv:  &Servers{Found: false},
			want: map[string]string{"P06": NoData}, why: "no job_stats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := Verdicts(tc.app, tc.srv)
			got := outcomes(vs)
			if !maps(got, tc.want) {
				t.Errorf("outcomes %v, want %v", got, tc.want)
			}
			for i, codes := range tc.codes {
				if i >= len(vs) || !slices.Equal(vs[i].Codes, codes) {
					t.Errorf("verdict %d: codes %v, want %v", i, vs, codes)
				}
			}
			for _, v := range vs {
				if v.Why == "" || v.Insight == "" || !strings.HasSuffix(v.Why, ".") {
					t.Errorf("verdict %v: no insight or Why sentence", v)
				}
			}
			if tc.why != "" && len(vs) > 0 && !strings.Contains(vs[0].Why, tc.why) {
				t.Errorf("Why %q does not say %q", vs[0].Why, tc.why)
			}
		})
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestVerdictsNeedBothViews: without one of the views there is nothing to
// hold the insights against; with both and nothing fired, no verdict (an
// empty list, not null, in the JSON).
func TestVerdictsNeedBothViews(t *testing.T) {
	app := appWith(0, 10000, 0, 10000*4096, 0, Insight{Code: "P06"})
	if v := Verdicts(app, nil); v != nil {
		t.Errorf("without servers: %v", v)
	}
	if v := Verdicts(nil, serversWith()); v != nil {
		t.Errorf("without logs: %v", v)
	}
	if v := Verdicts(appWith(1, 1, 1, 1, 0), serversWith()); v == nil || len(v) != 0 {
		t.Errorf("nothing fired: %#v", v)
	}
}

// TestVerdictsFromALog builds the application's view from a real Darshan
// log (the project's writer: mdtest-like 4 KiB writes and reads, which fire
// P05 and P06) and holds it against servers that saw 4 KiB RPCs, then 4 MiB
// ones.
func TestVerdictsFromALog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.darshan")
	var buf bytes.Buffer
	w := darshan.NewWriter(&buf)
	now := time.Now()
	w.Job = darshan.Job{UID: 1000, JobID: 4242, NProcs: 1, StartTime: now.Add(-10 * time.Minute).Unix(), EndTime: now.Unix(), Metadata: "lib_ver=3.4.6\n"}
	w.Exe = "/apps/mdtest -n 5120"
	w.Mounts = []darshan.Mount{{Path: "/lustre", Type: "lustre"}}
	l := darshan.LayoutOf(darshan.POSIX, darshan.POSIX.CurrentVersion())
	c := &darshan.CounterRecord{Key: darshan.Key{Module: darshan.POSIX, Rank: 0, ID: w.AddName("/lustre/kai/f")}, Layout: l,
		Ints: make([]int64, len(l.Ints)), Floats: make([]float64, len(l.Floats))}
	for k, v := range map[string]int64{"POSIX_OPENS": 10, "POSIX_WRITES": 5000, "POSIX_READS": 5000,
		"POSIX_BYTES_WRITTEN": 5000 * 4096, "POSIX_BYTES_READ": 5000 * 4096, "POSIX_SIZE_WRITE_1K_10K": 5000, "POSIX_SIZE_READ_1K_10K": 5000,
		"POSIX_SEQ_WRITES": 4999, "POSIX_SEQ_READS": 4999, "POSIX_CONSEC_WRITES": 4999, "POSIX_CONSEC_READS": 4999,
		"POSIX_MAX_BYTE_WRITTEN": 5000*4096 - 1, "POSIX_MAX_BYTE_READ": 5000*4096 - 1} {
		c.Ints[l.IntIndex(k)] = v
	}
	if err := w.Write(c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, app, err := FromLogs([]string{path}, LogOptions{Insights: insights.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if f := app.Fired(); !slices.Contains(f, "P05") || !slices.Contains(f, "P06") {
		t.Fatalf("the log fires %v, not P05 and P06", f)
	}
	for _, tc := range []struct {
		perRPC float64
		want   string
	}{{4096, Confirms}, {4 << 20, Contradicts}} {
		n := 5000 * 4096 / tc.perRPC
		srv := serversWith(ost("demo-OST0000", 5000*4096, 5000*4096, n, n, 0.2, 0.3))
		got := outcomes(Verdicts(app, srv))
		if got["P05"] != tc.want || got["P06"] != tc.want {
			t.Errorf("servers at %.0f bytes per RPC: %v, want P05 and P06 %s", tc.perRPC, got, tc.want)
		}
		for _, v := range Verdicts(app, srv) {
			if v.Codes[0] == "P06" && (!v.App.Value.OK || v.App.Value.V != 4096 || v.Server.Value.V != tc.perRPC) {
				t.Errorf("P06 verdict sets %v beside %v, want 4096 beside %.0f", v.App, v.Server, tc.perRPC)
			}
		}
	}
}
