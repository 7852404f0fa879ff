package lctl

import "bytes"

// The quota bodies are YAML-ish lists, one entry per id, with a first line
// that names the list:
//
//	usr_accounting:                          (quota_slave.acct_user|group|project)
//	- id:      0
//	  usage:   { inodes:  2416855, kbytes:  10214128 }
//
//	global_pool0_dt_usr                      (qmt.<qmt>.<pool>.glb-usr|grp|prj)
//	- id:      0
//	  limits:  { hard: 0, soft: 0, granted: 0, time: 604800 }
//
// Accounting is in kilobytes and inodes; limits are in kilobytes for data
// (dt) pools and inodes for metadata (md) pools.

// QuotaEntry is one id of a quota list. Usage is valid when HasUsage,
// limits when HasLimits.
type QuotaEntry struct {
	ID        uint64
	HasUsage  bool
	Inodes    uint64
	KBytes    uint64
	HasLimits bool
	Hard      uint64
	Soft      uint64
	Granted   uint64
	// Time is the grace time: for id 0 the default grace period in
	// seconds, for others the Unix time the grace period ends.
	Time uint64
}

// QuotaParser is the SectionParser of a quota accounting or limits list.
// It hands each entry to entry as soon as it is complete.
type QuotaParser struct {
	entry     func(e *QuotaEntry)
	done      func(malformed int, complete bool)
	e         QuotaEntry
	open      bool
	malformed int
}

// NewQuotaParser returns a parser calling entry for each id and done at the
// end with the number of lines it could not read.
func NewQuotaParser(entry func(e *QuotaEntry), done func(malformed int, complete bool)) *QuotaParser {
	return &QuotaParser{entry: entry, done: done}
}

// Line implements SectionParser.
func (p *QuotaParser) Line(line []byte) {
	rest := trimLeft(line)
	if len(rest) == 0 {
		return
	}
	if rest[0] == '-' {
		p.flush()
		key, value, ok := splitKey(trimLeft(rest[1:]))
		id, okID := parseUint(value)
		if !ok || string(key) != "id" || !okID {
			p.malformed++
			return
		}
		p.e, p.open = QuotaEntry{ID: id}, true
		return
	}
	key, value, ok := splitKey(rest)
	switch {
	case !ok && len(rest) == len(line) && !p.open:
		// The list's name without a colon ("global_pool0_dt_usr").
	case !ok:
		p.malformed++
	case !p.open:
		// "usr_accounting:", "global_index_copy:".
		if len(value) != 0 {
			p.malformed++
		}
	case string(key) == "usage":
		if !p.inline(value, true) {
			p.malformed++
		}
	case string(key) == "limits":
		if !p.inline(value, false) {
			p.malformed++
		}
	}
}

// inline reads "{ inodes: 1, kbytes: 2 }" or "{ hard: 0, soft: 0, granted:
// 0, time: 604800 }" into the open entry.
func (p *QuotaParser) inline(b []byte, usage bool) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	b = b[1 : len(b)-1]
	seen := 0
	for len(b) > 0 {
		var item []byte
		item, b, _ = bytes.Cut(b, []byte{','})
		key, value, ok := splitKey(trimLeft(item))
		if !ok {
			if len(trimLeft(item)) == 0 {
				continue
			}
			return false
		}
		v, ok := parseUint(value)
		if !ok {
			return false
		}
		switch string(key) {
		case "inodes":
			p.e.Inodes = v
		case "kbytes":
			p.e.KBytes = v
		case "hard":
			p.e.Hard = v
		case "soft":
			p.e.Soft = v
		case "granted":
			p.e.Granted = v
		case "time":
			p.e.Time = v
		default:
			continue
		}
		seen++
	}
	if seen == 0 {
		return false
	}
	if usage {
		p.e.HasUsage = true
	} else {
		p.e.HasLimits = true
	}
	return true
}

func (p *QuotaParser) flush() {
	if p.open && (p.e.HasUsage || p.e.HasLimits) {
		p.entry(&p.e)
	} else if p.open {
		p.malformed++
	}
	p.open = false
}

// End implements SectionParser.
func (p *QuotaParser) End(complete bool) {
	if complete {
		p.flush()
	}
	p.open = false
	p.done(p.malformed, complete)
	p.malformed = 0
}

// changelog_users (mdd.*.changelog_users):
//
//	current_index: 34                      ("current index: 34" before 2.15)
//	ID                            index (idle) mask
//	cl1                               0 (327)
//	cl2-robinhood                    34 (28) mask=MARK,CREAT
//
// The idle time, in seconds, appeared in 2.11; 2.15 named users and
// per-user masks.

// ChangelogUser is one registered changelog consumer.
type ChangelogUser struct {
	ID      string // "cl1", "cl2-robinhood"
	Index   uint64 // the last record it cleared
	Idle    float64
	HasIdle bool
}

// Changelog is the body of one changelog_users parameter.
type Changelog struct {
	CurrentIndex    uint64
	HasCurrentIndex bool
	Users           []ChangelogUser
	Malformed       int
}

// ChangelogParser is the SectionParser of a changelog_users parameter.
type ChangelogParser struct {
	cl   Changelog
	done func(cl *Changelog, complete bool)
}

// NewChangelogParser returns a parser that hands the users to done.
func NewChangelogParser(done func(cl *Changelog, complete bool)) *ChangelogParser {
	return &ChangelogParser{done: done}
}

// Line implements SectionParser.
func (p *ChangelogParser) Line(line []byte) {
	rest := trimLeft(line)
	if len(rest) == 0 {
		return
	}
	if key, value, ok := splitKey(rest); ok && (string(key) == "current_index" || string(key) == "current index") {
		v, ok := parseUint(value)
		if !ok {
			p.cl.Malformed++
			return
		}
		p.cl.CurrentIndex, p.cl.HasCurrentIndex = v, true
		return
	}
	id, rest := nextField(rest)
	if string(id) == "ID" {
		return // the column header
	}
	index, rest := nextField(rest)
	u := ChangelogUser{}
	var ok bool
	if u.Index, ok = parseUint(index); !ok || !validUserID(id) {
		p.cl.Malformed++
		return
	}
	if idle, _ := nextField(rest); len(idle) > 0 {
		if len(idle) < 3 || idle[0] != '(' || idle[len(idle)-1] != ')' {
			p.cl.Malformed++
			return
		}
		v, ok := parseUint(idle[1 : len(idle)-1])
		if !ok {
			p.cl.Malformed++
			return
		}
		u.Idle, u.HasIdle = float64(v), true
	}
	u.ID = string(id)
	p.cl.Users = append(p.cl.Users, u)
}

func validUserID(b []byte) bool {
	if len(b) == 0 || len(b) > 64 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// End implements SectionParser.
func (p *ChangelogParser) End(complete bool) {
	p.done(&p.cl, complete)
	p.cl = Changelog{Users: p.cl.Users[:0]}
}
