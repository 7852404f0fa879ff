package lctl

import (
	"strings"
	"testing"
)

// feed runs one parameter's body through p as Scan would.
func feed(p SectionParser, body string, complete bool) {
	for _, line := range strings.Split(body, "\n") {
		p.Line([]byte(line))
	}
	p.End(complete)
}

func TestStatsParser(t *testing.T) {
	var got StatsSection
	var stats []Stat
	p := NewStatsParser(func(sec *StatsSection, complete bool) {
		got = *sec
		stats = append([]Stat(nil), sec.Stats...)
		if !complete {
			t.Error("complete = false")
		}
	})
	feed(p, `snapshot_time             1716295737.287969347 secs.nsecs
start_time                1715712428.324534805 secs.nsecs
elapsed_time              583308.963434542 secs.nsecs
read_bytes                1 samples [bytes] 4194304 4194304 4194304
write_bytes               25001 samples [bytes] 98304 4194304 104857600000 439803838556274688
ioctl                     114 samples [reqs]
open                      136 samples [regs]
req_timeout               219 samples [sec] 1 15 2235 30585
llog_origin_handle_next_block 119 samples [usecs] 13 11705 24977 206872551
statfs                    12 samples [usecs] -1 9 20 100
snapshot_time:            oops
`, true)
	if got.SnapshotTime != 1716295737.287969347 || got.StartTime != 1715712428.324534805 {
		t.Errorf("times %v %v", got.SnapshotTime, got.StartTime)
	}
	if got.Malformed != 1 {
		t.Errorf("malformed %d, want 1 (the bad snapshot_time)", got.Malformed)
	}
	want := []Stat{
		{Name: "read_bytes", Unit: UnitBytes, Samples: 1, Min: 4194304, Max: 4194304, Sum: 4194304, HasSum: true},
		{Name: "write_bytes", Unit: UnitBytes, Samples: 25001, Min: 98304, Max: 4194304, Sum: 104857600000, SumSq: 439803838556274688, HasSum: true, HasSumSq: true},
		{Name: "ioctl", Unit: UnitReqs, Samples: 114},
		{Name: "open", Unit: UnitReqs, Samples: 136},
		{Name: "req_timeout", Unit: UnitSecs, Samples: 219, Min: 1, Max: 15, Sum: 2235, SumSq: 30585, HasSum: true, HasSumSq: true},
		{Name: "llog_origin_handle_next_block", Unit: UnitUsecs, Samples: 119, Min: 13, Max: 11705, Sum: 24977, SumSq: 206872551, HasSum: true, HasSumSq: true},
		{Name: "statfs", Unit: UnitUsecs, Samples: 12, Min: -1, Max: 9, Sum: 20, SumSq: 100, HasSum: true, HasSumSq: true},
	}
	if len(stats) != len(want) {
		t.Fatalf("%d stats, want %d: %+v", len(stats), len(want), stats)
	}
	for i := range want {
		if stats[i] != want[i] {
			t.Errorf("stat %d:\n got %+v\nwant %+v", i, stats[i], want[i])
		}
	}
}

// A stats parser is reused for the next section with nothing left over.
func TestStatsParserReuse(t *testing.T) {
	var n []int
	p := NewStatsParser(func(sec *StatsSection, complete bool) { n = append(n, len(sec.Stats), sec.Malformed) })
	feed(p, "a 1 samples [reqs]\nb 2 samples [reqs]\nbad", true)
	feed(p, "c 3 samples [reqs]", false)
	if len(n) != 4 || n[0] != 2 || n[1] != 1 || n[2] != 1 || n[3] != 0 {
		t.Errorf("got %v", n)
	}
}

func TestBrwStatsParser(t *testing.T) {
	var hists []BrwHist
	var st BrwStats
	p := NewBrwStatsParser(func(s *BrwStats, complete bool) {
		st = *s
		for _, h := range s.Hists {
			hists = append(hists, BrwHist{Kind: h.Kind, Rows: append([]BrwRow(nil), h.Rows...)})
		}
	})
	feed(p, `snapshot_time:         1510782606.797216394 (secs.nsecs)

                           read      |     write
pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %
1:		        13  56  56   |  153   0   0
1K:		         0   0 100   | 4059303  94 100

                           read      |     write
I/O time (1/1000s)     ios   % cum % |  ios         % cum %
4:		         1 100 100   |    0   0   0

                           read      |     write
disk I/O size          ios   % cum % |  ios         % cum %
8:		         4  17  17   |    0   0   0
4M:		         0   0 100   | 4059303  94 100

                           read      |     write
block maps msec        maps  % cum % |  maps        % cum %
1:		   281833673  99  99   | 2  50  50`, true)
	if st.SnapshotTime != 1510782606.797216394 || st.StartTime != 0 || st.Malformed != 0 {
		t.Errorf("header %+v", st)
	}
	want := []BrwHist{
		{Kind: BrwPagesPerRPC, Rows: []BrwRow{{1, 13, 153}, {1024, 0, 4059303}}},
		{Kind: BrwIOTime, Rows: []BrwRow{{4, 1, 0}}},
		{Kind: BrwIOSize, Rows: []BrwRow{{8, 4, 0}, {4 << 20, 0, 4059303}}},
		{Kind: BrwBlockMaps, Rows: []BrwRow{{1, 281833673, 2}}},
	}
	if len(hists) != len(want) {
		t.Fatalf("%d histograms: %+v", len(hists), hists)
	}
	for i := range want {
		if hists[i].Kind != want[i].Kind || len(hists[i].Rows) != len(want[i].Rows) {
			t.Fatalf("hist %d: %+v, want %+v", i, hists[i], want[i])
		}
		for j := range want[i].Rows {
			if hists[i].Rows[j] != want[i].Rows[j] {
				t.Errorf("hist %d row %d: %+v, want %+v", i, j, hists[i].Rows[j], want[i].Rows[j])
			}
		}
	}
	if !BrwPagesPerRPC.Log2() || BrwDiscontiguousPages.Log2() || BrwIOsInFlight.Log2() || !BrwIOTime.Log2() {
		t.Error("Log2 kinds")
	}
}

// The 2.15 header: secs.nsecs without parentheses, and a start time.
func TestBrwStatsHeader215(t *testing.T) {
	var st BrwStats
	p := NewBrwStatsParser(func(s *BrwStats, _ bool) { st = *s })
	feed(p, "snapshot_time:            1688603042.5 secs.nsecs\nstart_time:               1688526476.25 secs.nsecs\nelapsed_time:             76565.25 secs.nsecs\n", true)
	if st.SnapshotTime != 1688603042.5 || st.StartTime != 1688526476.25 || st.Malformed != 0 {
		t.Errorf("%+v", st)
	}
}

func TestRecoveryParser(t *testing.T) {
	var r Recovery
	p := NewRecoveryParser(func(rec *Recovery, _ bool) { r = *rec })
	feed(p, "status: RECOVERING\nrecovery_start: 1620920843\ntime_remaining: 119\nconnected_clients: 3/7\nreq_replay_clients: 0\nlock_repay_clients: 0\ncompleted_clients: 2\nevicted_clients: 1\n", true)
	if r.Status != "RECOVERING" || r.Start != 1620920843 || r.TimeRemaining != 119 || r.ConnectedClients != 3 ||
		r.RecoverableClients != 7 || r.CompletedClients != 2 || r.EvictedClients != 1 || r.Malformed != 0 {
		t.Errorf("%+v", r)
	}
	if r.Has&RecDuration != 0 || r.Has&RecConnected == 0 {
		t.Errorf("has %b", r.Has)
	}
	feed(p, "status: INACTIVE", true)
	if r.Status != "INACTIVE" || r.Has != RecStatus {
		t.Errorf("%+v", r)
	}
}

func TestQuotaParser(t *testing.T) {
	var got []QuotaEntry
	bad := -1
	p := NewQuotaParser(func(e *QuotaEntry) { got = append(got, *e) }, func(m int, _ bool) { bad = m })
	feed(p, `global_pool0_dt_usr
- id:      0
  limits:  { hard:                    0, soft:                    0, granted:                    0, time:               604800 }
- id:      1000
  limits:  { hard:           1073741824, soft:            805306368, granted:             33554432, time:                    0 }`, true)
	if bad != 0 || len(got) != 2 {
		t.Fatalf("%d malformed, %+v", bad, got)
	}
	if e := got[1]; e.ID != 1000 || !e.HasLimits || e.Hard != 1073741824 || e.Soft != 805306368 || e.Granted != 33554432 || e.HasUsage {
		t.Errorf("%+v", e)
	}
	if got[0].Time != 604800 {
		t.Errorf("%+v", got[0])
	}
	got = nil
	feed(p, "usr_accounting:\n- id:      23\n  usage:   { inodes:              241123355, kbytes:             102141328 }", true)
	if len(got) != 1 || got[0].ID != 23 || got[0].Inodes != 241123355 || got[0].KBytes != 102141328 || !got[0].HasUsage {
		t.Errorf("%+v", got)
	}
	// A cut output does not hand on the entry being read.
	got = nil
	feed(p, "usr_accounting:\n- id:      23\n  usage:   { inodes: 1, kbytes: 2 }", false)
	if len(got) != 0 {
		t.Errorf("entry of an incomplete output handed on: %+v", got)
	}
}

func TestChangelogParser(t *testing.T) {
	var cl Changelog
	p := NewChangelogParser(func(c *Changelog, _ bool) { cl = *c; cl.Users = append([]ChangelogUser(nil), c.Users...) })
	feed(p, "current_index: 4096\nID                            index (idle) mask\ncl1                            4000 (327)\ncl2-robinhood                    20 (3) mask=MARK,CREAT\ncl3 17\n", true)
	want := []ChangelogUser{{"cl1", 4000, 327, true}, {"cl2-robinhood", 20, 3, true}, {"cl3", 17, 0, false}}
	if cl.CurrentIndex != 4096 || !cl.HasCurrentIndex || cl.Malformed != 0 || len(cl.Users) != 3 {
		t.Fatalf("%+v", cl)
	}
	for i := range want {
		if cl.Users[i] != want[i] {
			t.Errorf("user %d: %+v, want %+v", i, cl.Users[i], want[i])
		}
	}
}

func TestValueAndText(t *testing.T) {
	for _, c := range []struct {
		body string
		want float64
		ok   bool
	}{
		{"5969573401", 5969573401, true}, {"  42  ", 42, true}, {"0.5", 0.5, true},
		{"not supported", 0, false}, {"N/A", 0, false}, {"-1", 0, false}, {"1\n2", 0, false}, {"", 0, false},
	} {
		var got float64
		var ok bool
		feed(NewValueParser(func(v *Value, _ bool) { got, ok = v.Number() }), c.body, true)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.body, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct{ body, version, build string }{
		{"2.15.4", "2.15.4", ""},
		{"lustre: 2.8.2_6.chaos\nkernel: patchless_client\nbuild:  2.8.2_6.chaos", "2.8.2_6.chaos", "2.8.2_6.chaos"},
		{"lustre: 2.10.1\nbuild: a b", "2.10.1", ""},
		{"2.15.4 with junk", "", ""},
		{"", "", ""},
	} {
		var v, b string
		feed(NewTextParser(func(lines [][]byte, _, _ bool) { v, b, _ = Version(lines) }), c.body, true)
		if v != c.version || b != c.build {
			t.Errorf("%q: %q %q, want %q %q", c.body, v, b, c.version, c.build)
		}
	}
	for _, c := range []struct {
		body           string
		healthy, known bool
	}{{"healthy", true, true}, {"device x reported unhealthy\nNOT HEALTHY", false, true}, {"LBUG", false, true}, {"", false, false}} {
		var h, k bool
		feed(NewTextParser(func(lines [][]byte, _, _ bool) { h, k = Health(lines) }), c.body, true)
		if h != c.healthy || k != c.known {
			t.Errorf("%q: %v %v", c.body, h, k)
		}
	}
}

func TestParamNames(t *testing.T) {
	for _, c := range []struct{ name, component, target, nid, leaf string }{
		{"obdfilter.fs-OST0000.exports.10.73.20.12@tcp.stats", "ost", "fs-OST0000", "10.73.20.12@tcp", "stats"},
		{"mdt.fs-MDT0000.exports.0@lo.uuid", "mdt", "fs-MDT0000", "0@lo", "uuid"},
		{"obdfilter.fs-OST0000.exports.2001:db8::1@tcp.stats", "ost", "fs-OST0000", "2001:db8::1@tcp", "stats"},
		{"obdfilter.fs-OST0000.exports.[2001:db8::1]@tcp6.stats", "ost", "fs-OST0000", "[2001:db8::1]@tcp6", "stats"},
		{"mgs.MGS.exports.172.20.20.2@o2ib.stats", "mgs", "MGS", "172.20.20.2@o2ib", "stats"},
		{"obdfilter.fs-OST0000.stats", "", "", "", ""},
		{"obdfilter.fs-OST0000.exports.nonid.stats", "", "", "", ""},
	} {
		component, target, nid, leaf, ok := ExportParam(c.name)
		if ok != (c.component != "") || component != c.component || target != c.target || nid != c.nid || leaf != c.leaf {
			t.Errorf("%s: %q %q %q %q %v", c.name, component, target, nid, leaf, ok)
		}
	}
	for target, want := range map[string]string{"fs-OST000a": "ost", "fs-MDT0000": "mdt", "MGS": "mgs", "OST0001": "ost",
		"fs-ffff88105db50000": "", "fs-MDT0000-mdtlov": "", "fs-QMT0000": "", "HOST0001": ""} {
		if got := TargetComponent(target); got != want {
			t.Errorf("TargetComponent(%q) = %q, want %q", target, got, want)
		}
	}
	if p, d, l, ok := DeviceParam("osd-ldiskfs.fs-OST0000.quota_slave.acct_user"); !ok || p != "osd-ldiskfs" || d != "fs-OST0000" || l != "quota_slave.acct_user" {
		t.Errorf("DeviceParam: %q %q %q", p, d, l)
	}
}

// Parsing allocates nothing per line once the parser has warmed up.
func TestFamilyParsersDoNotAllocatePerLine(t *testing.T) {
	statsBody := [][]byte{
		[]byte("snapshot_time             1716295737.287969347 secs.nsecs"),
		[]byte("req_waittime              4690313 samples [usec] 4 20340 100079668 6817957300"),
		[]byte("ost_read                  2442845 samples [usec] 234 49945 5185766973 19501455670833"),
	}
	sp := NewStatsParser(func(*StatsSection, bool) {})
	brwBody := [][]byte{
		[]byte("snapshot_time:            1688603042.553884916 secs.nsecs"),
		[]byte("pages per bulk r/w     rpcs  % cum % |  rpcs        % cum %"),
		[]byte("1K:\t\t         0   0   0   | 25000  99 100"),
	}
	bp := NewBrwStatsParser(func(*BrwStats, bool) {})
	run := func() {
		for _, l := range statsBody {
			sp.Line(l)
		}
		sp.End(true)
		for _, l := range brwBody {
			bp.Line(l)
		}
		bp.End(true)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%v allocations per section", n)
	}
}
