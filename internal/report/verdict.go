package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Verdicts holds each insight that fired in app against the servers'
// numbers in srv, as docs/sidecar.md's "What the servers confirm or
// contradict" defines it: one verdict per row of that table that has a
// fired code (small reads, small writes, re-reads, rewrites, metadata
// time, imbalance, each read/write-intensive code), and one per code the
// servers have nothing for. Insights at level OK (nothing to fix) get
// none. Nil when either view is missing.
func Verdicts(app *App, srv *Servers) []Verdict {
	if app == nil || srv == nil {
		return nil
	}
	out := []Verdict{}
	done := map[string]bool{}
	fired := map[string]*Insight{}
	for i := range app.Insights {
		if in := &app.Insights[i]; in.Fired {
			fired[in.Code] = in
		}
	}
	v := verdicter{app: app, srv: srv, fired: fired}
	for _, in := range app.Insights {
		if !in.Fired || strings.EqualFold(in.Level, "OK") || done[in.Code] {
			continue
		}
		g := groupOf(in.Code)
		var codes []string
		for _, c := range g.codes {
			if fired[c] != nil && !strings.EqualFold(fired[c].Level, "OK") {
				codes = append(codes, c)
				done[c] = true
			}
		}
		if len(codes) == 0 { // a code of no group
			codes = []string{in.Code}
			done[in.Code] = true
		}
		verdict := Verdict{Codes: codes, Insight: g.title}
		if verdict.Insight == "" {
			verdict.Insight = titles[in.Code]
		}
		if verdict.Insight == "" {
			verdict.Insight = in.Code
		}
		if !srv.Found {
			verdict.Outcome = NoData
			verdict.Why = "Prometheus has no job_stats series of the job in the window: nothing to hold the insight against."
			verdict.App, verdict.Server = g.quantities(&v, codes)
		} else {
			g.judge(&v, &verdict)
		}
		out = append(out, verdict)
	}
	return out
}

// A group is a row of docs/sidecar.md's table: the codes it holds, and
// how the servers' number decides them.
type group struct {
	codes []string
	title string
	// judge fills App, Server, Outcome and Why.
	judge func(v *verdicter, out *Verdict)
	// quantities gives App and Server alone (for NoData).
	quantities func(v *verdicter, codes []string) (app, server Quantity)
}

// verdicter holds the two views while verdicts are made.
type verdicter struct {
	app   *App
	srv   *Servers
	fired map[string]*Insight
}

// The bounds of the verdicts. They are the table's words made numbers.
const (
	// rpcSize: Lustre's RPCs are 1–4 MiB; bytes per RPC at 1 MiB or more
	// is RPCs "near the RPC size": the client merged the requests.
	rpcSize = 1 << 20
	// asSmall: RPCs at most this many times the application's mean
	// request size are "as small as the requests".
	asSmall = 2
	// movedAll and movedFew: the servers moved at least movedAll of
	// Darshan's bytes ("about as many"), or less than movedFew ("far
	// fewer").
	movedAll = 0.8
	movedFew = 0.5
	// stormRate is LustreJobMetadataStorm's threshold (operations per
	// second over 5 minutes).
	stormRate = 5000
	// slowMeta: fewer MDT operations than this per second of the job's
	// metadata time (10 ms an operation, where an MDS takes well under
	// one) are "few MDT operations for the time".
	slowMeta = 100
	// loadedAlone: a share of an OST at least this is an OST the job
	// loaded (nearly) alone; onFew: at least this share of the job's bytes
	// on one OST is "its bytes on few OSTs"; byOthers: OSTs where the job
	// never had more than this share were loaded mostly by others.
	loadedAlone = 0.5
	onFew       = 0.5
	byOthers    = 0.2
	// sameMix: the servers' read share within this of Darshan's is "the
	// same proportions".
	sameMix = 0.2
)

var groups = []group{
	{codes: []string{"P05", "P15"}, title: "small reads", judge: smallRequests(false), quantities: smallQuantities(false)},
	{codes: []string{"P06", "P16"}, title: "small writes", judge: smallRequests(true), quantities: smallQuantities(true)},
	{codes: []string{"P09"}, title: "data read more than once", judge: redundant(false), quantities: redundantQuantities(false)},
	{codes: []string{"P10"}, title: "data written more than once", judge: redundant(true), quantities: redundantQuantities(true)},
	{codes: []string{"P17"}, title: "long metadata time", judge: metadata, quantities: metadataQuantities},
	{codes: []string{"P18", "P19", "P21", "P22"}, title: "imbalance among ranks", judge: imbalance, quantities: imbalanceQuantities},
	{codes: []string{"P01"}, title: "write-intensive by operation count", judge: mix(false), quantities: mixQuantities(false)},
	{codes: []string{"P02"}, title: "read-intensive by operation count", judge: mix(false), quantities: mixQuantities(false)},
	{codes: []string{"P03"}, title: "write-intensive by volume", judge: mix(true), quantities: mixQuantities(true)},
	{codes: []string{"P04"}, title: "read-intensive by volume", judge: mix(true), quantities: mixQuantities(true)},
}

// titles name the insights no group holds (docs/insights.md).
var titles = map[string]string{
	"S01": "STDIO moves a large share of the bytes",
	"P07": "buffers misaligned in memory",
	"P08": "requests misaligned to the file system block",
	"P11": "many random reads",
	"P13": "many random writes",
	"M01": "no MPI-IO",
	"M02": "MPI-IO reads, none collective",
	"M03": "MPI-IO writes, none collective",
	"M06": "MPI-IO reads, all blocking",
	"M07": "MPI-IO writes, all blocking",
	"M09": "more aggregators than nodes",
}

// groupOf returns the group of a code; codes of no group are not
// comparable.
func groupOf(code string) group {
	for _, g := range groups {
		for _, c := range g.codes {
			if c == code {
				return g
			}
		}
	}
	return group{codes: []string{code}, judge: notComparable, quantities: notComparableQuantities}
}

// module returns the report's module of that name, or nil.
func (v *verdicter) module(name string) *Module {
	for i := range v.app.Modules {
		if v.app.Modules[i].Name == name {
			return &v.app.Modules[i]
		}
	}
	return nil
}

func (m *Module) op(name string) (int64, bool) {
	if m == nil {
		return 0, false
	}
	for _, c := range m.Operations {
		if c.Name == name {
			return c.Count, true
		}
	}
	return 0, false
}

// meanRequest is the job's mean POSIX read (write) request size.
func (v *verdicter) meanRequest(write bool) Value {
	m := v.module("POSIX")
	name, bytes := "Read", 0.0
	if m != nil {
		bytes = m.BytesRead
	}
	if write {
		name = "Write"
		if m != nil {
			bytes = m.BytesWritten
		}
	}
	n, ok := m.op(name)
	if !ok || n <= 0 {
		return Value{NA: "no POSIX " + strings.ToLower(name) + "s"}
	}
	return Num(bytes / float64(n))
}

func perRPC(srv *Servers, write bool) Value {
	if write {
		return srv.WritePerRPC
	}
	return srv.ReadPerRPC
}

func rw(write bool) string {
	if write {
		return "write"
	}
	return "read"
}

func smallQuantities(write bool) func(*verdicter, []string) (Quantity, Quantity) {
	return func(v *verdicter, _ []string) (Quantity, Quantity) {
		return Quantity{Name: "mean POSIX " + rw(write) + " request", Value: v.meanRequest(write), Unit: "bytes"},
			Quantity{Name: "bytes per " + rw(write) + " RPC on the OSTs", Value: perRPC(v.srv, write), Unit: "bytes"}
	}
}

// smallRequests: P05, P06 (P15, P16 on shared files) against the bytes
// per RPC.
func smallRequests(write bool) func(*verdicter, *Verdict) {
	return func(v *verdicter, out *Verdict) {
		out.App, out.Server = smallQuantities(write)(v, out.Codes)
		req, per := out.App.Value, out.Server.Value
		dir := rw(write)
		switch {
		case !per.OK:
			out.Outcome = NoData
			out.Why = fmt.Sprintf("The OSTs counted no %s RPC for the job in the window.", dir)
		case per.V >= rpcSize:
			out.Outcome = Contradicts
			out.Why = fmt.Sprintf("The OSTs received %s per %s RPC, near the RPC size: the client's page cache merged the small %ss, which cost the processes their calls, not the servers.", bytesText(per.V), dir, dir)
		case req.OK && per.V <= asSmall*req.V:
			out.Outcome = Confirms
			out.Why = fmt.Sprintf("The OSTs received %s per %s RPC, as small as the application's %s requests (%s on average): they reached the servers one by one (O_DIRECT, fsync, or lock conflicts on a shared file forcing early flushes).", bytesText(per.V), dir, dir, bytesText(req.V))
			if len(v.srv.OSTs) > 1 && (has(out.Codes, "P15") || has(out.Codes, "P16")) {
				out.Why += fmt.Sprintf(" The job's bytes went to %d OSTs.", len(v.srv.OSTs))
			}
		default:
			out.Outcome = Inconclusive
			out.Why = fmt.Sprintf("The OSTs received %s per %s RPC: larger than the application's requests", bytesText(per.V), dir)
			if req.OK {
				out.Why += fmt.Sprintf(" (%s on average)", bytesText(req.V))
			}
			out.Why += " but under the 1 MiB RPC size: the client merged some of them."
		}
	}
}

// lustreBytes are the bytes Darshan counted on Lustre mounts (POSIX and
// STDIO), or the POSIX bytes when the mount table names no Lustre.
func (v *verdicter) lustreBytes(write bool) Value {
	var sum float64
	lustre := false
	for _, fs := range v.app.FileSystems {
		if strings.EqualFold(fs.Type, "lustre") {
			lustre = true
			if write {
				sum += float64(fs.BytesWritten)
			} else {
				sum += float64(fs.BytesRead)
			}
		}
	}
	if lustre {
		return Num(sum)
	}
	m := v.module("POSIX")
	if m == nil {
		return Value{NA: "no POSIX module"}
	}
	if write {
		return Num(m.BytesWritten)
	}
	return Num(m.BytesRead)
}

func (v *verdicter) serverBytes(write bool) Value {
	if write {
		return v.srv.WriteBytes
	}
	return v.srv.ReadBytes
}

func redundantQuantities(write bool) func(*verdicter, []string) (Quantity, Quantity) {
	return func(v *verdicter, _ []string) (Quantity, Quantity) {
		past := map[bool]string{false: "read", true: "written"}[write]
		return Quantity{Name: "bytes " + past + " (Darshan, Lustre mounts)", Value: v.lustreBytes(write), Unit: "bytes"},
			Quantity{Name: "bytes " + past + " on the OSTs", Value: v.serverBytes(write), Unit: "bytes"}
	}
}

// redundant: P09, P10 against the OSTs' bytes.
func redundant(write bool) func(*verdicter, *Verdict) {
	return func(v *verdicter, out *Verdict) {
		out.App, out.Server = redundantQuantities(write)(v, out.Codes)
		a, s := out.App.Value, out.Server.Value
		past := map[bool]string{false: "read", true: "written"}[write]
		re := map[bool]string{false: "re-reads", true: "rewrites"}[write]
		switch {
		case !a.OK || a.V <= 0:
			out.Outcome = NotComparable
			out.Why = "Darshan counted no byte " + past + " to compare."
			return
		case !s.OK || s.V <= 0:
			out.Outcome = NoData
			out.Why = "The OSTs counted no byte " + past + " for the job in the window."
			return
		}
		r := s.V / a.V
		switch {
		case r >= movedAll:
			out.Outcome = Confirms
			out.Why = fmt.Sprintf("The OSTs moved %.0f%% of the bytes Darshan counted: the %s went to the servers.", 100*r, re)
		case r < movedFew && !v.srv.CoverageLow:
			out.Outcome = Contradicts
			out.Why = fmt.Sprintf("The OSTs moved only %.0f%% of the bytes Darshan counted: the page cache absorbed the %s.", 100*r, re)
		case r < movedFew:
			out.Outcome = Inconclusive
			out.Why = fmt.Sprintf("The OSTs counted %.0f%% of the bytes Darshan counted, but job_stats missed part of its targets' traffic (coverage low): the gap may be theirs.", 100*r)
		default:
			out.Outcome = Inconclusive
			out.Why = fmt.Sprintf("The OSTs moved %.0f%% of the bytes Darshan counted: some of the %s reached them.", 100*r, re)
		}
	}
}

func metadataQuantities(v *verdicter, _ []string) (Quantity, Quantity) {
	meta := Value{NA: "no POSIX module"}
	if m := v.module("POSIX"); m != nil {
		meta = Num(m.Time.Meta)
	}
	return Quantity{Name: "POSIX metadata time, all processes", Value: meta, Unit: "seconds"},
		Quantity{Name: "MDT operations", Value: v.srv.MDTOps, Unit: "operations"}
}

// metadata: P17 against the MDT operations, the peak MDT rate and the
// storm alert.
func metadata(v *verdicter, out *Verdict) {
	out.App, out.Server = metadataQuantities(v, out.Codes)
	storm := v.alert("LustreJobMetadataStorm")
	peak := v.srv.PeakMDTRate
	ops := v.srv.MDTOps
	switch {
	case storm || peak.OK && peak.V >= stormRate:
		out.Outcome = Confirms
		out.Why = fmt.Sprintf("The job made %s MDT operations, up to %.0f a second", countText(ops), peak.V)
		if storm {
			out.Why += ", and LustreJobMetadataStorm fired for it"
		}
		out.Why += ": the job loads the MDS."
	case !ops.OK || ops.V <= 0:
		out.Outcome = NoData
		out.Why = "The MDTs counted no operation for the job in the window."
	case out.App.Value.OK && out.App.Value.V > 0 && ops.V/out.App.Value.V < slowMeta && !v.srv.CoverageLow:
		out.Outcome = Contradicts
		out.Why = fmt.Sprintf("The job made only %s MDT operations for %.0f s of metadata time (%.0f ms each): it waited on an MDS that others loaded (see the MDT's total operations); the fix is not in the job.",
			countText(ops), out.App.Value.V, 1000*out.App.Value.V/ops.V)
	default:
		out.Outcome = Inconclusive
		out.Why = fmt.Sprintf("The job made %s MDT operations, up to %.0f a second, under the storm threshold of %d a second", countText(ops), peak.V, stormRate)
		if v.srv.CoverageLow {
			out.Why += "; job_stats missed part of its targets' traffic"
		}
		out.Why += ": the servers neither confirm nor contradict the metadata time."
	}
}

func (v *verdicter) alert(name string) bool {
	for _, a := range v.srv.Alerts {
		if a.Name == name {
			return true
		}
	}
	return false
}

func imbalanceQuantities(v *verdicter, codes []string) (Quantity, Quantity) {
	app := Quantity{Name: "imbalance", Unit: "ratio"}
	if len(codes) > 0 && v.fired[codes[0]] != nil {
		app.Name = "imbalance (" + codes[0] + ")"
		app.Value = v.fired[codes[0]].Value
	}
	peak := Value{NA: "no OST"}
	for _, o := range v.srv.OSTs {
		for _, s := range []Value{o.PeakShare, o.Share} {
			if s.OK && (!peak.OK || s.V > peak.V) {
				peak = s
			}
		}
	}
	return app, Quantity{Name: "the job's largest share of an OST (peak over 5 minutes)", Value: peak, Unit: "ratio"}
}

// imbalance: P18, P19, P21, P22 against the job's bytes per OST and its
// shares of them.
func imbalance(v *verdicter, out *Verdict) {
	out.App, out.Server = imbalanceQuantities(v, out.Codes)
	if len(v.srv.OSTs) == 0 {
		out.Outcome = NoData
		out.Why = "The OSTs counted nothing for the job in the window."
		return
	}
	var all, top float64
	topName := ""
	for _, o := range v.srv.OSTs {
		b := o.ReadBytes.V + o.WriteBytes.V
		all += b
		if b > top {
			top, topName = b, o.Target
		}
	}
	share := out.Server.Value
	dominates := v.alert("LustreJobDominatesOST")
	switch {
	case dominates || share.OK && share.V >= loadedAlone:
		out.Outcome = Confirms
		out.Why = fmt.Sprintf("The job had up to %.0f%% of an OST's bytes", 100*share.V)
		if dominates {
			out.Why += " (LustreJobDominatesOST fired)"
		}
		out.Why += ": it loaded OSTs (nearly) alone, so the imbalance is its striping or its division of work."
	case all > 0 && top/all >= onFew && len(v.srv.OSTs) > 0:
		out.Outcome = Confirms
		out.Why = fmt.Sprintf("%.0f%% of the job's bytes went to one OST (%s) of the %d it used: its striping or division of work.", 100*top/all, topName, len(v.srv.OSTs))
	case share.OK && share.V < byOthers:
		out.Outcome = Contradicts
		out.Why = fmt.Sprintf("The job never had more than %.0f%% of any OST's bytes: the OSTs were loaded mostly by other jobs, behind which its slow ranks queued.", 100*share.V)
		if has(out.Codes, "P19") && !has(out.Codes, "P18") {
			out.Why += " P19 without P18 points there too."
		}
	default:
		out.Outcome = Inconclusive
		out.Why = fmt.Sprintf("The job's bytes spread over %d OSTs", len(v.srv.OSTs))
		if share.OK {
			out.Why += fmt.Sprintf(", with up to %.0f%% of one's bytes", 100*share.V)
		}
		out.Why += ": neither its own load nor others' explains the imbalance."
	}
}

func mixQuantities(bytes bool) func(*verdicter, []string) (Quantity, Quantity) {
	return func(v *verdicter, _ []string) (Quantity, Quantity) {
		app, srv := Quantity{Unit: "ratio"}, Quantity{Unit: "ratio"}
		m := v.module("POSIX")
		if bytes {
			app.Name, srv.Name = "share of the bytes read (Darshan POSIX)", "share of the bytes read (OSTs)"
			if m != nil {
				app.Value = share(m.BytesRead, m.BytesWritten)
			}
			srv.Value = shareOf(v.srv.ReadBytes, v.srv.WriteBytes)
		} else {
			app.Name, srv.Name = "share of the operations that read (Darshan POSIX)", "share of the RPCs that read (OSTs)"
			r, _ := m.op("Read")
			w, _ := m.op("Write")
			app.Value = share(float64(r), float64(w))
			srv.Value = shareOf(v.srv.ReadRPCs, v.srv.WriteRPCs)
		}
		if !app.Value.OK && app.Value.NA == "" {
			app.Value.NA = "no POSIX module"
		}
		return app, srv
	}
}

func share(r, w float64) Value {
	if r+w <= 0 {
		return Value{NA: "nothing read or written"}
	}
	return Num(r / (r + w))
}

func shareOf(r, w Value) Value {
	if !r.OK && !w.OK {
		return Value{NA: "no OST series"}
	}
	return share(r.V, w.V)
}

// mix: P01–P04 against the OSTs' read and write RPCs (bytes).
func mix(bytes bool) func(*verdicter, *Verdict) {
	return func(v *verdicter, out *Verdict) {
		out.App, out.Server = mixQuantities(bytes)(v, out.Codes)
		a, s := out.App.Value, out.Server.Value
		what := map[bool]string{false: "RPCs", true: "bytes"}[bytes]
		switch {
		case !a.OK:
			out.Outcome = NotComparable
			out.Why = "Darshan's POSIX counters give no proportion to compare."
		case !s.OK:
			out.Outcome = NoData
			out.Why = "The OSTs counted no " + what + " for the job in the window."
		case math.Abs(a.V-s.V) <= sameMix:
			out.Outcome = Confirms
			out.Why = fmt.Sprintf("The OSTs' %s were %.0f%% reads, Darshan's %.0f%%: the same proportions.", what, 100*s.V, 100*a.V)
		case v.srv.CoverageLow:
			out.Outcome = Inconclusive
			out.Why = fmt.Sprintf("The OSTs' %s were %.0f%% reads, Darshan's %.0f%%, but job_stats missed part of its targets' traffic (coverage low).", what, 100*s.V, 100*a.V)
		default:
			out.Outcome = Contradicts
			out.Why = fmt.Sprintf("The OSTs' %s were %.0f%% reads, Darshan's %.0f%%: a gap (reads served by the client cache, or nodes whose traffic job_stats did not attribute).", what, 100*s.V, 100*a.V)
		}
	}
}

func notComparableQuantities(v *verdicter, codes []string) (Quantity, Quantity) {
	app := Quantity{Name: codes[0]}
	if in := v.fired[codes[0]]; in != nil {
		app.Value = in.Value
	}
	var srv Quantity
	switch codes[0] {
	case "P08":
		write := v.srv.WriteRPCs.OK && v.srv.WriteRPCs.V >= v.srv.ReadRPCs.V
		srv = Quantity{Name: "bytes per " + rw(write) + " RPC on the OSTs (a hint)", Value: perRPC(v.srv, write), Unit: "bytes"}
	case "P11":
		srv = Quantity{Name: "bytes per read RPC on the OSTs (a hint)", Value: v.srv.ReadPerRPC, Unit: "bytes"}
	case "P13":
		srv = Quantity{Name: "bytes per write RPC on the OSTs (a hint)", Value: v.srv.WritePerRPC, Unit: "bytes"}
	}
	return app, srv
}

// notComparable: S01, P07, P08, P11, P13, the M codes: job_stats have
// neither interfaces, offsets, alignment nor MPI-IO.
func notComparable(v *verdicter, out *Verdict) {
	out.App, out.Server = notComparableQuantities(v, out.Codes)
	out.Outcome = NotComparable
	code := out.Codes[0]
	switch {
	case code == "S01":
		out.Why = "job_stats do not see interfaces: STDIO and POSIX reach the servers alike."
	case code == "P07":
		out.Why = "job_stats do not see memory alignment."
	case code == "P08" || code == "P11" || code == "P13":
		what := map[string]string{"P08": "alignment", "P11": "offsets", "P13": "offsets"}[code]
		out.Why = "job_stats have no " + what + "."
		if out.Server.Value.OK {
			out.Why += fmt.Sprintf(" The OSTs' %s per RPC are a hint only: misaligned or random requests defeat read-ahead and merging (small RPCs).", bytesText(out.Server.Value.V))
		}
	case strings.HasPrefix(code, "M"):
		out.Why = "job_stats do not see MPI-IO: collective buffering would show as large, aligned RPCs after a change."
	default:
		out.Why = "job_stats have nothing to hold this insight against."
	}
}

func has(codes []string, c string) bool { return slices.Contains(codes, c) }

// bytesText writes a size with a binary prefix, as the report's tables.
func bytesText(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for math.Abs(b) >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.4g %s", b, units[i])
}

func countText(v Value) string {
	if !v.OK {
		return "no"
	}
	return fmt.Sprintf("%.0f", v.V)
}
