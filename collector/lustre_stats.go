package collector

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The collectors of Lustre's stats tables (lprocfs counters: "name N
// samples [unit] min max sum sumsq"), one per kind of table:
//
//	ost_stats      obdfilter.*.stats        per OST
//	mdt_stats      mdt.*.md_stats           per MDT
//	osd_stats      osd-*.*.stats            per target's backing file system
//	llite          llite.*.stats            per client mount
//	service_stats  ost.OSS.*.stats, mds.MDS.*.stats, ldlm.services.*.stats,
//	               mgs.MGS.mgs.stats        per RPC service
//	export_stats   {obdfilter,mdt}.*.exports.*.stats, mgs.MGS.exports.*.stats
//	               per client of a target (off by default: series per client)
//
// Every counter is reset-aware through its created timestamp where Lustre
// prints a start_time (2.14-ddn, 2.15+).

func init() {
	registerStats("ost_stats", true, targetStatsShape, func(param string) ([]string, bool) {
		component, target, leaf, ok := obdParam(param)
		return []string{component, target}, ok && component == "ost" && leaf == "stats"
	}, "obdfilter.*.stats")
	registerStats("mdt_stats", true, targetStatsShape, func(param string) ([]string, bool) {
		component, target, leaf, ok := obdParam(param)
		return []string{component, target}, ok && component == "mdt" && leaf == "md_stats"
	}, "mdt.*.md_stats")
	registerStats("llite", true, targetStatsShape, func(param string) ([]string, bool) {
		prefix, mount, leaf, ok := lctl.DeviceParam(param)
		return []string{"client", mount}, ok && prefix == "llite" && leaf == "stats"
	}, "llite.*.stats")
	registerStats("osd_stats", true, osdStatsShape, func(param string) ([]string, bool) {
		component, target, leaf, ok := osdParam(param)
		return []string{component, target}, ok && leaf == "stats"
	}, "osd-*.*.stats")
	registerStats("service_stats", true, serviceStatsShape, serviceParam,
		"ost.OSS.*.stats", "mds.MDS.*.stats", "ldlm.services.*.stats", "mgs.MGS.mgs.stats")
	registerStats("export_stats", false, exportStatsShape, func(param string) ([]string, bool) {
		component, target, nid, leaf, ok := lctl.ExportParam(param)
		return []string{component, target, nid}, ok && leaf == "stats"
	}, "obdfilter.*.exports.*.stats", "mdt.*.exports.*.stats", "mgs.MGS.exports.*.stats")
}

// serviceParam recognizes "ost.OSS.<service>.stats", "mds.MDS.<service>.stats",
// "ldlm.services.<service>.stats" and "mgs.MGS.<service>.stats".
func serviceParam(param string) ([]string, bool) {
	prefix, device, leaf, ok := lctl.DeviceParam(param)
	if !ok {
		return nil, false
	}
	switch prefix + "." + device {
	case "ost.OSS", "mds.MDS", "ldlm.services", "mgs.MGS":
	default:
		return nil, false
	}
	service, rest, ok := strings.Cut(leaf, ".")
	if !ok || rest != "stats" || service == "exports" {
		return nil, false
	}
	return []string{service}, true
}

// statsShape says which metrics the lines of a kind of stats table become.
// A nil desc is not exported.
type statsShape struct {
	samples *prometheus.Desc // every line's samples (but read_bytes and write_bytes with readWrite)
	seconds *prometheus.Desc // sums of time lines (usecs, secs), in seconds
	bytes   *prometheus.Desc // sums of bytes lines
	pages   *prometheus.Desc // sums of pages lines
	sum     *prometheus.Desc // sums of count lines (reqs, bufs)
	// readWrite sends read_bytes and write_bytes to the lustre_read_* and
	// lustre_write_* families, as the established exporters do.
	readWrite bool
}

var (
	targetLabels   = []string{"component", "target"}
	targetOpLabels = []string{"component", "target", "operation"}

	targetStatsShape = &statsShape{
		samples: prometheus.NewDesc("lustre_stats_total",
			"Operations the target (or client mount) performed, by operation: the samples of every stats line but read_bytes and write_bytes.", targetOpLabels, nil),
		seconds: prometheus.NewDesc("lustre_operation_seconds_total",
			"Time the target (or client mount) spent in operations, by operation: the sums of the usecs lines of stats, in seconds.", targetOpLabels, nil),
		readWrite: true,
	}
	readSamplesDesc = prometheus.NewDesc("lustre_read_samples_total",
		"Read requests the target (or client mount) served (the samples of read_bytes).", targetLabels, nil)
	readBytesDesc = prometheus.NewDesc("lustre_read_bytes_total",
		"Bytes read (the sum of read_bytes).", targetLabels, nil)
	readMinDesc = prometheus.NewDesc("lustre_read_minimum_size_bytes",
		"Smallest read since the counters started (the min of read_bytes).", targetLabels, nil)
	readMaxDesc = prometheus.NewDesc("lustre_read_maximum_size_bytes",
		"Largest read since the counters started (the max of read_bytes).", targetLabels, nil)
	writeSamplesDesc = prometheus.NewDesc("lustre_write_samples_total",
		"Write requests the target (or client mount) served (the samples of write_bytes).", targetLabels, nil)
	writeBytesDesc = prometheus.NewDesc("lustre_write_bytes_total",
		"Bytes written (the sum of write_bytes).", targetLabels, nil)
	writeMinDesc = prometheus.NewDesc("lustre_write_minimum_size_bytes",
		"Smallest write since the counters started (the min of write_bytes).", targetLabels, nil)
	writeMaxDesc = prometheus.NewDesc("lustre_write_maximum_size_bytes",
		"Largest write since the counters started (the max of write_bytes).", targetLabels, nil)

	osdStatsShape = &statsShape{
		samples: prometheus.NewDesc("lustre_osd_stats_total",
			"Calls counted by the target's backing file system (osd-*.*.stats: get_page, cache_access, cache_hit, cache_miss, …), by operation.", targetOpLabels, nil),
		seconds: prometheus.NewDesc("lustre_osd_stats_seconds_total",
			"Time the target's backing file system spent in the calls of its usecs lines (get_page), in seconds.", targetOpLabels, nil),
		pages: prometheus.NewDesc("lustre_osd_stats_pages_total",
			"Pages of the target's backing file system calls of its pages lines (cache_access, cache_hit, cache_miss): the page cache hit ratio in pages.", targetOpLabels, nil),
	}

	serviceLabels     = []string{"service", "operation"}
	serviceStatsShape = &statsShape{
		samples: prometheus.NewDesc("lustre_service_stats_total",
			"Samples of the RPC service's stats lines: requests handled (req_waittime, req_qdepth, req_active, req_timeout), buffer samples (reqbuf_avail) and RPCs by type (ost_read, mds_getattr, ldlm_cancel, …).", serviceLabels, nil),
		seconds: prometheus.NewDesc("lustre_service_stats_seconds_total",
			"Sums of the RPC service's time lines, in seconds: time requests waited before being handled (req_waittime), timeouts given (req_timeout), time spent handling each RPC type.", serviceLabels, nil),
		sum: prometheus.NewDesc("lustre_service_stats_sum_total",
			"Sums of the RPC service's count lines: queue depth (req_qdepth) and active requests (req_active) each request found, available buffers (reqbuf_avail); divided by the samples, the means.", serviceLabels, nil),
	}

	exportLabels     = []string{"component", "target", "nid", "operation"}
	exportStatsShape = &statsShape{
		samples: prometheus.NewDesc("lustre_client_export_stats_total",
			"Operations the target performed for one client (export), by operation: the samples of every line of exports.*.stats.", exportLabels, nil),
		seconds: prometheus.NewDesc("lustre_client_export_seconds_total",
			"Time the target spent in one client's operations, in seconds (the sums of usecs lines).", exportLabels, nil),
		bytes: prometheus.NewDesc("lustre_client_export_bytes_total",
			"Bytes one client read (read_bytes) and wrote (write_bytes) on the target.", exportLabels, nil),
	}
)

// registerStats registers a collector of stats tables: match tells its
// parameters and their label values.
func registerStats(name string, defaultEnabled bool, shape *statsShape, match func(param string) ([]string, bool), patterns ...string) {
	registerLustre(name, defaultEnabled, lustre.Stats, patterns,
		func(param string) bool { _, ok := match(param); return ok },
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Stats, name) {
				labels, _ := match(p.Name)
				sendStats(ch, shape, &p.V, labels)
			}
		})
}

// sendStats turns a stats table into metrics.
func sendStats(ch chan<- prometheus.Metric, shape *statsShape, sec *lctl.StatsSection, labels []string) {
	createdAt := created(sec.StartTime, sec.SnapshotTime)
	withOp := func(op string) []string {
		return append(labels[:len(labels):len(labels)], op)
	}
	for i := range sec.Stats {
		st := &sec.Stats[i]
		if shape.readWrite && (st.Name == "read_bytes" || st.Name == "write_bytes") {
			samples, bytes, min, max := readSamplesDesc, readBytesDesc, readMinDesc, readMaxDesc
			if st.Name == "write_bytes" {
				samples, bytes, min, max = writeSamplesDesc, writeBytesDesc, writeMinDesc, writeMaxDesc
			}
			ch <- counter(samples, float64(st.Samples), createdAt, labels...)
			if st.HasSum {
				ch <- counter(bytes, float64(max0(st.Sum)), createdAt, labels...)
				if st.Samples > 0 {
					ch <- gauge(min, float64(max0(st.Min)), labels...)
					ch <- gauge(max, float64(max0(st.Max)), labels...)
				}
			}
			continue
		}
		opLabels := withOp(st.Name)
		if shape.samples != nil {
			ch <- counter(shape.samples, float64(st.Samples), createdAt, opLabels...)
		}
		if !st.HasSum {
			continue
		}
		sum := float64(max0(st.Sum))
		var desc *prometheus.Desc
		switch st.Unit {
		case lctl.UnitUsecs:
			desc, sum = shape.seconds, sum/1e6
		case lctl.UnitSecs:
			desc = shape.seconds
		case lctl.UnitBytes:
			desc = shape.bytes
		case lctl.UnitPages:
			desc = shape.pages
		case lctl.UnitReqs, lctl.UnitBufs:
			desc = shape.sum
		}
		if desc != nil {
			ch <- counter(desc, sum, createdAt, opLabels...)
		}
	}
}

// max0 clips Lustre's signed min, max and sum (a counter with no samples
// may print -1) at zero.
func max0(v int64) int64 { return max(v, 0) }
