package dayu

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// checkGolden compares got with testdata/<name>, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), string(got), *update)
}

// summarizeStats writes a stable, compact account of a parsed stats file:
// one line per record group (the VOL writes a record per dataset), one per
// VFD memory type, one per task block, and totals.
func summarizeStats(sf *StatsFile) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "file %s\nformat %s, layer %s, pid %d, %d records, %d task blocks\n",
		sf.Name, sf.Format, sf.Layer, sf.PID, len(sf.Entries), len(sf.Tasks))
	var totalIO IOSet = IOSet{}
	var volR, volW, volRB, volWB int64
	datasets := 0
	for i := 0; i < len(sf.Entries); {
		e := sf.Entries[i]
		j := i + 1
		for j < len(sf.Entries) && sf.Entries[j].ID == e.ID && sf.Entries[j].Path == e.Path && sf.Entries[j].Layer == e.Layer {
			j++
		}
		group := sf.Entries[i:j]
		var names []string
		var r, w, rb, wb int64
		var open, close, size int64
		var intents, extra []string
		for _, g := range group {
			for _, d := range g.Datasets {
				names = append(names, d.Name)
				r += d.ReadCount
				w += d.WriteCount
				rb += d.BytesRead
				wb += d.BytesWritten
				for k := range d.Extra {
					extra = appendUnique(extra, "dataset."+k)
				}
			}
			open = max(open, g.Open)
			close = max(close, g.Close)
			size = max(size, g.Size)
			intents = appendUnique(intents, g.Intents...)
			for k := range g.Extra {
				extra = appendUnique(extra, k)
			}
			totalIO.Add(g.IO)
		}
		datasets += len(names)
		volR, volW, volRB, volWB = volR+r, volW+w, volRB+rb, volWB+wb
		sort.Strings(extra)
		fmt.Fprintf(&b, "%s %q pid=%d task=%q layer=%s records=%d open=%d close=%d size=%d intents=%v",
			e.ID, e.Path, e.PID, e.TaskName, e.Layer, len(group), open, close, size, intents)
		if e.AccessType != "" || e.FileType != "" {
			fmt.Fprintf(&b, " access=%s type=%s io_bytes=%d", e.AccessType, e.FileType, e.IOBytes)
		}
		if e.ReadOps != 0 || e.WriteOps != 0 {
			fmt.Fprintf(&b, " file_ops=r%d/w%d", e.ReadOps, e.WriteOps)
		}
		if e.Objects != (ObjectCounts{}) {
			fmt.Fprintf(&b, " objects=%+v", e.Objects)
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, " datasets=%d vol=r%d/%dB,w%d/%dB", len(names), r, rb, w, wb)
		}
		if len(extra) > 0 {
			fmt.Fprintf(&b, " extra=%v", extra)
		}
		b.WriteString("\n")
		for _, g := range group {
			writeIO(&b, "  ", g.IO)
			for _, d := range g.Datasets {
				if len(d.IO) > 0 {
					writeIO(&b, "  dataset "+d.Name+" ", d.IO)
				}
			}
		}
		i = j
	}
	for i, t := range sf.Tasks {
		fmt.Fprintf(&b, "task %d pid=%d name=%q page=%d timers=%v", i, t.PID, t.Name, t.PageSize, sortedFloats(t.TimersMS))
		if len(t.Extra) > 0 {
			fmt.Fprintf(&b, " extra=%v", sortedKeys(t.Extra))
		}
		b.WriteString("\n")
	}
	rb, ro, wb, wo := totalIO.Totals()
	fmt.Fprintf(&b, "total vfd read %d B / %d ops, write %d B / %d ops; vol %d datasets, reads %d (%d B), writes %d (%d B)\n",
		rb, ro, wb, wo, datasets, volR, volRB, volW, volWB)
	return b.Bytes()
}

func writeIO(b *bytes.Buffer, prefix string, io IOSet) {
	for _, t := range io.Types() {
		m := io[t]
		fmt.Fprintf(b, "%s%s read %d B / %d ops %s, write %d B / %d ops %s\n", prefix, t,
			m.ReadBytes, m.ReadOps, rangeSummary(m.ReadRanges), m.WriteBytes, m.WriteOps, rangeSummary(m.WriteRanges))
	}
}

func rangeSummary(rs []PageRange) string {
	if len(rs) == 0 {
		return "(no ranges)"
	}
	lo, hi := rs[0].First, rs[0].Last
	ilo, ihi := rs[0].Index, rs[0].Index
	for _, r := range rs {
		lo, hi = min(lo, r.First), max(hi, r.Last)
		ilo, ihi = min(ilo, r.Index), max(ihi, r.Index)
	}
	return fmt.Sprintf("(%d ranges, io %d..%d, pages %d..%d)", len(rs), ilo, ihi, lo, hi)
}

func sortedFloats(m map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%g", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func summarizeStageMap(m *StageMap) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "stage map %s, %d stages\n", m.Name, len(m.Stages))
	for _, s := range m.Stages {
		fmt.Fprintf(&b, "stage %q key=%q pid=%d order=%d io_cnt=%d op_count_range=%v\n", s.Name, s.Key, s.PID, s.Order, s.IOCount, s.OpCountRange)
		for _, in := range s.Inputs {
			fmt.Fprintf(&b, "  input %s\n", in)
		}
		for _, out := range s.Outputs {
			fmt.Fprintf(&b, "  output %s\n", out)
		}
	}
	return b.Bytes()
}

// summarizeWorkflow writes the assembled model: stages, their files and
// I/O, and the dataflow edges.
func summarizeWorkflow(w *Workflow) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "workflow %s, %d stages\n", w.Name, len(w.Stages))
	for _, s := range w.Stages {
		fmt.Fprintf(&b, "stage %s pid=%d order=%d start=%d end=%d wall=%.6fs overhead_ms=%v files=%d datasets=%d\n",
			s.Name, s.PID, s.Order, s.Start, s.End, s.WallSeconds(), sortedOverhead(s.OverheadMS), s.FilesTouched(), s.DatasetsTouched())
		writeIO(&b, "  stage io ", s.IO())
		for _, f := range s.Files {
			rb, ro, wb, wo := f.IO.Totals()
			fmt.Fprintf(&b, "  file %s path=%q opens=%d size=%d open=%d close=%d intents=%v vol=%t vfd=%t file_ops=r%d/w%d objects=%+v datasets=%d io=r%d/%d,w%d/%d\n",
				f.Name, f.Path, f.Opens, f.Size, f.Open, f.Close, f.Intents, f.HasVOL, f.HasVFD, f.ReadOps, f.WriteOps, f.Objects, len(f.Datasets), rb, ro, wb, wo)
		}
	}
	for _, e := range w.Dataflow() {
		if e.Direction == Read {
			fmt.Fprintf(&b, "edge %s -> %s read %d B %d ops (%s)\n", e.File, e.Stage, e.Bytes, e.Ops, e.Layer)
		} else {
			fmt.Fprintf(&b, "edge %s -> %s write %d B %d ops (%s)\n", e.Stage, e.File, e.Bytes, e.Ops, e.Layer)
		}
	}
	return b.Bytes()
}

func sortedOverhead(m map[Layer]float64) string {
	var parts []string
	for _, l := range []Layer{LayerVOL, LayerVFD} {
		if v, ok := m[l]; ok {
			parts = append(parts, fmt.Sprintf("%s=%g", l, v))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
