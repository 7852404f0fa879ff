package page

import (
	"html/template"
	"strings"
	"sync"
)

// tabView is a table: its head and rows.
type tabView struct {
	Head []string
	Rows [][]string
}

var funcs = template.FuncMap{
	"tab":   func(head string, rows [][]string) tabView { return tabView{Head: strings.Split(head, "|"), Rows: rows} },
	"tabh":  func(head []string, rows [][]string) tabView { return tabView{Head: head, Rows: rows} },
	"lower": strings.ToLower,
	"words": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
}

// The colours: light by default, dark under prefers-color-scheme, light
// again (and no backgrounds) in print. The read, write and metadata
// colours keep apart for the common colour blindnesses (blue, orange,
// grey).
const css = `
:root{--bg:#fff;--fg:#1b1b1b;--muted:#5b6168;--panel:#f4f6f8;--grid:#e1e4e8;--rule:#c9ced4;
--read:#2166ac;--write:#e08214;--meta:#8c8c8c;--c0:#4c72b0;--c1:#dd8452;--c2:#55a868;--c3:#c44e52;--c4:#8172b3;--c5:#937860;
--heat:#08306b;--high:#b2182b;--warn:#9a6700;--info:#1f5fa8;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--bg:#14171b;--fg:#e6e8eb;--muted:#9aa3ad;--panel:#1d2228;--grid:#2e353d;--rule:#444c56;
--read:#6baed6;--write:#fdb863;--meta:#b0b0b0;--c0:#8fb0e0;--c1:#f0a878;--c2:#8ccf9b;--c3:#e88c8f;--c4:#b3a6e0;--c5:#c9ad94;
--heat:#c6dbef;--high:#ff7b72;--warn:#e3b341;--info:#79c0ff;--ok:#56d364}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--fg)}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;max-width:1100px;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.6rem;margin:.5rem 0 0}
h2{font-size:1.3rem;border-bottom:2px solid var(--rule);padding-bottom:.2rem;margin-top:2.2rem}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
h4{font-size:.95rem;margin:1rem 0 .3rem}
p.meta,.muted{color:var(--muted)}
p.missing{color:var(--muted);font-style:italic}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.88rem;max-width:100%}
th,td{border-bottom:1px solid var(--grid);padding:.2rem .6rem;text-align:left;vertical-align:top}
th{font-weight:600;border-bottom:1px solid var(--rule)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td{overflow-wrap:break-word}td:first-child{overflow-wrap:anywhere}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1.2rem;margin:.5rem 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
svg.chart{width:100%;max-width:820px;height:auto;display:block;margin:.4rem 0;font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg.chart text{fill:var(--fg)}
svg.chart .ctitle{font-weight:600;font-size:13px}
svg.chart .tick,svg.chart .value{fill:var(--muted);font-size:11px}
svg.chart .axis{fill:var(--muted);font-size:11.5px}
svg.chart .grid{stroke:var(--grid);stroke-width:1}
svg.chart .axisline{stroke:var(--rule);stroke-width:1}
.read{fill:var(--read);stroke:var(--read)}.write{fill:var(--write);stroke:var(--write)}.meta{fill:var(--meta);stroke:var(--meta)}
.c0{fill:var(--c0);stroke:var(--c0)}.c1{fill:var(--c1);stroke:var(--c1)}.c2{fill:var(--c2);stroke:var(--c2)}
.c3{fill:var(--c3);stroke:var(--c3)}.c4{fill:var(--c4);stroke:var(--c4)}.c5{fill:var(--c5);stroke:var(--c5)}
svg.chart rect{stroke:none}
svg.chart g.line{fill:none}svg.chart g.line polyline{fill:none;stroke-width:2;stroke-linejoin:round}
svg.chart g.line .dot{stroke-width:3}
.hbg{fill:var(--panel)}
.h1,.h2,.h3,.h4,.h5,.h6,.h7,.h8{fill:var(--heat);shape-rendering:crispEdges}
.h1{fill-opacity:.12}.h2{fill-opacity:.22}.h3{fill-opacity:.33}.h4{fill-opacity:.45}.h5{fill-opacity:.57}.h6{fill-opacity:.7}.h7{fill-opacity:.84}.h8{fill-opacity:1}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:0 1.5rem}
details{margin:.2rem 0 1rem}summary{cursor:pointer;color:var(--muted)}
.insight{border-left:4px solid var(--info);background:var(--panel);padding:.5rem .8rem;margin:.6rem 0}
.insight.high{border-color:var(--high)}.insight.warn{border-color:var(--warn)}.insight.ok{border-color:var(--ok)}
.lvl{font-weight:700;font-size:.8rem;letter-spacing:.04em}
.insight.high .lvl{color:var(--high)}.insight.warn .lvl{color:var(--warn)}.insight.info .lvl{color:var(--info)}.insight.ok .lvl{color:var(--ok)}
.insight ul{margin:.3rem 0 .2rem;padding-left:1.3rem}
.alert{border:2px solid var(--warn);padding:.5rem .8rem;margin:.6rem 0}
.outcome{font-weight:600;white-space:nowrap}.outcome.confirms{color:var(--ok)}.outcome.contradicts{color:var(--high)}
code,.path{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.85em}
@media print{
:root{--bg:#fff;--fg:#000;--muted:#444;--panel:#f2f2f2;--grid:#ccc;--rule:#888;
--read:#2166ac;--write:#e08214;--meta:#8c8c8c;--heat:#08306b;--high:#b2182b;--warn:#9a6700;--info:#1f5fa8;--ok:#1a7f37}
body{max-width:none;padding:0;font-size:10.5pt}
h2{break-after:avoid}h3,h4{break-after:avoid}
svg.chart,table,.insight{break-inside:avoid}
svg.chart{max-width:17cm}
details>summary{display:none}
details::details-content{content-visibility:visible;display:contents}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
`

// pageTmpl is parsed on first use, not at start-up: the binary's other
// commands (darshan dump, the exporter) never write a page, and parsing
// it cost every process of theirs 0.3-0.5 ms and 1,700 allocations.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(funcs).Parse(pageText))
})

const pageText = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>` + css + `</style>
</head><body>
<header><h1>{{.Title}}</h1>
<p class="meta">hpcio_exporter report{{if .Generated}}, made {{.Generated}}{{end}}. The application's view is what the job's Darshan logs say it asked for; the servers' view what the Lustre servers counted for the same job id.</p></header>

<section id="job"><h2>Job</h2>
<dl class="kv">{{range .Job}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}</dl>
</section>

<section id="application"><h2>The application's view</h2>
{{with .App}}
<section id="logs"><h3>Darshan logs</h3>
{{template "table" (tab "Log|Format / library|Executable|Processes|Start|End|Run time|Modules (compressed size)" .Logs)}}
{{if .Copies}}<p>Copies of another log, not summed again: {{range $i, $c := .Copies}}{{if $i}}, {{end}}<span class="path">{{$c}}</span>{{end}}.</p>{{end}}
{{range .Notes}}<p class="muted">{{.}}</p>{{end}}
</section>

<section id="heatmap"><h3>Heatmaps</h3>
{{if .DXTLeftOut}}<p class="alert" id="dxt-left-out"><strong>DXT traces left out:</strong> {{.DXTLeftOut}}</p>{{end}}
{{range .Heatmaps}}<h4>{{.Name}}</h4>{{.Chart}}<p class="muted">{{.Note}}</p>
<details><summary>Bytes per time bin, all ranks</summary>{{template "table" (tab "Seconds since start|Bytes read|Bytes written" .Rows)}}</details>
{{else}}{{if not .DXTLeftOut}}<p class="missing">The logs have no HEATMAP module (Darshan 3.4 and later) and no DXT trace.</p>{{end}}{{end}}
</section>

<section id="insights"><h3>Insights</h3>
{{range .Fired}}<div class="insight {{lower .Level}}"><span class="lvl">{{.Level}}</span> <code>{{.Code}}</code> {{.Message}}
{{if .Numbers}}<div class="muted">{{.Numbers}}</div>{{end}}
{{if .Recommendations}}<ul>{{range .Recommendations}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Files}}<details><summary>Files</summary><ul>{{range .Files}}<li class="path">{{.}}</li>{{end}}{{if .MoreFiles}}<li>and {{.MoreFiles}} more</li>{{end}}</ul></details>{{end}}
</div>
{{else}}<p class="missing">No insight fired.</p>{{end}}
<p class="muted">{{.NotFired}} other insights were decided and did not fire.{{if .Undecided}} The logs could not decide: {{.Undecided}}.{{end}}</p>
</section>

<section id="io-cost"><h3>I/O cost</h3>
{{if .IOCost}}{{.IOCost}}
{{template "table" (tab "Module|Read s/process|Write s/process|Metadata s/process|Total s/process|Share of run time|Read s, all processes|Write s, all processes|Metadata s, all processes" .IOCostRows)}}
{{else}}<p class="missing">The logs have no module with I/O.</p>{{end}}
</section>

<section id="io-time"><h3>I/O time split by module</h3>
{{if .IOTime}}{{.IOTime}}{{else}}<p class="missing">The logs have no module with I/O.</p>{{end}}
</section>

<section id="module-bytes"><h3>Bytes and operations by module</h3>
{{if .ModBytes}}<div class="grid2"><div>{{.ModBytes}}</div><div>{{.ModOps}}</div></div>
{{template "table" (tab "Module|Records|Bytes read|Bytes written|Operations" .ModRows)}}
{{else}}<p class="missing">The logs have no module with I/O.</p>{{end}}
</section>

<section id="operation-counts"><h3>Operation counts</h3>
{{if .Ops}}<div class="grid2">{{range .Ops}}<div>{{.Chart}}</div>{{end}}</div>{{else}}<p class="missing">No module counts operations in these logs.</p>{{end}}
</section>

<section id="access-sizes"><h3>Access sizes</h3>
{{if .Sizes}}<div class="grid2">{{range .Sizes}}<div>{{.Chart}}</div>{{end}}</div>{{else}}<p class="missing">No module of these logs counts request sizes.</p>{{end}}
</section>

<section id="access-pattern"><h3>Access pattern</h3>
{{if .Pattern}}<p class="muted">Sequential: at a higher offset than the previous operation; consecutive: right after it.</p><div class="grid2">{{range .Pattern}}<div>{{.Chart}}</div>{{end}}</div>{{else}}<p class="missing">No module of these logs records its access pattern.</p>{{end}}
</section>

<section id="common-access"><h3>Common access sizes</h3>
{{if .Common}}<div class="grid2">{{range .Common}}<div><h4>{{.Name}}</h4>{{template "table" (tab "Access size|Count" .Rows)}}</div>{{end}}</div>{{else}}<p class="missing">No module of these logs records common access sizes.</p>{{end}}
</section>

<section id="file-systems"><h3>Data access by file system</h3>
{{if .FS}}{{.FS}}
{{template "table" (tab "Mount point|Type|Bytes read|Bytes written|Files read|Files written" .FSRows)}}
{{else}}<p class="missing">No POSIX or STDIO record in these logs.</p>{{end}}
</section>

<section id="file-counts"><h3>File counts and performance estimate</h3>
{{if .FileCounts}}<div class="grid2">{{range .FileCounts}}<div><h4>{{.Name}}</h4>{{template "table" (tab "Files|Count|Bytes read|Bytes written|Largest offset" .Rows)}}</div>{{end}}</div>{{else}}<p class="missing">No module of these logs has file counts.</p>{{end}}
{{if .Perf}}<h4>Performance estimate (darshan-util's, by the slowest rank)</h4>
{{template "table" (tab "Module|Bytes|Slowest rank, unique files|Slowest rank, shared files|Time|Bandwidth|Slowest rank, metadata" .Perf)}}{{end}}
</section>

<section id="top-files"><h3>Files that moved the most bytes</h3>
<p>{{.Files}} distinct files have a record{{if not $.Paths}}; paths are hidden (--no-paths), files are named by their record id{{end}}.</p>
{{if .TopFiles}}{{.TopFiles}}
{{template "table" (tab "File|Modules|Bytes read|Bytes written|Ranks" .TopRows)}}
{{else}}<p class="missing">No file moved a byte.</p>{{end}}
</section>

<section id="signals"><h3>Signals</h3>
<div class="grid2"><div><h4>Job</h4>{{template "table" (tab "Signal|Value" .JobSignals)}}</div>
<div><h4>POSIX access pattern</h4>{{if .POSIXSignal}}{{template "table" (tab "Signal|Value" .POSIXSignal)}}{{else}}<p class="missing">No POSIX record.</p>{{end}}</div></div>
</section>
{{else}}<p class="missing">No application's view: the report was made without Darshan logs.</p>
{{end}}
</section>

<section id="servers"><h2>The servers' view</h2>
{{with .Srv}}
<section id="servers-summary"><h3>What the servers counted</h3>
<dl class="kv">{{range .Summary}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}</dl>
{{range .Notes}}<p class="muted">{{.}}</p>{{end}}
</section>

<section id="servers-coverage"><h3>job_stats coverage</h3>
{{if .Coverage}}<p class="alert"><strong>Coverage low:</strong> job_stats missed more than a tenth of the traffic of one of the job's targets while it ran; the per-job numbers are low by as much.</p>
{{else}}<p>job_stats coverage was not low on the job's targets while it ran.</p>{{end}}
{{if .CovRows}}{{template "table" (tab "Target|Coverage over the window|Lowest over 5 minutes" .CovRows)}}{{end}}
</section>

<section id="servers-rates"><h3>Read and write rates</h3>
{{if .Rates}}{{.Rates}}<details><summary>Numbers</summary>{{template "table" (tabh .RateHead .RateRows)}}</details>
{{else}}<p class="missing">Prometheus has no rate of this job in the window.</p>{{end}}
</section>

<section id="servers-osts"><h3>Bytes per OST and share of each OST</h3>
{{if .OSTBytes}}<div class="grid2"><div>{{.OSTBytes}}</div><div>{{.OSTShare}}</div></div>
{{template "table" (tab "OST|Bytes read|Bytes written|Read RPCs|Write RPCs|Bytes per read RPC|Bytes per write RPC|Share|Peak share (5 min)" .OSTRows)}}
{{else}}<p class="missing">No OST counted bytes of this job in the window.</p>{{end}}
</section>

<section id="servers-rpc"><h3>Bytes per RPC</h3>
<dl class="kv">{{range .RPCRows}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}</dl>
{{if .RPC}}{{.RPC}}{{else}}<p class="missing">No OST counted RPCs of this job in the window.</p>{{end}}
</section>

<section id="servers-mdt"><h3>MDT operations</h3>
{{if .MDTRates}}{{.MDTRates}}<details><summary>Numbers</summary>{{template "table" (tabh .MDTHead .MDTRateRow)}}</details>
{{else}}<p class="missing">Prometheus has no MDT operation rate of this job in the window.</p>{{end}}
{{if .MDTOps}}{{.MDTOps}}{{end}}
{{if .MDTRows}}{{template "table" (tab "MDT|Operations|Coverage over the window|Lowest over 5 minutes" .MDTRows)}}{{end}}
</section>

<section id="servers-alerts"><h3>Alerts</h3>
{{if .Alerts}}{{template "table" (tab "Alert|Labels|First seen firing|Last seen firing" .Alerts)}}
{{else}}<p>No alert fired for this job in the window.</p>{{end}}
</section>
{{else}}<p class="missing">No servers' view: the report was made without Prometheus (--prometheus.url).</p>
{{end}}
</section>

<section id="verdicts"><h2>Do the servers confirm or contradict?</h2>
{{if .Verdicts}}<table><thead><tr><th>Insights</th><th>What</th><th>Application</th><th>Servers</th><th>Outcome</th><th>Why</th></tr></thead><tbody>
{{range .Verdicts}}<tr>{{range $i, $c := .}}{{if eq $i 4}}<td class="outcome {{$c}}">{{words $c}}</td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{else}}<p class="missing">{{.VerdictNo}}</p>{{end}}
</section>
</body></html>
{{define "table"}}<table><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
`
