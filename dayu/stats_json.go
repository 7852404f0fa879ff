package dayu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// decodeJSON decodes one JSON value, telling a document cut short
// (truncated) from a damaged one (syntax).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, &ParseError{Reason: ReasonTruncated, Msg: "JSON ends before its last value closes"}
		}
		return nil, &ParseError{Reason: ReasonSyntax, Msg: err.Error()}
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &ParseError{Reason: ReasonSyntax, Msg: "text after the JSON value"}
	}
	return v, nil
}

// parseStatsJSON reads the current tracker output: an array of objects, each
// holding one or more "file-N" records and, usually, the "Task" block that
// follows them.
func parseStatsJSON(sf *StatsFile, data []byte) error {
	v, err := decodeJSON(data)
	if err != nil {
		return err
	}
	root, err := fromJSON(v, 0)
	if err != nil {
		return err
	}
	items := []*node{root}
	if root.kind == listNode {
		items = root.items
	}
	var pending []*Entry
	for _, item := range items {
		if item.kind != mapNode {
			continue
		}
		// Records first, then the task block that closes them.
		for i, key := range item.keys {
			if isEntryKey(key) {
				e, err := jsonEntry(key, item.items[i])
				if err != nil {
					return err
				}
				sf.Entries = append(sf.Entries, e)
				pending = append(pending, e)
			}
		}
		for i, key := range item.keys {
			if _, ok := taskKey(key); ok && item.items[i].kind == mapNode {
				t, err := jsonTask(item.items[i], sf.Layer)
				if err != nil {
					return err
				}
				sf.Tasks = append(sf.Tasks, t)
				for _, e := range pending {
					e.task = t
				}
				pending = pending[:0]
			}
		}
	}
	kept := sf.Entries[:0]
	for _, e := range sf.Entries {
		if e.Path != "" {
			kept = append(kept, e)
		}
	}
	sf.Entries = kept
	return nil
}

func jsonEntry(id string, n *node) (*Entry, error) {
	e := &Entry{ID: id}
	if n.kind != mapNode {
		return e, nil
	}
	for i, key := range n.keys {
		v := n.items[i]
		var err error
		switch key {
		case "datasets":
			err = jsonDatasets(e, v)
		case "data", "metadata":
			err = jsonIO(e, v)
		default:
			if v.kind == mapNode {
				keep(&e.Extra, key, v)
				continue
			}
			err = e.set(key, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
	}
	return e, nil
}

// jsonDatasets reads "datasets": a list of dataset objects, or one object.
func jsonDatasets(e *Entry, v *node) error {
	list := []*node{v}
	if v.kind == listNode {
		list = v.items
	}
	for _, dn := range list {
		if dn.kind != mapNode {
			continue
		}
		d := &Dataset{Offset: -1}
		for i, key := range dn.keys {
			if err := d.set(key, dn.items[i]); err != nil {
				return fmt.Errorf("datasets: %w", err)
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
func jsonIO(e *Entry, v *node) error {
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
				if err := jsonMem(e, "", t, child); err != nil {
					return err
				}
				continue
			}
			if child.kind != mapNode {
				continue
			}
			for j, mkey := range child.keys {
				if t, ok := memTypeOf(mkey); ok {
					if err := jsonMem(e, key, t, child.items[j]); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func jsonMem(e *Entry, dataset string, t MemType, v *node) error {
	b := &memBlock{typ: t, dataset: dataset}
	if v.kind == mapNode {
		for i, key := range v.keys {
			if err := b.set(key, v.items[i]); err != nil {
				return fmt.Errorf("%s %s: %w", strings.TrimSpace(dataset), t, err)
			}
		}
	}
	e.blocks = append(e.blocks, b)
	return nil
}

func jsonTask(n *node, layer Layer) (*Task, error) {
	t := &Task{}
	for i, key := range n.keys {
		if err := t.set(key, n.items[i], layer); err != nil {
			return nil, fmt.Errorf("Task: %w", err)
		}
	}
	return t, nil
}
