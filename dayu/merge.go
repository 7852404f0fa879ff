package dayu

import "sort"

// Merging records into the model: a stage's files by path, a file's
// datasets by name. Nothing here changes the parsed records, which the
// collector caches and assembles again when a sibling file changes.

// file returns the stage's file at path p, adding it if needed. The older
// VOL files write bare names where the VFD files of the same run write full
// paths; a bare name joins the one file of the stage with that base name.
func (s *Stage) file(p string) *File {
	if f := s.byPath[p]; f != nil {
		return f
	}
	if s.byPath == nil {
		s.byPath, s.byBase = map[string]*File{}, map[string][]*File{}
	}
	base := baseName(p)
	if same := s.byBase[base]; len(same) == 1 {
		f := same[0]
		if base == p {
			s.byPath[p] = f
			return f
		}
		if f.Path == f.Name { // the bare name came first: keep the full path
			f.Path = p
			s.byPath[p] = f
			return f
		}
	}
	f := &File{Path: p, Name: base, IO: IOSet{}}
	s.Files = append(s.Files, f)
	s.byPath[p] = f
	s.byBase[base] = append(s.byBase[base], f)
	return f
}

func (s *Stage) finish() {
	s.byPath, s.byBase = nil, nil
	for _, f := range s.Files {
		f.byName = nil
		for _, d := range f.Datasets {
			d.pages = nil
		}
		sort.Strings(f.Intents)
		sort.Slice(f.Datasets, func(i, j int) bool { return f.Datasets[i].Name < f.Datasets[j].Name })
		if f.Open != 0 && (s.Start == 0 || f.Open < s.Start) {
			s.Start = f.Open
		}
		s.End = max(s.End, f.Close, f.Open)
	}
	sort.SliceStable(s.Files, func(i, j int) bool {
		a, b := s.Files[i], s.Files[j]
		if a.Open != b.Open {
			return a.Open < b.Open
		}
		return a.Path < b.Path
	})
}

// before orders stages by their order in the stage map (stages the map does
// not know go last), then by start, name and pid. The map's order wins over
// time: the 9-stage sample re-ran one stage hours after the others.
func (s *Stage) before(o *Stage) bool {
	if s.Order != o.Order {
		if (s.Order < 0) != (o.Order < 0) {
			return s.Order >= 0
		}
		return s.Order < o.Order
	}
	if (s.Start == 0) != (o.Start == 0) {
		return s.Start != 0
	}
	if s.Start != o.Start {
		return s.Start < o.Start
	}
	if s.Name != o.Name {
		return s.Name < o.Name
	}
	return s.PID < o.PID
}

// merge adds one record to the file.
func (f *File) merge(e *Entry) {
	switch e.Layer {
	case LayerVFD:
		f.HasVFD = true
	default:
		f.HasVOL = true
	}
	f.Intents = appendUnique(f.Intents, e.Intents...)
	f.Size = max(f.Size, e.Size)
	if t := e.firstTime(); t != 0 && (f.Open == 0 || t < f.Open) {
		f.Open = t
	}
	f.Close = max(f.Close, e.Close)
	f.ReadOps += e.ReadOps
	f.WriteOps += e.WriteOps
	f.IO.Add(e.IO)
	f.Objects.add(e.Objects)
	for _, d := range e.Datasets {
		f.dataset(d.Name).merge(d)
		f.Close = max(f.Close, d.End)
	}
}

func (f *File) dataset(name string) *Dataset {
	if d := f.byName[name]; d != nil {
		return d
	}
	if f.byName == nil {
		f.byName = map[string]*Dataset{}
	}
	d := &Dataset{Name: name, Offset: -1}
	f.Datasets = append(f.Datasets, d)
	f.byName[name] = d
	return d
}

// merge adds another record of the same dataset: counts add up, times and
// page spans widen, descriptions keep the first value written.
func (d *Dataset) merge(o *Dataset) {
	if o.Start != 0 && (d.Start == 0 || o.Start < d.Start) {
		d.Start = o.Start
	}
	d.End = max(d.End, o.End)
	for _, p := range [][2]*string{{&d.DTClass, &o.DTClass}, {&d.DSClass, &o.DSClass}, {&d.Layout, &o.Layout},
		{&d.SelectType, &o.SelectType}, {&d.AccessType, &o.AccessType}} {
		if *p[0] == "" {
			*p[0] = *p[1]
		}
	}
	d.StorageSize = max(d.StorageSize, o.StorageSize)
	d.Elements = max(d.Elements, o.Elements)
	d.TypeSize = max(d.TypeSize, o.TypeSize)
	d.SelectPoints = max(d.SelectPoints, o.SelectPoints)
	if len(o.Dimensions) > 0 {
		d.Dimensions = append([]int64(nil), o.Dimensions...)
	}
	d.ReadCount += o.ReadCount
	d.WriteCount += o.WriteCount
	d.BytesRead += o.BytesRead
	d.BytesWritten += o.BytesWritten
	if d.Offset < 0 && o.Offset >= 0 {
		d.Offset = o.Offset
	}
	switch {
	case len(o.DataPages) != 2:
	case len(d.DataPages) != 2:
		d.DataPages = []int64{o.DataPages[0], o.DataPages[1]}
	default:
		d.DataPages = []int64{min(d.DataPages[0], o.DataPages[0]), max(d.DataPages[1], o.DataPages[1])}
	}
	if d.pages == nil {
		d.pages = map[int64]bool{}
	}
	for _, p := range o.MetadataPages {
		if !d.pages[p] {
			d.pages[p] = true
			d.MetadataPages = append(d.MetadataPages, p)
		}
	}
	d.AccessOrders = append(d.AccessOrders, o.AccessOrders...)
	if len(o.IO) > 0 {
		if d.IO == nil {
			d.IO = IOSet{}
		}
		d.IO.Add(o.IO)
	}
	for k, v := range o.Extra {
		if d.Extra == nil {
			d.Extra = map[string]string{}
		}
		if _, ok := d.Extra[k]; !ok {
			d.Extra[k] = v
		}
	}
}
