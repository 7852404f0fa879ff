package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
)

// The heatmap of a layer: bytes over time by rank. Its totals over time
// are package signals' Layer (the same bins and HEATMAP signals as the
// sidecar's); the rows by rank are each record placed in the layer's bins
// by its start time, as Layer.Add places it.

// rankHeat is the heatmap of a row of one log: the sum of its ranks'
// records of one bin width.
type rankHeat struct {
	start  float64 // the log's start, seconds since the epoch
	row    int     // rowOf(rank, nprocs): the log's row
	nprocs int64   // the log's processes
	hm     signals.Heatmap
}

// jobRow is the job's row of a log's row: the same when both count
// ranks one a row; else the job's row of the log row's first rank (the
// job has at least the log's processes, so a log's row of several ranks
// lies in one of the job's rows, or across the edge of two).
func (r rankHeat) jobRow(jobProcs int64) int {
	rank := int64(r.row)
	if r.nprocs > maxRows {
		rank = (int64(r.row)*r.nprocs + maxRows - 1) / maxRows
	}
	return rowOf(rank, max(jobProcs, r.nprocs))
}

// dxtLayers are the heatmap layers made from DXT traces.
var dxtLayers = []string{darshan.DXTPOSIX.String(), darshan.DXTMPIIO.String()}

// dxtBins is the number of bins a log's DXT traces are divided into
// (the runtime's HEATMAP module writes at most 200).
const dxtBins = 200

// The picture's limits: ranks and bins are grouped beyond them, so that a
// page (and the memory kept while the logs are read) stays small whatever
// the job's size.
const (
	maxRows    = 64
	maxColumns = 120
)

// rowOf is the row of a rank in a log of nprocs processes: the rank
// itself up to maxRows processes, else its share of the ranks; -1 for a
// negative rank. A rank past the log's processes (a runtime's record of
// rank nprocs: fixtures/darshan/heatmap_off_by_one.darshan) keeps its own
// row, or the last one: its bytes are in the layer's totals (package
// signals sums every record), so they are in the picture too.
func rowOf(rank, nprocs int64) int {
	switch {
	case rank < 0:
		return -1
	case nprocs <= maxRows:
		return int(min(rank, maxRows-1))
	}
	return int(min(rank*maxRows/nprocs, maxRows-1))
}

// rows sums one log's records of a layer by row and bin width. The width
// is kept by its bits: a NaN width (a damaged record) is a key like any
// other, and its heatmap is left out later (usable).
type rows map[rowKey]*signals.Heatmap

type rowKey struct {
	row   int
	width uint64 // math.Float64bits
}

func (rs rows) add(row int, width float64, read, write []int64) {
	k := rowKey{row, math.Float64bits(width)}
	h := rs[k]
	if h == nil {
		h = &signals.Heatmap{Width: width}
		rs[k] = h
	}
	h.Read = addBins(h.Read, read)
	h.Write = addBins(h.Write, write)
}

// addBins adds b into a, bin by bin; a -1 (not monitored) stays -1.
func addBins(a, b []int64) []int64 {
	a = growTo(a, len(b))
	for i, v := range b {
		if v == -1 || a[i] == -1 {
			a[i] = -1
			continue
		}
		a[i] += v
	}
	return a
}

// keep appends a log's rows to the layer's, in a fixed order.
func (g *gatherer) keep(layer string, start float64, nprocs int64, rs rows) {
	keys := make([]rowKey, 0, len(rs))
	for k := range rs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.width, b.width))
	})
	for _, k := range keys {
		g.heat[layer] = append(g.heat[layer], rankHeat{start: start, row: k.row, nprocs: nprocs, hm: *rs[k]})
	}
}

// heatmaps keeps the log's HEATMAP records by layer and row; a log
// without a HEATMAP module gives its DXT traces instead, unless reading
// them passes the log's memory budget (then they are left out, see
// FromLogs).
func (g *gatherer) heatmaps(l *darshan.Log, sum *signals.Summary) error {
	nprocs := l.Job.NProcs
	if l.Header.ModuleRegions[darshan.Heatmap].Length > 0 {
		layers := map[string]rows{}
		rd := l.Records(darshan.Heatmap)
		for rd.Next() {
			h := rd.Record().(*darshan.HeatmapRecord)
			row := rowOf(h.Rank, nprocs)
			if row < 0 {
				continue
			}
			name := signals.LayerName(h.ID, l.Names)
			if layers[name] == nil {
				layers[name] = rows{}
			}
			layers[name].add(row, h.BinWidth, h.ReadBins, h.WriteBins)
		}
		if err := rd.Err(); err != nil {
			return err
		}
		names := make([]string, 0, len(layers))
		for n := range layers {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			g.keep(n, sum.Start, nprocs, layers[n])
		}
		return nil
	}
	runtime := l.RunTime()
	if !(runtime > 0) || math.IsInf(runtime, 0) || len(g.app.DXTLeftOut) > 0 {
		// Once a log's traces are left out, the job has no DXT heatmap:
		// the others' are not read.
		return nil
	}
	width := runtime / dxtBins
	for _, m := range []darshan.ModuleID{darshan.DXTPOSIX, darshan.DXTMPIIO} {
		rs := rows{}
		read, write := make([]int64, dxtBins), make([]int64, dxtBins)
		rd := l.Records(m)
		for rd.Next() {
			d := rd.Record().(*darshan.DXTRecord)
			row := rowOf(d.Rank, nprocs)
			if row < 0 {
				continue
			}
			clear(read)
			clear(write)
			spread(read, d.Reads, width)
			spread(write, d.Writes, width)
			rs.add(row, width, read, write)
		}
		if err := rd.Err(); err != nil {
			var be *darshan.BudgetError
			if !errors.As(err, &be) {
				return err
			}
			// The log's charge only grows: what was read of it before
			// (its counters, names, insights) is whole; what would be
			// read after, the rest of its traces, would fail the same.
			g.app.DXTLeftOut = append(g.app.DXTLeftOut, LeftOut{File: filepath.Base(l.Name), Region: m.String(), MemoryBudget: be.Budget})
			return nil
		}
		if len(rs) == 0 {
			continue
		}
		name := m.String()
		ly := g.dxt[name]
		if ly == nil {
			ly = &signals.Layer{Name: name}
			g.dxt[name] = ly
		}
		var all signals.Heatmap
		for _, h := range rs {
			all.Width = h.Width
			all.Read = addBins(all.Read, h.Read)
			all.Write = addBins(all.Write, h.Write)
		}
		ly.Add(sum.Start, &all)
		g.keep(name, sum.Start, nprocs, rs)
	}
	return nil
}

// spread adds each segment's bytes to the bins it overlaps, in proportion
// to the overlap (PyDarshan's DXT heatmap does the same); a segment of no
// duration goes to the bin of its start. Times outside the run are
// clamped to its first and last bins.
func spread(bins []int64, segs []darshan.Segment, width float64) {
	n := len(bins)
	clamp := func(i int) int { return min(max(i, 0), n-1) }
	for _, s := range segs {
		if s.Length <= 0 {
			continue
		}
		a, b := s.Start/width, s.End/width
		if !(b > a) || math.IsInf(b, 0) || math.IsNaN(a) {
			bins[clamp(int(a))] += s.Length
			continue
		}
		first, last := clamp(int(math.Floor(a))), clamp(int(math.Floor(b)))
		left := s.Length
		for i := first; i <= last && i < n; i++ {
			lo, hi := max(a, float64(i)), min(b, float64(i+1))
			if i == last {
				bins[i] += left // what rounding left goes to the last bin
				break
			}
			part := int64(math.Round(float64(s.Length) * (hi - lo) / (b - a)))
			part = min(max(part, 0), left)
			bins[i] += part
			left -= part
		}
	}
}

// heatmapsOf builds each layer's heatmap: HEATMAP layers from the merged
// summary (in its order: by name), then the DXT ones.
func (g *gatherer) heatmapsOf(merged *signals.Summary) []Heatmap {
	out := []Heatmap{}
	for i := range merged.Layers {
		ly := &merged.Layers[i]
		if ly.Records == 0 {
			continue
		}
		h := g.matrix(ly, g.heat[ly.Name], "HEATMAP", merged.NProcs)
		vals := ly.Signals()
		for k, s := range signals.HeatmapSignals {
			h.Signals = append(h.Signals, signalOf(s, vals[k]))
		}
		out = append(out, h)
	}
	if len(g.app.DXTLeftOut) > 0 {
		return out
	}
	for _, name := range dxtLayers {
		if ly := g.dxt[name]; ly != nil && ly.Records > 0 {
			out = append(out, g.matrix(ly, g.heat[name], "DXT", merged.NProcs))
		}
	}
	return out
}

// usable reports whether Layer.Add sums h (the checks of its NA reasons).
func usable(h *signals.Heatmap) bool {
	if !(h.Width > 0) || math.IsInf(h.Width, 0) {
		return false
	}
	for _, b := range [][]int64{h.Read, h.Write} {
		if slices.Contains(b, -1) {
			return false
		}
	}
	return true
}

// matrix places the rows of a layer's logs in its bins, and groups bins
// to at most maxColumns; nprocs is the job's process count.
func (g *gatherer) matrix(ly *signals.Layer, recs []rankHeat, source string, nprocs int64) Heatmap {
	n := ly.Bins()
	h := Heatmap{Layer: ly.Name, Source: source, Start: unixTime(ly.Start), BinWidth: ly.Width,
		Read: slices.Clone(ly.Read), Write: slices.Clone(ly.Write), Signals: []Signal{}}
	h.Read, h.Write = growTo(h.Read, n), growTo(h.Write, n)
	nrows := int(min(max(nprocs, 1), maxRows))
	for _, r := range recs {
		nrows = max(nrows, r.jobRow(nprocs)+1)
	}
	perCol := max(1, (n+maxColumns-1)/maxColumns)
	cols := max(1, (n+perCol-1)/perCol)
	h.ColumnWidth = ly.Width * float64(perCol)
	h.Cells = make([][]int64, nrows)
	for i := range h.Cells {
		h.Cells[i] = make([]int64, cols)
	}
	h.RankBytes = make([]int64, nrows)
	for _, r := range recs {
		if !usable(&r.hm) || n == 0 {
			continue
		}
		row := r.jobRow(nprocs)
		for k := range r.hm.Bins() {
			v := at(r.hm.Read, k) + at(r.hm.Write, k)
			if v == 0 {
				continue
			}
			i := int(math.Floor((r.start-ly.Start+float64(k)*r.hm.Width)/ly.Width + 1e-9))
			i = min(max(i, 0), n-1)
			h.Cells[row][i/perCol] += v
			h.RankBytes[row] += v
		}
	}
	for i := range nrows {
		lo, hi := int64(i), int64(i)
		if nprocs > maxRows {
			// the ranks r with r*maxRows/nprocs == i
			lo = (int64(i)*nprocs + maxRows - 1) / maxRows
			hi = (int64(i+1)*nprocs+maxRows-1)/maxRows - 1
		}
		if lo == hi {
			h.Rows = append(h.Rows, fmt.Sprint(lo))
		} else {
			h.Rows = append(h.Rows, fmt.Sprintf("%d–%d", lo, hi))
		}
	}
	return h
}

func at(b []int64, k int) int64 {
	if k < len(b) {
		return b[k]
	}
	return 0
}

func growTo(b []int64, n int) []int64 {
	for len(b) < n {
		b = append(b, 0)
	}
	return b
}
