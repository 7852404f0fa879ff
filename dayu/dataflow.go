package dayu

import "sort"

// Direction is the way data moves on an edge of the dataflow.
type Direction string

const (
	// Read edges go file → stage.
	Read Direction = "read"
	// Write edges go stage → file.
	Write Direction = "write"
)

// Edge is one edge of the dataflow graph: a stage reading a file (file →
// stage) or writing one (stage → file). Stages are merged by name over their
// pids and files by base name, since that is how the graph is drawn.
type Edge struct {
	Stage     string
	File      string // base name
	Direction Direction
	// Bytes and Ops count the I/O of every memory type, data and metadata.
	Bytes, Ops int64
	// Layer tells where the figures come from: the VFD's measured I/O when
	// the stage has VFD stats for the file, else the VOL's dataset
	// estimates (reads × storage size).
	Layer Layer
}

type flowKey struct{ stage, file string }

type flowSums struct {
	readBytes, readOps, writeBytes, writeOps int64
}

// Dataflow returns the graph's edges: stages in workflow order, reads before
// writes, files by name.
func (w *Workflow) Dataflow() []Edge {
	vfd := map[flowKey]*flowSums{}
	vol := map[flowKey]*flowSums{}
	rank := map[string]int{}
	for _, s := range w.Stages {
		if _, ok := rank[s.Name]; !ok {
			rank[s.Name] = len(rank)
		}
		for _, f := range s.Files {
			k := flowKey{s.Name, f.Name}
			if f.HasVFD {
				sum := sumsFor(vfd, k)
				rb, ro, wb, wo := f.IO.Totals()
				sum.add(rb, ro, wb, wo)
				continue
			}
			// The VOL's figures are not validated like the VFD's counters
			// (dset_offset and npoints are -1 when unknown): ignore negatives.
			sum := sumsFor(vol, k)
			for _, d := range f.Datasets {
				sum.add(max(d.BytesRead, 0), max(d.ReadCount, 0), max(d.BytesWritten, 0), max(d.WriteCount, 0))
			}
		}
	}
	var edges []Edge
	add := func(k flowKey, sum *flowSums, layer Layer) {
		if sum.readBytes > 0 || sum.readOps > 0 {
			edges = append(edges, Edge{Stage: k.stage, File: k.file, Direction: Read, Bytes: sum.readBytes, Ops: sum.readOps, Layer: layer})
		}
		if sum.writeBytes > 0 || sum.writeOps > 0 {
			edges = append(edges, Edge{Stage: k.stage, File: k.file, Direction: Write, Bytes: sum.writeBytes, Ops: sum.writeOps, Layer: layer})
		}
	}
	for k, sum := range vfd {
		add(k, sum, LayerVFD)
	}
	for k, sum := range vol {
		if vfd[k] == nil {
			add(k, sum, LayerVOL)
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		a, b := edges[i], edges[j]
		if a.Stage != b.Stage {
			return rank[a.Stage] < rank[b.Stage]
		}
		if a.Direction != b.Direction {
			return a.Direction == Read
		}
		return a.File < b.File
	})
	return edges
}

func sumsFor(m map[flowKey]*flowSums, k flowKey) *flowSums {
	s := m[k]
	if s == nil {
		s = &flowSums{}
		m[k] = s
	}
	return s
}

func (s *flowSums) add(readBytes, readOps, writeBytes, writeOps int64) {
	s.readBytes = addSat(s.readBytes, readBytes)
	s.readOps = addSat(s.readOps, readOps)
	s.writeBytes = addSat(s.writeBytes, writeBytes)
	s.writeOps = addSat(s.writeOps, writeOps)
}
