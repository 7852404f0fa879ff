package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// The changelog collector: the changelog of every MDT (mdd.*.changelog_users)
// and how far behind each registered consumer (Robinhood, a policy engine,
// lustre_rsync) is.

func init() {
	register("changelog", true, newChangelogCollector)
}

var (
	changelogCurrentDesc = prometheus.NewDesc("lustre_changelog_current_index",
		"Index of the last record written to the MDT's changelog (current_index).", []string{"component", "target"}, nil)
	changelogUserIndexDesc = prometheus.NewDesc("lustre_changelog_user_index",
		"Index of the last record the changelog user cleared; current index minus this is its backlog.", []string{"component", "target", "user"}, nil)
	changelogUserIdleDesc = prometheus.NewDesc("lustre_changelog_user_idle_seconds",
		"Time since the changelog user last cleared records (Lustre 2.11 and later).", []string{"component", "target", "user"}, nil)
)

func newChangelogCollector(env Env) (Collector, error) {
	c := newSectionCollector(env, "changelog", "mdd.*.changelog_users")
	c.parser = func(param string) lctl.SectionParser {
		prefix, target, leaf, ok := lctl.DeviceParam(param)
		if !ok || prefix != "mdd" || leaf != "changelog_users" {
			return nil
		}
		return lctl.NewChangelogParser(func(cl *lctl.Changelog, complete bool) {
			if cl.Malformed > 0 {
				c.bad(param, "malformed lines", cl.Malformed)
			}
			if !complete {
				return
			}
			if cl.HasCurrentIndex {
				c.emit(gauge(changelogCurrentDesc, float64(cl.CurrentIndex), "mdt", target))
			}
			seen := map[string]bool{}
			for _, u := range cl.Users {
				if seen[u.ID] {
					continue
				}
				seen[u.ID] = true
				c.emit(gauge(changelogUserIndexDesc, float64(u.Index), "mdt", target, u.ID))
				if u.HasIdle {
					c.emit(gauge(changelogUserIdleDesc, u.Idle, "mdt", target, u.ID))
				}
			}
		})
	}
	return c, nil
}
