package signals

import (
	"cmp"
	"slices"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Summary is what the sidecar keeps of a log, or of all the logs of one
// job merged with Merge: job data, the sums of each data module, the sum of
// the shared POSIX records, the heatmap of each layer and the largest
// records. Every exported signal is computed from it; the log is not kept.
type Summary struct {
	UID, JobID int64
	NProcs     int64
	// Start and End are the job's start and end in seconds since the epoch
	// (with nanoseconds from format 3.41 on).
	Start, End float64
	Version    string // log format version ("3.41")
	// Modules holds, in module id order, the sum of each data module that
	// has records.
	Modules []Inputs
	// SharedPOSIX is the sum of the POSIX records of shared files (rank -1),
	// for the job-level rank imbalance.
	SharedPOSIX Inputs
	// Layers holds the heatmap of each instrumented layer summed over the
	// job's records, sorted by name.
	Layers []Layer
	// Records holds the data module records with the most bytes (read +
	// written), most first, at most the number asked of Summarize.
	Records []Record
	// Logs is the number of logs summed.
	Logs int
	// Err is the damage met while reading the log (see WriteReport).
	Err error
}

// Record is one data module record of a Summary: its key and counters.
type Record struct {
	Key darshan.Key
	Inputs
}

// Signal returns the record's level 3 signal s.
func (r *Record) Signal(s Signal) Value { return r.Inputs.RecordSignal(s, r.Key.Rank) }

// POSIXJobSignals are the job-level access-pattern signals: the record
// formulas applied to the sums of the job's POSIX records (the rank
// imbalance to the sums of its shared POSIX records).
var POSIXJobSignals = []Signal{SeqReadRatio, SeqWriteRatio, ConsecReadRatio, ConsecWriteRatio,
	SeqRatio, ConsecRatio, SmallReadRatio, SmallWriteRatio, UnalignedReadRatio, UnalignedWriteRatio,
	MetaOps, MetaIntensity, MetaFraction, RankImbalanceRatio}

// Summarize reads l's data module and HEATMAP records and returns its
// Summary, keeping the maxRecords records with the most bytes (none when
// maxRecords ≤ 0). Damage is in Summary.Err; the summary holds what was read
// before it.
func Summarize(l *darshan.Log, maxRecords int) *Summary {
	z := NewSummarizer(l, maxRecords)
	return z.Summary(walk(l, z.Add))
}

// Summarizer builds the Summary of a log record by record, for a caller
// that reads the log's records once for several uses (the sidecar feeds
// the same records to the insights): Summarize is NewSummarizer, Add with
// every record of the modules Reads accepts, in module id order, then
// Summary. Add takes the records in the order Summarize reads them, so the
// floating point sums are the same, to the bit.
type Summarizer struct {
	l      *darshan.Log
	s      *Summary
	sums   map[darshan.ModuleID]*Inputs
	layers map[string]*Layer
	top    topRecords
	x      extractor
	in     Inputs
}

// NewSummarizer starts the Summary of l (see Summarize).
func NewSummarizer(l *darshan.Log, maxRecords int) *Summarizer {
	j := &l.Job
	return &Summarizer{l: l,
		s: &Summary{UID: j.UID, JobID: j.JobID, NProcs: j.NProcs, Version: l.Header.Version, Logs: 1,
			Start: float64(j.StartTime) + float64(j.StartNsec)/1e9,
			End:   float64(j.EndTime) + float64(j.EndNsec)/1e9},
		sums:   map[darshan.ModuleID]*Inputs{},
		layers: map[string]*Layer{},
		top:    topRecords{max: maxRecords},
	}
}

// Reads reports whether the Summary reads module m's records: the data
// modules and HEATMAP.
func Reads(m darshan.ModuleID) bool { return IsDataModule(m) || m == darshan.Heatmap }

// Add adds record r, one of a module Reads accepts (others are ignored).
// r is not kept: a RecordReader may reuse it.
func (z *Summarizer) Add(r darshan.Record) {
	if h, ok := r.(*darshan.HeatmapRecord); ok {
		name := LayerName(h.ID, z.l.Names)
		ly := z.layers[name]
		if ly == nil {
			ly = &Layer{Name: name}
			z.layers[name] = ly
		}
		hm := HeatmapOf(h)
		ly.Add(z.s.Start, &hm)
		return
	}
	in := &z.in
	if !z.x.inputs(r, in) {
		return
	}
	sum := z.sums[in.Module]
	if sum == nil {
		sum = &Inputs{Module: in.Module}
		z.sums[in.Module] = sum
	}
	sum.Add(in)
	k := r.RecordKey()
	if k.Module == darshan.POSIX && k.Rank == -1 {
		z.s.SharedPOSIX.Add(in)
	}
	z.top.offer(Record{Key: k, Inputs: *in})
}

// Summary returns the Summary of the records added; err is the damage met
// reading them (Summary.Err). The Summarizer is done with.
func (z *Summarizer) Summary(err error) *Summary {
	s := z.s
	s.Err = err
	s.SharedPOSIX.Module = darshan.POSIX
	for _, m := range DataModules {
		if sum := z.sums[m]; sum != nil {
			s.Modules = append(s.Modules, *sum)
		}
	}
	s.Layers = sortedLayers(z.layers)
	s.Records = z.top.sorted()
	return s
}

func sortedLayers(layers map[string]*Layer) []Layer {
	out := make([]Layer, 0, len(layers))
	for _, l := range layers {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Layer) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Module returns the sum of module m's records, or nil.
func (s *Summary) Module(m darshan.ModuleID) *Inputs {
	for i := range s.Modules {
		if s.Modules[i].Module == m {
			return &s.Modules[i]
		}
	}
	return nil
}

// JobSignal returns the level 1 signal sig.
func (s *Summary) JobSignal(sig Signal) Value {
	in := jobInputs(s.Modules)
	return in.JobSignal(sig)
}

// POSIXJobSignal returns the job-level access-pattern signal sig, one of
// POSIXJobSignals. A job without shared POSIX records has no rank
// imbalance (not_shared_file).
func (s *Summary) POSIXJobSignal(sig Signal) Value {
	if sig == RankImbalanceRatio {
		rank := int64(-1)
		if s.SharedPOSIX.Records == 0 {
			rank = 0
		}
		return s.SharedPOSIX.RecordSignal(sig, rank)
	}
	in := s.Module(darshan.POSIX)
	if in == nil {
		in = &Inputs{Module: darshan.POSIX}
	}
	return in.RecordSignal(sig, -1)
}

// Merge returns the summary of the logs of one job: sums of modules,
// shared POSIX records and heatmaps (aligned on time), the records with the
// same key summed and the maxRecords largest kept, the earliest start, the
// latest end, the largest process count and the version of the log that
// ended last. The summaries are not changed.
func Merge(maxRecords int, logs ...*Summary) *Summary {
	out := &Summary{}
	if len(logs) == 0 {
		return out
	}
	sums := map[darshan.ModuleID]*Inputs{}
	layers := map[string]*Layer{}
	records := map[darshan.Key]*Record{}
	var order []darshan.Key
	for i, l := range logs {
		if i == 0 || l.Start < out.Start {
			out.Start = l.Start
		}
		if i == 0 || l.End >= out.End {
			out.End, out.Version = l.End, l.Version
		}
		out.UID, out.JobID = l.UID, l.JobID
		out.NProcs = max(out.NProcs, l.NProcs)
		out.Logs += l.Logs
		for k := range l.Modules {
			m := &l.Modules[k]
			if sums[m.Module] == nil {
				sums[m.Module] = &Inputs{Module: m.Module}
			}
			sums[m.Module].Add(m)
		}
		out.SharedPOSIX.Add(&l.SharedPOSIX)
		for k := range l.Layers {
			ly := &l.Layers[k]
			if layers[ly.Name] == nil {
				layers[ly.Name] = &Layer{Name: ly.Name}
			}
			layers[ly.Name].Merge(ly)
		}
		for k := range l.Records {
			r := &l.Records[k]
			if have := records[r.Key]; have != nil {
				have.Inputs.Add(&r.Inputs)
				continue
			}
			c := *r
			records[r.Key] = &c
			order = append(order, r.Key)
		}
	}
	out.SharedPOSIX.Module = darshan.POSIX
	for _, m := range DataModules {
		if sum := sums[m]; sum != nil {
			out.Modules = append(out.Modules, *sum)
		}
	}
	out.Layers = sortedLayers(layers)
	top := &topRecords{max: maxRecords}
	for _, k := range order {
		top.offer(*records[k])
	}
	out.Records = top.sorted()
	return out
}

// Merge adds layer o into l (see Add).
func (l *Layer) Merge(o *Layer) {
	if o.NA != OK && (l.NA == OK || o.NA < l.NA) {
		l.NA = o.NA
	}
	if o.Records == 0 {
		return
	}
	n := l.Records
	l.Add(o.Start, &o.Heatmap)
	l.Records = n + o.Records
}

// topRecords keeps the max records with the most bytes: a min-heap on
// (bytes, then key order reversed) so that ties keep the lower keys.
type topRecords struct {
	max  int
	heap []Record
}

// less orders records from the one to drop first.
func lessRecord(a, b *Record) bool {
	if ab, bb := a.Bytes(), b.Bytes(); ab != bb {
		return ab < bb
	}
	return compareKeys(a.Key, b.Key) > 0
}

func compareKeys(a, b darshan.Key) int {
	return cmp.Or(cmp.Compare(a.Module, b.Module), cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.ID, b.ID))
}

func (t *topRecords) offer(r Record) {
	if t.max <= 0 {
		return
	}
	h := t.heap
	if len(h) < t.max {
		h = append(h, r)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !lessRecord(&h[i], &h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		t.heap = h
		return
	}
	if !lessRecord(&h[0], &r) {
		return
	}
	h[0] = r
	for i := 0; ; {
		l, s := 2*i+1, i
		if l < len(h) && lessRecord(&h[l], &h[s]) {
			s = l
		}
		if l+1 < len(h) && lessRecord(&h[l+1], &h[s]) {
			s = l + 1
		}
		if s == i {
			break
		}
		h[i], h[s] = h[s], h[i]
		i = s
	}
}

// sorted returns the records kept, most bytes first (then by key).
func (t *topRecords) sorted() []Record {
	out := slices.Clone(t.heap)
	slices.SortFunc(out, func(a, b Record) int {
		if lessRecord(&a, &b) {
			return 1
		}
		if lessRecord(&b, &a) {
			return -1
		}
		return 0
	})
	return out
}
