package collector

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/lctl"
)

// The quota collector: per-id space and inode usage of every target
// (osd-*.*.quota_slave.acct_user|group|project) and the limits the quota
// master holds (qmt.*.*.glb-usr|grp|prj). Off by default: it makes series
// per user, group and project id, times targets, which is every uid that
// owns a file on a large file system.

func init() {
	register("quota", false, newQuotaCollector)
}

var (
	quotaUsedLabels    = []string{"component", "target", "accounting", "id"}
	quotaUsedBytesDesc = prometheus.NewDesc("lustre_quota_used_bytes",
		"Space the id uses on the target, in bytes (quota_slave.acct_*, kbytes).", quotaUsedLabels, nil)
	quotaUsedInodesDesc = prometheus.NewDesc("lustre_quota_used_inodes",
		"Inodes (objects) the id uses on the target (quota_slave.acct_*).", quotaUsedLabels, nil)

	quotaLimitLabels = []string{"target", "pool", "accounting", "id"}
	quotaLimitDescs  = map[string][3]*prometheus.Desc{
		"dt": {
			prometheus.NewDesc("lustre_quota_hard_limit_bytes", "Hard space limit of the id in the pool, in bytes; 0 is no limit (qmt glb-*, dt).", quotaLimitLabels, nil),
			prometheus.NewDesc("lustre_quota_soft_limit_bytes", "Soft space limit of the id in the pool, in bytes; 0 is no limit (qmt glb-*, dt).", quotaLimitLabels, nil),
			prometheus.NewDesc("lustre_quota_granted_bytes", "Space the quota master granted to the id's slaves in the pool, in bytes (qmt glb-*, dt).", quotaLimitLabels, nil),
		},
		"md": {
			prometheus.NewDesc("lustre_quota_hard_limit_inodes", "Hard inode limit of the id in the pool; 0 is no limit (qmt glb-*, md).", quotaLimitLabels, nil),
			prometheus.NewDesc("lustre_quota_soft_limit_inodes", "Soft inode limit of the id in the pool; 0 is no limit (qmt glb-*, md).", quotaLimitLabels, nil),
			prometheus.NewDesc("lustre_quota_granted_inodes", "Inodes the quota master granted to the id's slaves in the pool (qmt glb-*, md).", quotaLimitLabels, nil),
		},
	}
)

// quotaAccounting maps Lustre's short names to the label values.
var quotaAccounting = map[string]string{
	"acct_user": "user", "acct_group": "group", "acct_project": "project",
	"glb-usr": "user", "glb-grp": "group", "glb-prj": "project",
}

func newQuotaCollector(env Env) (Collector, error) {
	c := newSectionCollector(env, "quota",
		"osd-*.*.quota_slave.acct_user", "osd-*.*.quota_slave.acct_group", "osd-*.*.quota_slave.acct_project",
		"qmt.*.*.glb-usr", "qmt.*.*.glb-grp", "qmt.*.*.glb-prj")
	c.parser = func(param string) lctl.SectionParser {
		if component, target, leaf, ok := osdParam(param); ok {
			kind, ok := strings.CutPrefix(leaf, "quota_slave.")
			if accounting := quotaAccounting[kind]; ok && accounting != "" {
				return quotaListParser(c, param, func(e *lctl.QuotaEntry, id string) {
					if e.HasUsage {
						c.emit(gauge(quotaUsedBytesDesc, float64(e.KBytes)*1024, component, target, accounting, id),
							gauge(quotaUsedInodesDesc, float64(e.Inodes), component, target, accounting, id))
					}
				})
			}
			return nil
		}
		qmt, pool, manager, accounting, ok := qmtParam(param)
		if !ok {
			return nil
		}
		descs := quotaLimitDescs[manager]
		scale := 1.0
		if manager == "dt" {
			scale = 1024
		}
		return quotaListParser(c, param, func(e *lctl.QuotaEntry, id string) {
			if e.HasLimits {
				c.emit(gauge(descs[0], float64(e.Hard)*scale, qmt, pool, accounting, id),
					gauge(descs[1], float64(e.Soft)*scale, qmt, pool, accounting, id),
					gauge(descs[2], float64(e.Granted)*scale, qmt, pool, accounting, id))
			}
		})
	}
	return c, nil
}

// quotaParser hands each id of a list to emit once, and reports lines it
// could not read.
func quotaListParser(c *sectionCollector, param string, emit func(e *lctl.QuotaEntry, id string)) lctl.SectionParser {
	seen := map[uint64]bool{}
	return lctl.NewQuotaParser(func(e *lctl.QuotaEntry) {
		if seen[e.ID] {
			return
		}
		seen[e.ID] = true
		emit(e, strconv.FormatUint(e.ID, 10))
	}, func(malformed int, complete bool) {
		if malformed > 0 {
			c.bad(param, "malformed lines", malformed)
		}
	})
}

// qmtParam recognizes "qmt.<fs>-QMT0000.<pool>.glb-<type>". The pool part
// is "<dt|md>-<name>", where the name 0x0 is the default pool (""), or
// "lqa-<dt|md>-<name>" for an EXAScaler quota aggregate, kept as pool
// "lqa-<name>".
func qmtParam(param string) (qmt, pool, manager, accounting string, ok bool) {
	prefix, qmt, rest, found := lctl.DeviceParam(param)
	if !found || prefix != "qmt" {
		return "", "", "", "", false
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot <= 0 {
		return "", "", "", "", false
	}
	accounting = quotaAccounting[rest[dot+1:]]
	pool = rest[:dot]
	lqa := strings.HasPrefix(pool, "lqa-")
	pool = strings.TrimPrefix(pool, "lqa-")
	manager, pool, found = strings.Cut(pool, "-")
	if accounting == "" || !found || (manager != "dt" && manager != "md") {
		return "", "", "", "", false
	}
	switch {
	case lqa:
		pool = "lqa-" + pool
	case pool == "0x0":
		pool = ""
	}
	return qmt, pool, manager, accounting, true
}
