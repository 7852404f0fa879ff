package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The changelog collector: the changelog of every MDT (mdd.*.changelog_users)
// and how far behind each registered consumer (Robinhood, a policy engine,
// lustre_rsync) is.

func init() {
	registerLustre("changelog", true, lustre.Changelog, []string{"mdd.*.changelog_users"},
		func(param string) bool {
			prefix, _, leaf, ok := lctl.DeviceParam(param)
			return ok && prefix == "mdd" && leaf == "changelog_users"
		},
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Changelogs, "changelog") {
				_, target, _, _ := lctl.DeviceParam(p.Name)
				if p.V.HasCurrentIndex {
					ch <- gauge(changelogCurrentDesc, float64(p.V.CurrentIndex), "mdt", target)
				}
				for _, u := range p.V.Users {
					ch <- gauge(changelogUserIndexDesc, float64(u.Index), "mdt", target, u.ID)
					if u.HasIdle {
						ch <- gauge(changelogUserIdleDesc, u.Idle, "mdt", target, u.ID)
					}
				}
			}
		})
}

var (
	changelogCurrentDesc = prometheus.NewDesc("lustre_changelog_current_index",
		"Index of the last record written to the MDT's changelog (current_index).", []string{"component", "target"}, nil)
	changelogUserIndexDesc = prometheus.NewDesc("lustre_changelog_user_index",
		"Index of the last record the changelog user cleared; current index minus this is its backlog.", []string{"component", "target", "user"}, nil)
	changelogUserIdleDesc = prometheus.NewDesc("lustre_changelog_user_idle_seconds",
		"Time since the changelog user last cleared records (Lustre 2.11 and later).", []string{"component", "target", "user"}, nil)
)
