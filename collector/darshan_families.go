package collector

// The per-job families of the darshan collector, streamed: at 10,000
// retained jobs they are hundreds of thousands of samples. Each family
// walks the (immutable) job views of one snapshot; NA signals are skipped.

import (
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/logwatch"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

const mib = 1024 * 1024

// darshanJobLabels writes the identity labels of a job.
func darshanJobLabels(w *exposition.Writer, v *logwatch.JobView) {
	w.ResetLabels()
	w.Label("jobid", v.JobID)
	w.Label("uid", v.UID)
	w.Label("exe", v.Exe)
}

// sampleValue writes a signal scaled to base units, unless it is NA.
func sampleValue(w *exposition.Writer, v signals.Value, scale float64) error {
	if !v.Valid() {
		return nil
	}
	return w.SampleFloat(v.V*scale, 0)
}

// jobFamily is a family with one sample per job at most.
func jobFamily(jobs []*logwatch.JobView, name, help string, value func(v *logwatch.JobView) (float64, bool)) exposition.Family {
	return exposition.Family{Name: name, Help: help, Type: exposition.Gauge, Write: func(w *exposition.Writer) error {
		for _, v := range jobs {
			x, ok := value(v)
			if !ok {
				continue
			}
			darshanJobLabels(w, v)
			if err := w.SampleFloat(x, 0); err != nil {
				return err
			}
		}
		return nil
	}}
}

// jobSignalFamily exports signal i of a list of a job's values.
func jobSignalFamily(jobs []*logwatch.JobView, name, help string, scale float64, pick func(v *logwatch.JobView) (signals.Value, bool)) exposition.Family {
	return jobFamily(jobs, name, help, func(v *logwatch.JobView) (float64, bool) {
		x, ok := pick(v)
		if !ok || !x.Valid() {
			return 0, false
		}
		return x.V * scale, true
	})
}

// moduleFamily exports one level 2 value per job and data module.
func moduleFamily(jobs []*logwatch.JobView, name, help string, pick func(m *logwatch.ModuleView) (signals.Value, float64)) exposition.Family {
	return exposition.Family{Name: name, Help: help, Type: exposition.Gauge, Write: func(w *exposition.Writer) error {
		for _, v := range jobs {
			if len(v.Modules) == 0 {
				continue
			}
			darshanJobLabels(w, v)
			mark := w.LabelMark()
			for i := range v.Modules {
				m := &v.Modules[i]
				x, scale := pick(m)
				if !x.Valid() {
					continue
				}
				w.TruncateLabels(mark)
				w.Label("module", m.Name)
				if err := sampleValue(w, x, scale); err != nil {
					return err
				}
			}
		}
		return nil
	}}
}

// layerFamily exports one HEATMAP value per job and layer.
func layerFamily(jobs []*logwatch.JobView, name, help string, pick func(l *logwatch.LayerView) signals.Value) exposition.Family {
	return exposition.Family{Name: name, Help: help, Type: exposition.Gauge, Write: func(w *exposition.Writer) error {
		for _, v := range jobs {
			if len(v.Layers) == 0 {
				continue
			}
			darshanJobLabels(w, v)
			mark := w.LabelMark()
			for i := range v.Layers {
				l := &v.Layers[i]
				x := pick(l)
				if !x.Valid() {
					continue
				}
				w.TruncateLabels(mark)
				w.Label("layer", l.Name)
				if err := sampleValue(w, x, 1); err != nil {
					return err
				}
			}
		}
		return nil
	}}
}

// recordFamily exports one level 3 value per job and record.
func recordFamily(jobs []*logwatch.JobView, name, help string, pick func(r *logwatch.RecordView) (signals.Value, float64)) exposition.Family {
	return exposition.Family{Name: name, Help: help, Type: exposition.Gauge, Write: func(w *exposition.Writer) error {
		for _, v := range jobs {
			if len(v.Records) == 0 {
				continue
			}
			darshanJobLabels(w, v)
			mark := w.LabelMark()
			for i := range v.Records {
				r := &v.Records[i]
				x, scale := pick(r)
				if !x.Valid() {
					continue
				}
				w.TruncateLabels(mark)
				w.Label("module", r.Module)
				w.Label("rank", r.Rank)
				w.Label("record_id", r.ID)
				if err := sampleValue(w, x, scale); err != nil {
					return err
				}
			}
		}
		return nil
	}}
}

// insightFamily exports one sample per fired insight of each job, labelled
// by its code (and level, with level).
func insightFamily(jobs []*logwatch.JobView, name, help string, level bool, pick func(in *logwatch.InsightView) (float64, bool)) exposition.Family {
	return exposition.Family{Name: name, Help: help, Type: exposition.Gauge, Write: func(w *exposition.Writer) error {
		for _, v := range jobs {
			if len(v.Insights) == 0 {
				continue
			}
			darshanJobLabels(w, v)
			mark := w.LabelMark()
			for i := range v.Insights {
				in := &v.Insights[i]
				x, ok := pick(in)
				if !ok {
					continue
				}
				w.TruncateLabels(mark)
				w.Label("code", in.Code())
				if level {
					w.Label("level", in.Level().String())
				}
				if err := w.SampleFloat(x, 0); err != nil {
					return err
				}
			}
		}
		return nil
	}}
}

// signalOf returns the record's value of signal s (NA when the record's
// module does not have it).
func signalOf(r *logwatch.RecordView, s signals.Signal) signals.Value {
	for i, x := range r.Signals {
		if x == s {
			return r.Values[i]
		}
	}
	return signals.Value{NA: signals.NotAvailable}
}

func indexOf(list []signals.Signal, s signals.Signal) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	panic("signal not in list: " + s.String())
}

// darshanJobFamilies returns the streamed families for the jobs of one
// snapshot; the record families only when records are kept, the insight
// families only when insights are on.
func darshanJobFamilies(jobs []*logwatch.JobView, records, insights bool) []exposition.Family {
	job := func(s signals.Signal) func(v *logwatch.JobView) (signals.Value, bool) {
		i := indexOf(signals.JobSignals, s)
		return func(v *logwatch.JobView) (signals.Value, bool) { return v.Job[i], true }
	}
	posix := func(s signals.Signal) func(v *logwatch.JobView) (signals.Value, bool) {
		i := indexOf(signals.POSIXJobSignals, s)
		return func(v *logwatch.JobView) (signals.Value, bool) {
			if v.POSIX == nil {
				return signals.Value{}, false
			}
			return v.POSIX[i], true
		}
	}
	module := func(s signals.Signal, scale float64) func(m *logwatch.ModuleView) (signals.Value, float64) {
		i := indexOf(signals.ModuleSignals, s)
		return func(m *logwatch.ModuleView) (signals.Value, float64) { return m.Values[i], scale }
	}
	layer := func(s signals.Signal) func(l *logwatch.LayerView) signals.Value {
		return func(l *logwatch.LayerView) signals.Value { return l.Values.Get(s) }
	}
	record := func(s signals.Signal, scale float64) func(r *logwatch.RecordView) (signals.Value, float64) {
		return func(r *logwatch.RecordView) (signals.Value, float64) { return signalOf(r, s), scale }
	}
	always := func(f func(v *logwatch.JobView) float64) func(v *logwatch.JobView) (float64, bool) {
		return func(v *logwatch.JobView) (float64, bool) { return f(v), true }
	}

	fams := []exposition.Family{
		// The job.
		{Name: "darshan_job_info", Help: "A job with Darshan logs (always 1), with the log format version of its last log.", Type: exposition.Gauge,
			Write: func(w *exposition.Writer) error {
				for _, v := range jobs {
					darshanJobLabels(w, v)
					w.Label("log_version", v.Version)
					if err := w.SampleFloat(1, 0); err != nil {
						return err
					}
				}
				return nil
			}},
		jobFamily(jobs, "darshan_job_logs", "Darshan logs summed into the job (its steps, or the runs of the program outside jobs).",
			always(func(v *logwatch.JobView) float64 { return float64(v.Logs) })),
		jobFamily(jobs, "darshan_job_processes", "Processes (MPI ranks) of the job: the most of any of its logs.",
			always(func(v *logwatch.JobView) float64 { return v.NProcs })),
		jobFamily(jobs, "darshan_job_start_timestamp_seconds", "When the job started, in seconds since the epoch (the earliest of its logs).",
			always(func(v *logwatch.JobView) float64 { return v.Start })),
		jobFamily(jobs, "darshan_job_end_timestamp_seconds", "When the job ended, in seconds since the epoch (the latest of its logs).",
			always(func(v *logwatch.JobView) float64 { return v.End })),

		// Level 1.
		jobSignalFamily(jobs, "darshan_job_read_bytes", "Bytes the job read through POSIX and STDIO (SIGNAL_TOTAL_BYTES_READ).", 1, job(signals.TotalBytesRead)),
		jobSignalFamily(jobs, "darshan_job_write_bytes", "Bytes the job wrote through POSIX and STDIO (SIGNAL_TOTAL_BYTES_WRITTEN).", 1, job(signals.TotalBytesWritten)),
		jobSignalFamily(jobs, "darshan_job_read_operations", "Read operations of the job through POSIX and STDIO (SIGNAL_TOTAL_READS).", 1, job(signals.TotalReads)),
		jobSignalFamily(jobs, "darshan_job_write_operations", "Write operations of the job through POSIX and STDIO (SIGNAL_TOTAL_WRITES).", 1, job(signals.TotalWrites)),

		// Level 2.
		moduleFamily(jobs, "darshan_job_module_read_bytes", "Bytes the job read through the module (POSIX, MPI-IO, STDIO, H5D, PNETCDF_VAR, DFS, DAOS).",
			func(m *logwatch.ModuleView) (signals.Value, float64) { return signals.Value{V: m.BytesRead}, 1 }),
		moduleFamily(jobs, "darshan_job_module_write_bytes", "Bytes the job wrote through the module.",
			func(m *logwatch.ModuleView) (signals.Value, float64) { return signals.Value{V: m.BytesWritten}, 1 }),
		moduleFamily(jobs, "darshan_job_module_read_bandwidth_bytes_per_second", "Bytes read through the module per second of its read, write and metadata time (SIGNAL_READ_BW, in bytes/s).", module(signals.ReadBW, mib)),
		moduleFamily(jobs, "darshan_job_module_write_bandwidth_bytes_per_second", "Bytes written through the module per second of its read, write and metadata time (SIGNAL_WRITE_BW, in bytes/s).", module(signals.WriteBW, mib)),
		moduleFamily(jobs, "darshan_job_module_read_operations_per_second", "Reads through the module per second of its read, write and metadata time (SIGNAL_READ_IOPS).", module(signals.ReadIOPS, 1)),
		moduleFamily(jobs, "darshan_job_module_write_operations_per_second", "Writes through the module per second of its read, write and metadata time (SIGNAL_WRITE_IOPS).", module(signals.WriteIOPS, 1)),
		moduleFamily(jobs, "darshan_job_module_average_read_size_bytes", "Average size of the module's reads (SIGNAL_AVG_READ_SIZE).", module(signals.AvgReadSize, 1)),
		moduleFamily(jobs, "darshan_job_module_average_write_size_bytes", "Average size of the module's writes (SIGNAL_AVG_WRITE_SIZE).", module(signals.AvgWriteSize, 1)),

		// POSIX access patterns of the whole job.
		jobSignalFamily(jobs, "darshan_job_posix_sequential_read_ratio", "Share of the job's POSIX reads at increasing offsets (SEQ_READS / READS over all its POSIX records).", 1, posix(signals.SeqReadRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_sequential_write_ratio", "Share of the job's POSIX writes at increasing offsets.", 1, posix(signals.SeqWriteRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_consecutive_read_ratio", "Share of the job's POSIX reads exactly adjacent to the previous one.", 1, posix(signals.ConsecReadRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_consecutive_write_ratio", "Share of the job's POSIX writes exactly adjacent to the previous one.", 1, posix(signals.ConsecWriteRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_sequential_ratio", "Share of the job's POSIX reads and writes at increasing offsets.", 1, posix(signals.SeqRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_consecutive_ratio", "Share of the job's POSIX reads and writes exactly adjacent to the previous one.", 1, posix(signals.ConsecRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_small_read_ratio", "Share of the job's POSIX reads under 1 MiB.", 1, posix(signals.SmallReadRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_small_write_ratio", "Share of the job's POSIX writes under 1 MiB.", 1, posix(signals.SmallWriteRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_unaligned_read_ratio", "POSIX accesses not aligned to the file alignment per POSIX read (FILE_NOT_ALIGNED / READS; may exceed 1).", 1, posix(signals.UnalignedReadRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_unaligned_write_ratio", "POSIX accesses not aligned to the file alignment per POSIX write (FILE_NOT_ALIGNED / WRITES; may exceed 1).", 1, posix(signals.UnalignedWriteRatio)),
		jobSignalFamily(jobs, "darshan_job_posix_metadata_operations", "POSIX opens, stats, seeks, fsyncs and fdatasyncs of the job (SIGNAL_META_OPS).", 1, posix(signals.MetaOps)),
		jobSignalFamily(jobs, "darshan_job_posix_metadata_operations_per_access", "POSIX metadata operations per POSIX read or write (SIGNAL_META_INTENSITY).", 1, posix(signals.MetaIntensity)),
		jobSignalFamily(jobs, "darshan_job_posix_metadata_time_ratio", "Share of the job's POSIX time spent in metadata (SIGNAL_META_FRACTION).", 1, posix(signals.MetaFraction)),
		jobSignalFamily(jobs, "darshan_job_posix_shared_rank_imbalance_ratio", "Bytes of the slowest rank over bytes of the fastest rank, summed over the job's shared POSIX files.", 1, posix(signals.RankImbalanceRatio)),

		// HEATMAP per layer.
		layerFamily(jobs, "darshan_job_heatmap_bin_width_seconds", "Width of the job's heatmap bins for the layer (bins of several ranks or logs are summed on a common width).",
			func(l *logwatch.LayerView) signals.Value { return signals.Value{V: l.Width} }),
		layerFamily(jobs, "darshan_job_heatmap_read_bytes", "Bytes read in the layer's heatmap bins (SIGNAL_TOTAL_READ_EVENTS).", layer(signals.TotalReadEvents)),
		layerFamily(jobs, "darshan_job_heatmap_write_bytes", "Bytes written in the layer's heatmap bins (SIGNAL_TOTAL_WRITE_EVENTS).", layer(signals.TotalWriteEvents)),
		layerFamily(jobs, "darshan_job_heatmap_active_bins", "Heatmap bins of the layer with any I/O (SIGNAL_ACTIVE_BINS).", layer(signals.ActiveBins)),
		layerFamily(jobs, "darshan_job_heatmap_active_seconds", "Time in heatmap bins of the layer with any I/O (SIGNAL_ACTIVE_TIME).", layer(signals.ActiveTime)),
		layerFamily(jobs, "darshan_job_heatmap_span_seconds", "Time from the first to the end of the last active heatmap bin of the layer (SIGNAL_ACTIVITY_SPAN).", layer(signals.ActivitySpan)),
		layerFamily(jobs, "darshan_job_heatmap_peak_bin", "Index of the layer's busiest heatmap bin, from the job's start in bin widths (SIGNAL_PEAK_ACTIVITY_BIN).", layer(signals.PeakActivityBin)),
		layerFamily(jobs, "darshan_job_heatmap_peak_bin_bytes", "Bytes read and written in the layer's busiest heatmap bin (SIGNAL_PEAK_ACTIVITY_VALUE).", layer(signals.PeakActivityValue)),
		layerFamily(jobs, "darshan_job_heatmap_read_entropy_ratio", "Normalized entropy (0-1) of the layer's reads over its heatmap bins: 1 is even, 0 a single burst.", layer(signals.ReadActivityEntropyNorm)),
		layerFamily(jobs, "darshan_job_heatmap_write_entropy_ratio", "Normalized entropy (0-1) of the layer's writes over its heatmap bins.", layer(signals.WriteActivityEntropyNorm)),
		layerFamily(jobs, "darshan_job_heatmap_top_bin_share_ratio", "Share of the layer's bytes in its busiest heatmap bin (SIGNAL_TOP1_SHARE).", layer(signals.Top1Share)),
	}
	if insights {
		// Only the triggers that fired: a job's OK triggers would add about
		// thirty series per job, and their values are mostly the POSIX
		// signals above. Value and threshold are left out when NaN (M01,
		// which has neither).
		fams = append(fams,
			insightFamily(jobs, "darshan_job_insight", "1 for each Drishti insight (trigger) that fired for the job's logs together, by code (S01, P01-P22, M01-M10) and level (HIGH, WARN, INFO); triggers that did not fire or that the logs cannot decide have no series. The recommendation of a code is in darshan_insight_info.", true,
				func(*logwatch.InsightView) (float64, bool) { return 1, true }),
			insightFamily(jobs, "darshan_job_insight_value", "The number that decided each fired insight of the job (a ratio for most codes; P09/P10 a byte offset, P17 seconds, M02/M03 operations, M09 aggregators), as the code's formula computes it.", false,
				func(in *logwatch.InsightView) (float64, bool) { return in.Value, logwatch.Finite(in.Value) }),
			insightFamily(jobs, "darshan_job_insight_threshold", "The threshold each fired insight of the job was held to, in the unit of darshan_job_insight_value (from --darshan.insights-config; P09/P10 the job's bytes read or written, M09 its compute nodes).", false,
				func(in *logwatch.InsightView) (float64, bool) { return in.Threshold, logwatch.Finite(in.Threshold) }),
		)
	}
	if !records {
		return fams
	}
	for _, f := range darshanRecordFamilies {
		pick := record(f.signal, f.scale)
		switch f.bytes {
		case ofBytesRead:
			pick = func(r *logwatch.RecordView) (signals.Value, float64) { return signals.Value{V: r.BytesRead}, 1 }
		case ofBytesWritten:
			pick = func(r *logwatch.RecordView) (signals.Value, float64) { return signals.Value{V: r.BytesWritten}, 1 }
		}
		fams = append(fams, recordFamily(jobs, f.name, f.help, pick))
	}
	return fams
}

// The record families of bytes, which every record has, beside those of
// signals.
const (
	ofSignal = iota
	ofBytesRead
	ofBytesWritten
)

// darshanRecordFamilies are the record families (--darshan.records): one
// sample per record of a job whose signal is not NA.
var darshanRecordFamilies = []struct {
	name, help string
	signal     signals.Signal
	scale      float64
	bytes      int // ofSignal, or which bytes
}{
	{"darshan_record_read_bytes", "Bytes read in the record (one file, module and rank; rank -1 is a shared file).", 0, 1, ofBytesRead},
	{"darshan_record_write_bytes", "Bytes written in the record.", 0, 1, ofBytesWritten},
	{"darshan_record_read_bandwidth_bytes_per_second", "Bytes read in the record per second of read time (SIGNAL_READ_BW, in bytes/s).", signals.ReadBW, mib, ofSignal},
	{"darshan_record_write_bandwidth_bytes_per_second", "Bytes written in the record per second of write time (SIGNAL_WRITE_BW, in bytes/s).", signals.WriteBW, mib, ofSignal},
	{"darshan_record_read_operations_per_second", "Reads of the record per second of read time (SIGNAL_READ_IOPS).", signals.ReadIOPS, 1, ofSignal},
	{"darshan_record_write_operations_per_second", "Writes of the record per second of write time (SIGNAL_WRITE_IOPS).", signals.WriteIOPS, 1, ofSignal},
	{"darshan_record_average_read_size_bytes", "Average read size of the record (SIGNAL_AVG_READ_SIZE).", signals.AvgReadSize, 1, ofSignal},
	{"darshan_record_average_write_size_bytes", "Average write size of the record (SIGNAL_AVG_WRITE_SIZE).", signals.AvgWriteSize, 1, ofSignal},
	{"darshan_record_posix_sequential_read_ratio", "Share of the POSIX record's reads at increasing offsets.", signals.SeqReadRatio, 1, ofSignal},
	{"darshan_record_posix_sequential_write_ratio", "Share of the POSIX record's writes at increasing offsets.", signals.SeqWriteRatio, 1, ofSignal},
	{"darshan_record_posix_consecutive_read_ratio", "Share of the POSIX record's reads exactly adjacent to the previous one.", signals.ConsecReadRatio, 1, ofSignal},
	{"darshan_record_posix_consecutive_write_ratio", "Share of the POSIX record's writes exactly adjacent to the previous one.", signals.ConsecWriteRatio, 1, ofSignal},
	{"darshan_record_posix_sequential_ratio", "Share of the POSIX record's reads and writes at increasing offsets.", signals.SeqRatio, 1, ofSignal},
	{"darshan_record_posix_consecutive_ratio", "Share of the POSIX record's reads and writes exactly adjacent to the previous one.", signals.ConsecRatio, 1, ofSignal},
	{"darshan_record_posix_metadata_operations", "Opens, stats, seeks, fsyncs and fdatasyncs of the POSIX record.", signals.MetaOps, 1, ofSignal},
	{"darshan_record_posix_metadata_operations_per_access", "Metadata operations per read or write of the POSIX record.", signals.MetaIntensity, 1, ofSignal},
	{"darshan_record_posix_metadata_time_ratio", "Share of the POSIX record's time spent in metadata.", signals.MetaFraction, 1, ofSignal},
	{"darshan_record_posix_unaligned_read_ratio", "Unaligned accesses per read of the POSIX record (may exceed 1).", signals.UnalignedReadRatio, 1, ofSignal},
	{"darshan_record_posix_unaligned_write_ratio", "Unaligned accesses per write of the POSIX record (may exceed 1).", signals.UnalignedWriteRatio, 1, ofSignal},
	{"darshan_record_posix_small_read_ratio", "Share of the POSIX record's reads under 1 MiB.", signals.SmallReadRatio, 1, ofSignal},
	{"darshan_record_posix_small_write_ratio", "Share of the POSIX record's writes under 1 MiB.", signals.SmallWriteRatio, 1, ofSignal},
	{"darshan_record_posix_reuse_ratio", "Bytes read over the file's highest offset + 1, a proxy for re-reading (SIGNAL_REUSE_PROXY).", signals.ReuseProxy, 1, ofSignal},
	{"darshan_record_posix_rank_imbalance_ratio", "Bytes of the slowest over the fastest rank of a shared POSIX file.", signals.RankImbalanceRatio, 1, ofSignal},
	{"darshan_record_posix_rank_bytes_variance", "Variance of the bytes moved by each rank of a shared POSIX file, in bytes squared (SIGNAL_BW_VARIANCE_PROXY).", signals.BWVarianceProxy, 1, ofSignal},
	{"darshan_record_posix_shared", "1 when the POSIX record is of a file shared by all ranks (rank -1), else 0.", signals.IsShared, 1, ofSignal},
}

// darshanJobSeries is the number of series the per-job families write for
// job v (the sidecar's series budget, --darshan.max-series): each family
// of darshanJobFamilies, sample by sample, as they skip NA signals and
// NaN values. TestDarshanJobSeries holds it to what a scrape writes.
func darshanJobSeries(v *logwatch.JobView) int {
	valid := func(xs []signals.Value) (n int) {
		for _, x := range xs {
			if x.Valid() {
				n++
			}
		}
		return n
	}
	n := 5 // info, logs, processes, start and end timestamps
	n += valid(v.Job[:])
	for i := range v.Modules {
		n += 2 + valid(v.Modules[i].Values[:]) // bytes read and written, then the signals
	}
	n += valid(v.POSIX)
	for i := range v.Layers {
		n += 1 + valid(v.Layers[i].Values[:]) // the bin width, then the signals
	}
	for i := range v.Insights {
		in := &v.Insights[i]
		n++
		if logwatch.Finite(in.Value) {
			n++
		}
		if logwatch.Finite(in.Threshold) {
			n++
		}
	}
	for i := range v.Records {
		r := &v.Records[i]
		for _, f := range darshanRecordFamilies {
			if f.bytes != ofSignal || signalOf(r, f.signal).Valid() {
				n++
			}
		}
	}
	return n
}
