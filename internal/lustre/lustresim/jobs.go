package lustresim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Kind is what ran a job's I/O.
type Kind int

const (
	Batch   Kind = iota // a batch job on compute nodes: "job:uid:node"
	Login               // a process on a login node: "exe.uid"
	NoJob               // a process outside any job on a compute node: ":uid:node"
	Service             // a process on a service node: ":uid:svcN"
)

// Shape is how a job_id came out of the client.
type Shape int

const (
	ShapeOK          Shape = iota // as the format says
	ShapeFQDN                     // fully qualified host
	ShapeJobOnly                  // "job"
	ShapeJobSep                   // "job:"
	ShapeJobUID                   // "job:uid"
	ShapeJobUIDSep                // "job:uid:"
	ShapeExtraChar                // "job" plus one digit
	ShapeOverwritten              // ":ob:uid:node", the first character lost
	ShapeEmpty                    // ""
)

// Attributed reports whether the exporter, knowing the job's well-formed
// id from its other entries, counts an id of this shape towards the job:
// truncated and overwritten ids are repaired; an id with an extra
// character is discarded, and an empty one counts towards no job.
func (s Shape) Attributed() bool { return s != ShapeExtraChar && s != ShapeEmpty }

// Job is one simulated job or process.
type Job struct {
	Seq    int64
	Kind   Kind
	JobID  string // "" outside jobs
	UID    string
	Exe    string
	Nodes  []string
	Arrive float64 // Unix seconds
	Leave  float64
	Period float64 // an active phase starts every Period seconds…
	Duty   float64 // …and lasts Duty·Period
	// entries are the job_stats entries the job makes, one per
	// (target, raw job_id).
	entries []*entry
}

// op is one operation's counting rule in one entry: samples grow at rate
// per active second, and each sample adds perSample to the sum.
type op struct {
	name      string
	rate      float64
	perSample uint64
	unit      string
}

type entry struct {
	mdt    bool
	target int
	node   string
	rawID  string
	shape  Shape
	ops    []op
	// phase shifts the entry's activity against its job's: the churn job's
	// entries take turns.
	phase float64
}

// jobsAt returns the jobs that may have entries at t.
func (s *Sim) jobsAt(t float64) []*Job {
	if s.cfg.Static {
		return s.epoch(0)
	}
	const maxAge = lifetimeMax + 3600 // a job plus its cleanup, generously
	first := int64(math.Floor((t - maxAge - s.origin) / epochLength))
	last := int64(math.Floor((t - s.origin) / epochLength))
	out := append([]*Job(nil), s.special...)
	for e := first; e <= last; e++ {
		for _, j := range s.epoch(e) {
			if j.Arrive <= t && t < j.Leave+s.maxCleanup {
				out = append(out, j)
			}
		}
	}
	return out
}

const (
	epochLength = 600.0 // seconds of arrivals generated together
	lifetimeMin = 300.0
	lifetimeMax = 1800.0
)

// epoch returns the jobs arriving in epoch e, generated from the seed and
// e alone, so that any moment can be simulated without the past.
func (s *Sim) epoch(e int64) []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	if jobs, ok := s.epochs[e]; ok {
		return jobs
	}
	// Keep the epochs that can still have jobs (maxAge back, ten epochs)
	// and a few more: a day of simulated time must not hold a day of jobs.
	if len(s.epochs) > 24 {
		for k := range s.epochs {
			if k < e-12 {
				delete(s.epochs, k)
			}
		}
	}
	rng := rand.New(rand.NewPCG(s.cfg.Seed, uint64(e)+1<<40))
	n := s.cfg.Jobs
	if !s.cfg.Static {
		n = int(math.Round(float64(s.cfg.Jobs) * epochLength / ((lifetimeMin + lifetimeMax) / 2)))
	}
	jobs := make([]*Job, n)
	for i := range jobs {
		seq := e*100000 + int64(i)
		jobs[i] = s.newJob(rng, seq, s.origin+float64(e)*epochLength)
	}
	s.epochs[e] = jobs
	return jobs
}

var exeNames = []string{"bash", "python3", "rsync", "cp", "tar", "vim", "ls", "dd", "git", "find", "R", "matlab", "java"}

func (s *Sim) newJob(rng *rand.Rand, seq int64, epochStart float64) *Job {
	j := &Job{Seq: seq}
	// The kinds in the proportions of the MDS table of the seed.
	switch p := rng.Float64(); {
	case p < 0.64:
		j.Kind = Batch
	case p < 0.88:
		j.Kind = Login
	case p < 0.97:
		j.Kind = NoJob
	default:
		j.Kind = Service
	}
	// Sequence-derived ids: no two live jobs print the same raw id. The
	// uid is in the raw ids of processes outside jobs (exe.uid, :uid:host),
	// so it must not repeat among live jobs either: sequence numbers of
	// epochs ten apart (6000 s, more than a job lives with its cleanup)
	// may share one, closer ones may not. (A uid repeating every two
	// epochs made two live processes print one id, which Lustre would
	// have counted as one entry.)
	u := 20000 + seq%1000000
	if u < 20000 {
		u += 1000000
	}
	j.UID = strconv.FormatInt(u, 10)
	switch j.Kind {
	case Batch:
		j.JobID = strconv.FormatInt(11300000+seq%8000000+8000000*boolInt(seq < 0), 10)
		nodes := 1 + rng.IntN(4)
		if s.cfg.Static {
			nodes = 1 // one entry per job and target: "N jobs" means N entries
		}
		for k := 0; k < nodes; k++ {
			j.Nodes = append(j.Nodes, fmt.Sprintf("r%02dc%02d", 1+rng.IntN(18), 1+rng.IntN(48)))
		}
	case Login:
		j.Exe = exeNames[rng.IntN(len(exeNames))]
		j.Nodes = []string{fmt.Sprintf("login%d", 1+rng.IntN(4))}
	case NoJob:
		j.Nodes = []string{fmt.Sprintf("r%02dc%02d", 1+rng.IntN(18), 1+rng.IntN(48))}
	case Service:
		j.Nodes = []string{fmt.Sprintf("svc%d", 1+rng.IntN(6))}
	}
	if s.cfg.Static {
		j.Arrive, j.Leave = s.origin-86400, math.Inf(1)
		j.Period, j.Duty = 1, 1
	} else {
		j.Arrive = epochStart + rng.Float64()*epochLength
		j.Leave = j.Arrive + lifetimeMin + rng.Float64()*(lifetimeMax-lifetimeMin)
		j.Period = 60 + rng.Float64()*540
		j.Duty = 1
		if rng.IntN(10) >= 3 {
			j.Duty = 0.3 + rng.Float64()*0.7
		}
	}
	s.addEntries(rng, j)
	return j
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// logUniform draws from [lo, hi) uniformly in log scale: rates span
// decades, as real jobs' do.
func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

var ioSizes = []uint64{4 << 10, 64 << 10, 1 << 20, 4 << 20}

// addEntries lays the job's traffic over its targets and nodes, with the
// raw ids its clients print, some of them broken.
func (s *Sim) addEntries(rng *rand.Rand, j *Job) {
	modern := s.cfg.Dialect == Lustre215
	writeBps := logUniform(rng, 1e3, 2e9)
	readBps := 0.0
	if rng.IntN(2) == 0 {
		readBps = logUniform(rng, 1e3, 2e9)
	}
	ioSize := ioSizes[rng.IntN(len(ioSizes))]
	mdRate := logUniform(rng, 0.01, 500)
	// Every job opens, closes and stats files; few do much else.
	mdUsed := map[string]bool{"open": true, "close": true, "getattr": true}
	// In a fixed order: drawing while ranging over the map would make the
	// demo differ from one process to the next.
	for _, name := range mdtOps215 {
		if _, weighted := mdWeights[name]; weighted && !mdUsed[name] && rng.IntN(5) == 0 {
			mdUsed[name] = true
		}
	}
	stripes := 1 << rng.IntN(3)
	osts := s.regularOSTs()
	if s.cfg.WideStripe > 0 && rng.Float64() < s.cfg.WideStripe {
		stripes = osts // a hot job: on every OST
	}
	if stripes > osts {
		stripes = osts
	}
	firstOST := 0
	if osts > 0 {
		firstOST = rng.IntN(osts)
	}
	mdt := 0
	if s.cfg.MDTs > 1 {
		mdt = rng.IntN(s.cfg.MDTs)
	}
	fqdnNode := map[string]bool{}
	for _, n := range j.Nodes {
		fqdnNode[n] = rng.IntN(50) == 0 // about 2% of nodes print their FQDN
	}
	seen := map[string]*entry{}
	add := func(isMDT bool, target int, node string, share float64, shape Shape) {
		raw := s.rawID(j, node, shape, fqdnNode[node])
		key := fmt.Sprint(isMDT, target, raw)
		e, ok := seen[key]
		if !ok {
			e = &entry{mdt: isMDT, target: target, node: node, rawID: raw, shape: shape}
			seen[key] = e
			j.entries = append(j.entries, e)
		}
		e.ops = mergeOps(e.ops, s.opsFor(isMDT, modern, share, writeBps, readBps, ioSize, mdRate, mdUsed))
	}
	for _, node := range j.Nodes {
		nodeShare := 1 / float64(len(j.Nodes))
		targets := []struct {
			mdt bool
			idx int
			w   float64
		}{}
		if s.cfg.MDTs > 0 {
			targets = append(targets, struct {
				mdt bool
				idx int
				w   float64
			}{true, mdt, 1})
		}
		for k := 0; k < stripes && osts > 0; k++ {
			targets = append(targets, struct {
				mdt bool
				idx int
				w   float64
			}{false, (firstOST + k) % osts, 1 / float64(stripes)})
		}
		for _, t := range targets {
			share := nodeShare * t.w
			if j.Kind == Batch && !s.cfg.Static && rng.IntN(20) == 0 {
				// A broken shadow entry takes 2% of this node's traffic.
				// (Empty ids are left to the fixtures: Lustre merges all of
				// them into one entry, which per-job shadows cannot model.)
				shadow := []Shape{ShapeJobOnly, ShapeJobSep, ShapeJobUID, ShapeJobUIDSep, ShapeExtraChar, ShapeOverwritten}[rng.IntN(6)]
				add(t.mdt, t.idx, node, share*0.02, shadow)
				share *= 0.98
			}
			add(t.mdt, t.idx, node, share, ShapeOK)
		}
	}
}

// regularOSTs is the number of OSTs the jobs' files are striped over: all
// of them, but with the demo's fixed jobs (and more than two OSTs) the last
// one, which is the pool the checkpoint job writes to alone (special.go).
func (s *Sim) regularOSTs() int {
	if s.cfg.Special && s.cfg.OSTs > 2 {
		return s.cfg.OSTs - 1
	}
	return s.cfg.OSTs
}

// rawID prints the job_id a client makes for shape.
func (s *Sim) rawID(j *Job, node string, shape Shape, fqdn bool) string {
	host := node
	if fqdn {
		host += ".bullx"
	}
	switch j.Kind {
	case Login:
		return j.Exe + "." + j.UID
	case NoJob, Service:
		return ":" + j.UID + ":" + host
	}
	switch shape {
	case ShapeJobOnly:
		return j.JobID
	case ShapeJobSep:
		return j.JobID + ":"
	case ShapeJobUID:
		return j.JobID + ":" + j.UID
	case ShapeJobUIDSep:
		return j.JobID + ":" + j.UID + ":"
	case ShapeExtraChar:
		return j.JobID + strconv.FormatInt(j.Seq%10, 10)
	case ShapeOverwritten:
		return ":" + j.JobID[1:] + ":" + j.UID + ":" + host
	case ShapeEmpty:
		return ""
	}
	return j.JobID + ":" + j.UID + ":" + host
}

var (
	ostOps212 = []string{"read_bytes", "write_bytes", "getattr", "setattr", "punch", "sync", "destroy", "create", "statfs", "get_info", "set_info", "quotactl"}
	ostOps215 = []string{"read_bytes", "write_bytes", "read", "write", "getattr", "setattr", "punch", "sync", "destroy", "create", "statfs", "get_info", "set_info", "quotactl", "prealloc"}
	mdtOps212 = []string{"open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "samedir_rename", "crossdir_rename"}
	mdtOps215 = []string{"open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "samedir_rename", "parallel_rename_file", "parallel_rename_dir", "crossdir_rename", "read", "write", "read_bytes", "write_bytes", "punch", "migrate", "fallocate"}
	// Relative frequency of metadata operations.
	mdWeights = map[string]float64{"open": 1, "close": 1, "getattr": 3, "setattr": 0.2, "mknod": 0.1, "unlink": 0.1, "mkdir": 0.02, "rmdir": 0.01, "statfs": 0.05, "getxattr": 0.3, "sync": 0.01, "samedir_rename": 0.01}
	// Mean latency of an operation, microseconds.
	latency = map[string]uint64{"read": 900, "write": 1500, "open": 80, "close": 40, "getattr": 6, "setattr": 45, "mknod": 110, "unlink": 60, "mkdir": 150, "rmdir": 90, "statfs": 20, "getxattr": 8, "sync": 1800, "samedir_rename": 200, "punch": 250}
)

// opsFor returns the counting rules of one entry.
func (s *Sim) opsFor(isMDT, modern bool, share, writeBps, readBps float64, ioSize uint64, mdRate float64, mdUsed map[string]bool) []op {
	names := ostOps212
	switch {
	case isMDT && modern:
		names = mdtOps215
	case isMDT:
		names = mdtOps212
	case modern:
		names = ostOps215
	}
	unit := func(name string) string {
		switch {
		case name == "read_bytes" || name == "write_bytes":
			return "bytes"
		case modern:
			return "usecs"
		}
		return "reqs"
	}
	ops := make([]op, 0, len(names))
	for _, name := range names {
		o := op{name: name, unit: unit(name)}
		switch {
		case !isMDT && (name == "write_bytes" || name == "write"):
			o.rate = share * writeBps / float64(ioSize)
		case !isMDT && (name == "read_bytes" || name == "read"):
			o.rate = share * readBps / float64(ioSize)
		case !isMDT && name == "punch":
			o.rate = share * 0.05
		case !isMDT && (name == "setattr" || name == "getattr"):
			o.rate = share * 0.02
		case isMDT && mdUsed[name]:
			o.rate = share * mdRate * mdWeights[name]
		}
		switch {
		case o.unit == "bytes":
			o.perSample = ioSize
		case o.unit == "usecs":
			o.perSample = latency[name]
			if o.perSample == 0 {
				o.perSample = 50
			}
		}
		ops = append(ops, o)
	}
	return ops
}

func mergeOps(have, add []op) []op {
	if have == nil {
		return add
	}
	for i := range have {
		have[i].rate += add[i].rate
	}
	return have
}

// samples returns an operation's counters in an entry whose lifetime
// started at start, at t: integer and monotonic in t.
func (j *Job) samples(o op, start, t float64) (samples, sum uint64) {
	n := uint64(o.rate * j.activeTime(start, t))
	return n, n * o.perSample
}
