package dayu

import (
	"bufio"
	"errors"
	"fmt"
)

// parseStatsJSON reads the current tracker output: an array of objects, each
// holding one or more "file-N" records and, usually, the "Task" block that
// follows them. The array is read a record at a time (jsonlex.go): each
// object's nodes are held while it is read into entries, then let go.
func parseStatsJSON(p *parse, sf *StatsFile, br *bufio.Reader, firstLine int) error {
	j := &jsonReader{br: br, p: p, line: firstLine}
	var pending []*Entry
	c, err := j.peek()
	if err != nil {
		return err
	}
	if c != '[' {
		// One object, or a scalar that is no stats file.
		item, err := j.value(0, "")
		if err != nil {
			return err
		}
		if err := jsonItem(p, sf, item, &pending); err != nil {
			return err
		}
		p.release()
		return j.end()
	}
	br.ReadByte()
	if c, err = j.peek(); err != nil {
		return err
	}
	if c == ']' {
		br.ReadByte()
		return j.end()
	}
	for {
		item, err := j.value(1, "")
		if err != nil {
			return err
		}
		if err := jsonItem(p, sf, item, &pending); err != nil {
			return err
		}
		p.release()
		if c, err = j.peek(); err != nil {
			return err
		}
		br.ReadByte()
		switch c {
		case ']':
			return j.end()
		case ',':
		default:
			return j.syntax()
		}
	}
}

// jsonItem reads one element of the array: its records first, then the
// task block that closes them. Records without a file name carry nothing
// to attribute and are left out.
func jsonItem(p *parse, sf *StatsFile, item *node, pending *[]*Entry) error {
	if item.kind != mapNode {
		return nil
	}
	for i, key := range item.keys {
		if isEntryKey(key) {
			e, err := jsonEntry(p, key, item.items[i], len(sf.Entries)+1)
			if err != nil {
				return err
			}
			if e.Path == "" {
				continue
			}
			sf.Entries = append(sf.Entries, e)
			*pending = append(*pending, e)
		}
	}
	for i, key := range item.keys {
		if _, ok := taskKey(key); ok && item.items[i].kind == mapNode {
			t, err := jsonTask(p, item.items[i], sf.Layer)
			if err != nil {
				return err
			}
			sf.Tasks = append(sf.Tasks, t)
			for _, e := range *pending {
				e.task = t
			}
			*pending = (*pending)[:0]
		}
	}
	return nil
}

// jsonEntry reads record number ord (messages name records by ordinal).
func jsonEntry(p *parse, id string, n *node, ord int) (*Entry, error) {
	if err := p.keep(costEntry); err != nil {
		return nil, err
	}
	id, err := p.str(id)
	if err != nil {
		return nil, err
	}
	e := &Entry{ID: id}
	if n.kind != mapNode {
		return e, nil
	}
	for i, key := range n.keys {
		v := n.items[i]
		var err error
		switch key {
		case "datasets":
			err = jsonDatasets(p, e, v)
		case "data", "metadata":
			err = jsonIO(p, e, v)
		default:
			if v.kind == mapNode {
				err = p.extra(&e.Extra, key, v)
				break
			}
			err = e.set(p, key, v)
		}
		if err != nil {
			if errors.Is(err, errBudget) {
				return nil, err
			}
			return nil, fmt.Errorf("record %d: %w", ord, err)
		}
	}
	// The record is whole: its I/O blocks are summed now.
	if err := e.sumBlocks(p); err != nil {
		return nil, err
	}
	return e, nil
}

// jsonDatasets reads "datasets": a list of dataset objects, or one object.
func jsonDatasets(p *parse, e *Entry, v *node) error {
	list := []*node{v}
	if v.kind == listNode {
		list = v.items
	}
	for _, dn := range list {
		if dn.kind != mapNode {
			continue
		}
		if err := p.keep(costDataset); err != nil {
			return err
		}
		d := &Dataset{Offset: -1}
		for i, key := range dn.keys {
			if err := d.set(p, key, dn.items[i]); err != nil {
				return fieldErr("datasets", err)
			}
		}
		if d.Name != "" {
			e.Datasets = append(e.Datasets, d)
		}
	}
	return nil
}

// jsonIO reads "data" or "metadata": a list of objects (or one object) whose
// keys are memory types, or dataset names holding memory types; "file" is
// the I/O not attributed to any dataset.
func jsonIO(p *parse, e *Entry, v *node) error {
	list := []*node{v}
	if v.kind == listNode {
		list = v.items
	}
	for _, group := range list {
		if group.kind != mapNode {
			continue
		}
		for i, key := range group.keys {
			child := group.items[i]
			if t, ok := memTypeOf(key); ok {
				if err := jsonMem(p, e, "", t, child); err != nil {
					return err
				}
				continue
			}
			if child.kind != mapNode {
				continue
			}
			for j, mkey := range child.keys {
				if t, ok := memTypeOf(mkey); ok {
					if err := jsonMem(p, e, key, t, child.items[j]); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func jsonMem(p *parse, e *Entry, dataset string, t MemType, v *node) error {
	if err := p.keep(costBlock + int64(len(dataset)+len(t))); err != nil {
		return err
	}
	if _, known := knownMemOrder[t]; !known {
		s, err := p.str(string(t))
		if err != nil {
			return err
		}
		t = MemType(s)
	}
	dataset, err := p.str(dataset)
	if err != nil {
		return err
	}
	b := &memBlock{typ: t, dataset: dataset}
	if v.kind == mapNode {
		for i, key := range v.keys {
			if err := b.set(p, key, v.items[i]); err != nil {
				return err
			}
		}
	}
	e.blocks = append(e.blocks, b)
	return nil
}

func jsonTask(p *parse, n *node, layer Layer) (*Task, error) {
	if err := p.keep(costTask); err != nil {
		return nil, err
	}
	t := &Task{}
	for i, key := range n.keys {
		if err := t.set(p, key, n.items[i], layer); err != nil {
			return nil, fieldErr("Task", err)
		}
	}
	return t, nil
}
