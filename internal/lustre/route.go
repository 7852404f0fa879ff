package lustre

import (
	"runtime"
	"strings"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// builder routes the parameters of one run to their parsers and gathers
// what they read into the run's snapshot.
type builder struct {
	src  *Source
	snap *Snapshot
	// seen holds the parameters routed so far: lctl prints a parameter
	// once for every pattern that matches it.
	seen map[string]bool
	// routed counts the parameters given to a parser: with none, a
	// non-zero exit is a failed run, not a partial one.
	routed int
}

// route returns the parser of a parameter, nil to skip its body, and
// counts those it gives one.
func (b *builder) route(param string) lctl.SectionParser {
	p := b.parserOf(param)
	if p != nil {
		b.routed++
	}
	return p
}

// parserOf returns the parser of a parameter, nil to skip its body.
func (b *builder) parserOf(param string) lctl.SectionParser {
	if jobs := b.src.jobs; jobs != nil {
		if param == "jobid_name" && jobs.WantsJobIDName() {
			return lctl.NewValueParser(func(v *lctl.Value, _ bool) { jobs.SetJobIDName(string(v.Text)) })
		}
		if h := jobs.Target(param); h != nil {
			if runtime.GOMAXPROCS(0) > 1 {
				return lctl.NewConcurrentJobStatsParser(h)
			}
			return lctl.NewJobStatsParser(h)
		}
	}
	for i := range b.src.requests {
		r := &b.src.requests[i]
		if !r.matches(param) {
			continue
		}
		if b.seen[param] {
			return nil
		}
		b.seen[param] = true
		return b.parser(r, param)
	}
	return nil
}

func (b *builder) parser(r *Request, param string) lctl.SectionParser {
	s, snap, owner := b.src, b.snap, r.Owner
	malformed := func(n int) {
		if n > 0 {
			s.bad(owner, param, "malformed lines", n)
		}
	}
	switch r.Kind {
	case Stats:
		return lctl.NewStatsParser(func(sec *lctl.StatsSection, complete bool) {
			malformed(sec.Malformed)
			if complete {
				v := *sec
				v.Stats = firstOfEach(sec.Stats, func(st *lctl.Stat) string { return st.Name })
				snap.Stats = append(snap.Stats, Param[lctl.StatsSection]{param, owner, v})
			}
		})
	case Values:
		return lctl.NewValueParser(func(v *lctl.Value, complete bool) {
			if !complete {
				return
			}
			n, ok := v.Number()
			if !ok {
				s.bad(owner, param, "not a number", 1, "value", string(v.Text), "lines", v.Lines)
				return
			}
			snap.Values = append(snap.Values, Param[float64]{param, owner, n})
		})
	case BrwStats:
		return lctl.NewBrwStatsParser(func(st *lctl.BrwStats, complete bool) {
			malformed(st.Malformed)
			if !complete {
				return
			}
			v := *st
			v.Hists = nil
			var done [lctl.BrwBlockMaps + 1]bool
			for _, h := range st.Hists {
				if h.Kind == lctl.BrwUnknown || done[h.Kind] {
					continue
				}
				done[h.Kind] = true
				if !ascending(h.Rows) {
					// Rows out of order would make a histogram whose
					// counts go down.
					s.bad(owner, param, "histogram rows out of order", 1, "histogram", h.Kind.String())
					continue
				}
				v.Hists = append(v.Hists, lctl.BrwHist{Kind: h.Kind, Rows: append([]lctl.BrwRow(nil), h.Rows...)})
			}
			snap.Brw = append(snap.Brw, Param[lctl.BrwStats]{param, owner, v})
		})
	case Recovery:
		return lctl.NewRecoveryParser(func(rec *lctl.Recovery, complete bool) {
			malformed(rec.Malformed)
			if complete {
				snap.Recovery = append(snap.Recovery, Param[lctl.Recovery]{param, owner, *rec})
			}
		})
	case Changelog:
		return lctl.NewChangelogParser(func(cl *lctl.Changelog, complete bool) {
			malformed(cl.Malformed)
			if complete {
				v := *cl
				v.Users = firstOfEach(cl.Users, func(u *lctl.ChangelogUser) string { return u.ID })
				snap.Changelogs = append(snap.Changelogs, Param[lctl.Changelog]{param, owner, v})
			}
		})
	case Quota:
		var entries []lctl.QuotaEntry
		seen := map[uint64]bool{}
		return lctl.NewQuotaParser(func(e *lctl.QuotaEntry) {
			if !seen[e.ID] {
				seen[e.ID] = true
				entries = append(entries, *e)
			}
		}, func(n int, complete bool) {
			malformed(n)
			snap.Quotas = append(snap.Quotas, Param[[]lctl.QuotaEntry]{param, owner, entries})
		})
	case Health:
		return lctl.NewTextParser(func(lines [][]byte, _, complete bool) {
			if !complete {
				return
			}
			healthy, known := lctl.Health(lines)
			if !known {
				s.bad(owner, param, "empty health_check", 1, "text", joinLines(lines))
				return
			}
			snap.Health = append(snap.Health, Param[bool]{param, owner, healthy})
		})
	case Versions:
		return lctl.NewTextParser(func(lines [][]byte, _, complete bool) {
			if !complete {
				return
			}
			version, build, ok := lctl.Version(lines)
			if !ok {
				s.bad(owner, param, "unrecognized version", 1, "text", joinLines(lines))
				return
			}
			snap.Versions = append(snap.Versions, Param[Version]{param, owner, Version{version, build}})
		})
	}
	return nil
}

// firstOfEach copies the items whose key was not met before: a counter or
// user printed twice (damaged output) counts once, the first time.
func firstOfEach[T any](items []T, key func(*T) string) []T {
	out := make([]T, 0, len(items))
	for i := range items {
		k := key(&items[i])
		dup := false
		for j := range out {
			if key(&out[j]) == k {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, items[i])
		}
	}
	return out
}

// ascending reports whether the rows' buckets increase, as Lustre prints
// them.
func ascending(rows []lctl.BrwRow) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].Bucket <= rows[i-1].Bucket {
			return false
		}
	}
	return true
}

func joinLines(lines [][]byte) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "; ")
}
