package dayu

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unsafe"
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

// ParseStageMap reads a stage map in YAML-ish or JSON form from memory.
func ParseStageMap(name string, data []byte) (*StageMap, error) {
	return ReadStageMap(name, bytes.NewReader(data), int64(len(data)), Limits{MaxFileBytes: math.MaxInt64})
}

// ReadStageMap reads a stage map from r, which holds size bytes (the fstat
// of the open file), as ReadStats reads a stats file: refused by its size
// over lim.MaxFileBytes before it is read, read within its budget.
func ReadStageMap(name string, r io.Reader, size int64, lim Limits) (*StageMap, error) {
	base := baseOf(name)
	if err := lim.CheckSize(base, size); err != nil {
		return nil, err
	}
	m := &StageMap{Name: base}
	p := newParse(size, false)
	br := bufio.NewReaderSize(&countingReader{r: r, p: p, max: lim.maxBytes()}, readBufferSize)
	first, newlines, ok, err := skipSpace(br)
	switch {
	case err != nil:
	case !ok:
		return nil, &ParseError{File: base, Reason: ReasonEmpty, Msg: msgNoContent}
	case first == '{' || first == '[':
		err = parseStageMapJSON(p, m, br, newlines+1)
	default:
		err = parseStageMapYAML(p, m, br, newlines+1)
	}
	if err != nil {
		return nil, asParseError(base, err)
	}
	if len(m.Stages) == 0 {
		return nil, &ParseError{File: base, Reason: ReasonNotStats, Msg: msgNoStages}
	}
	return m, nil
}

var costSpec = int64(unsafe.Sizeof(StageSpec{})) + 16

// newSpec makes a stage from a map key: "openmm-138070" names stage openmm of
// pid 138070.
func newSpec(p *parse, key string) (*StageSpec, error) {
	if err := p.keep(costSpec + 2*int64(len(key))); err != nil {
		return nil, err
	}
	key = string([]byte(key))
	s := &StageSpec{Name: key, Key: key, Order: -1}
	if name, pid, ok := splitTaskName(key); ok {
		s.Name, s.PID = name, pid
	}
	return s, nil
}

func (s *StageSpec) set(p *parse, key string, v *node) error {
	switch key {
	case "order":
		n, err := v.int()
		if err != nil {
			return fieldErr(key, err)
		}
		if n < 0 || n > 1<<30 {
			return errors.New(msgOrderRange)
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
		return p.intsInto(&s.OpCountRange, key, v)
	case "input", "output":
		var names []string
		if err := p.strsInto(&names, v); err != nil {
			return err
		}
		// Listed once for the duplicate check and once in the list.
		if err := p.keep(int64(len(names)) * costMapEntry); err != nil {
			return err
		}
		if key == "input" {
			s.Inputs = s.addListed(s.Inputs, "in:", names)
		} else {
			s.Outputs = s.addListed(s.Outputs, "out:", names)
		}
	default:
		return p.extra(&s.Extra, key, v)
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
func parseStageMapYAML(p *parse, m *StageMap, br *bufio.Reader, firstLine int) error {
	var cur *StageSpec
	var list string // the key whose "- item" lines are being read
	listIndent := 0
	return splitLines(br, p, firstLine, func(l line) error {
		fail := func(err error) error { return lineError(l, err) }
		if l.indent == 0 && !l.dash {
			list, cur = "", nil
			if !l.hasKey {
				return fail(errors.New(msgNotKeyValue))
			}
			if l.value == "" {
				spec, err := newSpec(p, l.key)
				if err != nil {
					return fail(err)
				}
				cur = spec
				m.Stages = append(m.Stages, cur)
				return nil
			}
			order, err := strconv.Atoi(l.key)
			if err != nil || order < 0 {
				return nil // an unknown top-level field
			}
			v, err := parseValueIn(p, l.value)
			if err != nil {
				return fail(err)
			}
			spec, err := newSpec(p, v.str())
			if err != nil {
				return fail(err)
			}
			spec.Order = order
			m.Stages = append(m.Stages, spec)
			return nil
		}
		if cur == nil {
			return nil // inside an unknown top-level block
		}
		if !l.hasKey {
			if list == "" || l.indent < listIndent {
				return fail(errors.New(msgListItem))
			}
			v, err := parseValueIn(p, l.value)
			if err != nil {
				return fail(err)
			}
			if err := cur.set(p, list, v); err != nil {
				return fail(err)
			}
			return nil
		}
		list = ""
		v, err := parseValueIn(p, l.value)
		if err != nil {
			return fail(fieldErr(l.key, err))
		}
		if l.value == "" {
			list, listIndent = string([]byte(l.key)), l.indent
			return nil
		}
		if err := cur.set(p, l.key, v); err != nil {
			return fail(err)
		}
		return nil
	}, nil)
}

// parseStageMapJSON reads {"0": "name", …} or {"name-pid": {"order": …}, …}.
func parseStageMapJSON(p *parse, m *StageMap, br *bufio.Reader, firstLine int) error {
	j := &jsonReader{br: br, p: p, line: firstLine}
	root, err := j.value(0, "")
	if err != nil {
		return err
	}
	if err := j.end(); err != nil {
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
			spec, err := newSpec(p, val.text)
			if err != nil {
				return err
			}
			spec.Order = order
			m.Stages = append(m.Stages, spec)
		case mapNode:
			s, err := newSpec(p, key)
			if err != nil {
				return err
			}
			for j, k := range val.keys {
				if err := s.set(p, k, val.items[j]); err != nil {
					if errors.Is(err, errBudget) {
						return err
					}
					return fmt.Errorf("stage %d: %w", len(m.Stages)+1, err)
				}
			}
			m.Stages = append(m.Stages, s)
		}
	}
	return nil
}
