package lustresim

import (
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The families other than job_stats: service and target statistics,
// brw_stats, capacity, exports, recovery, health, memory, LDLM, OSP, quota,
// changelogs and the version, as a combined MGS/MDS/OSS prints them.
//
// Their counters follow the jobs' traffic: each target's rates are the sum
// of the rates of the jobs on it (those of the first batch of arrivals,
// scaled to the configured population, when jobs come and go, and the
// demo's fixed jobs), integrated
// since the server started one day before the simulated era. With Static
// jobs, a target's counters are the sum of its jobs' job_stats counters, to
// rounding. Capacities fill slowly; recovery is COMPLETE.

// simClients are the NIDs of the clients every target exports to: IPv4,
// IPv6, and the server's own loopback connection, whose stats are empty.
var simClients = []struct {
	nid   string
	share float64
}{
	{"10.10.0.11@o2ib", 0.45}, {"10.10.0.12@o2ib", 0.35}, {"2001:db8::21@tcp", 0.20}, {"0@lo", 0},
}

// Quota ids of the simulated file system: a fixed population, so that the
// quota families keep a bounded size whatever the number of jobs.
var (
	simQuotaUsers    = quotaIDs(0, 1000, 32)
	simQuotaGroups   = quotaIDs(0, 100, 8)
	simQuotaProjects = quotaIDs(0, 1, 3)
)

func quotaIDs(root, first uint64, n int) []uint64 {
	ids := []uint64{root}
	for i := 0; i < n; i++ {
		ids = append(ids, first+uint64(i))
	}
	return ids
}

// boot is when the simulated servers last started before t, in Unix
// seconds: with Static jobs, when the jobs arrived, a day before the
// simulated era; otherwise every four weeks, so that the demo's server
// counters are weeks old, not years, and restart now and then, as a real
// server's do at maintenance.
func (s *Sim) boot(t float64) float64 {
	b := s.origin - 86400
	if s.cfg.Static {
		return b
	}
	const period = 28 * 86400
	return b + math.Floor((t-b)/period)*period
}

// opRate is one operation's rate on a target: samples and sum per second.
type opRate struct {
	name, unit string
	samples    float64
	sum        float64
}

// targetRates is the traffic of one target, from its jobs.
type targetRates struct {
	ops []opRate
	// rpc are the OST's bulk RPCs per second by I/O size, read and write.
	readRPC, writeRPC map[uint64]float64
	jobs              float64 // jobs with an entry on the target
}

func (r *targetRates) op(name string) opRate {
	for _, o := range r.ops {
		if o.name == name {
			return o
		}
	}
	return opRate{name: name}
}

type familyState struct {
	once   sync.Once
	params []string
	ost    []targetRates
	mdt    []targetRates
}

var familiesOf sync.Map // *Sim → *familyState: keeps Sim's struct untouched

func (s *Sim) families() *familyState {
	v, _ := familiesOf.LoadOrStore(s, &familyState{})
	f := v.(*familyState)
	f.once.Do(func() { s.initFamilies(f) })
	return f
}

// initFamilies lists the parameters and sums the jobs' rates per target.
func (s *Sim) initFamilies(f *familyState) {
	f.ost = make([]targetRates, s.cfg.OSTs)
	f.mdt = make([]targetRates, s.cfg.MDTs)
	jobs := s.epoch(0)
	scale := 1.0
	if !s.cfg.Static && len(jobs) > 0 {
		scale = float64(s.cfg.Jobs) / float64(len(jobs))
	}
	add := func(j *Job, scale float64) {
		w := scale
		if !s.cfg.Static {
			w *= j.Duty
		}
		for _, e := range j.entries {
			t := &f.ost
			if e.mdt {
				t = &f.mdt
			}
			if e.target >= len(*t) {
				continue
			}
			r := &(*t)[e.target]
			r.jobs += scale
			for _, o := range e.ops {
				r.add(o, w)
			}
		}
	}
	for _, j := range jobs {
		add(j, scale)
	}
	// The demo's fixed jobs were there all along: their traffic is in the
	// targets' history too (the checkpoint pool has no other).
	for _, j := range s.special {
		add(j, 1)
	}

	p := []string{"version", "health_check", "memused", "memused_max", "lnet_memused"}
	osd := func(target string) {
		for _, leaf := range []string{"kbytestotal", "kbytesfree", "kbytesavail", "filestotal", "filesfree", "brw_stats", "stats",
			"quota_slave.acct_user", "quota_slave.acct_group", "quota_slave.acct_project"} {
			p = append(p, "osd-ldiskfs."+target+"."+leaf)
		}
	}
	namespace := func(ns string) {
		for _, leaf := range []string{"lock_count", "lock_unused_count", "resource_count", "lock_timeouts", "contended_locks", "contention_seconds"} {
			p = append(p, "ldlm.namespaces."+ns+"."+leaf)
		}
	}
	exports := func(obd, target string) {
		for _, c := range simClients {
			p = append(p, obd+"."+target+".exports."+c.nid+".stats")
		}
	}
	if s.cfg.MDTs > 0 {
		osd("MGS")
		p = append(p, "mgs.MGS.mgs.stats", "mgs.MGS.num_exports", "mgs.MGS.eviction_count", "ldlm.namespaces.MGS.lock_count")
		for _, c := range simClients {
			p = append(p, "mgs.MGS.exports."+c.nid+".stats")
		}
		for _, svc := range []string{"mdt", "mdt_readpage"} {
			p = append(p, "mds.MDS."+svc+".stats")
		}
		for _, a := range []string{"dt-0x0", "md-0x0"} {
			for _, kind := range []string{"usr", "grp", "prj"} {
				p = append(p, "qmt."+s.cfg.FSName+"-QMT0000."+a+".glb-"+kind)
			}
		}
	}
	if s.cfg.OSTs > 0 {
		for _, svc := range []string{"ost", "ost_io", "ost_create"} {
			p = append(p, "ost.OSS."+svc+".stats")
		}
	}
	p = append(p, "ldlm.services.ldlm_canceld.stats", "ldlm.services.ldlm_cbd.stats")
	if s.cfg.ClientMount {
		p = append(p, s.clientMountParam())
	}
	for i := 0; i < s.cfg.MDTs; i++ {
		mdt := s.MDTName(i)
		osd(mdt)
		namespace("mdt-" + mdt + "_UUID")
		exports("mdt", mdt)
		p = append(p, "mdt."+mdt+".md_stats", "mdt."+mdt+".num_exports", "mdt."+mdt+".recovery_status",
			"mdt."+mdt+".eviction_count", "mdd."+mdt+".changelog_users")
		for k := 0; k < s.cfg.OSTs; k++ {
			dev := "osp." + s.OSTName(k) + "-osc-MDT" + mdt[len(mdt)-4:]
			p = append(p, dev+".active", dev+".max_create_count")
		}
		for k := 0; k < s.cfg.MDTs; k++ {
			if k != i {
				p = append(p, "osp."+s.MDTName(k)+"-osp-MDT"+mdt[len(mdt)-4:]+".active")
			}
		}
	}
	for i := 0; i < s.cfg.OSTs; i++ {
		ost := s.OSTName(i)
		osd(ost)
		namespace("filter-" + ost + "_UUID")
		exports("obdfilter", ost)
		for _, leaf := range []string{"stats", "num_exports", "tot_dirty", "tot_granted", "tot_pending", "eviction_count", "recovery_status"} {
			p = append(p, "obdfilter."+ost+"."+leaf)
		}
	}
	f.params = p
}

func (r *targetRates) add(o op, w float64) {
	rate := o.rate * w
	for i := range r.ops {
		if r.ops[i].name == o.name {
			r.ops[i].samples += rate
			r.ops[i].sum += rate * float64(o.perSample)
			r.addRPC(o, rate)
			return
		}
	}
	r.ops = append(r.ops, opRate{name: o.name, unit: o.unit, samples: rate, sum: rate * float64(o.perSample)})
	r.addRPC(o, rate)
}

func (r *targetRates) addRPC(o op, rate float64) {
	var m *map[uint64]float64
	switch o.name {
	case "read_bytes":
		m = &r.readRPC
	case "write_bytes":
		m = &r.writeRPC
	default:
		return
	}
	if *m == nil {
		*m = map[uint64]float64{}
	}
	(*m)[o.perSample] += rate
}

// familyParams lists the family parameters the server has.
func (s *Sim) familyParams() []string { return s.families().params }

// writeFamilyParam prints one family parameter; it reports false for a
// parameter that is not a family's.
func (s *Sim) writeFamilyParam(w *writer, param string, now time.Time) bool {
	t := unix(now)
	f := s.families()
	switch param {
	case "version":
		if s.cfg.Dialect == Lustre212 {
			w.str("version=\nlustre: 2.12.9\nkernel: patchless_client\nbuild:  2.12.9_sim\n")
		} else {
			w.str("version=2.15.4\n")
		}
		return true
	case "health_check":
		w.str("health_check=healthy\n")
		return true
	case "memused", "memused_max", "lnet_memused":
		base := map[string]float64{"memused": 800e6, "memused_max": 1.1e9, "lnet_memused": 48e6}[param]
		v := base
		if param != "memused_max" {
			v += 0.1 * base * math.Sin(t/3600)
		}
		s.value(w, param, uint64(v))
		return true
	}
	prefix, device, leaf, ok := splitParam(param)
	if !ok {
		return false
	}
	switch prefix {
	case "osd-ldiskfs":
		return s.writeOSD(w, f, param, device, leaf, t)
	case "obdfilter", "mdt":
		return s.writeTarget(w, f, param, device, leaf, t)
	case "ost", "mds", "ldlm", "mgs":
		return s.writeService(w, f, param, prefix, device, leaf, t)
	case "osp":
		v := uint64(1)
		if leaf == "max_create_count" {
			v = 20000
		}
		s.value(w, param, v)
		return true
	case "mdd":
		s.writeChangelog(w, f, param, device, t)
		return true
	case "llite":
		if !s.cfg.ClientMount || param != s.clientMountParam() {
			return false
		}
		s.writeClientMount(w, param, t)
		return true
	case "qmt":
		s.writeQuotaLimits(w, param, leaf, t)
		return true
	}
	return false
}

// splitParam cuts "prefix.device.leaf"; the leaf may hold dots.
func splitParam(param string) (prefix, device, leaf string, ok bool) {
	prefix, rest, ok1 := strings.Cut(param, ".")
	device, leaf, ok2 := strings.Cut(rest, ".")
	return prefix, device, leaf, ok1 && ok2
}

// targetOf returns the rates of a target by name, and whether it is an
// MDT.
func (s *Sim) targetOf(f *familyState, target string) (*targetRates, bool) {
	idx := targetIndex(target)
	if strings.Contains(target, "-MDT") {
		if idx < len(f.mdt) {
			return &f.mdt[idx], true
		}
		return &targetRates{}, true
	}
	if strings.Contains(target, "-OST") && idx < len(f.ost) {
		return &f.ost[idx], false
	}
	return &targetRates{}, false
}

// fill is how full a target is at t: a third at first, filling slowly
// towards 85% over the years, a little more for higher indexes.
func (s *Sim) fill(target string, t float64) float64 {
	years := math.Max(0, t-s.origin) / (365 * 86400)
	return 0.3 + 0.5*(1-math.Exp(-years/2)) + 0.004*float64(targetIndex(target)%8)
}

// WriteEachParam writes every parameter that one of patterns matches, once,
// in the order of the simulator's parameter list, for benchmarks.
func (s *Sim) WriteEachParam(w io.Writer, now time.Time, patterns ...string) error {
	bw := newWriter(w)
	for _, p := range s.params() {
		for _, pat := range patterns {
			if lctl.MatchPattern(pat, p) {
				s.writeParam(bw, p, now)
				break
			}
		}
	}
	return bw.flush()
}
