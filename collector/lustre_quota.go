package collector

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The quota collector: per-id space and inode usage of every target
// (osd-*.*.quota_slave.acct_user|group|project) and the limits the quota
// master holds (qmt.*.*.glb-usr|grp|prj). Off by default: it makes series
// per user, group and project id, times targets, which is every uid that
// owns a file on a large file system.

func init() {
	registerLustre("quota", false, lustre.Quota, []string{
		"osd-*.*.quota_slave.acct_user", "osd-*.*.quota_slave.acct_group", "osd-*.*.quota_slave.acct_project",
		"qmt.*.*.glb-usr", "qmt.*.*.glb-grp", "qmt.*.*.glb-prj"},
		func(param string) bool {
			_, _, _, ok := quotaSlaveParam(param)
			if !ok {
				_, _, _, _, ok = qmtParam(param)
			}
			return ok
		},
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Quotas, "quota") {
				sendQuota(ch, p.Name, p.V)
			}
		})
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

// quotaSlaveParam recognizes "osd-<fstype>.<target>.quota_slave.acct_<type>".
func quotaSlaveParam(param string) (component, target, accounting string, ok bool) {
	component, target, leaf, ok := osdParam(param)
	if !ok {
		return "", "", "", false
	}
	kind, ok := strings.CutPrefix(leaf, "quota_slave.")
	accounting = quotaAccounting[kind]
	return component, target, accounting, ok && accounting != ""
}

// sendQuota sends the usage (quota slaves) or the limits (quota master) of
// every id of one list.
func sendQuota(ch chan<- prometheus.Metric, param string, entries []lctl.QuotaEntry) {
	if component, target, accounting, ok := quotaSlaveParam(param); ok {
		for i := range entries {
			e := &entries[i]
			if e.HasUsage {
				id := strconv.FormatUint(e.ID, 10)
				ch <- gauge(quotaUsedBytesDesc, float64(e.KBytes)*1024, component, target, accounting, id)
				ch <- gauge(quotaUsedInodesDesc, float64(e.Inodes), component, target, accounting, id)
			}
		}
		return
	}
	qmt, pool, manager, accounting, ok := qmtParam(param)
	if !ok {
		return
	}
	descs := quotaLimitDescs[manager]
	scale := 1.0
	if manager == "dt" {
		scale = 1024
	}
	for i := range entries {
		e := &entries[i]
		if e.HasLimits {
			id := strconv.FormatUint(e.ID, 10)
			ch <- gauge(descs[0], float64(e.Hard)*scale, qmt, pool, accounting, id)
			ch <- gauge(descs[1], float64(e.Soft)*scale, qmt, pool, accounting, id)
			ch <- gauge(descs[2], float64(e.Granted)*scale, qmt, pool, accounting, id)
		}
	}
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
