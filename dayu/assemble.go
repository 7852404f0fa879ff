package dayu

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// stageKey identifies a stage: one name in one process.
type stageKey struct {
	name string
	pid  int64
}

// entryRef is an entry with its place in the input, for stable ordering.
type entryRef struct {
	e    *Entry
	file int // index of its stats file
	seq  int // index in that file
}

// Assemble puts the stats files and stage maps of one workflow run together
// into stages and files. It never fails: what cannot be attributed to a
// named stage goes to a stage named "task-<pid>".
//
// A record's stage is, in order of preference: the name in its task_name
// (2024+); the task_name of another record of the same pid; the stage map
// entry for its pid (task_pid, or a "<name>-<pid>" key); and, when the stage
// map lists stages without pids (the 2023 samples, where one process ran
// every stage), the stage whose input or output list names the file, found
// by walking the process's file opens in time order (see assignByWalk).
func Assemble(name string, maps []*StageMap, files []*StatsFile) *Workflow {
	idx := indexStageMaps(maps)
	var refs []entryRef
	pidNames := map[int64]string{}
	for fi, sf := range files {
		for si, e := range sf.Entries {
			refs = append(refs, entryRef{e: e, file: fi, seq: si})
			if n, pid, ok := splitTaskName(e.TaskName); ok {
				if _, dup := pidNames[pid]; !dup {
					pidNames[pid] = n
				}
			}
		}
		for _, t := range sf.Tasks {
			if n, pid, ok := splitTaskName(t.Name); ok {
				if _, dup := pidNames[pid]; !dup {
					pidNames[pid] = n
				}
			}
		}
	}

	keyOf := map[*Entry]stageKey{}
	unnamed := map[int64][]entryRef{}
	for _, r := range refs {
		e := r.e
		switch n, _, ok := splitTaskName(e.TaskName); {
		case ok:
			keyOf[e] = stageKey{n, e.PID}
		case e.TaskName != "":
			keyOf[e] = stageKey{e.TaskName, e.PID}
		case pidNames[e.PID] != "":
			keyOf[e] = stageKey{pidNames[e.PID], e.PID}
		case idx.byPID[e.PID] != nil && e.PID != 0:
			keyOf[e] = stageKey{idx.byPID[e.PID].Name, e.PID}
		case len(idx.unpinned) > 0:
			unnamed[e.PID] = append(unnamed[e.PID], r)
		default:
			keyOf[e] = stageKey{fallbackName(e.PID), e.PID}
		}
	}
	for pid, rs := range unnamed {
		assignByWalk(pid, rs, idx.unpinned, keyOf)
	}

	w := &Workflow{Name: name}
	stages := map[stageKey]*Stage{}
	opens := map[*File]map[Layer]map[string]bool{}
	for _, r := range refs {
		k := keyOf[r.e]
		s := stages[k]
		if s == nil {
			s = &Stage{Name: k.name, PID: k.pid, Order: idx.order(k), OverheadMS: map[Layer]float64{}}
			stages[k] = s
			w.Stages = append(w.Stages, s)
		}
		f := s.file(r.e.Path)
		f.merge(r.e)
		if opens[f] == nil {
			opens[f] = map[Layer]map[string]bool{}
		}
		if opens[f][r.e.Layer] == nil {
			opens[f][r.e.Layer] = map[string]bool{}
		}
		opens[f][r.e.Layer][fmt.Sprint(r.file, "/", r.e.ID)] = true
	}
	for f, byLayer := range opens {
		for _, set := range byLayer {
			f.Opens = max(f.Opens, len(set))
		}
	}
	attributeOverhead(files, keyOf, stages)
	for _, s := range w.Stages {
		s.finish()
	}
	sort.SliceStable(w.Stages, func(i, j int) bool { return w.Stages[i].before(w.Stages[j]) })
	return w
}

func fallbackName(pid int64) string {
	if pid == 0 {
		return "unknown"
	}
	return fmt.Sprintf("task-%d", pid)
}

type stageIndex struct {
	byPID    map[int64]*StageSpec
	byName   map[string]int // order by stage name
	unpinned []*StageSpec   // stages with file lists and no pid, by order
}

func indexStageMaps(maps []*StageMap) stageIndex {
	idx := stageIndex{byPID: map[int64]*StageSpec{}, byName: map[string]int{}}
	merged := map[string]*StageSpec{}
	for _, m := range maps {
		for _, s := range m.Stages {
			if s.Order >= 0 {
				if o, ok := idx.byName[s.Name]; !ok || s.Order < o {
					idx.byName[s.Name] = s.Order
				}
			}
			if s.PID != 0 {
				if idx.byPID[s.PID] == nil {
					idx.byPID[s.PID] = s
				}
				continue
			}
			if len(s.Inputs)+len(s.Outputs) == 0 {
				continue
			}
			// The same stage may come from task_to_file and task_order_list.
			if u := merged[s.Name]; u != nil {
				u.Inputs = appendUnique(u.Inputs, s.Inputs...)
				u.Outputs = appendUnique(u.Outputs, s.Outputs...)
				continue
			}
			u := &StageSpec{Name: s.Name, Order: s.Order,
				Inputs: append([]string(nil), s.Inputs...), Outputs: append([]string(nil), s.Outputs...)}
			merged[s.Name] = u
			idx.unpinned = append(idx.unpinned, u)
		}
	}
	for _, u := range idx.unpinned {
		if o, ok := idx.byName[u.Name]; ok {
			u.Order = o
		}
	}
	sort.SliceStable(idx.unpinned, func(i, j int) bool {
		oi, oj := idx.unpinned[i].Order, idx.unpinned[j].Order
		if (oi < 0) != (oj < 0) {
			return oi >= 0
		}
		return oi < oj
	})
	return idx
}

func (idx stageIndex) order(k stageKey) int {
	if s := idx.byPID[k.pid]; s != nil && k.pid != 0 && s.Name == k.name && s.Order >= 0 {
		return s.Order
	}
	if o, ok := idx.byName[k.name]; ok {
		return o
	}
	return -1
}

// instance is one open of one file as the records of one stats file tell it:
// the VOL's dataset records and summary record share the record key.
type instance struct {
	refs          []entryRef
	name          string // base name
	time          int64
	reads, writes bool
}

// assignByWalk names the stages of one process that ran several stages of a
// stage map in turn. The opens are walked in time order; the current stage
// keeps an open that it lists (a read of one of its inputs, a write of one
// of its outputs), else the walk moves to the first later stage that lists
// it. An open no stage lists stays with the current stage: it happened while
// that stage ran.
//
// In the 2-stage WRF sample this puts the reads of the wrfout files and the
// writes of the cloudid files in run_idfeature, and the later reads of the
// cloudid files and the write of the track file in run_tracksingle — the
// split task_to_file.yaml describes.
func assignByWalk(pid int64, refs []entryRef, stages []*StageSpec, keyOf map[*Entry]stageKey) {
	byKey := map[string]*instance{}
	var list []*instance
	for _, r := range refs {
		k := fmt.Sprint(r.file, "/", r.e.ID, "/", r.e.Path)
		in := byKey[k]
		if in == nil {
			in = &instance{name: baseName(r.e.Path)}
			byKey[k] = in
			list = append(list, in)
		}
		in.refs = append(in.refs, r)
		rd, wr := r.e.direction()
		in.reads = in.reads || rd
		in.writes = in.writes || wr
		if t := r.e.firstTime(); t != 0 && (in.time == 0 || t < in.time) {
			in.time = t
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if (a.time == 0) != (b.time == 0) {
			return a.time != 0
		}
		if a.time != b.time {
			return a.time < b.time
		}
		if a.refs[0].file != b.refs[0].file {
			return a.refs[0].file < b.refs[0].file
		}
		return a.refs[0].seq < b.refs[0].seq
	})
	sets := make([]stageFiles, len(stages))
	for i, s := range stages {
		sets[i] = newStageFiles(s)
	}
	cur := -1
	for _, in := range list {
		next := -1
		if cur >= 0 && sets[cur].lists(in) {
			next = cur
		} else {
			for k := cur + 1; k < len(stages); k++ {
				if sets[k].lists(in) {
					next = k
					break
				}
			}
		}
		if next < 0 {
			next = max(cur, 0)
		}
		cur = next
		for _, r := range in.refs {
			keyOf[r.e] = stageKey{stages[cur].Name, pid}
		}
	}
}

// stageFiles holds the base names a stage map entry lists.
type stageFiles struct{ inputs, outputs map[string]bool }

func newStageFiles(s *StageSpec) stageFiles {
	sf := stageFiles{inputs: map[string]bool{}, outputs: map[string]bool{}}
	for _, n := range s.Inputs {
		sf.inputs[baseName(n)] = true
	}
	for _, n := range s.Outputs {
		sf.outputs[baseName(n)] = true
	}
	return sf
}

// lists tells whether the stage names the open's file in the direction of
// the open. An open that neither reads nor writes matches either list.
func (s stageFiles) lists(in *instance) bool {
	if !in.reads && !in.writes {
		return s.inputs[in.name] || s.outputs[in.name]
	}
	return (in.reads && s.inputs[in.name]) || (in.writes && s.outputs[in.name])
}

// direction tells whether a record read and wrote its file. VFD counts are
// measured; the VOL's are not (its read count includes H5VLobject_get on
// files being written), so for the VOL the open intent weighs in.
func (e *Entry) direction() (reads, writes bool) {
	if len(e.IO) > 0 || e.ReadOps > 0 || e.WriteOps > 0 {
		rb, ro, wb, wo := e.IO.Totals()
		return rb > 0 || ro > 0 || e.ReadOps > 0, wb > 0 || wo > 0 || e.WriteOps > 0
	}
	for _, d := range e.Datasets {
		reads = reads || d.ReadCount > 0 || d.BytesRead > 0
		writes = writes || d.WriteCount > 0 || d.BytesWritten > 0
	}
	writes = writes || e.Objects.DatasetsCreated > 0
	for _, in := range e.Intents {
		switch in {
		case "H5F_ACC_RDONLY":
			reads = true
		case "H5F_ACC_TRUNC", "H5F_ACC_CREAT", "H5F_ACC_EXCL":
			writes = true
		}
	}
	return reads, writes
}

// firstTime is the earliest time the record tells, open or dataset start.
func (e *Entry) firstTime() int64 {
	t := e.Open
	for _, d := range e.Datasets {
		if d.Start != 0 && (t == 0 || d.Start < t) {
			t = d.Start
		}
	}
	return t
}

// attributeOverhead turns the running totals of the task blocks into
// increments and gives each to the stage of the records the block closed.
func attributeOverhead(files []*StatsFile, keyOf map[*Entry]stageKey, stages map[stageKey]*Stage) {
	for _, sf := range files {
		lastOf := map[*Task]*Entry{}
		for _, e := range sf.Entries {
			if e.task != nil {
				lastOf[e.task] = e
			}
		}
		prev := map[stageKey]float64{} // running total per (layer, pid)
		var owner *Stage
		for _, t := range sf.Tasks {
			if e := lastOf[t]; e != nil {
				owner = stages[keyOf[e]]
			}
			if owner == nil {
				continue
			}
			pid := t.PID
			if pid == 0 {
				pid = owner.PID
			}
			for _, layer := range []Layer{LayerVOL, LayerVFD} {
				total, ok := t.OverheadMS[layer]
				if !ok || total < 0 {
					continue
				}
				k := stageKey{string(layer), pid}
				delta := total - prev[k]
				if delta < 0 { // the running total restarted
					delta = total
				}
				prev[k] = total
				owner.OverheadMS[layer] += delta
			}
		}
	}
}

func baseName(p string) string {
	p = strings.TrimRight(strings.ReplaceAll(p, `\`, "/"), "/")
	if p == "" {
		return ""
	}
	return path.Base(p)
}
