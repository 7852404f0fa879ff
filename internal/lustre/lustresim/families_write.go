package lustresim

import (
	"math"
	"strconv"
	"strings"
)

// value prints a single-value parameter.
func (s *Sim) value(w *writer, param string, v uint64) {
	w.str(param)
	w.bw.WriteByte('=')
	w.buf = strconv.AppendUint(w.buf[:0], v, 10)
	w.bw.Write(w.buf)
	w.nl()
}

// statsHeader opens a stats table: snapshot_time, and start_time and
// elapsed_time in the 2.15 dialect.
func (s *Sim) statsHeader(w *writer, param string, t float64) {
	w.str(param)
	w.str("=\n")
	w.str("snapshot_time             ")
	w.seconds(t)
	if s.cfg.Dialect == Lustre215 {
		w.str("start_time                ")
		w.seconds(s.boot(t))
		w.str("elapsed_time              ")
		w.seconds(t - s.boot(t))
	}
}

// statLine prints "name  N samples [unit]" and then vals as they are:
// min, max, sum and, in 2.15, the sum of squares (64-bit, wrapping as
// Lustre's does); none for the bare counts of 2.12's "[reqs]".
func (w *writer) statLine(name string, n uint64, unit string, vals ...uint64) {
	w.str(name)
	for i := len(name); i < 25; i++ {
		w.bw.WriteByte(' ')
	}
	w.bw.WriteByte(' ')
	w.buf = strconv.AppendUint(w.buf[:0], n, 10)
	w.buf = append(w.buf, " samples ["...)
	w.buf = append(w.buf, unit...)
	w.buf = append(w.buf, ']')
	for _, v := range vals {
		w.buf = append(w.buf, ' ')
		w.buf = strconv.AppendUint(w.buf, v, 10)
	}
	w.buf = append(w.buf, '\n')
	w.bw.Write(w.buf)
}

// timed prints a counter of n samples of per each (bytes or
// microseconds), with min and max around per.
func (s *Sim) timed(w *writer, name string, n uint64, unit string, lo, hi, per uint64) {
	if n == 0 {
		lo, hi = 0, 0
	}
	if s.cfg.Dialect == Lustre215 {
		w.statLine(name, n, unit, lo, hi, n*per, n*per*per)
	} else {
		w.statLine(name, n, unit, lo, hi, n*per)
	}
}

// count integrates a rate since boot.
func (s *Sim) count(rate, t float64) uint64 {
	return uint64(math.Max(0, rate*(t-s.boot(t))))
}

// writeOpStats prints a target's operations, scaled by share (an export's
// part of the target's traffic).
func (s *Sim) writeOpStats(w *writer, r *targetRates, share, t float64) {
	for _, o := range r.ops {
		n := s.count(o.samples*share, t)
		if n == 0 {
			continue
		}
		per := uint64(0)
		if o.samples > 0 {
			per = uint64(o.sum / o.samples)
		}
		switch {
		case o.unit == "bytes":
			lo, hi := sizeRange(r.readRPC)
			if o.name == "write_bytes" {
				lo, hi = sizeRange(r.writeRPC)
			}
			s.timed(w, o.name, n, "bytes", lo, hi, per)
		case s.cfg.Dialect == Lustre215:
			s.timed(w, o.name, n, "usecs", per/3, per*4, per)
		default:
			w.statLine(o.name, n, "reqs")
		}
	}
}

// writeOps prints a target's operations, scaled by share: its jobs'
// counts when they come and go (totals.go), the average rates of static
// jobs.
func (s *Sim) writeOps(w *writer, r *targetRates, isMDT bool, target string, share, t float64) {
	if s.cfg.Static {
		s.writeOpStats(w, r, share, t)
		return
	}
	s.writeTargetCounts(w, r, isMDT, targetIndex(target), share, t)
}

// sizeRange is the smallest and largest I/O size of a target's jobs.
func sizeRange(rpc map[uint64]float64) (lo, hi uint64) {
	for size, rate := range rpc {
		if rate > 0 && (lo == 0 || size < lo) {
			lo = size
		}
		hi = max(hi, size)
	}
	return lo, hi
}

func (s *Sim) writeOSD(w *writer, f *familyState, param, target, leaf string, t float64) bool {
	r, isMDT := s.targetOf(f, target)
	kbytes, files := uint64(16<<30), uint64(200e6) // an OST: 16 TiB
	switch {
	case target == "MGS":
		kbytes, files = 1<<20, 65536
	case isMDT:
		kbytes, files = 4<<30, 2e9
	}
	used := s.fill(target, t)
	switch leaf {
	case "kbytestotal":
		s.value(w, param, kbytes)
	case "kbytesfree":
		s.value(w, param, uint64(float64(kbytes)*(1-used)))
	case "kbytesavail":
		s.value(w, param, uint64(float64(kbytes)*(1-used-0.05)))
	case "filestotal":
		s.value(w, param, files)
	case "filesfree":
		s.value(w, param, uint64(float64(files)*(1-used/2)))
	case "brw_stats":
		s.writeBrwStats(w, param, r, t)
	case "stats":
		s.statsHeader(w, param, t)
		reads := s.count(r.op("read_bytes").samples, t)
		s.timed(w, "get_page", reads, "usecs", 1, 40, 3)
		w.statLine("cache_access", reads, "pages", 1, 256, reads*64)
		w.statLine("cache_hit", reads/4, "pages", 1, 256, reads/4*64)
		w.statLine("cache_miss", reads-reads/4, "pages", 1, 256, (reads-reads/4)*64)
	case "quota_slave.acct_user", "quota_slave.acct_group", "quota_slave.acct_project":
		s.writeQuotaUsage(w, param, leaf, float64(kbytes)*used, float64(files)*used/2)
	default:
		return false
	}
	return true
}

func (s *Sim) writeTarget(w *writer, f *familyState, param, target, leaf string, t float64) bool {
	r, isMDT := s.targetOf(f, target)
	clients := uint64(len(simClients))
	switch {
	case leaf == "stats" || leaf == "md_stats":
		s.statsHeader(w, param, t)
		s.writeOps(w, r, isMDT, target, 1, t)
		if !isMDT {
			// Every MDT and client polls the OST's space.
			s.timed(w, "statfs", s.count(float64(clients+uint64(s.cfg.MDTs)), t), "usecs", 1, 40, 5)
		}
	case strings.HasPrefix(leaf, "exports."):
		nid := strings.TrimSuffix(strings.TrimPrefix(leaf, "exports."), ".stats")
		share := 0.0
		for _, c := range simClients {
			if c.nid == nid {
				share = c.share
			}
		}
		s.statsHeader(w, param, t)
		if share > 0 {
			s.writeOps(w, r, isMDT, target, share, t)
		}
	case leaf == "num_exports":
		n := clients + uint64(s.cfg.MDTs)
		if isMDT {
			n = clients + uint64(s.cfg.OSTs+s.cfg.MDTs)
		}
		s.value(w, param, n)
	case leaf == "tot_granted":
		s.value(w, param, clients*64<<20)
	case leaf == "tot_dirty":
		s.value(w, param, uint64(math.Min(r.op("write_bytes").sum*0.5, float64(clients*32<<20))))
	case leaf == "tot_pending":
		s.value(w, param, 0)
	case leaf == "eviction_count":
		s.value(w, param, uint64(targetIndex(target)%3))
	case leaf == "recovery_status":
		w.str(param)
		w.str("=\nstatus: COMPLETE\nrecovery_start: ")
		w.str(strconv.FormatUint(uint64(s.boot(t))+60, 10))
		w.str("\nrecovery_duration: 42\ncompleted_clients: ")
		w.str(strconv.FormatUint(clients, 10) + "/" + strconv.FormatUint(clients, 10))
		w.str("\nreplayed_requests: 0\nlast_transno: 4294967296\nVBR: DISABLED\nIR: ENABLED\n")
	default:
		return false
	}
	return true
}

// writeService prints the RPC service statistics, the LDLM namespaces and
// the MGS: the sums of the targets' traffic through each service.
func (s *Sim) writeService(w *writer, f *familyState, param, prefix, device, leaf string, t float64) bool {
	if prefix == "ldlm" && device == "namespaces" {
		return s.writeNamespace(w, f, param, leaf, t)
	}
	switch param {
	case "mgs.MGS.num_exports":
		s.value(w, param, uint64(len(simClients)+s.cfg.MDTs+s.cfg.OSTs))
		return true
	case "mgs.MGS.eviction_count":
		s.value(w, param, 0) // the MGS's clients reconnect; none was evicted
		return true
	}
	if strings.HasPrefix(param, "mgs.MGS.exports.") {
		// A configuration connection (a client's, or over 0@lo the
		// server's own targets'): its configuration logs read at
		// connection, then a ping every 25 s.
		s.statsHeader(w, param, t)
		w.statLine("mgs_connect", 1, "reqs")
		w.statLine("llog_origin_handle_open", 2, "reqs")
		w.statLine("obd_ping", s.count(1.0/25, t), "reqs")
		return true
	}
	mdts, osts := w.scope.count(true, s.cfg.MDTs), w.scope.count(false, s.cfg.OSTs)
	sum := func(mdt bool, name string) float64 {
		rates := f.ost
		if mdt {
			rates = f.mdt
		}
		total := 0.0
		for i := range rates {
			if w.scope.has(mdt, i) {
				total += rates[i].op(name).samples
			}
		}
		return total
	}
	usec := "usecs"
	if s.cfg.Dialect == Lustre212 {
		usec = "usec"
	}
	rpcs := map[string]float64{} // RPC name → per second
	switch param {
	case "ost.OSS.ost_io.stats":
		rpcs["ost_read"] = sum(false, "read_bytes")
		rpcs["ost_write"] = sum(false, "write_bytes")
		rpcs["ost_punch"] = sum(false, "punch")
	case "ost.OSS.ost.stats":
		rpcs["ost_setattr"] = sum(false, "setattr")
		rpcs["ost_getattr"] = sum(false, "getattr")
		rpcs["obd_ping"] = float64(len(simClients)*osts) / 25
	case "ost.OSS.ost_create.stats":
		rpcs["ost_statfs"] = float64(s.cfg.MDTs*osts) / 5
	case "mds.MDS.mdt.stats":
		rpcs["mds_getattr"] = sum(true, "getattr")
		rpcs["mds_close"] = sum(true, "close")
		rpcs["mds_reint_setattr"] = sum(true, "setattr")
		rpcs["ldlm_ibits_enqueue"] = sum(true, "open") + sum(true, "mknod")
		rpcs["obd_ping"] = float64(len(simClients)*mdts) / 25
	case "mds.MDS.mdt_readpage.stats":
		rpcs["mds_readpage"] = sum(true, "open") / 20
	case "ldlm.services.ldlm_canceld.stats":
		rpcs["ldlm_cancel"] = (sum(true, "close") + sum(false, "write_bytes")/50)
	case "ldlm.services.ldlm_cbd.stats":
		rpcs["ldlm_bl_callback"] = sum(true, "setattr") / 10
	case "mgs.MGS.mgs.stats":
		rpcs["mgs_connect"] = 0
		rpcs["obd_ping"] = float64(len(simClients)) / 25
	default:
		return false
	}
	total := 0.0
	for _, r := range rpcs {
		total += r
	}
	n := s.count(total, t)
	s.statsHeader(w, param, t)
	// Requests wait 35 µs on average, find a queue of 0.25 and 3 others
	// active, get a 15 s timeout; two buffers of about 63 free per request.
	s.timed(w, "req_waittime", n, usec, 2, 900, 35)
	w.statLine("req_qdepth", n, "reqs", 0, 8, n/4, n/2)
	w.statLine("req_active", n, "reqs", 1, 24, 3*n, 12*n)
	w.statLine("req_timeout", n, secUnit(s.cfg.Dialect), 1, 15, 15*n, 225*n)
	w.statLine("reqbuf_avail", 2*n, "bufs", 60, 64, 126*n, 126*n*63)
	for _, name := range sortedKeys(rpcs) {
		s.timed(w, name, s.count(rpcs[name], t), usec, 5, 20000, latencyOf(name))
	}
	return true
}

// targetScope is the targets one server of a fleet holds, by index.
type targetScope struct{ mdt, ost map[int]bool }

// has reports whether the server holds target i; a nil scope (one server
// holding the whole file system) holds every target.
func (sc *targetScope) has(mdt bool, i int) bool {
	if sc == nil {
		return true
	}
	if mdt {
		return sc.mdt[i]
	}
	return sc.ost[i]
}

// count is how many MDTs or OSTs the server holds, of all in the file
// system.
func (sc *targetScope) count(mdt bool, all int) int {
	if sc == nil {
		return all
	}
	if mdt {
		return len(sc.mdt)
	}
	return len(sc.ost)
}

func secUnit(d Dialect) string {
	if d == Lustre212 {
		return "sec"
	}
	return "secs"
}

// latencyOf is the mean service time of an RPC, microseconds.
func latencyOf(rpc string) uint64 {
	switch rpc {
	case "ost_read":
		return latency["read"]
	case "ost_write":
		return latency["write"]
	case "ost_punch":
		return latency["punch"]
	case "mds_getattr":
		return latency["getattr"]
	case "mds_close":
		return latency["close"]
	case "mds_reint_setattr":
		return latency["setattr"]
	case "ldlm_ibits_enqueue":
		return latency["open"]
	}
	return 30
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// writeNamespace prints "ldlm.namespaces.<ns>.<leaf>": locks follow the
// jobs on the target, with a slow wave.
func (s *Sim) writeNamespace(w *writer, f *familyState, param, leaf string, t float64) bool {
	ns, name, ok := strings.Cut(leaf, ".")
	if !ok {
		return false
	}
	target := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(ns, "filter-"), "mdt-"), "_UUID")
	r, _ := s.targetOf(f, target)
	locks := uint64((20*r.jobs + 50) * (1 + 0.2*math.Sin(t/1800)))
	switch name {
	case "lock_count":
		s.value(w, param, locks)
	case "resource_count":
		s.value(w, param, locks*7/10)
	case "lock_unused_count":
		s.value(w, param, 0)
	case "lock_timeouts":
		s.value(w, param, uint64(targetIndex(target)%2))
	case "contended_locks":
		s.value(w, param, 32)
	case "contention_seconds":
		s.value(w, param, 2)
	default:
		return false
	}
	return true
}

// writeChangelog prints an MDT's changelog users: a consumer keeping up
// and one registered long ago and forgotten.
func (s *Sim) writeChangelog(w *writer, f *familyState, param, mdt string, t float64) {
	r, _ := s.targetOf(f, mdt)
	rate := r.op("mknod").samples + r.op("unlink").samples + r.op("setattr").samples + r.op("mkdir").samples + 0.1
	current := s.count(rate, t)
	lag := uint64(rate * 4)
	stale := uint64(rate * 3600)
	w.str(param)
	if s.cfg.Dialect == Lustre212 {
		w.str("=\ncurrent index: ")
		w.str(strconv.FormatUint(current, 10))
		w.str("\nID    index (idle seconds)\n")
	} else {
		w.str("=\ncurrent_index: ")
		w.str(strconv.FormatUint(current, 10))
		w.str("\nID                            index (idle) mask\n")
	}
	users := []struct {
		id    string
		index uint64
		idle  uint64
	}{
		{"cl1", current - min(lag, current), 2},
		{"cl2", min(stale, current), uint64(math.Max(0, t-s.boot(t)-3600))},
	}
	for _, u := range users {
		w.str(u.id)
		w.str(strings.Repeat(" ", 30-len(u.id)))
		w.str(strconv.FormatUint(u.index, 10))
		w.str(" (" + strconv.FormatUint(u.idle, 10) + ")\n")
	}
}

// writeQuotaUsage shares a target's space and inodes among the quota ids,
// the first ids taking the most (Zipf-like).
func (s *Sim) writeQuotaUsage(w *writer, param, leaf string, kbytes, inodes float64) {
	ids, name := simQuotaUsers, "usr_accounting"
	switch leaf {
	case "quota_slave.acct_group":
		ids, name = simQuotaGroups, "grp_accounting"
	case "quota_slave.acct_project":
		ids, name = simQuotaProjects, "prj_accounting"
	}
	w.str(param)
	w.str("=\n" + name + ":\n")
	norm := 0.0
	for i := range ids {
		norm += 1 / float64(i+1)
	}
	for i, id := range ids {
		part := 1 / float64(i+1) / norm
		w.str("- id:      " + strconv.FormatUint(id, 10) + "\n")
		w.str("  usage:   { inodes: " + strconv.FormatUint(uint64(inodes*part), 10) +
			", kbytes: " + strconv.FormatUint(uint64(kbytes*part), 10) + " }\n")
	}
}

// writeQuotaLimits prints the quota master's limits: users and groups
// have limits, id 0 only holds the grace time.
func (s *Sim) writeQuotaLimits(w *writer, param, leaf string, t float64) {
	pool, kind, _ := strings.Cut(leaf, ".glb-")
	ids := map[string][]uint64{"usr": simQuotaUsers, "grp": simQuotaGroups, "prj": simQuotaProjects}[kind]
	limit := uint64(10 << 30) // kilobytes: 10 TiB
	if strings.HasPrefix(pool, "md-") {
		limit = 10_000_000 // inodes
	}
	w.str(param)
	w.str("=\nglobal_pool0_" + pool[:2] + "_" + kind + "\n")
	for i, id := range ids {
		hard, soft, granted, grace := limit, limit/10*8, uint64(float64(limit)*s.fill("", t)/float64(i+2)), uint64(0)
		if id == 0 {
			hard, soft, granted, grace = 0, 0, 0, 604800
		}
		w.str("- id:      " + strconv.FormatUint(id, 10) + "\n")
		w.str("  limits:  { hard: " + strconv.FormatUint(hard, 10) + ", soft: " + strconv.FormatUint(soft, 10) +
			", granted: " + strconv.FormatUint(granted, 10) + ", time: " + strconv.FormatUint(grace, 10) + " }\n")
	}
}

// clientMountParam is the stats of the server's own client mount (the
// instance part is the superblock's address, as Lustre names it).
func (s *Sim) clientMountParam() string {
	return "llite." + s.cfg.FSName + "-ffff88105db50000.stats"
}

// writeClientMount prints the stats of the server's own client mount: a
// monitoring agent's statfs every ten seconds and an admin's occasional
// look around. Its few requests are left out of the targets' counters,
// which count the jobs' traffic (totals.go).
func (s *Sim) writeClientMount(w *writer, param string, t float64) {
	s.statsHeader(w, param, t)
	s.timed(w, "open", s.count(0.02, t), "usecs", 20, 900, 180)
	s.timed(w, "close", s.count(0.02, t), "usecs", 10, 400, 60)
	s.timed(w, "getattr", s.count(0.05, t), "usecs", 5, 300, 40)
	s.timed(w, "statfs", s.count(0.1, t), "usecs", 30, 2000, 250)
	s.timed(w, "inode_permission", s.count(0.2, t), "usecs", 0, 30, 2)
}
