package lustresim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// A fleet is a whole simulated site: one MDS holding every MDT and OSS
// each holding a few OSTs, all serving one file system whose jobs stripe
// over the OSTs of several servers. It is one Sim of the whole file system
// seen through one view per server, so that a job's traffic on every
// server's targets adds up to the site's truth by construction: the truth
// a site-wide dashboard (the sum over servers) is checked against.

// FleetConfig describes a simulated site.
type FleetConfig struct {
	Seed   uint64
	FSName string // "site" when empty
	// OSS is the number of object storage servers (1 when 0), each with
	// OSTsPerOSS OSTs (2 when 0); MDTs (1 when 0) are all on one MDS.
	OSS, OSTsPerOSS, MDTs int
	// Jobs is the number of jobs (batch jobs and processes outside
	// jobs), all active all the time at constant rates; 5000 when 0.
	Jobs int
	// HotJobs is the fraction of jobs striped over every OST (Config's
	// WideStripe); 0.01 when 0, none when negative.
	HotJobs float64
	// Now is the clock; time.Now when nil (tests set it).
	Now func() time.Time
}

// Fleet is a simulated site.
type Fleet struct {
	sim     *Sim
	servers []FleetServer
	// serverOf names the server holding each target.
	serverOf map[string]string
}

// FleetServer is one simulated server of a fleet: what lctl get_param
// prints on it.
type FleetServer struct {
	Name    string   // "mds0", "oss00", "oss01", …
	Role    string   // "mds" or "oss"
	Targets []string // the MDTs or OSTs it holds
	Source  lctl.Source
}

// serverSource is a server's lctl: the site's parameters that live on it.
type serverSource struct {
	sim    *Sim
	params []string // in lctl's order
	scope  *targetScope
}

// GetParam implements lctl.Source with lctl's semantics on this server: a
// pattern matching none of its parameters makes Close fail, whatever the
// other servers have.
func (v *serverSource) GetParam(ctx context.Context, patterns []string) (io.ReadCloser, error) {
	return v.sim.getParams(ctx, patterns, v.params, v.scope)
}

// NewFleet returns a simulated site.
func NewFleet(cfg FleetConfig) *Fleet {
	cfg = cfg.withDefaults()
	sim := New(Config{
		Seed: cfg.Seed, FSName: cfg.FSName, MDTs: cfg.MDTs, OSTs: cfg.OSS * cfg.OSTsPerOSS, Jobs: cfg.Jobs,
		// Static: every job always active at constant rates, on one node
		// (one entry per job and target) with well-formed ids, so that the
		// truth is exact rates and nothing is cleaned up between scrapes.
		Static: true, WideStripe: max(cfg.HotJobs, 0), Now: cfg.Now,
	})
	f := &Fleet{sim: sim, serverOf: map[string]string{}}
	mds := FleetServer{Name: "mds0", Role: "mds"}
	for i := 0; i < cfg.MDTs; i++ {
		mds.Targets = append(mds.Targets, sim.MDTName(i))
	}
	f.servers = append(f.servers, mds)
	for i := 0; i < cfg.OSS; i++ {
		oss := FleetServer{Name: fmt.Sprintf("oss%02d", i), Role: "oss"}
		for k := 0; k < cfg.OSTsPerOSS; k++ {
			oss.Targets = append(oss.Targets, sim.OSTName(i*cfg.OSTsPerOSS+k))
		}
		f.servers = append(f.servers, oss)
	}
	f.assignParams()
	return f
}

func (cfg FleetConfig) withDefaults() FleetConfig {
	if cfg.FSName == "" {
		cfg.FSName = "site"
	}
	if cfg.OSS <= 0 {
		cfg.OSS = 1
	}
	if cfg.OSTsPerOSS <= 0 {
		cfg.OSTsPerOSS = 2
	}
	if cfg.MDTs <= 0 {
		cfg.MDTs = 1
	}
	if cfg.Jobs <= 0 {
		cfg.Jobs = 5000
	}
	if cfg.HotJobs == 0 {
		cfg.HotJobs = 0.01
	}
	return cfg
}

// assignParams gives each server its sources: every parameter of the file
// system goes to the server holding its target, to the servers of its
// role, or to every server.
func (f *Fleet) assignParams() {
	params := make([][]string, len(f.servers))
	for _, srv := range f.servers {
		for _, t := range srv.Targets {
			f.serverOf[t] = srv.Name
		}
	}
	for _, p := range f.sim.params() {
		role, target := paramOwner(p)
		for i, srv := range f.servers {
			switch {
			case target != "" && f.serverOf[target] != srv.Name:
			case target == "" && role != "" && role != srv.Role:
			default:
				params[i] = append(params[i], p)
			}
		}
	}
	for i, srv := range f.servers {
		scope := &targetScope{mdt: map[int]bool{}, ost: map[int]bool{}}
		for _, t := range srv.Targets {
			if srv.Role == "mds" {
				scope.mdt[targetIndex(t)] = true
			} else {
				scope.ost[targetIndex(t)] = true
			}
		}
		f.servers[i].Source = &serverSource{sim: f.sim, params: params[i], scope: scope}
	}
}

// paramOwner says where a parameter lives: on the server holding target,
// on every server of role, or (both empty) on every server, as the
// families' parameters (families.go) do on a real site.
func paramOwner(param string) (role, target string) {
	prefix, device, leaf, _ := splitParam(param)
	switch {
	case prefix == "osp":
		// An MDT's connections to the other targets: on the MDS, whichever
		// target they reach.
		return "mds", ""
	case prefix == "mgs" || prefix == "mds" || prefix == "qmt" || device == "MGS":
		// The MGS (mgs.MGS.*, osd-ldiskfs.MGS.*), the metadata services
		// (mds.MDS.*) and the quota master run on the MDS…
		return "mds", ""
	case prefix == "ldlm" && device == "namespaces" && strings.HasPrefix(leaf, "MGS."):
		return "mds", "" // …and so does the MGS's LDLM namespace.
	case prefix == "ost":
		return "oss", "" // ost.OSS.*: the OSS's RPC services
	case prefix == "ldlm" && device == "namespaces":
		// "mdt-<target>_UUID" or "filter-<target>_UUID".
		ns, _, _ := strings.Cut(leaf, ".")
		_, ns, _ = strings.Cut(ns, "-")
		return "", strings.TrimSuffix(ns, "_UUID")
	case prefix == "mdt" || prefix == "obdfilter" || prefix == "osd-ldiskfs" || prefix == "mdd":
		return "", device
	}
	// jobid_name, jobid_var, version, health_check, memory, the LDLM
	// services: every Lustre server has its own.
	return "", ""
}

// Servers returns the site's servers: the MDS first, then the OSS in
// order.
func (f *Fleet) Servers() []FleetServer {
	out := make([]FleetServer, len(f.servers))
	for i, srv := range f.servers {
		srv.Targets = append([]string(nil), srv.Targets...)
		out[i] = srv
	}
	return out
}

// FleetTruth is what the site really does: the exact rates of its jobs,
// per job, per user and per target, which job_stats' counters follow to
// the integer.
type FleetTruth struct {
	// Jobs is keyed by jobid; processes outside batch jobs are summed
	// under "_nojob", as Sim.Truth names them.
	Jobs    map[string]*FleetRates       `json:"jobs"`
	UIDs    map[string]*FleetRates       `json:"uids"`
	Targets map[string]*FleetTargetTruth `json:"targets"`
}

// FleetRates are the rates of a job or a user, over every target.
type FleetRates struct {
	ReadBytesPerSecond  float64 `json:"read_bytes_per_second"`
	WriteBytesPerSecond float64 `json:"write_bytes_per_second"`
	// OperationsPerSecond is keyed by component ("mdt", "ost"), then by
	// operation as job_stats names it: both have a getattr.
	OperationsPerSecond map[string]map[string]float64 `json:"operations_per_second"`
}

// FleetTargetTruth are the rates of one target, summed over its jobs.
type FleetTargetTruth struct {
	Component           string             `json:"component"` // "mdt" or "ost"
	Server              string             `json:"server"`
	ReadBytesPerSecond  float64            `json:"read_bytes_per_second"`
	WriteBytesPerSecond float64            `json:"write_bytes_per_second"`
	OperationsPerSecond map[string]float64 `json:"operations_per_second"`
}

// Truth returns the site's true rates. Its jobs are static: the truth
// holds at any time.
func (f *Fleet) Truth() FleetTruth {
	truth := FleetTruth{Jobs: map[string]*FleetRates{}, UIDs: map[string]*FleetRates{}, Targets: map[string]*FleetTargetTruth{}}
	for _, srv := range f.servers {
		for _, t := range srv.Targets {
			truth.Targets[t] = &FleetTargetTruth{Component: lctl.TargetComponent(t), Server: srv.Name, OperationsPerSecond: map[string]float64{}}
		}
	}
	for _, j := range f.sim.jobsAt(unix(f.sim.cfg.Now())) {
		jobID := j.JobID
		if jobID == "" {
			jobID = "_nojob"
		}
		job, user := ratesOf(truth.Jobs, jobID), ratesOf(truth.UIDs, j.UID)
		for _, e := range j.entries {
			component, target := "ost", f.sim.OSTName(e.target)
			if e.mdt {
				component, target = "mdt", f.sim.MDTName(e.target)
			}
			for _, o := range e.ops {
				read, write, ops := opRates(o)
				job.add(component, o.name, read, write, ops)
				user.add(component, o.name, read, write, ops)
				truth.Targets[target].add(o.name, read, write, ops)
			}
		}
	}
	return truth
}

func ratesOf(m map[string]*FleetRates, key string) *FleetRates {
	r := m[key]
	if r == nil {
		r = &FleetRates{OperationsPerSecond: map[string]map[string]float64{}}
		m[key] = r
	}
	return r
}

func (r *FleetRates) add(component, name string, read, write, ops float64) {
	r.ReadBytesPerSecond += read
	r.WriteBytesPerSecond += write
	if ops <= 0 {
		return
	}
	if r.OperationsPerSecond[component] == nil {
		r.OperationsPerSecond[component] = map[string]float64{}
	}
	r.OperationsPerSecond[component][name] += ops
}

func (t *FleetTargetTruth) add(name string, read, write, ops float64) {
	t.ReadBytesPerSecond += read
	t.WriteBytesPerSecond += write
	if ops > 0 {
		t.OperationsPerSecond[name] += ops
	}
}

// opRates splits an operation's rate into bytes read or written per second
// (read_bytes, write_bytes: samples times the bytes each) or operations per
// second (any other), as Sim.Truth counts them.
func opRates(o op) (read, write, ops float64) {
	switch o.name {
	case "read_bytes":
		return o.rate * float64(o.perSample), 0, 0
	case "write_bytes":
		return 0, o.rate * float64(o.perSample), 0
	}
	return 0, 0, o.rate
}
