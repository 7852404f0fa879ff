// Package page draws a job's I/O report (package report's Report) as one
// self-contained HTML page: no JavaScript, no external file, font or
// network access; the charts are SVG drawn here, each with a title, its
// axes' units, and its numbers in a <title> or a table for readers who
// cannot see it. Everything that comes from the logs or from Prometheus
// (paths, executable names, labels) is shown in its visible form (shown:
// control, bidirectional and zero-width characters written as escapes)
// and escaped: html/template for the page, esc for the SVG drawn by hand.
//
// Every section has an id (Sections lists them) and every chart the class
// "chart", so that tests and other tools can find them.
package page

import (
	"bufio"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/labelvalue"
	"github.com/hpcio/hpcio_exporter/internal/report"
)

// Section ids of the page. The application's sections are there when the
// report has an application's view, the servers' when it has a servers'
// view; the others always.
var (
	TopSections    = []string{"job", "application", "servers", "verdicts"}
	AppSections    = []string{"logs", "heatmap", "insights", "io-cost", "io-time", "module-bytes", "operation-counts", "access-sizes", "access-pattern", "common-access", "file-systems", "file-counts", "top-files", "signals"}
	ServerSections = []string{"servers-summary", "servers-coverage", "servers-rates", "servers-osts", "servers-rpc", "servers-mdt", "servers-alerts"}
)

// Sections returns the ids of the sections the page of r has.
func Sections(r *report.Report) []string {
	out := append([]string(nil), TopSections...)
	if r.App != nil {
		out = append(out, AppSections...)
	}
	if r.Servers != nil {
		out = append(out, ServerSections...)
	}
	return out
}

// Write writes the page of r to w.
func Write(w io.Writer, r *report.Report) error {
	_, err := write(w, r)
	return err
}

// write writes the page of r to w and returns how many characters the
// last check of the page made visible (visibleWriter): none, unless a
// string from outside reached the page without going through shown.
func write(w io.Writer, r *report.Report) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	vw := &visibleWriter{w: bw}
	if err := pageTmpl().Execute(vw, build(r)); err != nil {
		return vw.escaped, err
	}
	return vw.escaped, bw.Flush()
}

// shown is the visible form of a string from outside (a log, a file or
// directory name, Prometheus' labels and messages), as the page and its
// charts print it: labelvalue.Visible, which writes each control,
// bidirectional, zero-width or other invisible character, each byte that
// is not UTF-8, and the backslash as the escape of a Go string literal
// ("/scratch/\u202Efdp.exe", never "/scratch/exe.pdf"). Every string of
// a Report the page prints goes through it; the report's JSON keeps the
// strings themselves.
func shown(s string) string { return labelvalue.Visible(s) }

// shownAll is shown of each string.
func shownAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shown(s)
	}
	return out
}

// visibleWriter is the last check of a page: any character that would
// hide itself or reorder the text (a control but the newline, a format
// character, a line or paragraph separator, a byte that is not UTF-8)
// that reached it without shown is written as its escape too, and
// counted. Each write is checked on its own: a sequence cut between two
// writes is two runs of bytes that are not UTF-8, escaped; what it writes
// is UTF-8 without such a character, and so is what follows it.
type visibleWriter struct {
	w       io.Writer
	escaped int
	buf     []byte
}

func (v *visibleWriter) Write(p []byte) (int, error) {
	out, n := visibleOutput(p, v.buf[:0])
	if n == 0 {
		return v.w.Write(p)
	}
	v.escaped += n
	v.buf = out
	if _, err := v.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// visibleOutput returns p with each character visibleWriter escapes
// written as its escape (appended to buf), and how many it escaped; p
// itself when there is none.
func visibleOutput(p, buf []byte) ([]byte, int) {
	var out []byte
	n, done := 0, 0
	for i := 0; i < len(p); {
		c := p[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if !(r == utf8.RuneError && size == 1) && !unicode.IsControl(r) && !unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			i += size
			continue
		}
		if out == nil {
			out = buf
		}
		out = labelvalue.AppendVisible(append(out, p[done:i]...), string(p[i:i+size]))
		n++
		i += size
		done = i
	}
	if out == nil {
		return p, 0
	}
	return append(out, p[done:]...), n
}

// row is a table row of label and value.
type row struct{ K, V string }

// titled is a chart or table under a heading.
type titled struct {
	Name  string
	Chart template.HTML
	Rows  [][]string
	Note  string
}

type view struct {
	Title     string
	Generated string
	Job       []row
	App       *appView
	Srv       *srvView
	Verdicts  [][]string
	Outcomes  []string
	VerdictNo string
	Paths     bool
	n         int
}

// id returns a new chart id, unique within the page.
func (v *view) id() string {
	v.n++
	return "c" + strconv.Itoa(v.n)
}

type appView struct {
	Logs        [][]string
	Copies      []string
	Notes       []string
	IOCost      template.HTML
	IOCostRows  [][]string
	IOTime      template.HTML
	ModBytes    template.HTML
	ModOps      template.HTML
	ModRows     [][]string
	Ops         []titled
	Sizes       []titled
	Pattern     []titled
	Common      []titled
	FS          template.HTML
	FSRows      [][]string
	FileCounts  []titled
	Perf        [][]string
	Heatmaps    []titled
	DXTLeftOut  string
	Files       int
	TopFiles    template.HTML
	TopRows     [][]string
	Fired       []insightView
	NotFired    int
	Undecided   string
	JobSignals  [][]string
	POSIXSignal [][]string
}

type insightView struct {
	Code, Level, Message string
	Numbers              string
	Recommendations      []string
	Files                []string
	MoreFiles            int
	rank                 int // levelRank of the level
}

type srvView struct {
	Summary    []row
	Notes      []string
	Coverage   bool
	CovRows    [][]string
	Rates      template.HTML
	RateRows   [][]string
	RateHead   []string
	OSTBytes   template.HTML
	OSTShare   template.HTML
	OSTRows    [][]string
	RPC        template.HTML
	RPCRows    []row
	MDTRates   template.HTML
	MDTRateRow [][]string
	MDTHead    []string
	MDTOps     template.HTML
	MDTRows    [][]string
	Alerts     [][]string
}

func build(r *report.Report) *view {
	v := &view{Title: "I/O report of job " + shown(r.Job.JobID), Paths: !r.PathsHidden}
	if !r.Generated.T.IsZero() {
		v.Generated = utc(r.Generated.T)
	}
	j := r.Job
	uid := "unknown"
	if j.UID != nil {
		uid = strconv.FormatInt(*j.UID, 10)
	}
	exe := strings.Join(shownAll(j.Exe), ", ")
	if exe == "" {
		exe = "unknown"
	}
	v.Job = []row{{"Job id", shown(j.JobID)}, {"User id", uid}, {"Executable", exe}, {"Processes", count(j.Processes)}}
	if j.Start != nil {
		v.Job = append(v.Job, row{"Start", utc(j.Start.T)})
	}
	if j.End != nil {
		v.Job = append(v.Job, row{"End", utc(j.End.T)})
	}
	v.Job = append(v.Job, row{"Run time", seconds(j.RunTime)})
	if r.App != nil {
		v.App = buildApp(v, r)
	}
	if r.Servers != nil {
		v.Srv = buildServers(v, r.Servers)
	}
	for _, vd := range r.Verdicts {
		v.Verdicts = append(v.Verdicts, []string{strings.Join(shownAll(vd.Codes), ", "), shown(vd.Insight), quantity(vd.App), quantity(vd.Server), shown(vd.Outcome), shown(vd.Why)})
	}
	switch {
	case len(r.Verdicts) > 0:
	case r.App == nil || r.Servers == nil:
		v.VerdictNo = "No verdicts: they need both the application's and the servers' view."
	default:
		v.VerdictNo = "No verdicts: no insight fired that the servers' numbers bear on."
	}
	return v
}

func quantity(q report.Quantity) string {
	s := shown(q.Name) + ": " + value(q.Value, plain)
	if q.Unit != "" && q.Value.OK {
		s += " " + shown(q.Unit)
	}
	return s
}

func buildApp(v *view, r *report.Report) *appView {
	a := r.App
	av := &appView{Files: a.Files, Copies: shownAll(a.Copies), Notes: shownAll(a.Notes)}
	for _, l := range a.Logs {
		var mods []string
		for _, m := range l.Modules {
			s := shown(m.Name) + " v" + strconv.FormatUint(uint64(m.Version), 10) + " (" + bytesIEC(float64(m.Bytes)) + ")"
			if m.Partial {
				s += " PARTIAL"
			}
			mods = append(mods, s)
		}
		av.Logs = append(av.Logs, []string{shown(l.File), shown(l.Version) + " / " + shown(l.LibVersion), shown(l.Exe), count(l.Processes),
			utc(l.Start.T), utc(l.End.T), seconds(l.RunTime), strings.Join(mods, ", ")})
	}

	var names []string
	var cr, cw, cm, tr, tw, tm, br, bw, ops []float64
	for _, m := range a.Modules {
		name := shown(m.Name)
		names = append(names, name)
		cr = append(cr, m.IOCost.Read)
		cw = append(cw, m.IOCost.Write)
		cm = append(cm, m.IOCost.Meta)
		sum := m.Time.Read + m.Time.Write + m.Time.Meta
		tr = append(tr, share(m.Time.Read, sum))
		tw = append(tw, share(m.Time.Write, sum))
		tm = append(tm, share(m.Time.Meta, sum))
		br = append(br, m.BytesRead)
		bw = append(bw, m.BytesWritten)
		var n int64
		for _, o := range m.Operations {
			n += o.Count
		}
		ops = append(ops, float64(n))
		cost := m.IOCost.Read + m.IOCost.Write + m.IOCost.Meta
		av.IOCostRows = append(av.IOCostRows, []string{name, seconds(m.IOCost.Read), seconds(m.IOCost.Write), seconds(m.IOCost.Meta),
			seconds(cost), percent(share(cost, r.Job.RunTime)), seconds(m.Time.Read), seconds(m.Time.Write), seconds(m.Time.Meta)})
		av.ModRows = append(av.ModRows, []string{name, count(int64(m.Records)), bytesIEC(m.BytesRead), bytesIEC(m.BytesWritten), count(n)})
	}
	rwm := func(r, w, m []float64) []series {
		return []series{{"read", "read", r}, {"write", "write", w}, {"metadata", "meta", m}}
	}
	if len(names) > 0 {
		av.IOCost = (&barChart{ID: v.id(), Title: "I/O cost: time per process by module", Unit: "seconds per process (the modules' time summed over processes, divided by " + count(r.Job.Processes) + ")",
			Labels: names, Series: rwm(cr, cw, cm), Stacked: true, Fmt: seconds, TickFmt: secondsTick}).draw()
		av.IOTime = (&barChart{ID: v.id(), Title: "I/O time split by module", Unit: "share of the module's I/O time (%)",
			Labels: names, Series: rwm(tr, tw, tm), Stacked: true, Fmt: percent, Max: 1}).draw()
		av.ModBytes = (&barChart{ID: v.id(), Title: "Bytes by module", Unit: "bytes",
			Labels: names, Series: []series{{"read", "read", br}, {"written", "write", bw}}, Stacked: true, Fmt: bytesIEC, Binary: true, W: sideW}).draw()
		av.ModOps = (&barChart{ID: v.id(), Title: "Operations by module", Unit: "operations",
			Labels: names, Series: []series{{"operations", "c0", ops}}, Fmt: si, W: sideW}).draw()
	}
	for _, m := range a.Modules {
		name := shown(m.Name)
		if len(m.Operations) > 0 {
			var ls []string
			var vs []float64
			for _, o := range m.Operations {
				ls = append(ls, shown(o.Name))
				vs = append(vs, float64(o.Count))
			}
			av.Ops = append(av.Ops, titled{Name: name, Chart: (&barChart{ID: v.id(), Title: name + " operation counts", Unit: "operations",
				Labels: ls, Series: []series{{"operations", "c0", vs}}, Fmt: si, W: sideW}).draw()})
		}
		if h := m.AccessSizes; h != nil {
			rd, wr := make([]float64, len(h.Bins)), make([]float64, len(h.Bins))
			for i := range h.Bins {
				if i < len(h.Read) {
					rd[i] = float64(h.Read[i])
				}
				if i < len(h.Write) {
					wr[i] = float64(h.Write[i])
				}
			}
			av.Sizes = append(av.Sizes, titled{Name: name, Chart: (&barChart{ID: v.id(), Title: name + " access sizes", Unit: "requests (request size in bytes on the left)",
				Labels: shownAll(h.Bins), Series: []series{{"read", "read", rd}, {"write", "write", wr}}, Fmt: si, W: sideW}).draw()})
		}
		if p := m.Pattern; p != nil {
			ls := []string{"all", "sequential", "consecutive"}
			av.Pattern = append(av.Pattern, titled{Name: name, Chart: (&barChart{ID: v.id(), Title: name + " access pattern", Unit: "operations",
				Labels: ls, Series: []series{
					{"read", "read", []float64{float64(p.Reads), float64(p.SequentialReads), float64(p.ConsecutiveReads)}},
					{"write", "write", []float64{float64(p.Writes), float64(p.SequentialWrites), float64(p.ConsecutiveWrites)}}},
				Fmt: si, W: sideW}).draw()})
		}
		if len(m.CommonAccess) > 0 {
			t := titled{Name: name}
			for _, c := range m.CommonAccess {
				size := shown(c.Name)
				if n, err := strconv.ParseFloat(c.Name, 64); err == nil {
					size = count(int64(n)) + nb + "B (" + bytesIEC(n) + ")"
				}
				t.Rows = append(t.Rows, []string{size, count(c.Count)})
			}
			av.Common = append(av.Common, t)
		}
		if len(m.FileCounts) > 0 {
			t := titled{Name: name}
			for _, c := range m.FileCounts {
				off := "–"
				if c.MaxOffset >= 0 {
					off = bytesIEC(float64(c.MaxOffset))
				}
				t.Rows = append(t.Rows, []string{shown(strings.ReplaceAll(c.Category, "_", " ")), count(c.Files), bytesIEC(float64(c.BytesRead)), bytesIEC(float64(c.BytesWritten)), off})
			}
			av.FileCounts = append(av.FileCounts, t)
		}
		if p := m.Perf; p != nil {
			av.Perf = append(av.Perf, []string{name, bytesIEC(float64(p.Bytes)), seconds(p.SlowestUniqueTime), seconds(p.SlowestSharedTime),
				seconds(p.Time), value(p.BytesPerSecond, func(x float64) string { return bytesIEC(x) + "/s" }), seconds(p.SlowestRankMetaTime)})
		}
	}

	if len(a.FileSystems) > 0 {
		var ls []string
		var rd, wr []float64
		for _, fs := range a.FileSystems {
			ls = append(ls, shorten(shown(fs.Mount), 40))
			rd = append(rd, float64(fs.BytesRead))
			wr = append(wr, float64(fs.BytesWritten))
			av.FSRows = append(av.FSRows, []string{shown(fs.Mount), shown(fs.Type), bytesIEC(float64(fs.BytesRead)), bytesIEC(float64(fs.BytesWritten)), count(int64(fs.FilesRead)), count(int64(fs.FilesWritten))})
		}
		full := make([]string, len(a.FileSystems))
		for i, fs := range a.FileSystems {
			full[i] = shown(fs.Mount)
		}
		av.FS = (&barChart{ID: v.id(), Title: "Data access by file system", Unit: "bytes",
			Labels: ls, Full: full, Series: []series{{"read", "read", rd}, {"written", "write", wr}}, Stacked: true, Fmt: bytesIEC, Binary: true}).draw()
	}

	if len(a.DXTLeftOut) > 0 {
		var logs []string
		for _, lo := range a.DXTLeftOut {
			logs = append(logs, shown(lo.File)+" ("+shown(lo.Region)+", a memory budget of "+bytesIEC(float64(lo.MemoryBudget))+")")
		}
		av.DXTLeftOut = "reading the DXT traces of " + strings.Join(logs, ", ") + " would pass the log's memory budget: the report left them out, " +
			"and draws no heatmap from DXT. Nothing else on this page reads the traces. To draw it, make the report again with a larger --max-log-memory."
	}
	for i := range a.Heatmaps {
		h := &a.Heatmaps[i]
		layer := shown(h.Layer) + " (" + shown(h.Source) + ")"
		t := titled{Name: layer}
		t.Chart = (&heatChart{ID: v.id(), Title: "Heatmap of " + layer, H: h}).draw()
		t.Note = "Bins of " + seconds(h.BinWidth) + " from " + utc(h.Start.T) + "; cells of " + seconds(h.ColumnWidth) + "."
		var sig []string
		for _, s := range h.Signals {
			sig = append(sig, shown(s.Name)+" = "+value(s.Value, plain))
		}
		if len(sig) > 0 {
			t.Note += " Signals: " + strings.Join(sig, ", ") + "."
		}
		// The bytes per bin, folded to at most 60 rows for the table.
		n := len(h.Read)
		if len(h.Write) > n {
			n = len(h.Write)
		}
		per := (n + 59) / 60
		if per < 1 {
			per = 1
		}
		for b0 := 0; b0 < n; b0 += per {
			var rd, wr int64
			for k := b0; k < b0+per && k < n; k++ {
				if k < len(h.Read) {
					rd += h.Read[k]
				}
				if k < len(h.Write) {
					wr += h.Write[k]
				}
			}
			end := math.Min(float64(b0+per), float64(n)) * h.BinWidth
			t.Rows = append(t.Rows, []string{trimNum(float64(b0)*h.BinWidth, 4) + "–" + trimNum(end, 4), bytesIEC(float64(rd)), bytesIEC(float64(wr))})
		}
		av.Heatmaps = append(av.Heatmaps, t)
	}

	if len(a.TopFiles) > 0 {
		var ls, full []string
		var rd, wr []float64
		for _, fl := range a.TopFiles {
			name := shown(fl.ID)
			if !r.PathsHidden && fl.Path != "" {
				name = shown(fl.Path)
			}
			ls = append(ls, shorten(name, 44))
			full = append(full, name)
			rd = append(rd, float64(fl.BytesRead))
			wr = append(wr, float64(fl.BytesWritten))
			ranks := count(int64(fl.Ranks)) + " rank records"
			if fl.Shared {
				ranks += ", shared"
			}
			av.TopRows = append(av.TopRows, []string{name, strings.Join(shownAll(fl.Modules), ", "), bytesIEC(float64(fl.BytesRead)), bytesIEC(float64(fl.BytesWritten)), ranks})
		}
		av.TopFiles = (&barChart{ID: v.id(), Title: "Files that moved the most bytes", Unit: "bytes",
			Labels: ls, Full: full, Series: []series{{"read", "read", rd}, {"written", "write", wr}}, Stacked: true, Fmt: bytesIEC, Binary: true}).draw()
	}

	for _, in := range a.Insights {
		if !in.Fired {
			av.NotFired++
			continue
		}
		iv := insightView{Code: shown(in.Code), Level: shown(in.Level), Message: shown(in.Message), Recommendations: shownAll(in.Recommendations), rank: levelRank(in.Level)}
		if in.Value.OK || in.Threshold.OK {
			iv.Numbers = "value " + value(in.Value, plain) + " against threshold " + value(in.Threshold, plain)
		}
		if in.CountThreshold.OK {
			iv.Numbers += "; count " + value(in.Count, plain) + " against " + value(in.CountThreshold, plain)
		}
		if !r.PathsHidden {
			files := in.Files
			if len(files) > 10 {
				iv.MoreFiles = len(files) - 10
				files = files[:10]
			}
			iv.Files = shownAll(files)
		}
		av.Fired = append(av.Fired, iv)
	}
	sort.SliceStable(av.Fired, func(i, j int) bool { return av.Fired[i].rank < av.Fired[j].rank })
	av.Undecided = strings.Join(shownAll(a.InsightsUndecided), ", ")
	for _, s := range a.JobSignals {
		av.JobSignals = append(av.JobSignals, []string{shown(s.Name), value(s.Value, plain)})
	}
	for _, s := range a.POSIXSignals {
		av.POSIXSignal = append(av.POSIXSignal, []string{shown(s.Name), value(s.Value, plain)})
	}
	return av
}

func levelRank(l string) int {
	switch strings.ToUpper(l) {
	case "HIGH":
		return 0
	case "WARN", "WARNING":
		return 1
	case "INFO":
		return 2
	}
	return 3
}

// sideW is the width of the drawing of a chart set beside another.
const sideW = 460.0

func share(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return part / whole
}

func buildServers(v *view, s *report.Servers) *srvView {
	sv := &srvView{Coverage: s.CoverageLow, Notes: shownAll(s.Notes)}
	perS := func(x float64) string { return bytesIEC(x) + "/s" }
	found := "no"
	if s.Found {
		found = "yes"
	}
	rules := "none (raw series)"
	if len(s.Rules) > 0 {
		rules = strings.Join(shownAll(s.Rules), ", ")
	}
	sv.Summary = []row{
		{"Prometheus", shown(s.Prometheus)},
		{"Window", utc(s.From.T) + " to " + utc(s.To.T) + " (" + windowSource(s.Window) + "), step " + seconds(s.Step)},
		{"job_stats series found", found},
		{"Recording rules used", rules},
		{"Bytes read", value(s.ReadBytes, bytesIEC)},
		{"Bytes written", value(s.WriteBytes, bytesIEC)},
		{"Read RPCs", value(s.ReadRPCs, plain)},
		{"Write RPCs", value(s.WriteRPCs, plain)},
		{"Bytes per read RPC", value(s.ReadPerRPC, bytesIEC)},
		{"Bytes per write RPC", value(s.WritePerRPC, bytesIEC)},
		{"MDT operations", value(s.MDTOps, plain)},
		{"Peak MDT operation rate (5 min)", value(s.PeakMDTRate, func(x float64) string { return si(x) + " op/s" })},
	}
	sv.RPCRows = []row{{"Bytes per read RPC, all OSTs", value(s.ReadPerRPC, bytesIEC)}, {"Bytes per write RPC, all OSTs", value(s.WritePerRPC, bytesIEC)}}
	pct := func(x report.Value) string { return value(x, percent) }
	for _, o := range s.OSTs {
		sv.CovRows = append(sv.CovRows, []string{shown(o.Target), pct(o.Coverage), pct(o.MinCoverage)})
	}
	for _, m := range s.MDTs {
		sv.CovRows = append(sv.CovRows, []string{shown(m.Target), pct(m.Coverage), pct(m.MinCoverage)})
	}

	if len(s.Rates.Times) > 0 {
		var tab [][]string
		sv.Rates, sv.RateHead, tab = lines(v, "Job's read and write rates", "bytes per second", s.Rates, perS, true)
		sv.RateRows = tab
	}
	if len(s.MDTRates.Times) > 0 {
		var tab [][]string
		sv.MDTRates, sv.MDTHead, tab = lines(v, "Job's MDT operations over time", "operations per second", s.MDTRates, func(x float64) string { return si(x) + " op/s" }, false)
		sv.MDTRateRow = tab
	}
	if len(s.OSTs) > 0 {
		var ls []string
		var rd, wr, sh, pk, rr, wrr []float64
		for _, o := range s.OSTs {
			ls = append(ls, shown(o.Target))
			rd = append(rd, num(o.ReadBytes))
			wr = append(wr, num(o.WriteBytes))
			sh = append(sh, num(o.Share))
			pk = append(pk, num(o.PeakShare))
			rr = append(rr, num(o.ReadPerRPC))
			wrr = append(wrr, num(o.WritePerRPC))
			sv.OSTRows = append(sv.OSTRows, []string{shown(o.Target), value(o.ReadBytes, bytesIEC), value(o.WriteBytes, bytesIEC), value(o.ReadRPCs, plain), value(o.WriteRPCs, plain),
				value(o.ReadPerRPC, bytesIEC), value(o.WritePerRPC, bytesIEC), pct(o.Share), pct(o.PeakShare)})
		}
		sv.OSTBytes = (&barChart{ID: v.id(), Title: "Job's bytes per OST", Unit: "bytes", Labels: ls,
			Series: []series{{"read", "read", rd}, {"written", "write", wr}}, Stacked: true, Fmt: bytesIEC, Binary: true, W: sideW}).draw()
		maxShare := 0.0
		for i := range sh {
			maxShare = math.Max(maxShare, math.Max(sh[i], pk[i]))
		}
		sv.OSTShare = (&barChart{ID: v.id(), Title: "Job's share of each OST's bytes", Unit: "share of the OST's bytes in the window (%)", Labels: ls,
			Series: []series{{"over the window", "c0", sh}, {"peak over 5 minutes", "c1", pk}}, Fmt: percent, Max: math.Max(1, maxShare), W: sideW}).draw()
		sv.RPC = (&barChart{ID: v.id(), Title: "Bytes per RPC by OST", Unit: "bytes per RPC", Labels: ls,
			Series: []series{{"read", "read", rr}, {"write", "write", wrr}}, Fmt: bytesIEC, Binary: true}).draw()
	}
	if len(s.MDTOperations) > 0 {
		var ls []string
		var vs []float64
		for _, c := range s.MDTOperations {
			ls = append(ls, shown(c.Name))
			vs = append(vs, float64(c.Count))
		}
		sv.MDTOps = (&barChart{ID: v.id(), Title: "Job's MDT operations by type", Unit: "operations in the window", Labels: ls,
			Series: []series{{"operations", "c0", vs}}, Fmt: si}).draw()
	}
	for _, m := range s.MDTs {
		sv.MDTRows = append(sv.MDTRows, []string{shown(m.Target), value(m.Operations, plain), pct(m.Coverage), pct(m.MinCoverage)})
	}
	for _, al := range s.Alerts {
		keys := make([]string, 0, len(al.Labels))
		for k := range al.Labels {
			if k != "alertname" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var ls []string
		for _, k := range keys {
			ls = append(ls, shown(k)+"="+shown(al.Labels[k]))
		}
		sv.Alerts = append(sv.Alerts, []string{shown(al.Name), strings.Join(ls, ", "), utc(al.First.T), utc(al.Last.T)})
	}
	return sv
}

func num(v report.Value) float64 {
	if !v.OK {
		return 0
	}
	return v.V
}

// lines draws a series set as a line chart and returns it with its table.
func lines(v *view, title, unit string, s report.Series, fm func(float64) string, binary bool) (template.HTML, []string, [][]string) {
	keys := make([]string, 0, len(s.Values))
	for k := range s.Values {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return seriesOrder(keys[i]) < seriesOrder(keys[j]) || seriesOrder(keys[i]) == seriesOrder(keys[j]) && keys[i] < keys[j]
	})
	lc := &lineChart{ID: v.id(), Title: title, Unit: unit, Times: s.Times, Fmt: fm, Binary: binary}
	for i, k := range keys {
		cls := "c" + strconv.Itoa(i%6)
		switch k {
		case "read":
			cls = "read"
		case "write", "written":
			cls = "write"
		}
		lc.Series = append(lc.Series, lineSeries{Name: shown(k), Class: cls, Vals: s.Values[k]})
	}
	head := append([]string{"time (UTC)"}, shownAll(keys)...)
	tab := make([][]string, 0, len(s.Times))
	for i, t := range s.Times {
		r := make([]string, 0, len(keys)+1)
		r = append(r, time.Unix(int64(t), 0).UTC().Format("2006-01-02 15:04:05"))
		for _, k := range keys {
			vals := s.Values[k]
			if i < len(vals) {
				r = append(r, value(vals[i], fm))
			} else {
				r = append(r, "n/a")
			}
		}
		tab = append(tab, r)
	}
	return lc.draw(), head, tab
}

func seriesOrder(k string) int {
	switch k {
	case "read":
		return 0
	case "write", "written":
		return 1
	}
	return 2
}

// windowSource says in words where the servers' window comes from.
func windowSource(w string) string {
	switch w {
	case "logs":
		return "the logs' start and end"
	case "logs_to_now":
		return "the logs' start to the time of the report: the servers had none of the job's traffic while its logs ran"
	case "flags":
		return "--from and --to"
	}
	return "from the " + shown(w)
}
