package parsertext

import (
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// HEATMAP: darshan-heatmap-logutils' description and record printing: the
// bin width, then every read bin, then every write bin.

// binName returns prefix+i, cached in names.
func binName(names *[]string, prefix string, i int) string {
	for len(*names) <= i {
		*names = append(*names, prefix+strconv.Itoa(len(*names)))
	}
	return (*names)[i]
}

func (d *dumper) heatmapRecord(r *darshan.HeatmapRecord) {
	d.beginNamed(r.Key)
	d.floatLine("HEATMAP_F_BIN_WIDTH_SECONDS", r.BinWidth)
	for i, v := range r.ReadBins {
		d.intLine(binName(&d.readBins, "HEATMAP_READ_BIN_", i), v)
	}
	for i, v := range r.WriteBins {
		d.intLine(binName(&d.writeBins, "HEATMAP_WRITE_BIN_", i), v)
	}
}
