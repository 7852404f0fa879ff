package dayu

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// StageMap is a task_to_file or task_order_list file: the workflow's stages
// with their order and, in task_to_file, the files each reads and writes.
type StageMap struct {
	Name   string
	Stages []*StageSpec
}

// StageSpec is one stage of a stage map.
type StageSpec struct {
	// Name is the stage name without a "-<pid>" suffix.
	Name string
	// Key is the map key as written.
	Key string
	// PID is task_pid, or the pid of a "<name>-<pid>" key; 0 when absent.
	PID int64
	// Order is the stage's position; -1 when the map does not say.
	Order int
	// Inputs and Outputs are the file names as listed, duplicates removed.
	Inputs, Outputs []string
	// IOCount is io_cnt; OpCountRange is op_count_range.
	IOCount      int64
	OpCountRange []int64
	Extra        map[string]string

	listed map[string]bool // "in:"/"out:" + name, for removing duplicates
}

// IsStageMapName tells a stage map file from a stats file by its name.
func IsStageMapName(base string) bool {
	b := strings.ToLower(base)
	return strings.Contains(b, "task_to_file") || strings.Contains(b, "task_order_list")
}

// ParseStageMap reads a stage map in YAML-ish or JSON form.
func ParseStageMap(name string, data []byte) (*StageMap, error) {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	m := &StageMap{Name: base}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &ParseError{File: base, Reason: ReasonEmpty, Msg: "no content"}
	}
	var err error
	if trimmed[0] == '{' || trimmed[0] == '[' {
		err = parseStageMapJSON(m, data)
	} else {
		err = parseStageMapYAML(m, data)
	}
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			pe = &ParseError{Reason: ReasonSyntax, Msg: err.Error()}
		}
		pe.File = base
		return nil, pe
	}
	if len(m.Stages) == 0 {
		return nil, &ParseError{File: base, Reason: ReasonNotStats, Msg: "no stages"}
	}
	return m, nil
}

// newSpec makes a stage from a map key: "openmm-138070" names stage openmm of
// pid 138070.
func newSpec(key string) *StageSpec {
	s := &StageSpec{Name: key, Key: key, Order: -1}
	if name, pid, ok := splitTaskName(key); ok {
		s.Name, s.PID = name, pid
	}
	return s
}

func (s *StageSpec) set(key string, v *node) error {
	switch key {
	case "order":
		n, err := v.int()
		if err != nil {
			return fmt.Errorf("order: %w", err)
		}
		if n < 0 || n > 1<<30 {
			return fmt.Errorf("order %d out of range", n)
		}
		s.Order = int(n)
	case "task_pid":
		keyPID := s.PID
		if err := intInto(&s.PID, key, v); err != nil {
			return err
		}
		// "run-2" with task_pid 75190 is a stage named "run-2".
		if keyPID != 0 && keyPID != s.PID {
			s.Name = s.Key
		}
	case "io_cnt":
		return intInto(&s.IOCount, key, v)
	case "op_count_range":
		return intsInto(&s.OpCountRange, key, v)
	case "input":
		s.Inputs = s.addListed(s.Inputs, "in:", v.strs())
	case "output":
		s.Outputs = s.addListed(s.Outputs, "out:", v.strs())
	default:
		keep(&s.Extra, key, v)
	}
	return nil
}

// addListed appends names not listed yet: the 9-stage map lists one
// output twice.
func (s *StageSpec) addListed(list []string, prefix string, names []string) []string {
	if s.listed == nil {
		s.listed = map[string]bool{}
	}
	for _, n := range names {
		if !s.listed[prefix+n] {
			s.listed[prefix+n] = true
			list = append(list, n)
		}
	}
	return list
}

// appendUnique appends the strings of add that list lacks, in time linear
// in both.
func appendUnique(list []string, add ...string) []string {
	seen := make(map[string]bool, len(list)+len(add))
	for _, x := range list {
		seen[x] = true
	}
	for _, a := range add {
		if !seen[a] {
			seen[a] = true
			list = append(list, a)
		}
	}
	return list
}

// parseStageMapYAML reads
//
//	run_idfeature:            0: arldm_saveh5
//	  order: 0                1: arldm_train
//	  input:
//	    - "wrfout….nc"
//
// A top-level key with a value is an order list entry; one without opens a
// stage. File lists are "- item" lines under input: or output:, at the key's
// indentation or deeper.
func parseStageMapYAML(m *StageMap, data []byte) error {
	var cur *StageSpec
	var list string // the key whose "- item" lines are being read
	listIndent := 0
	return splitLines(data, func(l line) error {
		fail := func(msg string) error {
			reason := ReasonSyntax
			if l.last {
				reason = ReasonTruncated
			}
			return &ParseError{Line: l.num, Reason: reason, Msg: msg}
		}
		if l.indent == 0 && !l.dash {
			list, cur = "", nil
			if !l.hasKey {
				return fail(fmt.Sprintf("line is not key: value: %q", clip(l.value)))
			}
			if l.value == "" {
				cur = newSpec(l.key)
				m.Stages = append(m.Stages, cur)
				return nil
			}
			order, err := strconv.Atoi(l.key)
			if err != nil || order < 0 {
				return nil // an unknown top-level field
			}
			v, err := parseValue(l.value)
			if err != nil {
				return fail(err.Error())
			}
			spec := newSpec(v.str())
			spec.Order = order
			m.Stages = append(m.Stages, spec)
			return nil
		}
		if cur == nil {
			return nil // inside an unknown top-level block
		}
		if !l.hasKey {
			if list == "" || l.indent < listIndent {
				return fail(fmt.Sprintf("list item outside a list: %q", clip(l.value)))
			}
			v, err := parseValue(l.value)
			if err != nil {
				return fail(err.Error())
			}
			if err := cur.set(list, v); err != nil {
				return fail(err.Error())
			}
			return nil
		}
		list = ""
		v, err := parseValue(l.value)
		if err != nil {
			return fail(fmt.Sprintf("%s: %v", l.key, err))
		}
		if l.value == "" {
			list, listIndent = l.key, l.indent
			return nil
		}
		if err := cur.set(l.key, v); err != nil {
			return fail(err.Error())
		}
		return nil
	})
}

// parseStageMapJSON reads {"0": "name", …} or {"name-pid": {"order": …}, …}.
func parseStageMapJSON(m *StageMap, data []byte) error {
	v, err := decodeJSON(data)
	if err != nil {
		return err
	}
	root, err := fromJSON(v, 0)
	if err != nil {
		return err
	}
	if root.kind != mapNode {
		return &ParseError{Reason: ReasonNotStats, Msg: "not a JSON object"}
	}
	for i, key := range root.keys {
		val := root.items[i]
		switch val.kind {
		case scalarNode:
			order, err := strconv.Atoi(key)
			if err != nil || order < 0 {
				continue
			}
			spec := newSpec(val.text)
			spec.Order = order
			m.Stages = append(m.Stages, spec)
		case mapNode:
			s := newSpec(key)
			for j, k := range val.keys {
				if err := s.set(k, val.items[j]); err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
			}
			m.Stages = append(m.Stages, s)
		}
	}
	return nil
}
