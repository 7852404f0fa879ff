package signals

import (
	"math"
	"strings"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Heatmap is the input of the HEATMAP signals: the bin width Δt in seconds
// and, per bin, the bytes read R[k] and written W[k] (docs/signals.md calls them
// events; Darshan counts bytes).
type Heatmap struct {
	Width       float64
	Read, Write []int64
}

// HeatmapOf returns the heatmap of a HEATMAP record; it shares r's bins.
func HeatmapOf(r *darshan.HeatmapRecord) Heatmap {
	return Heatmap{Width: r.BinWidth, Read: r.ReadBins, Write: r.WriteBins}
}

// Bins returns N, the number of bins.
func (h *Heatmap) Bins() int { return max(len(h.Read), len(h.Write)) }

func bin(b []int64, k int) int64 {
	if k < len(b) {
		return b[k]
	}
	return 0
}

// reason returns why the heatmap has no signals: not_monitored when the
// width or a bin is -1, no_bin_width when the width is missing (NaN, ±Inf)
// or not positive; OK otherwise.
func (h *Heatmap) reason() Reason {
	if h.Width == -1 {
		return NotMonitored
	}
	for k := range h.Bins() {
		if bin(h.Read, k) == -1 || bin(h.Write, k) == -1 {
			return NotMonitored
		}
	}
	if !positive(h.Width) || math.IsInf(h.Width, 1) {
		return NoBinWidth
	}
	return OK
}

// HeatmapValues are the HEATMAP signals of a heatmap, in the order of
// HeatmapSignals.
type HeatmapValues [10]Value

// Get returns signal s, one of HeatmapSignals.
func (hv *HeatmapValues) Get(s Signal) Value { return hv[s-TotalReadEvents] }

// Signals computes the HEATMAP signals.
func (h *Heatmap) Signals() HeatmapValues {
	var out HeatmapValues
	if r := h.reason(); r != OK {
		for i := range out {
			out[i] = na(r)
		}
		return out
	}
	n := h.Bins()
	var tr, tw, ta, peak int64
	active, first, last, peakBin := 0, -1, -1, 0
	for k := range n {
		r, w := bin(h.Read, k), bin(h.Write, k)
		tr += r
		tw += w
		a := r + w
		ta += a
		if a > 0 {
			active++
			if first < 0 {
				first = k
			}
			last = k
		}
		if a > peak { // strictly greater: the lowest index wins ties
			peak, peakBin = a, k
		}
	}
	span := 0.0
	if first >= 0 {
		span = float64(last-first+1) * h.Width
	}
	top := 0.0
	if ta > 0 {
		top = float64(peak) / float64(ta)
	}
	out = HeatmapValues{
		num(float64(tr)), num(float64(tw)), num(float64(active)), num(float64(active) * h.Width),
		num(span), num(float64(peakBin)), num(float64(peak)),
		num(entropyNorm(h.Read, tr, n)), num(entropyNorm(h.Write, tw, n)), num(top),
	}
	return out
}

// entropyNorm is −Σ p log p / log N over the bins with p = b[k]/total > 0;
// 0 when total is 0 or N ≤ 1. Rounding (a uniform distribution gives
// 0.9999999999999999) is clamped to [0, 1].
func entropyNorm(b []int64, total int64, n int) float64 {
	if total <= 0 || n <= 1 {
		return 0
	}
	t := float64(total)
	h := 0.0
	for _, v := range b {
		if v > 0 {
			p := float64(v) / t
			h -= p * math.Log(p)
		}
	}
	return min(max(h/math.Log(float64(n)), 0), 1)
}

// heatmapLayers are the layers the runtime instruments; their records are
// named "heatmap:<layer>".
var heatmapLayers = []string{"POSIX", "STDIO", "MPIIO", "DFS", "DAOS"}

var heatmapLayerByID = func() map[uint64]string {
	m := map[uint64]string{}
	for _, l := range heatmapLayers {
		m[darshan.RecordID("heatmap:"+l)] = l
	}
	return m
}()

// LayerName returns the instrumented layer of a HEATMAP record: from its
// name "heatmap:<layer>" when the name table has it, else from the record
// id, which is the hash of that name. It is "unknown" for any other name, so
// that a label made from it can never carry a path.
func LayerName(id uint64, names map[uint64]string) string {
	if l, ok := heatmapLayerByID[id]; ok {
		return l
	}
	if n, ok := names[id]; ok {
		if l, ok := strings.CutPrefix(n, "heatmap:"); ok && isLayerWord(l) {
			return l
		}
	}
	return "unknown"
}

// isLayerWord accepts the short upper-case words layers are named with.
func isLayerWord(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Layer is the heatmap of one instrumented layer summed over records: the
// ranks of a log, the logs of a job. Records are aligned on absolute time:
// bin k of a record covers [start + k·Δt, start + (k+1)·Δt) where start is
// its job's start. When records differ in width or start, or the sum would
// need more than maxLayerBins bins, the width doubles (as the runtime does)
// and bins are summed into the wider ones.
type Layer struct {
	Name  string
	Start float64 // seconds since the epoch at which bin 0 starts
	Heatmap
	// Records is the number of records summed.
	Records int
	// NA is the reason of the first record that could not be summed (the
	// layer's reason when none could).
	NA Reason
}

// maxLayerBins bounds the bins of a Layer; the runtime writes at most 200.
const maxLayerBins = 1024

// Add sums the heatmap h of a job that started at start (seconds) into l.
func (l *Layer) Add(start float64, h *Heatmap) {
	if r := h.reason(); r != OK {
		if l.NA == OK || r < l.NA {
			l.NA = r
		}
		return
	}
	n := h.Bins()
	if l.Records == 0 {
		l.Start, l.Width = start, h.Width
		l.Read = growTo(append(l.Read[:0], h.Read...), n)
		l.Write = growTo(append(l.Write[:0], h.Write...), n)
		l.Records = 1
		l.fit()
		return
	}
	l.Records++
	if start == l.Start && h.Width == l.Width && n <= maxLayerBins {
		l.Read, l.Write = growTo(l.Read, n), growTo(l.Write, n)
		for k := range n {
			l.Read[k] += bin(h.Read, k)
			l.Write[k] += bin(h.Write, k)
		}
		return
	}
	t0 := min(l.Start, start)
	w := max(l.Width, h.Width)
	for (max(l.Start+float64(len(l.Read))*l.Width, start+float64(n)*h.Width)-t0)/w > maxLayerBins {
		w *= 2
	}
	l.rebin(t0, w)
	for k := range n {
		i := binIndex(start-t0+float64(k)*h.Width, w)
		l.Read, l.Write = growTo(l.Read, i+1), growTo(l.Write, i+1)
		l.Read[i] += bin(h.Read, k)
		l.Write[i] += bin(h.Write, k)
	}
}

// fit doubles the width until the bins fit maxLayerBins.
func (l *Layer) fit() {
	w := l.Width
	for float64(len(l.Read))*l.Width/w > maxLayerBins {
		w *= 2
	}
	if w != l.Width {
		l.rebin(l.Start, w)
	}
}

// rebin moves l's bins to start t0 and width w (≥ l.Width, t0 ≤ l.Start).
func (l *Layer) rebin(t0, w float64) {
	if t0 == l.Start && w == l.Width {
		return
	}
	var r, wr []int64
	for k := range l.Read {
		i := binIndex(l.Start-t0+float64(k)*l.Width, w)
		r, wr = growTo(r, i+1), growTo(wr, i+1)
		r[i] += l.Read[k]
		wr[i] += l.Write[k]
	}
	l.Read, l.Write, l.Start, l.Width = r, wr, t0, w
}

// binIndex returns the bin of width w in which offset t (seconds) falls;
// the epsilon keeps k·Δt/Δt from rounding down to k−1.
func binIndex(t, w float64) int {
	i := int(math.Floor(t/w + 1e-9))
	return max(i, 0)
}

func growTo(b []int64, n int) []int64 {
	for len(b) < n {
		b = append(b, 0)
	}
	return b
}

// Signals returns the layer's HEATMAP signals; all NA with the layer's
// reason when no record could be summed.
func (l *Layer) Signals() HeatmapValues {
	if l.Records == 0 {
		var out HeatmapValues
		r := l.NA
		if r == OK {
			r = NoBinWidth
		}
		for i := range out {
			out[i] = na(r)
		}
		return out
	}
	return l.Heatmap.Signals()
}
