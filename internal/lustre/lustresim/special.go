package lustresim

import (
	"math"
	"time"
)

// Jobs the demo always has, for the end-to-end test of deploy/ to check
// the exporter against: a job whose job_ids churn and whose counters keep
// restarting, a job storming the MDT with metadata operations, and a job
// writing checkpoints in bursts that job_stats mostly miss.
const (
	ChurnJobID      = "90000001"
	StormJobID      = "90000002"
	CheckpointJobID = "90000003"
)

// specialJobs builds the demo's fixed jobs.
func (s *Sim) specialJobs() []*Job {
	if s.cfg.OSTs == 0 || s.cfg.MDTs == 0 {
		return nil
	}
	forever := func(j *Job) {
		j.Kind = Batch
		j.Arrive, j.Leave = s.origin-86400, math.Inf(1)
	}
	modern := s.cfg.Dialect == Lustre215

	// The churn job writes 64 MiB/s without pause, from two nodes, but its
	// entries take turns every 5 minutes, longer than the cleanup interval:
	// the well-formed ids' entries are idle, cleaned up and made again
	// from zero while truncated ids ("job:uid", merged by Lustre for both
	// nodes) carry the traffic, and the other way round.
	churn := &Job{JobID: ChurnJobID, UID: "31337", Nodes: []string{"r01c01", "r01c02"}, Period: 600, Duty: 0.5}
	forever(churn)
	const churnBps = 64 << 20
	for i, node := range churn.Nodes {
		for _, target := range []int{0, 1 % s.cfg.OSTs} {
			share := 0.25 // two nodes, two OSTs
			churn.entries = append(churn.entries, &entry{target: target, node: node, rawID: s.rawID(churn, node, ShapeOK, false), shape: ShapeOK,
				ops: s.opsFor(false, modern, share, churnBps, 0, 1<<20, 0, nil)})
			if i == 0 {
				// One merged entry per target for both nodes' truncated ids.
				churn.entries = append(churn.entries, &entry{target: target, node: node, rawID: s.rawID(churn, node, ShapeJobUID, false), shape: ShapeJobUID,
					ops: s.opsFor(false, modern, 2*share, churnBps, 0, 1<<20, 0, nil), phase: 300})
			}
		}
	}

	// The storm job opens, stats and closes 20,000 files a second.
	storm := &Job{JobID: StormJobID, UID: "4242", Nodes: []string{"r02c01"}, Period: 1, Duty: 1}
	forever(storm)
	md := map[string]bool{"open": true, "close": true, "getattr": true}
	storm.entries = []*entry{
		{mdt: true, target: 0, node: "r02c01", rawID: s.rawID(storm, "r02c01", ShapeOK, false), shape: ShapeOK,
			ops: s.opsFor(true, modern, 1, 0, 0, 4096, 4000, md)},
		{target: 2 % s.cfg.OSTs, node: "r02c01", rawID: s.rawID(storm, "r02c01", ShapeOK, false), shape: ShapeOK,
			ops: s.opsFor(false, modern, 1, 1<<20, 0, 4096, 0, nil)},
	}
	// The checkpoint job writes to the last OST, a pool of its own with the
	// demo's fixed jobs (regularOSTs), for about one second in every ten:
	// 2.5 GiB/s in each burst, 256 MiB/s on average. Where job_cleanup_interval is
	// shorter than the pause (the demo's last OST), its entry is cleaned up
	// after each burst, and a burst no scrape falls into, or the end of one
	// after the last scrape, counts in the OST's stats only.
	// (Every 10.37 s: a period that no scrape interval divides, so that
	// scrapes fall on every phase of the bursts, as they would on a real
	// job's.)
	ckpt := &Job{JobID: CheckpointJobID, UID: "5150", Nodes: []string{"r03c01"}, Period: 10.37, Duty: 0.1}
	forever(ckpt)
	const ckptBps = 256 << 20
	ckpt.entries = []*entry{{target: s.cfg.OSTs - 1, node: "r03c01", rawID: s.rawID(ckpt, "r03c01", ShapeOK, false), shape: ShapeOK,
		ops: s.opsFor(false, modern, 1, ckptBps/ckpt.Duty, 0, 4<<20, 0, nil)}}
	return []*Job{churn, storm, ckpt}
}

// JobTruth is what the simulated server really counts for a job, for the
// identity the exporter should show it under (jobid, uid, exe; node is
// left out: a job's traffic is compared summed over its nodes).
type JobTruth struct {
	JobID string `json:"jobid"`
	UID   string `json:"uid"`
	Exe   string `json:"exe,omitempty"`
	// Steady is set when the job's summed rates have been constant for
	// the last SteadyFor seconds and stay so for a minute more: a
	// comparison with rate() over that window is exact.
	Steady bool `json:"steady"`
	// Rates of the entries the exporter attributes to the job.
	ReadBytesPerSecond  float64            `json:"read_bytes_per_second"`
	WriteBytesPerSecond float64            `json:"write_bytes_per_second"`
	OpsPerSecond        map[string]float64 `json:"ops_per_second"`
	// WriteSamplesPerSecond tells how smooth the counter is: below a few
	// per second, a short rate() window sees single requests.
	WriteSamplesPerSecond float64 `json:"write_samples_per_second"`
	Churn                 bool    `json:"churn,omitempty"`
}

// SteadyFor is the window over which JobTruth.Steady holds.
const SteadyFor = 300.0

// Truth returns the true rates of the jobs present at now.
func (s *Sim) Truth(now time.Time) []JobTruth {
	t := unix(now)
	var out []JobTruth
	for _, j := range s.jobsAt(t) {
		if t < j.Arrive || t >= j.Leave {
			continue
		}
		jt := JobTruth{JobID: j.JobID, UID: j.UID, Exe: j.Exe, OpsPerSecond: map[string]float64{}, Churn: j.JobID == ChurnJobID}
		if jt.JobID == "" {
			jt.JobID = "_nojob"
		}
		jt.Steady = (j.Duty >= 1 || jt.Churn) && j.Arrive <= t-SteadyFor && j.Leave >= t+60
		for _, e := range j.entries {
			if !e.shape.Attributed() {
				continue
			}
			// The churn job's entries alternate; each carries the job's
			// whole rate while active, half of the time.
			weight := 1.0
			if jt.Churn {
				weight = 0.5
			}
			for _, o := range e.ops {
				switch o.name {
				case "write_bytes":
					jt.WriteBytesPerSecond += weight * o.rate * float64(o.perSample)
					jt.WriteSamplesPerSecond += weight * o.rate
				case "read_bytes":
					jt.ReadBytesPerSecond += weight * o.rate * float64(o.perSample)
				default:
					if o.rate > 0 {
						jt.OpsPerSecond[o.name] += weight * o.rate
					}
				}
			}
		}
		out = append(out, jt)
	}
	return out
}
