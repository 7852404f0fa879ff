package jobid

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// SyntheticJob is the job of every id that names no job: an empty job
// field ("…:1000:node"), an empty job_id, or an id made by a format
// without %j such as the login nodes' "%e.%u". It starts with an
// underscore, which no batch system's job id does, and never changes, so
// the traffic of processes outside any job adds up under one stable value.
// The Darshan sidecar gives it to logs made outside a batch job, so that
// the two join.
const SyntheticJob = "_nojob"

// Identity is what a job_id says about its origin. PIDs are not kept: a
// label per process would only multiply series.
type Identity struct {
	Job  string
	UID  string
	GID  string
	Node string
	Exe  string
}

// Outcome classifies a raw job_id. The names are exported as the outcome
// label of lustre_jobid_entries_total; every kept outcome contributes to the
// per-job metrics, every discarded_* one does not.
type Outcome uint8

const (
	// OK: the id matches the jobid_name format.
	OK Outcome = iota
	// OKFallback: the id matches the fallback format "%e.%u" of processes
	// outside a job.
	OKFallback
	// RepairedFQDN: a fully qualified host where %H wants a short one; the
	// host is cut at its first dot.
	RepairedFQDN
	// SyntheticJobID: the job field is empty, or the whole id is; the job
	// becomes SyntheticJob and the rest is kept.
	SyntheticJobID
	// RepairedTruncated: trailing or empty fields; the job field is whole,
	// so the id is kept, with the missing fields taken from the one
	// well-formed id of the same job when there is exactly one, else empty.
	RepairedTruncated
	// RepairedOverwritten: one character overwritten by a separator, and
	// exactly one well-formed id on this server fits the rest.
	RepairedOverwritten
	// DiscardedTruncated: the id ends inside its job field and no
	// well-formed id confirms the job.
	DiscardedTruncated
	// DiscardedExtraChar: only a job field, one character longer than a
	// job seen well-formed on this server.
	DiscardedExtraChar
	// DiscardedOverwritten: more separators than the format has, and no
	// unique well-formed id to repair it from.
	DiscardedOverwritten
	// DiscardedInvalid: control characters, invalid UTF-8, a field of the
	// wrong kind (letters in a uid), or a shape no format explains.
	DiscardedInvalid
	// DiscardedReserved: a job field that starts with an underscore, as the
	// exporter's own aggregates do (SyntheticJob, "_other", "_untrusted")
	// and no batch system's job ids: a user's job could otherwise put its
	// traffic under them.
	DiscardedReserved

	NumOutcomes
)

var outcomeNames = [NumOutcomes]string{
	OK:                   "ok",
	OKFallback:           "ok_fallback",
	RepairedFQDN:         "repaired_fqdn",
	SyntheticJobID:       "synthetic_job",
	RepairedTruncated:    "repaired_truncated",
	RepairedOverwritten:  "repaired_overwritten",
	DiscardedTruncated:   "discarded_truncated",
	DiscardedExtraChar:   "discarded_extra_char",
	DiscardedOverwritten: "discarded_overwritten",
	DiscardedInvalid:     "discarded_invalid",
	DiscardedReserved:    "discarded_reserved",
}

func (o Outcome) String() string {
	if o < NumOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// Kept reports whether ids of this outcome count towards per-job metrics.
func (o Outcome) Kept() bool { return o < DiscardedTruncated }

// Trusted reports whether the id is well-formed enough to confirm others
// (the Known set): only ids that matched the format, at most with their
// host shortened.
func (o Outcome) Trusted() bool { return o == OK || o == RepairedFQDN }

// NeedsContext reports whether the outcome could change with more
// well-formed ids known: the ids whose classification used the Known set.
func (o Outcome) NeedsContext() bool {
	switch o {
	case RepairedTruncated, RepairedOverwritten, DiscardedTruncated, DiscardedExtraChar, DiscardedOverwritten:
		return true
	}
	return false
}

// maxJobIDLen bounds what is taken for a job_id. Lustre's own limit is 32
// bytes; anything much longer is garbage.
const maxJobIDLen = 256

// Normalizer turns raw job_ids into identities.
type Normalizer struct {
	primary  Format
	fallback Format
	fields   []Code
	jobField int // index of %j in fields, or -1
}

// NewNormalizer returns a normalizer for ids made by primary, or by the
// fallback "%e.%u".
func NewNormalizer(primary Format) *Normalizer {
	n := &Normalizer{primary: primary, fallback: MustParseFormat(FallbackFormat), jobField: -1}
	n.fields = primary.fields()
	for i, c := range n.fields {
		if c == CodeJob {
			n.jobField = i
		}
	}
	return n
}

// Format returns the primary format.
func (n *Normalizer) Format() Format { return n.primary }

// Normalize classifies raw and returns the identity it stands for. known,
// which may be nil, holds the well-formed ids seen on the same server; the
// repairs of truncated and overwritten ids need it.
func (n *Normalizer) Normalize(raw []byte, known *Known) (Identity, Outcome) {
	if len(raw) > maxJobIDLen || !utf8.Valid(raw) || hasControl(raw) {
		return Identity{}, DiscardedInvalid
	}
	id, outcome := n.normalize(raw, known)
	if outcome.Kept() && reserved(id.Job) && !n.synthetic(outcome) {
		return Identity{}, DiscardedReserved
	}
	return id, outcome
}

// reserved reports whether a job is named as the exporter names its own
// aggregates.
func reserved(job string) bool { return strings.HasPrefix(job, "_") }

// synthetic reports whether an identity of this outcome has SyntheticJob
// for its job because its id names none (an empty job field, a format
// without %j), not because the id says "_nojob".
func (n *Normalizer) synthetic(o Outcome) bool {
	return o == SyntheticJobID || o == OKFallback || n.jobField < 0
}

func (n *Normalizer) normalize(raw []byte, known *Known) (Identity, Outcome) {
	s := string(raw)
	if s == "" {
		return Identity{Job: SyntheticJob}, SyntheticJobID
	}
	if vals, ok := match(n.primary, s); ok {
		return n.fromFields(n.primary, vals)
	}
	if n.primary.raw != n.fallback.raw && !n.conflictsWithPrimary(s) {
		if vals, ok := match(n.fallback, s); ok {
			id, _ := n.fromFields(n.fallback, vals)
			return id, OKFallback
		}
	}
	if n.primary.sep == 0 {
		return Identity{}, DiscardedInvalid
	}
	return n.repair(strings.Split(s, string(n.primary.sep)), known)
}

// conflictsWithPrimary: an id holding the primary format's separator is not
// taken for a fallback id, so that "1:2:host.123" is never read as
// executable "1:2:host", uid 123.
func (n *Normalizer) conflictsWithPrimary(s string) bool {
	return n.primary.sep != 0 && !n.fallback.literalByte(n.primary.sep) && strings.IndexByte(s, n.primary.sep) >= 0
}

// fromFields builds the identity of a fully matched id.
func (n *Normalizer) fromFields(f Format, vals []string) (Identity, Outcome) {
	var id Identity
	outcome := OK
	for i, c := range f.fields() {
		v := vals[i]
		switch c {
		case CodeJob:
			id.Job = v
		case CodeUID:
			id.UID = v
		case CodeGID:
			id.GID = v
		case CodeExe:
			id.Exe = v
		case CodeHost:
			id.Node = v
		case CodeShortHost:
			if short, cut := shortHost(v); cut {
				v = short
				outcome = RepairedFQDN
			}
			id.Node = v
		}
	}
	if id.Job == "" {
		id.Job = SyntheticJob
		if f.Has(CodeJob) {
			outcome = SyntheticJobID
		}
	}
	return id, outcome
}

// repair handles ids that do not match the format, split at its separator.
func (n *Normalizer) repair(parts []string, known *Known) (Identity, Outcome) {
	nf := len(n.fields)
	switch {
	case len(parts) > nf:
		return n.repairOverwritten(parts, known)
	case len(parts) < nf:
		return n.repairTruncated(parts, false, known)
	}
	// As many fields as the format: some are empty or invalid.
	for i, p := range parts {
		if p != "" && !validField(n.fields[i], p, n.primary) {
			return Identity{}, DiscardedInvalid
		}
	}
	return n.repairTruncated(parts, true, known)
}

// repairTruncated keeps an id whose job field is whole. When all is true
// the id has every field and each ended at a separator; otherwise the last
// part may have been cut in the middle and is trusted only when a
// well-formed id confirms it.
func (n *Normalizer) repairTruncated(parts []string, all bool, known *Known) (Identity, Outcome) {
	vals := make([]string, len(n.fields))
	copy(vals, parts)
	last := len(parts) - 1
	cut := ""
	if !all && parts[last] != "" {
		cut = parts[last]
		vals[last] = ""
	}
	if n.jobField < 0 {
		return Identity{}, DiscardedTruncated
	}
	for i, v := range vals {
		if v != "" && !validField(n.fields[i], v, n.primary) {
			return Identity{}, DiscardedInvalid
		}
	}
	if cut != "" && last == n.jobField {
		// Only a job field, maybe cut, maybe one character too long.
		if known != nil {
			if _, ok := known.byJob[cut]; ok {
				vals[n.jobField] = cut
			} else if len(cut) > 1 && known.hasJob(cut[:len(cut)-1]) {
				return Identity{}, DiscardedExtraChar
			}
		}
		if vals[n.jobField] == "" {
			return Identity{}, DiscardedTruncated
		}
		cut = ""
	}
	id, _ := n.fromFields(n.primary, vals)
	if id.Job == SyntheticJob {
		// Without a job nothing can confirm the missing fields; a cut
		// field is dropped.
		return id, RepairedTruncated
	}
	if known != nil {
		// Missing fields from the job's well-formed ids where they all
		// agree (a multi-node job has one uid but many nodes). A cut field
		// is restored only if it is a prefix of the agreed value.
		filled := known.complete(id)
		if cut == "" || strings.HasPrefix(fieldOf(filled, n.fields[last]), cut) {
			id = filled
		}
	}
	return id, RepairedTruncated
}

// repairOverwritten handles one separator too many: a character of some
// field overwritten by the separator, as in ":1317854:17627127:r01c01".
// Each way of gluing two neighbouring parts back around one unknown
// character is tried against the well-formed ids; exactly one fit repairs.
func (n *Normalizer) repairOverwritten(parts []string, known *Known) (Identity, Outcome) {
	if len(parts) != len(n.fields)+1 || known == nil {
		return Identity{}, DiscardedOverwritten
	}
	var found Identity
	matches := 0
	for i := 0; i+1 < len(parts); i++ {
		vals := make([]string, 0, len(n.fields))
		vals = append(vals, parts[:i]...)
		vals = append(vals, parts[i]+"\x00"+parts[i+1]) // \x00: the lost character
		vals = append(vals, parts[i+2:]...)
		for _, cand := range known.candidates(n.fields, vals, i) {
			if matches == 0 || cand != found {
				matches++
				found = cand
			}
		}
	}
	if matches == 1 {
		return found, RepairedOverwritten
	}
	return Identity{}, DiscardedOverwritten
}

func fieldOf(id Identity, c Code) string {
	switch c {
	case CodeJob:
		return id.Job
	case CodeUID:
		return id.UID
	case CodeGID:
		return id.GID
	case CodeExe:
		return id.Exe
	case CodeHost, CodeShortHost:
		return id.Node
	}
	return ""
}

// shortHost cuts a host name at its first dot.
func shortHost(h string) (string, bool) {
	if i := strings.IndexByte(h, '.'); i > 0 {
		return h[:i], true
	}
	return h, false
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return bytes.ContainsRune(b, '\u0085') // NEL, a line break to some readers
}
