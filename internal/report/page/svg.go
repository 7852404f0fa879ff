package page

import (
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hpcio/hpcio_exporter/internal/report"
)

// The charts are SVG written here by hand, not through html/template: it is
// ten times faster on a heatmap of thousands of cells, and every piece of
// text goes through esc. Colours come from the page's CSS classes (read,
// write, meta, c0…c5, h1…h8), so that the dark scheme and print restyle
// them without a second drawing.

const (
	chartW   = 720.0
	fontW    = 7.2 // advance of a 12px sans-serif character, generous (digits, capitals)
	titleH   = 24.0
	legendH  = 18.0
	axisH    = 40.0
	rightPad = 78.0
)

// esc escapes text for SVG content and attribute values. Invalid UTF-8 and
// control characters (which no XML may hold) become U+FFFD.
func esc(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
				return utf8.RuneError
			}
			return r
		}, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return html.EscapeString(s)
}

// f writes a coordinate.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// series is one kind of bar (or line) of a chart.
type series struct {
	Name  string
	Class string
	Vals  []float64
}

// barChart is a horizontal bar chart: one row per label, the series stacked
// or side by side.
type barChart struct {
	ID      string
	Title   string
	Unit    string // the value axis' label, with its unit
	Labels  []string
	Full    []string // labels for the <title>s, when Labels are shortened
	Series  []series
	Stacked bool
	Fmt     func(float64) string
	TickFmt func(float64) string // the axis' numbers, when not Fmt
	Binary  bool                 // ticks on powers of 1024 (bytes)
	Max     float64              // fixed axis end (shares), 0: from the data
	W       float64              // width of the drawing, 0: chartW (smaller for charts side by side)
}

// ticks returns the tick values from 0 to at least max.
func ticks(max float64, binary bool) []float64 {
	if !(max > 0) || math.IsInf(max, 0) {
		return []float64{0, 1}
	}
	unit := 1.0
	if binary {
		for max/unit >= 1024 {
			unit *= 1024
		}
	}
	m := max / unit
	raw := m / 4
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, k := range []float64{1, 2, 2.5, 5, 10} {
		step = k * p
		if step >= raw {
			break
		}
	}
	var out []float64
	for t := 0.0; ; t += step {
		out = append(out, t*unit)
		if t >= m*(1-1e-9) {
			break
		}
		if len(out) > 12 {
			break
		}
	}
	return out
}

func (c *barChart) draw() template.HTML {
	var b strings.Builder
	b.Grow(4096)
	n := len(c.Labels)
	maxLabel := 0
	for _, l := range c.Labels {
		if k := len([]rune(l)); k > maxLabel {
			maxLabel = k
		}
	}
	width := c.W
	if width == 0 {
		width = chartW
	}
	labelW := math.Min(math.Max(float64(maxLabel)*fontW+12, 40), width*0.42)
	plotX := labelW
	plotW := width - plotX - rightPad
	rowH := 22.0
	if !c.Stacked && len(c.Series) > 1 {
		rowH = 12*float64(len(c.Series)) + 8
	}
	top := titleH
	if len(c.Series) > 1 {
		top += legendH
	}
	plotH := rowH * float64(n)
	height := top + plotH + axisH

	// The axis end: the largest bar (stacked: the largest sum).
	max := c.Max
	if max == 0 {
		for i := 0; i < n; i++ {
			sum := 0.0
			for _, s := range c.Series {
				v := at(s.Vals, i)
				if c.Stacked {
					sum += v
				} else if v > sum {
					sum = v
				}
			}
			if sum > max {
				max = sum
			}
		}
	}
	tk := ticks(max, c.Binary)
	end := tk[len(tk)-1]
	scale := plotW / end

	summary := c.summary()
	header(&b, c.ID, c.Title, summary, width, height)
	legend(&b, c.Series, plotX, titleH+12)
	// Grid and value axis.
	tf := c.TickFmt
	if tf == nil {
		tf = c.Fmt
	}
	for _, t := range tk {
		x := plotX + t*scale
		b.WriteString(`<line class="grid" x1="` + f(x) + `" x2="` + f(x) + `" y1="` + f(top) + `" y2="` + f(top+plotH) + `"/>`)
		b.WriteString(`<text class="tick" text-anchor="middle" x="` + f(x) + `" y="` + f(top+plotH+14) + `">` + esc(tf(t)) + `</text>`)
	}
	b.WriteString(`<text class="axis" text-anchor="middle" x="` + f(plotX+plotW/2) + `" y="` + f(height-6) + `">` + esc(c.Unit) + `</text>`)
	for i := 0; i < n; i++ {
		y := top + float64(i)*rowH
		full := c.Labels[i]
		if i < len(c.Full) {
			full = c.Full[i]
		}
		b.WriteString(`<g><title>` + esc(full) + `: ` + esc(c.rowText(i)) + `</title>`)
		b.WriteString(`<text class="label" text-anchor="end" x="` + f(plotX-6) + `" y="` + f(y+rowH/2+4) + `">` + esc(c.Labels[i]) + `</text>`)
		x := plotX
		total := 0.0
		for k, s := range c.Series {
			v := at(s.Vals, i)
			w := v * scale
			if c.Stacked {
				if w > 0 {
					b.WriteString(`<rect class="` + s.Class + `" x="` + f(x) + `" y="` + f(y+4) + `" width="` + f(w) + `" height="` + f(rowH-8) + `"><title>` + esc(full+", "+s.Name+": "+c.Fmt(v)) + `</title></rect>`)
				}
				x += w
				total += v
				continue
			}
			if v > total {
				total = v
			}
			h := (rowH - 8) / float64(len(c.Series))
			if w > 0 {
				b.WriteString(`<rect class="` + s.Class + `" x="` + f(plotX) + `" y="` + f(y+4+float64(k)*h) + `" width="` + f(w) + `" height="` + f(h-1) + `"><title>` + esc(full+", "+s.Name+": "+c.Fmt(v)) + `</title></rect>`)
			}
		}
		if c.Stacked || len(c.Series) == 1 {
			b.WriteString(`<text class="value" x="` + f(plotX+total*scale+4) + `" y="` + f(y+rowH/2+4) + `">` + esc(c.Fmt(total)) + `</text>`)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`<line class="axisline" x1="` + f(plotX) + `" x2="` + f(plotX) + `" y1="` + f(top) + `" y2="` + f(top+plotH) + `"/>`)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// rowText is a row's numbers, series by series.
func (c *barChart) rowText(i int) string {
	parts := make([]string, 0, len(c.Series))
	for _, s := range c.Series {
		parts = append(parts, s.Name+" "+c.Fmt(at(s.Vals, i)))
	}
	return strings.Join(parts, ", ")
}

// summary is the chart's <title>: its title, unit and every number.
func (c *barChart) summary() string {
	var b strings.Builder
	b.WriteString(c.Title + " (" + c.Unit + "). ")
	for i, l := range c.Labels {
		if i < len(c.Full) {
			l = c.Full[i]
		}
		b.WriteString(l + ": " + c.rowText(i) + ". ")
		if i >= 50 {
			b.WriteString("… (" + strconv.Itoa(len(c.Labels)-i-1) + " more rows in the table)")
			break
		}
	}
	return b.String()
}

func at(v []float64, i int) float64 {
	if i < len(v) && !math.IsNaN(v[i]) && v[i] > 0 {
		return v[i]
	}
	return 0
}

// header opens the <svg> with its title, drawn and as <title>.
func header(b *strings.Builder, id, title, summary string, width, height float64) {
	b.WriteString(`<svg class="chart" xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 ` + f(width) + ` ` + f(height) + `" aria-labelledby="` + id + `-t"><title id="` + id + `-t">` + esc(summary) + `</title>`)
	b.WriteString(`<text class="ctitle" x="4" y="16">` + esc(title) + `</text>`)
}

// legend draws the series' names and colours on one line.
func legend(b *strings.Builder, ss []series, x, y float64) {
	if len(ss) < 2 {
		return
	}
	for _, s := range ss {
		b.WriteString(`<rect class="` + s.Class + `" x="` + f(x) + `" y="` + f(y-9) + `" width="10" height="10"/>`)
		b.WriteString(`<text class="legend" x="` + f(x+14) + `" y="` + f(y) + `">` + esc(s.Name) + `</text>`)
		x += 14 + float64(len([]rune(s.Name)))*fontW + 16
	}
}

// lineSeries is a line of a line chart: values at the chart's times.
type lineSeries struct {
	Name  string
	Class string
	Vals  []report.Value
}

// lineChart draws values over time.
type lineChart struct {
	ID     string
	Title  string
	Unit   string
	Times  []float64 // Unix seconds
	Series []lineSeries
	Fmt    func(float64) string
	Binary bool
}

func (c *lineChart) draw() template.HTML {
	var b strings.Builder
	b.Grow(8192)
	var ss []series
	for _, s := range c.Series {
		ss = append(ss, series{Name: s.Name, Class: s.Class})
	}
	top := titleH + legendH
	plotX := 78.0
	plotW := chartW - plotX - 40
	plotH := 200.0
	height := top + plotH + axisH
	max := 0.0
	for _, s := range c.Series {
		for _, v := range s.Vals {
			if v.OK && v.V > max && !math.IsInf(v.V, 0) {
				max = v.V
			}
		}
	}
	tk := ticks(max, c.Binary)
	end := tk[len(tk)-1]
	t0, t1 := 0.0, 1.0
	if len(c.Times) > 0 {
		t0, t1 = c.Times[0], c.Times[len(c.Times)-1]
	}
	if t1 <= t0 {
		t1 = t0 + 1
	}
	xOf := func(t float64) float64 { return plotX + (t-t0)/(t1-t0)*plotW }
	yOf := func(v float64) float64 { return top + plotH - v/end*plotH }

	header(&b, c.ID, c.Title, c.summary(), chartW, height)
	ls := make([]series, len(ss))
	copy(ls, ss)
	legend(&b, ls, plotX, titleH+12)
	for _, t := range tk {
		y := yOf(t)
		b.WriteString(`<line class="grid" x1="` + f(plotX) + `" x2="` + f(plotX+plotW) + `" y1="` + f(y) + `" y2="` + f(y) + `"/>`)
		b.WriteString(`<text class="tick" text-anchor="end" x="` + f(plotX-4) + `" y="` + f(y+4) + `">` + esc(c.Fmt(t)) + `</text>`)
	}
	// Time axis: about six labels, at round steps.
	span := t1 - t0
	step := timeStep(span / 6)
	for t := math.Ceil(t0/step) * step; t <= t1; t += step {
		x := xOf(t)
		b.WriteString(`<line class="grid" x1="` + f(x) + `" x2="` + f(x) + `" y1="` + f(top) + `" y2="` + f(top+plotH) + `"/>`)
		b.WriteString(`<text class="tick" text-anchor="middle" x="` + f(x) + `" y="` + f(top+plotH+14) + `">` + clock(t, step) + `</text>`)
	}
	b.WriteString(`<text class="axis" text-anchor="middle" x="` + f(plotX+plotW/2) + `" y="` + f(height-6) + `">time (UTC)</text>`)
	b.WriteString(`<text class="axis" transform="rotate(-90)" text-anchor="middle" x="` + f(-(top + plotH/2)) + `" y="12">` + esc(c.Unit) + `</text>`)
	for _, s := range c.Series {
		b.WriteString(`<g class="line ` + s.Class + `"><title>` + esc(s.Name+": "+c.stats(s)) + `</title>`)
		// Runs of present values are polylines; a value alone between
		// gaps is a dot, that it may be seen.
		ok := func(i int) bool {
			return i >= 0 && i < len(s.Vals) && i < len(c.Times) && s.Vals[i].OK && !math.IsNaN(s.Vals[i].V) && !math.IsInf(s.Vals[i].V, 0)
		}
		for i := 0; i < len(s.Vals) && i < len(c.Times); i++ {
			if !ok(i) {
				continue
			}
			j := i
			for ok(j + 1) {
				j++
			}
			if j == i {
				b.WriteString(`<circle class="dot" cx="` + f(xOf(c.Times[i])) + `" cy="` + f(yOf(s.Vals[i].V)) + `" r="1.5"/>`)
				continue
			}
			b.WriteString(`<polyline points="`)
			for k := i; k <= j; k++ {
				if k > i {
					b.WriteByte(' ')
				}
				b.WriteString(f(xOf(c.Times[k])) + "," + f(yOf(s.Vals[k].V)))
			}
			b.WriteString(`"/>`)
			i = j
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`<line class="axisline" x1="` + f(plotX) + `" x2="` + f(plotX) + `" y1="` + f(top) + `" y2="` + f(top+plotH) + `"/>`)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func (c *lineChart) stats(s lineSeries) string {
	n, sum, max := 0, 0.0, math.Inf(-1)
	for _, v := range s.Vals {
		if v.OK && !math.IsNaN(v.V) && !math.IsInf(v.V, 0) {
			n++
			sum += v.V
			max = math.Max(max, v.V)
		}
	}
	if n == 0 {
		return "no value"
	}
	return "mean " + c.Fmt(sum/float64(n)) + ", peak " + c.Fmt(max) + " over " + strconv.Itoa(n) + " points"
}

func (c *lineChart) summary() string {
	var b strings.Builder
	b.WriteString(c.Title + " (" + c.Unit + " over time, UTC)")
	if len(c.Times) > 0 {
		b.WriteString(" from " + clock(c.Times[0], 1) + " to " + clock(c.Times[len(c.Times)-1], 1))
	}
	b.WriteString(". ")
	for _, s := range c.Series {
		b.WriteString(s.Name + ": " + c.stats(s) + ". ")
	}
	b.WriteString("Every value is in the table below.")
	return b.String()
}

// timeStep is a round step of at least s seconds.
func timeStep(s float64) float64 {
	for _, st := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400} {
		if st >= s {
			return st
		}
	}
	return math.Ceil(s/86400) * 86400
}

// clock writes a Unix time as UTC hours, minutes (and seconds when the
// step needs them).
func clock(t, step float64) string {
	tm := time.Unix(int64(math.Floor(t)), 0).UTC()
	if math.Mod(step, 60) == 0 {
		return tm.Format("15:04")
	}
	return tm.Format("15:04:05")
}

// heatChart draws a heatmap: rows of ranks, columns of time, the bytes
// each moved as the colour's strength (log scale, as PyDarshan's).
type heatChart struct {
	ID    string
	Title string
	H     *report.Heatmap
}

func (c *heatChart) draw() template.HTML {
	h := c.H
	var b strings.Builder
	rows := len(h.Cells)
	cols := 0
	var max int64
	min := int64(math.MaxInt64)
	for _, r := range h.Cells {
		if len(r) > cols {
			cols = len(r)
		}
		for _, v := range r {
			if v > max {
				max = v
			}
			if v > 0 && v < min {
				min = v
			}
		}
	}
	if max == 0 {
		min = 0
	}
	b.Grow(256 + rows*cols*8)
	top := titleH + legendH
	plotX := 70.0
	plotW := chartW - plotX - 20
	cellH := 240.0 / math.Max(float64(rows), 1)
	cellH = math.Max(math.Min(cellH, 18), 1.5)
	plotH := cellH * float64(rows)
	height := top + plotH + axisH
	cellW := plotW / math.Max(float64(cols), 1)
	span := float64(cols) * h.ColumnWidth

	var total int64
	for _, v := range h.RankBytes {
		total += v
	}
	summary := c.Title + ": bytes read and written by rank (vertical axis) over the seconds since " + utc(h.Start.T) +
		" (horizontal axis, " + strconv.Itoa(cols) + " columns of " + seconds(h.ColumnWidth) + "), " + bytesIEC(float64(total)) +
		" in all, at most " + bytesIEC(float64(max)) + " in one cell. Each row's total is in its title; the bytes per time bin are in the table below."
	header(&b, c.ID, c.Title, summary, chartW, height)
	// Colour scale legend.
	lx := plotX
	lo := "bytes per cell: " + bytesIEC(float64(min))
	b.WriteString(`<text class="legend" x="` + f(lx) + `" y="` + f(titleH+12) + `">` + esc(lo) + `</text>`)
	lx += float64(len([]rune(lo)))*fontW + 8
	for k := 1; k <= 8; k++ {
		b.WriteString(`<rect class="h` + strconv.Itoa(k) + `" x="` + f(lx) + `" y="` + f(titleH+3) + `" width="14" height="10"/>`)
		lx += 14
	}
	b.WriteString(`<text class="legend" x="` + f(lx+4) + `" y="` + f(titleH+12) + `">` + esc(bytesIEC(float64(max))) + ` (log scale)</text>`)
	b.WriteString(`<rect class="hbg" x="` + f(plotX) + `" y="` + f(top) + `" width="` + f(plotW) + `" height="` + f(plotH) + `"/>`)
	sc := logScale{lo: math.Log(float64(min)), span: math.Log(float64(max)) - math.Log(float64(min))}
	labelEvery := int(math.Ceil(12 / cellH))
	for i, r := range h.Cells {
		y := top + float64(i)*cellH
		name := ""
		if i < len(h.Rows) {
			name = shown(h.Rows[i])
		}
		var rb int64
		if i < len(h.RankBytes) {
			rb = h.RankBytes[i]
		}
		b.WriteString(`<g><title>rank ` + esc(name) + `: ` + esc(bytesIEC(float64(rb))) + `</title>`)
		// Runs of cells of the same strength are one rectangle.
		for j := 0; j < len(r); {
			lv := sc.level(r[j])
			k := j + 1
			for k < len(r) && sc.level(r[k]) == lv {
				k++
			}
			if lv > 0 {
				b.WriteString(`<rect class="h` + strconv.Itoa(lv) + `" x="` + f(plotX+float64(j)*cellW) + `" y="` + f(y) + `" width="` + f(float64(k-j)*cellW) + `" height="` + f(cellH) + `"/>`)
			}
			j = k
		}
		if i%labelEvery == 0 {
			b.WriteString(`<text class="tick" text-anchor="end" x="` + f(plotX-4) + `" y="` + f(y+cellH/2+4) + `">` + esc(name) + `</text>`)
		}
		b.WriteString(`</g>`)
	}
	tk := ticks(span, false)
	for _, t := range tk {
		if t > span*(1+1e-9) {
			break
		}
		x := plotX + t/math.Max(span, 1e-12)*plotW
		b.WriteString(`<line class="axisline" x1="` + f(x) + `" x2="` + f(x) + `" y1="` + f(top+plotH) + `" y2="` + f(top+plotH+4) + `"/>`)
		b.WriteString(`<text class="tick" text-anchor="middle" x="` + f(x) + `" y="` + f(top+plotH+16) + `">` + esc(trimNum(t, 3)) + `</text>`)
	}
	b.WriteString(`<text class="axis" text-anchor="middle" x="` + f(plotX+plotW/2) + `" y="` + f(height-6) + `">seconds since the start of the run</text>`)
	b.WriteString(`<text class="axis" transform="rotate(-90)" text-anchor="middle" x="` + f(-(top + plotH/2)) + `" y="12">rank</text>`)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// logScale maps the bytes of a cell to its colour, on a log scale from
// the smallest non-zero cell to the largest (PyDarshan's LogNorm).
type logScale struct{ lo, span float64 }

// level is the colour class of a cell, 0 (nothing) to 8 (the most).
func (s logScale) level(v int64) int {
	if v <= 0 {
		return 0
	}
	if s.span <= 0 {
		return 8
	}
	l := 1 + int(math.Floor((math.Log(float64(v))-s.lo)/s.span*7.999))
	if l < 1 {
		l = 1
	}
	if l > 8 {
		l = 8
	}
	return l
}
