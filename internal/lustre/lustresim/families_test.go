package lustresim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// familyValues parses a simulated output with the exporter's family
// parsers: every counter line as "param name" → samples, every single
// value as "param" → value, and the brw_stats histograms found per
// parameter. Any line the parsers reject fails the test.
type familyValues struct {
	stats    map[string]uint64
	sums     map[string]int64
	values   map[string]float64
	brw      map[string][]lctl.BrwKind
	recovery map[string]string
	quota    map[string]int
	users    map[string]int
}

func parseFamilies(t *testing.T, s *Sim, at time.Time) familyValues {
	t.Helper()
	var buf bytes.Buffer
	if err := s.WriteParams(&buf, at, s.params()...); err != nil {
		t.Fatal(err)
	}
	v := familyValues{stats: map[string]uint64{}, sums: map[string]int64{}, values: map[string]float64{},
		brw: map[string][]lctl.BrwKind{}, recovery: map[string]string{}, quota: map[string]int{}, users: map[string]int{}}
	bad := func(param string, n int) {
		if n > 0 {
			t.Errorf("%s: %d malformed lines in simulator output", param, n)
		}
	}
	err := lctl.Scan(&buf, "", func(param string) lctl.SectionParser {
		leaf := lctl.ParamLeaf(param)
		switch {
		case strings.HasSuffix(param, ".job_stats") || param == "jobid_name" || param == "jobid_var":
			return nil
		case leaf == "brw_stats":
			return lctl.NewBrwStatsParser(func(st *lctl.BrwStats, _ bool) {
				bad(param, st.Malformed)
				for _, h := range st.Hists {
					v.brw[param] = append(v.brw[param], h.Kind)
				}
			})
		case leaf == "recovery_status":
			return lctl.NewRecoveryParser(func(r *lctl.Recovery, _ bool) { bad(param, r.Malformed); v.recovery[param] = r.Status })
		case leaf == "changelog_users":
			return lctl.NewChangelogParser(func(cl *lctl.Changelog, _ bool) { bad(param, cl.Malformed); v.users[param] = len(cl.Users) })
		case strings.Contains(param, "quota_slave") || strings.HasPrefix(param, "qmt."):
			return lctl.NewQuotaParser(func(*lctl.QuotaEntry) { v.quota[param]++ }, func(m int, _ bool) { bad(param, m) })
		case leaf == "stats" || leaf == "md_stats":
			return lctl.NewStatsParser(func(sec *lctl.StatsSection, _ bool) {
				bad(param, sec.Malformed)
				for _, st := range sec.Stats {
					v.stats[param+" "+st.Name] = st.Samples
					v.sums[param+" "+st.Name] = st.Sum
				}
			})
		case param == "version" || param == "health_check":
			return lctl.NewTextParser(func(lines [][]byte, _, _ bool) {
				if _, _, ok := lctl.Version(lines); param == "version" && !ok {
					t.Errorf("version %q", lines)
				}
				if h, _ := lctl.Health(lines); param == "health_check" && !h {
					t.Errorf("health_check %q", lines)
				}
			})
		}
		return lctl.NewValueParser(func(val *lctl.Value, _ bool) {
			n, ok := val.Number()
			if !ok {
				t.Errorf("%s = %q: not a number", param, val.Text)
			}
			v.values[param] = n
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every family is there, in both dialects, and parses cleanly.
func TestFamiliesParse(t *testing.T) {
	for _, d := range []Dialect{Lustre215, Lustre212} {
		s := New(Config{Seed: 3, FSName: "x", MDTs: 2, OSTs: 3, Jobs: 40, Dialect: d})
		v := parseFamilies(t, s, time.Unix(1_800_000_000, 0))
		if n := len(v.brw["osd-ldiskfs.x-OST0002.brw_stats"]); n != 7 {
			t.Errorf("dialect %d: %d brw_stats histograms, want 7", d, n)
		}
		if v.recovery["obdfilter.x-OST0001.recovery_status"] != "COMPLETE" || v.recovery["mdt.x-MDT0001.recovery_status"] != "COMPLETE" {
			t.Errorf("recovery %v", v.recovery)
		}
		total, free, avail := v.values["osd-ldiskfs.x-OST0000.kbytestotal"], v.values["osd-ldiskfs.x-OST0000.kbytesfree"], v.values["osd-ldiskfs.x-OST0000.kbytesavail"]
		if !(0 < avail && avail < free && free < total) {
			t.Errorf("capacity total %v free %v avail %v", total, free, avail)
		}
		if v.users["mdd.x-MDT0000.changelog_users"] != 2 || v.quota["osd-ldiskfs.x-OST0000.quota_slave.acct_user"] != len(simQuotaUsers) ||
			v.quota["qmt.x-QMT0000.md-0x0.glb-grp"] != len(simQuotaGroups) {
			t.Errorf("changelog users %v, quota %v", v.users, v.quota)
		}
		for _, key := range []string{"ost.OSS.ost_io.stats ost_write", "mds.MDS.mdt.stats mds_getattr", "ldlm.services.ldlm_canceld.stats ldlm_cancel",
			"mdt.x-MDT0000.md_stats open", "obdfilter.x-OST0000.exports.10.10.0.11@o2ib.stats write_bytes", "osd-ldiskfs.x-OST0000.stats cache_hit"} {
			if v.stats[key] == 0 {
				t.Errorf("dialect %d: %s has no samples", d, key)
			}
		}
		for _, param := range []string{"osp.x-OST0002-osc-MDT0001.active", "ldlm.namespaces.filter-x-OST0001_UUID.lock_count", "memused", "obdfilter.x-OST0002.num_exports"} {
			if v.values[param] == 0 {
				t.Errorf("%s = 0", param)
			}
		}
	}
}

// Counters only grow between two scrapes, and space only fills.
func TestFamiliesAdvance(t *testing.T) {
	s := New(Config{Seed: 5, FSName: "x", MDTs: 1, OSTs: 2, Jobs: 40})
	at := time.Unix(1_800_000_000, 0)
	a, b := parseFamilies(t, s, at), parseFamilies(t, s, at.Add(90*time.Second))
	grew := 0
	for key, n := range a.stats {
		if b.stats[key] < n {
			t.Errorf("%s went from %d to %d", key, n, b.stats[key])
		}
		if b.stats[key] > n {
			grew++
		}
	}
	if grew < 20 {
		t.Errorf("only %d counters grew in 90 s", grew)
	}
	if b.values["osd-ldiskfs.x-OST0001.kbytesfree"] > a.values["osd-ldiskfs.x-OST0001.kbytesfree"] {
		t.Error("free space grew")
	}
}

// With static jobs, an OST's stats are the sums of its jobs' job_stats, to
// the rounding of each job's counter.
func TestFamiliesMatchJobStats(t *testing.T) {
	s := New(Config{Seed: 7, FSName: "x", OSTs: 2, MDTs: 1, Jobs: 300, Static: true})
	at := BenchTime
	v := parseFamilies(t, s, at)
	var buf bytes.Buffer
	s.WriteParams(&buf, at, "obdfilter.x-OST0001.job_stats")
	var samples, sum, jobs uint64
	lctl.Scan(&buf, "", func(string) lctl.SectionParser {
		return lctl.NewJobStatsParser(jobSummer(func(js *lctl.JobStat) {
			jobs++
			for _, op := range js.Ops {
				if op.Op == "write_bytes" {
					samples += op.Samples
					sum += op.Sum
				}
			}
		}))
	})
	got := v.stats["obdfilter.x-OST0001.stats write_bytes"]
	if jobs == 0 || got < samples || got > samples+jobs {
		t.Errorf("OST write_bytes samples %d, its %d jobs' sum %d", got, jobs, samples)
	}
	if got := uint64(v.sums["obdfilter.x-OST0001.stats write_bytes"]); float64(got) < float64(sum)*0.99 || float64(got) > float64(sum)*1.01 {
		t.Errorf("OST write_bytes sum %d, jobs' %d", got, sum)
	}
}

type jobSummer func(*lctl.JobStat)

func (f jobSummer) Job(js *lctl.JobStat)        { f(js) }
func (f jobSummer) End(bool, lctl.SectionStats) {}
