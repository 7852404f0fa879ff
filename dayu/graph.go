package dayu

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
)

// GraphFormat names an output of the dataflow graph.
type GraphFormat string

const (
	// GraphDOT is Graphviz DOT.
	GraphDOT GraphFormat = "dot"
	// GraphMermaid is a Mermaid flowchart in a Markdown code fence.
	GraphMermaid GraphFormat = "mermaid"
)

// graphNode is a stage or a file as drawn.
type graphNode struct {
	id, label string
	stage     bool
}

// graph is the drawing of a workflow: stages (merged by name), the files on
// edges, and the edges, each weighted by its bytes.
type graph struct {
	name           string
	nodes          []graphNode
	edges          []graphEdge
	minLog, maxLog float64
}

type graphEdge struct {
	from, to string
	label    string
	bytes    int64
}

func buildGraph(w *Workflow) *graph {
	g := &graph{name: w.Name}
	stageID := map[string]string{}
	type stageInfo struct {
		order int
		pids  map[int64]bool
		first int64
	}
	infos := map[string]*stageInfo{}
	var names []string
	for _, s := range w.Stages {
		in := infos[s.Name]
		if in == nil {
			in = &stageInfo{order: s.Order, pids: map[int64]bool{}}
			infos[s.Name] = in
			names = append(names, s.Name)
		}
		if s.PID != 0 {
			if len(in.pids) == 0 {
				in.first = s.PID
			}
			in.pids[s.PID] = true
		}
	}
	for i, n := range names {
		in := infos[n]
		var sub []string
		if in.order >= 0 {
			sub = append(sub, fmt.Sprintf("order %d", in.order))
		}
		switch len(in.pids) {
		case 0:
		case 1:
			sub = append(sub, fmt.Sprintf("pid %d", in.first))
		default:
			sub = append(sub, fmt.Sprintf("%d pids", len(in.pids)))
		}
		label := n
		if len(sub) > 0 {
			label += "\n" + strings.Join(sub, " · ")
		}
		stageID[n] = fmt.Sprintf("s%d", i)
		g.nodes = append(g.nodes, graphNode{id: stageID[n], label: label, stage: true})
	}
	fileID := map[string]string{}
	var minBytes, maxBytes int64 = -1, 0
	for _, e := range w.Dataflow() {
		fid, ok := fileID[e.File]
		if !ok {
			fid = fmt.Sprintf("f%d", len(fileID))
			fileID[e.File] = fid
			g.nodes = append(g.nodes, graphNode{id: fid, label: e.File})
		}
		ge := graphEdge{label: fmt.Sprintf("%s, %d ops", humanBytes(e.Bytes), e.Ops), bytes: e.Bytes}
		if e.Direction == Read {
			ge.from, ge.to = fid, stageID[e.Stage]
		} else {
			ge.from, ge.to = stageID[e.Stage], fid
		}
		g.edges = append(g.edges, ge)
		maxBytes = max(maxBytes, e.Bytes)
		if minBytes < 0 || e.Bytes < minBytes {
			minBytes = e.Bytes
		}
	}
	g.minLog, g.maxLog = math.Log1p(float64(max(minBytes, 0))), math.Log1p(float64(maxBytes))
	return g
}

// width maps bytes to a line width from 1 (the lightest edge) to 6 (the
// heaviest), on a log scale: workflows move bytes over many orders of
// magnitude.
func (g *graph) width(bytes int64) float64 {
	if g.maxLog-g.minLog < 1e-9 {
		return 2
	}
	return 1 + 5*(math.Log1p(float64(bytes))-g.minLog)/(g.maxLog-g.minLog)
}

// WriteGraph writes the workflow's dataflow: stages as boxes, files as
// notes (DOT) or cylinders (Mermaid), reads as file → stage and writes as
// stage → file, each edge labelled and weighted by its bytes.
func WriteGraph(out io.Writer, w *Workflow, format GraphFormat) error {
	g := buildGraph(w)
	bw := bufio.NewWriter(out)
	switch format {
	case GraphDOT:
		g.writeDOT(bw)
	case GraphMermaid:
		g.writeMermaid(bw)
	default:
		return fmt.Errorf("unknown graph format %q (want dot or mermaid)", format)
	}
	return bw.Flush()
}

func (g *graph) writeDOT(w *bufio.Writer) {
	fmt.Fprintf(w, "digraph %s {\n", dotQuote(g.name))
	fmt.Fprintf(w, "  rankdir=LR;\n")
	fmt.Fprintf(w, "  node [fontname=\"Helvetica\", fontsize=10];\n")
	fmt.Fprintf(w, "  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, n := range g.nodes {
		if n.stage {
			fmt.Fprintf(w, "  %s [shape=box, style=\"rounded,filled\", fillcolor=\"#dae8fc\", label=%s];\n", n.id, dotQuote(n.label))
		} else {
			fmt.Fprintf(w, "  %s [shape=note, label=%s];\n", n.id, dotQuote(n.label))
		}
	}
	for _, e := range g.edges {
		fmt.Fprintf(w, "  %s -> %s [label=%s, penwidth=%.1f];\n", e.from, e.to, dotQuote(e.label), g.width(e.bytes))
	}
	fmt.Fprintf(w, "}\n")
}

// dotQuote makes a DOT string; "\n" becomes a centred line break.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

func (g *graph) writeMermaid(w *bufio.Writer) {
	fmt.Fprintf(w, "```mermaid\n")
	fmt.Fprintf(w, "%%%% dataflow of %s\n", mermaidComment(g.name))
	fmt.Fprintf(w, "flowchart LR\n")
	for _, n := range g.nodes {
		if n.stage {
			fmt.Fprintf(w, "  %s[\"%s\"]\n", n.id, mermaidText(n.label))
		} else {
			fmt.Fprintf(w, "  %s[(\"%s\")]\n", n.id, mermaidText(n.label))
		}
	}
	for _, e := range g.edges {
		fmt.Fprintf(w, "  %s -->|\"%s\"| %s\n", e.from, mermaidText(e.label), e.to)
	}
	for i, e := range g.edges {
		fmt.Fprintf(w, "  linkStyle %d stroke-width:%.1fpx\n", i, g.width(e.bytes))
	}
	fmt.Fprintf(w, "```\n")
}

// mermaidText escapes text inside a quoted Mermaid label, where entity codes
// are the only escape.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "\n", "<br/>", "\r", "", "`", "#96;")
	return r.Replace(s)
}

func mermaidComment(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "`", "'").Replace(s)
}

// humanBytes writes bytes in IEC units with one decimal.
func humanBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v := float64(b)
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := -1
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
