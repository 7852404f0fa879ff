package jobid

import "strings"

// Known holds the well-formed identities seen on one server, indexed for
// the repairs of broken ids: by job, and by (uid, node) for ids whose job
// field was damaged.
type Known struct {
	byJob map[string][]Identity
	// byUIDNode lists the jobs of each (uid, node), for ids whose job
	// field is the damaged one.
	byUIDNode map[[2]string][]string
}

// NewKnown returns an empty set.
func NewKnown() *Known {
	return &Known{byJob: map[string][]Identity{}, byUIDNode: map[[2]string][]string{}}
}

// Add records a trusted identity (see Outcome.Trusted). Ids without a real
// job confirm nothing and are ignored.
func (k *Known) Add(id Identity) {
	if id.Job == "" || id.Job == SyntheticJob {
		return
	}
	for _, have := range k.byJob[id.Job] {
		if have == id {
			return
		}
	}
	k.byJob[id.Job] = append(k.byJob[id.Job], id)
	key := [2]string{id.UID, id.Node}
	k.byUIDNode[key] = append(k.byUIDNode[key], id.Job)
}

// Len returns the number of identities held.
func (k *Known) Len() int {
	n := 0
	for _, ids := range k.byJob {
		n += len(ids)
	}
	return n
}

func (k *Known) hasJob(job string) bool {
	_, ok := k.byJob[job]
	return ok
}

// complete fills the empty fields of id with the values on which every
// well-formed identity of the same job that agrees with id's other fields
// also agrees.
func (k *Known) complete(id Identity) Identity {
	var cands []Identity
	for _, c := range k.byJob[id.Job] {
		if agrees(id.UID, c.UID) && agrees(id.GID, c.GID) && agrees(id.Node, c.Node) && agrees(id.Exe, c.Exe) {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return id
	}
	fill := func(have *string, get func(Identity) string) {
		if *have != "" {
			return
		}
		v := get(cands[0])
		for _, c := range cands[1:] {
			if get(c) != v {
				return
			}
		}
		*have = v
	}
	fill(&id.UID, func(c Identity) string { return c.UID })
	fill(&id.GID, func(c Identity) string { return c.GID })
	fill(&id.Node, func(c Identity) string { return c.Node })
	fill(&id.Exe, func(c Identity) string { return c.Exe })
	return id
}

func agrees(have, known string) bool { return have == "" || have == known }

// candidates returns the well-formed identities that fit the field values
// vals of format fields, where vals[merged] holds one unknown character
// marked by \x00.
func (k *Known) candidates(fields []Code, vals []string, merged int) []Identity {
	want := Identity{}
	for i, c := range fields {
		v := vals[i]
		if c == CodeShortHost {
			v, _ = shortHost(v)
		}
		switch c {
		case CodeJob:
			want.Job = v
		case CodeUID:
			want.UID = v
		case CodeGID:
			want.GID = v
		case CodeExe:
			want.Exe = v
		case CodeHost, CodeShortHost:
			want.Node = v
		}
	}
	var pool []Identity
	if fields[merged] == CodeJob {
		for _, job := range k.byUIDNode[[2]string{want.UID, want.Node}] {
			if wildEqual(want.Job, job) {
				pool = append(pool, k.byJob[job]...)
			}
		}
	} else {
		pool = k.byJob[want.Job]
	}
	var out []Identity
	for _, c := range pool {
		if wildEqual(want.Job, c.Job) && wildEqual(want.UID, c.UID) && wildEqual(want.GID, c.GID) &&
			wildEqual(want.Node, c.Node) && wildEqual(want.Exe, c.Exe) {
			out = append(out, c)
		}
	}
	return out
}

// wildEqual compares a field value, which may hold one unknown character
// (\x00), with a known one. An empty value matches anything: the format
// has no such field.
func wildEqual(pattern, s string) bool {
	i := strings.IndexByte(pattern, 0)
	if i < 0 {
		return pattern == "" || pattern == s
	}
	return len(s) == len(pattern) && strings.HasPrefix(s, pattern[:i]) && strings.HasSuffix(s, pattern[i+1:])
}
