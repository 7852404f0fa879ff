package darshan

import (
	"fmt"
	"math"
)

func init() {
	register(&Module{ID: Heatmap, Name: "HEATMAP", Version: 1,
		decoder:  func(ver uint32, big bool, _ *Log) moduleDecoder { return newHeatmapDecoder(ver, big) },
		Describe: description(heatmapDescription)})
}

// HEATMAP module: per process and instrumented layer (records named
// "heatmap:POSIX", "heatmap:STDIO", "heatmap:MPIIO", …), the bytes read and
// written in each time bin since the job started.

// HeatmapRecord is a HEATMAP record. Bin i covers [i*BinWidth, (i+1)*BinWidth)
// seconds after the job's start.
type HeatmapRecord struct {
	Key
	BinWidth  float64 // seconds
	ReadBins  []int64 // bytes read per bin
	WriteBins []int64 // bytes written per bin
}

// Clone returns a deep copy of r.
func (r *HeatmapRecord) Clone() Record {
	c := *r
	c.ReadBins = append([]int64(nil), r.ReadBins...)
	c.WriteBins = append([]int64(nil), r.WriteBins...)
	return &c
}

const (
	heatmapFixedSize = 48 // base, bin width, bin count, two stale pointers
	// maxHeatmapBins is what fits darshan-parser's record buffer; the
	// runtime writes at most 200.
	maxHeatmapBins = (defModBufSize - heatmapFixedSize) / 16
)

type heatmapDecoder struct {
	big bool
	// The bin count and width of the first record: darshan 3.4.0-3.4.3
	// could write records one bin longer or shorter than the others, which
	// darshan-util corrects (darshan issue #941); so does this reader.
	firstBins  int64
	firstWidth float64
	rec        HeatmapRecord
}

func newHeatmapDecoder(ver uint32, big bool) moduleDecoder { return &heatmapDecoder{big: big} }

func (d *heatmapDecoder) next(rr *regionReader) (Record, error) {
	b, err := rr.next(heatmapFixedSize)
	if err != nil {
		return nil, err
	}
	r := &d.rec
	r.Key = base(Heatmap, b, d.big)
	r.BinWidth = math.Float64frombits(getUint64(b[16:], d.big))
	n := int64(getUint64(b[24:], d.big))
	if n < 0 || n > maxHeatmapBins {
		return nil, causef(ErrCorrupt, "HEATMAP record claims %d bins (at most %d fit a record)", n, maxHeatmapBins)
	}
	if d.firstBins == 0 {
		d.firstBins = n
	}
	if d.firstWidth == 0 {
		d.firstWidth = r.BinWidth
	}
	bins, err := rr.next(int(n) * 16)
	if err != nil {
		return nil, atRecordEnd(err)
	}
	r.WriteBins, r.ReadBins = r.WriteBins[:0], r.ReadBins[:0]
	for i := range int(n) {
		r.WriteBins = append(r.WriteBins, int64(getUint64(bins[8*i:], d.big)))
		r.ReadBins = append(r.ReadBins, int64(getUint64(bins[8*(int(n)+i):], d.big)))
	}
	if r.BinWidth == d.firstWidth {
		switch n {
		case d.firstBins + 1: // one bin too many: drop it
			r.WriteBins, r.ReadBins = r.WriteBins[:n-1], r.ReadBins[:n-1]
		case d.firstBins - 1: // one too few: add an empty bin. (darshan-util
			// shifts the read bins right by one here, losing the last one.)
			r.WriteBins, r.ReadBins = append(r.WriteBins, 0), append(r.ReadBins, 0)
		}
	}
	return r, nil
}

func (r *HeatmapRecord) encode(e *encoder, _ bool) error {
	if len(r.ReadBins) != len(r.WriteBins) {
		return fmt.Errorf("%d read bins but %d write bins", len(r.ReadBins), len(r.WriteBins))
	}
	e.key(r.Key)
	e.f64(r.BinWidth)
	e.i64(int64(len(r.WriteBins)))
	e.u64(0) // the runtime's in-memory pointers to the bin arrays
	e.u64(0)
	for _, v := range r.WriteBins {
		e.i64(v)
	}
	for _, v := range r.ReadBins {
		e.i64(v)
	}
	return nil
}

// What darshan-parser prints above the records (log_print_description).

const heatmapDescription = `
# description of heatmap counters:
#   HEATMAP_F_BIN_WIDTH_SECONDS: time duration of each heatmap bin
#   HEATMAP_{READ|WRITE}_BIN_{*}: number of bytes read or written within specified heatmap bin
`
