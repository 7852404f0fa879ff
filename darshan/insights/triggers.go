package insights

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// A trigger decides one code (or a pair: a warning and its good-news
// counterpart) and appends what it decided. It appends nothing when the
// log cannot decide it (the module is absent, or a divisor is 0).
type trigger func(t *Totals, c *evalCtx, out []Insight) []Insight

// evalCtx is what a trigger is evaluated with: the thresholds, and brief
// when only the decision is wanted (Decide), not its text.
type evalCtx struct {
	Config
	brief bool
}

var triggers = []trigger{
	stdioShare,
	mpiioUnused,
	countIntensive, sizeIntensive,
	smallReads, smallWrites,
	misalignedMemory, misalignedFile,
	redundantReads, redundantWrites,
	randomReads, randomWrites,
	sharedSmallReads, sharedSmallWrites,
	metadataTime,
	stragglerBytes, stragglerTime,
	writeImbalance, readImbalance,
	collectiveReads, collectiveWrites,
	blockingReads, blockingWrites,
	aggregators,
}

var nan = math.NaN()

func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

// humanBytes writes n with a binary unit, as the report's readers expect.
func humanBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

func ratio(a, b int64) float64 { return float64(a) / float64(b) }

// text is what an Insight says: its message and its recommendations,
// built only when they are asked for (by Evaluate; Decide keeps the first
// recommendation of the insights that fired, and no message).
type text func() (msg string, recs []string)

// add appends the Insight of code to out: Level is level when fired, OK
// otherwise, and recommendations are kept only when it fired. It is
// written in place, where building it and appending it copied its 136
// bytes twice (most of what a Decider's evaluation cost).
func (c *evalCtx) add(out []Insight, code string, level Level, fired bool, value, threshold float64, txt text) []Insight {
	out = append(out, Insight{})
	in := &out[len(out)-1]
	in.Code, in.Fired, in.Value, in.Threshold, in.Count, in.CountThreshold = code, fired, value, threshold, nan, nan
	if fired {
		in.Level = level
	}
	switch {
	case !c.brief:
		msg, recs := txt()
		in.Message = msg
		if fired {
			in.Recommendations = recs
		}
	case fired:
		in.Recommendations = firstRecommendation(code, txt)
	}
	return out
}

// firstRecs caches, per code, the first recommendation of an insight that
// fired (nil when it has none), as a slice of one to be shared, not
// modified. Every trigger puts first the general advice, the same for
// every log ("the sidecar exports a code's first recommendation once per
// code"); so Decide writes a code's text once, the first time it fires,
// rather than for every log (writing the text was most of its cost).
var firstRecs [64]atomic.Pointer[[]string] // by CodeIndex; firstRecsOther beyond

var firstRecsOther sync.Map // code → *[]string: a code CodeIndex does not know

func firstRecommendation(code string, txt text) []string {
	i, known := CodeIndex(code)
	if known {
		if p := firstRecs[i].Load(); p != nil {
			return *p
		}
	} else if v, ok := firstRecsOther.Load(code); ok {
		return *v.(*[]string)
	}
	var first []string
	if _, recs := txt(); len(recs) > 0 {
		first = recs[:1:1]
	}
	if known {
		firstRecs[i].Store(&first)
	} else {
		firstRecsOther.Store(code, &first)
	}
	return first
}

// CodeIndex numbers the codes S01, P01–P31 and M01–M32 (every code of
// Codes is one) from 0 to 63, for a table by code (firstRecs, the
// sidecar's views) without a map: a sync.Map by code cost a job's
// evaluation more than most of its triggers. false for any other code.
func CodeIndex(code string) (int, bool) {
	if len(code) != 3 || code[1] < '0' || code[1] > '9' || code[2] < '0' || code[2] > '9' {
		return 0, false
	}
	n := int(code[1]-'0')*10 + int(code[2]-'0')
	switch {
	case code[0] == 'S' && n == 1:
		return 0, true
	case code[0] == 'P' && n >= 1 && n <= 31:
		return n, true
	case code[0] == 'M' && n >= 1 && n <= 32:
		return 31 + n, true
	}
	return 0, false
}

// files is the detail of an insight that fired: the names of r's kept
// entries that pass keep; none in brief.
func (c *evalCtx) files(r *Ranking, keep func(Ranked) bool) []string {
	if c.brief {
		return nil
	}
	return files(r, keep)
}

func (t *Totals) usesMPIIO() bool { return t.Has(darshan.MPIIO) }
func (t *Totals) usesHDF5() bool  { return t.Has(darshan.H5F) || t.Has(darshan.H5D) || t.HDF5Names }

// files lists the names of r's kept entries that pass keep.
func files(r *Ranking, keep func(Ranked) bool) []string {
	var out []string
	for _, e := range r.Top {
		if keep(e) {
			name := e.Name
			if name == "" {
				name = "(unnamed record)"
			}
			out = append(out, name)
		}
	}
	return out
}

// countText says how many files crossed a threshold, "at least" when the
// Ranking could not keep them all.
func countText(n int, exact bool) string {
	if exact {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("at least %d", n)
}

// stdioShare is S01 (HIGH): STDIO carries a large share of the bytes.
//
//	stdio = STDIO_BYTES_READ + STDIO_BYTES_WRITTEN
//	posix = POSIX_BYTES_READ + POSIX_BYTES_WRITTEN, less the MPI-IO bytes when posix ≥ mpiio (MPI-IO goes through POSIX)
//	mpiio = MPIIO_BYTES_READ + MPIIO_BYTES_WRITTEN
//	fires when stdio / (stdio + posix + mpiio) > interface.stdio (0.1)
//
// Decided when any of the three moved a byte.
func stdioShare(t *Totals, c *evalCtx, out []Insight) []Insight {
	stdio := t.STDIOBytesRead + t.STDIOBytesWritten
	posix := t.POSIXBytesRead + t.POSIXBytesWritten
	mpiio := t.MPIIOBytesRead + t.MPIIOBytesWritten
	if posix > 0 && posix >= mpiio {
		posix -= mpiio
	}
	total := stdio + posix + mpiio
	if total <= 0 {
		return out
	}
	v := ratio(stdio, total)
	fired := v > c.InterfaceSTDIO
	return c.add(out, "S01", High, fired, v, c.InterfaceSTDIO, func() (string, []string) {
		msg := fmt.Sprintf("STDIO moves %s of the bytes (%s of %s); threshold %s", pct(v), humanBytes(stdio), humanBytes(total), pct(c.InterfaceSTDIO))
		if fired {
			msg = "STDIO, a slow buffered interface, " + msg[len("STDIO "):]
		}
		return msg, []string{
			"Move the bulk data off fread/fwrite/fprintf to POSIX or, for parallel jobs, to MPI-IO or a library built on it (HDF5, PnetCDF); keep STDIO for logs and small text",
		}
	})
}

// mpiioUnused is M01 (WARN): the job does not use MPI-IO at all.
//
//	fires when the log has no MPI-IO module data
//
// Always decided; no threshold.
func mpiioUnused(t *Totals, c *evalCtx, out []Insight) []Insight {
	fired := !t.usesMPIIO()
	return c.add(out, "M01", Warn, fired, nan, nan, func() (string, []string) {
		msg := "The job uses MPI-IO"
		if fired {
			msg = "The job does no I/O through MPI-IO (only POSIX/STDIO or other interfaces)"
		}
		return msg, []string{
			"For a parallel job, MPI-IO (directly or through HDF5/PnetCDF) lets the ranks' requests be combined into fewer, larger ones",
		}
	})
}

// countIntensive is P01 and P02 (INFO): POSIX operations are mostly writes
// (P01) or mostly reads (P02).
//
//	ops = POSIX_READS + POSIX_WRITES
//	P01 value = (writes − reads) / ops; P02 value = (reads − writes) / ops
//	each fires when its value > imbalance.operations (0.1)
//
// Decided when ops > 0.
func countIntensive(t *Totals, c *evalCtx, out []Insight) []Insight {
	ops := t.Reads + t.Writes
	if ops <= 0 {
		return out
	}
	desc := func() string {
		w, r := ratio(t.Writes, ops), ratio(t.Reads, ops)
		return fmt.Sprintf("%s writes, %s reads of %d POSIX operations", pct(w), pct(r), ops)
	}
	// The differences of the integers, divided once: a difference of two
	// rounded shares would cross the threshold at its edge.
	v1, v2 := ratio(t.Writes-t.Reads, ops), ratio(t.Reads-t.Writes, ops)
	out = c.add(out, "P01", Info, v1 > c.ImbalanceOperations, v1, c.ImbalanceOperations, func() (string, []string) {
		return "Write-intensive by operation count? " + yesNo(v1 > c.ImbalanceOperations) + ": " + desc(), nil
	})
	return c.add(out, "P02", Info, v2 > c.ImbalanceOperations, v2, c.ImbalanceOperations, func() (string, []string) {
		return "Read-intensive by operation count? " + yesNo(v2 > c.ImbalanceOperations) + ": " + desc(), nil
	})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sizeIntensive is P03 and P04 (INFO): POSIX bytes are mostly written (P03)
// or mostly read (P04).
//
//	bytes = POSIX_BYTES_READ + POSIX_BYTES_WRITTEN
//	P03 value = (written − read) / bytes; P04 value = (read − written) / bytes
//	each fires when its value > imbalance.operations (0.1)
//
// Decided when bytes > 0.
func sizeIntensive(t *Totals, c *evalCtx, out []Insight) []Insight {
	total := t.POSIXBytesRead + t.POSIXBytesWritten
	if total <= 0 {
		return out
	}
	desc := func() string {
		w, r := ratio(t.POSIXBytesWritten, total), ratio(t.POSIXBytesRead, total)
		return fmt.Sprintf("%s written (%s), %s read (%s) through POSIX", pct(w), humanBytes(t.POSIXBytesWritten), pct(r), humanBytes(t.POSIXBytesRead))
	}
	v3, v4 := ratio(t.POSIXBytesWritten-t.POSIXBytesRead, total), ratio(t.POSIXBytesRead-t.POSIXBytesWritten, total)
	out = c.add(out, "P03", Info, v3 > c.ImbalanceOperations, v3, c.ImbalanceOperations, func() (string, []string) {
		return "Write-intensive by volume? " + yesNo(v3 > c.ImbalanceOperations) + ": " + desc(), nil
	})
	return c.add(out, "P04", Info, v4 > c.ImbalanceOperations, v4, c.ImbalanceOperations, func() (string, []string) {
		return "Read-intensive by volume? " + yesNo(v4 > c.ImbalanceOperations) + ": " + desc(), nil
	})
}

// smallReads is P05 (HIGH): many small POSIX reads.
//
//	small = Σ POSIX_SIZE_READ bins below small.bytes (1 MiB: 0_100 … 100K_1M)
//	value = small / POSIX_READS
//	fires when value > small.requests (0.1) and small > small.requests_absolute (1000)
//
// Decided when POSIX_READS > 0. Files: those whose small reads (under
// 1 MiB, over all their records) exceed POSIX_READS × small.requests / 2.
func smallReads(t *Totals, c *evalCtx, out []Insight) []Insight {
	return smallOps(t, c, out, "P05", "read", t.Reads, small(&t.ReadBins, c.SmallBytes), &t.SmallReadFiles, false)
}

// smallWrites is P06 (HIGH): many small POSIX writes, as P05 with the
// write counters.
func smallWrites(t *Totals, c *evalCtx, out []Insight) []Insight {
	return smallOps(t, c, out, "P06", "write", t.Writes, small(&t.WriteBins, c.SmallBytes), &t.SmallWriteFiles, false)
}

// sharedSmallReads is P15 (HIGH): many small reads to files shared by every
// rank (records of rank −1), as P05 on those records alone.
//
// Decided when the shared records have reads.
func sharedSmallReads(t *Totals, c *evalCtx, out []Insight) []Insight {
	return smallOps(t, c, out, "P15", "read", t.SharedReads, small(&t.SharedReadBins, c.SmallBytes), &t.SharedSmallReads, true)
}

// sharedSmallWrites is P16 (HIGH): P15 for writes.
func sharedSmallWrites(t *Totals, c *evalCtx, out []Insight) []Insight {
	return smallOps(t, c, out, "P16", "write", t.SharedWrites, small(&t.SharedWriteBins, c.SmallBytes), &t.SharedSmallWrites, true)
}

func smallOps(t *Totals, c *evalCtx, out []Insight, code, op string, ops, smallOps int64, r *Ranking, shared bool) []Insight {
	if ops <= 0 {
		return out
	}
	v := ratio(smallOps, ops)
	fired := smallOps > 0 && v > c.SmallRequests && float64(smallOps) > c.SmallRequestsAbsolute
	out = c.add(out, code, High, fired, v, c.SmallRequests, func() (string, []string) {
		where := ""
		if shared {
			where = " to shared files"
		}
		msg := fmt.Sprintf("%d small %ss (< %s)%s: %s of %d %ss; thresholds %s and %.0f", smallOps, op, humanBytes(c.SmallBytes), where, pct(v), ops, op, pct(c.SmallRequests), c.SmallRequestsAbsolute)
		var recs []string
		switch {
		case shared:
			recs = []string{fmt.Sprintf("Let MPI-IO collective %ss (or a library using them) gather the ranks' small %ss to the shared file into large contiguous ones", op, op)}
		default:
			recs = []string{fmt.Sprintf("Aggregate small %ss into larger contiguous requests: buffer in memory, or %s whole blocks at once", op, op)}
			if t.usesMPIIO() {
				recs = append(recs, fmt.Sprintf("The job already uses MPI-IO: collective %ss (MPI_File_%s_all, MPI_File_%s_at_all) combine requests across ranks", op, op, op))
			} else {
				recs = append(recs, fmt.Sprintf("MPI-IO collective %ss could combine the ranks' small requests; the job does not use MPI-IO", op))
			}
		}
		return msg, recs
	})
	in := &out[len(out)-1]
	in.Count, in.CountThreshold = float64(smallOps), c.SmallRequestsAbsolute
	if fired {
		limit := float64(ops) * c.SmallRequests / 2
		in.Files = c.files(r, func(e Ranked) bool { return e.Value > limit })
	}
	return out
}

// misalignedMemory is P07 (HIGH): POSIX requests from buffers not aligned
// in memory.
//
//	value = POSIX_MEM_NOT_ALIGNED / (POSIX_READS + POSIX_WRITES)
//	fires when value > misaligned.requests (0.1)
//
// Decided when the job has POSIX operations.
func misalignedMemory(t *Totals, c *evalCtx, out []Insight) []Insight {
	ops := t.Reads + t.Writes
	if ops <= 0 {
		return out
	}
	v := ratio(t.MemNotAligned, ops)
	return c.add(out, "P07", High, v > c.MisalignedRequests, v, c.MisalignedRequests, func() (string, []string) {
		msg := fmt.Sprintf("%s of POSIX requests (%d of %d) use buffers not aligned in memory; threshold %s", pct(v), t.MemNotAligned, ops, pct(c.MisalignedRequests))
		return msg, []string{
			"Allocate I/O buffers aligned to the memory alignment darshan reports (posix_memalign, aligned_alloc)",
		}
	})
}

// misalignedFile is P08 (HIGH): POSIX requests not aligned to the file
// system's block (darshan's POSIX_FILE_ALIGNMENT).
//
//	value = POSIX_FILE_NOT_ALIGNED / (POSIX_READS + POSIX_WRITES)
//	fires when value > misaligned.requests (0.1)
//
// Decided when the job has POSIX operations.
func misalignedFile(t *Totals, c *evalCtx, out []Insight) []Insight {
	ops := t.Reads + t.Writes
	if ops <= 0 {
		return out
	}
	v := ratio(t.FileNotAligned, ops)
	return c.add(out, "P08", High, v > c.MisalignedRequests, v, c.MisalignedRequests, func() (string, []string) {
		msg := fmt.Sprintf("%s of POSIX requests (%d of %d) start or end off the file system's block boundaries; threshold %s", pct(v), t.FileNotAligned, ops, pct(c.MisalignedRequests))
		recs := []string{"Make request offsets and sizes multiples of the file system block (or stripe) size"}
		if t.usesHDF5() {
			recs = append(recs, "HDF5: set H5Pset_alignment on the file access property list so that large objects start on block boundaries")
		}
		if t.Has(darshan.Lustre) {
			recs = append(recs, "Lustre: choose a stripe size that the requests are multiples of (lfs setstripe -S), or align the requests to the current one")
		}
		return msg, recs
	})
}

// redundantReads is P09 (WARN): more bytes read than the highest offset
// read, so some data was read more than once.
//
//	value = max over records of POSIX_MAX_BYTE_READ; threshold = Σ POSIX_BYTES_READ
//	fires when value > threshold
//
// Decided when a POSIX record has POSIX_MAX_BYTE_READ. As in Drishti, the
// maximum is over every file and the sum over every file.
func redundantReads(t *Totals, c *evalCtx, out []Insight) []Insight {
	return redundant(c, out, "P09", "read", t.MaxByteRead, t.POSIXBytesRead)
}

// redundantWrites is P10 (WARN): P09 for writes (POSIX_MAX_BYTE_WRITTEN
// against POSIX_BYTES_WRITTEN).
func redundantWrites(t *Totals, c *evalCtx, out []Insight) []Insight {
	return redundant(c, out, "P10", "written", t.MaxByteWritten, t.POSIXBytesWritten)
}

func redundant(c *evalCtx, out []Insight, code, op string, maxByte, total int64) []Insight {
	if maxByte < 0 {
		return out
	}
	fired := maxByte > total
	return c.add(out, code, Warn, fired, float64(maxByte), float64(total), func() (string, []string) {
		msg := fmt.Sprintf("Highest offset %s %d, bytes %s %d", op, maxByte, op, total)
		if fired {
			msg = fmt.Sprintf("Some data may be %s more than once: highest offset %s %d is beyond the %d bytes %s", op, op, maxByte, total, op)
		}
		rec := "Keep data that is read again in memory instead of reading it from the file system again"
		if op == "written" {
			rec = "Check for data written more than once (rewrites of the same region, restarts of a checkpoint); write each region once"
		}
		return msg, []string{rec}
	})
}

// randomReads is P11 (HIGH) and P12 (OK): random POSIX reads.
//
//	random = POSIX_READS − POSIX_SEQ_READS (neither consecutive nor sequential)
//	value = random / POSIX_READS
//	P11 fires when value > random.operations (0.2) and random > random.operations_absolute (1000);
//	P12 (mostly consecutive and sequential) fires otherwise
//
// Decided when POSIX_READS > 0.
func randomReads(t *Totals, c *evalCtx, out []Insight) []Insight {
	return random(t, c, out, "P11", "P12", "read", t.Reads, t.SeqReads, t.ConsecReads)
}

// randomWrites is P13 (HIGH) and P14 (OK): P11 and P12 for writes.
func randomWrites(t *Totals, c *evalCtx, out []Insight) []Insight {
	return random(t, c, out, "P13", "P14", "write", t.Writes, t.SeqWrites, t.ConsecWrites)
}

func random(t *Totals, c *evalCtx, out []Insight, code, okCode, op string, ops, seq, consec int64) []Insight {
	if ops <= 0 {
		return out
	}
	rnd := ops - seq
	v := ratio(rnd, ops)
	fired := rnd > 0 && v > c.RandomOperations && float64(rnd) > c.RandomOperationsAbsolute
	out = c.add(out, code, High, fired, v, c.RandomOperations, func() (string, []string) {
		msg := fmt.Sprintf("%d random %ss: %s of %d; thresholds %s and %.0f", rnd, op, pct(v), ops, pct(c.RandomOperations), c.RandomOperationsAbsolute)
		return msg, []string{
			fmt.Sprintf("Lay the data out in the order it is %s, or sort the requests by offset, so that %ss are sequential", map[string]string{"read": "read", "write": "written"}[op], op),
		}
	})
	in := &out[len(out)-1]
	in.Count, in.CountThreshold = float64(rnd), c.RandomOperationsAbsolute
	return c.add(out, okCode, OK, !fired, v, c.RandomOperations, func() (string, []string) {
		return fmt.Sprintf("%ss are mostly consecutive (%s) and sequential (%s)", op, pct(ratio(consec, ops)), pct(ratio(seq-consec, ops))), nil
	})
}

// metadataTime is P17 (HIGH): records that spent long in metadata
// operations.
//
//	value = max over POSIX records of POSIX_F_META_TIME (s)
//	fires when value > metadata.time_rank (30 s); Count is the number of records above it
//
// Drishti counts records (rank −1 records hold the time of every rank)
// and calls them ranks. Decided when the log has POSIX records.
func metadataTime(t *Totals, c *evalCtx, out []Insight) []Insight {
	if t.POSIXRecords == 0 {
		return out
	}
	r := &t.MetaTime
	n, exact := r.above(c.MetadataTimeRank)
	fired := r.Max() > c.MetadataTimeRank
	out = c.add(out, "P17", High, fired, r.Max(), c.MetadataTimeRank, func() (string, []string) {
		msg := fmt.Sprintf("%s records spend more than %.0f s in metadata operations (longest %.2f s)", countText(n, exact), c.MetadataTimeRank, r.Max())
		recs := []string{"Open, stat and close fewer files: keep files open, combine small files, cache metadata rather than asking again"}
		if t.usesHDF5() {
			recs = append(recs, "HDF5: make metadata operations collective (H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write) and enlarge the metadata cache")
		}
		return msg, recs
	})
	in := &out[len(out)-1]
	in.Count = float64(n)
	if fired {
		in.Files = c.files(r, func(e Ranked) bool { return e.Value > c.MetadataTimeRank })
	}
	return out
}

// stragglerBytes is P18 (HIGH): shared files where the slowest and the
// fastest rank moved very different amounts of data.
//
//	per shared (rank −1) record: |POSIX_SLOWEST_RANK_BYTES − POSIX_FASTEST_RANK_BYTES| / (POSIX_BYTES_READ + POSIX_BYTES_WRITTEN)
//	value = its maximum; fires when value > imbalance.stragglers (0.15); Count is the number of files above
//
// Decided when the log has shared records.
func stragglerBytes(t *Totals, c *evalCtx, out []Insight) []Insight {
	return perFile(t, c, out, "P18", t.SharedRecords > 0, &t.StragglerBytes, c.ImbalanceStragglers,
		"shared files with a data imbalance between the slowest and fastest ranks", func() []string {
			return []string{
				"Give every rank a similar share of the data of a shared file",
				"Revisit the file's striping (stripe count and size) so that ranks do not queue on the same servers",
			}
		})
}

// stragglerTime is P19 (HIGH): shared files where the slowest and the
// fastest rank took very different times.
//
//	per shared (rank −1) record: |POSIX_F_SLOWEST_RANK_TIME − POSIX_F_FASTEST_RANK_TIME| / (POSIX_F_READ_TIME + POSIX_F_WRITE_TIME + POSIX_F_META_TIME)
//	value = its maximum; fires when value > imbalance.stragglers (0.15); Count is the number of files above
//
// Decided when the log has shared records.
func stragglerTime(t *Totals, c *evalCtx, out []Insight) []Insight {
	return perFile(t, c, out, "P19", t.SharedRecords > 0, &t.StragglerTime, c.ImbalanceStragglers,
		"shared files with a time imbalance between the slowest and fastest ranks", func() []string {
			return []string{
				"Look for ranks that wait on busy storage servers: spread the file over more servers (stripe count) or balance the work",
				"Revisit the file's striping (stripe count and size) so that ranks do not queue on the same servers",
			}
		})
}

// writeImbalance is P21 (HIGH): files whose ranks wrote very different
// amounts.
//
//	per file, over its per-rank records (rank ≠ −1): (max − min) / max of POSIX_BYTES_WRITTEN
//	value = its maximum; fires when value > imbalance.size (0.3); Count is the number of files above
//
// A file with one rank's record has no imbalance. Decided when the log has
// per-rank POSIX records.
func writeImbalance(t *Totals, c *evalCtx, out []Insight) []Insight {
	return perFile(t, c, out, "P21", t.POSIXRecords > t.SharedRecords, &t.WriteImbalance, c.ImbalanceSize,
		"files written in very unequal amounts by their ranks", func() []string { return imbalanceRecs("write") })
}

// readImbalance is P22 (HIGH): P21 for POSIX_BYTES_READ.
func readImbalance(t *Totals, c *evalCtx, out []Insight) []Insight {
	return perFile(t, c, out, "P22", t.POSIXRecords > t.SharedRecords, &t.ReadImbalance, c.ImbalanceSize,
		"files read in very unequal amounts by their ranks", func() []string { return imbalanceRecs("read") })
}

func imbalanceRecs(op string) []string {
	return []string{
		fmt.Sprintf("Give every rank a similar share of the data it %ss", op),
		"Revisit the striping (stripe count and size) of these files",
		"netCDF/HDF5: fill values written by one rank can make this; disable filling when the data is written anyway (NC_NOFILL, H5Pset_fill_time NEVER)",
		"When one rank does all the I/O of a file, let the ranks share it with MPI-IO collective calls",
	}
}

func perFile(t *Totals, c *evalCtx, out []Insight, code string, decided bool, r *Ranking, th float64, what string, recs func() []string) []Insight {
	if !decided {
		return out
	}
	n, exact := r.above(th)
	fired := r.Max() > th
	out = c.add(out, code, High, fired, r.Max(), th, func() (string, []string) {
		return fmt.Sprintf("%s %s (worst %s, threshold %s)", countText(n, exact), what, pct(r.Max()), pct(th)), recs()
	})
	in := &out[len(out)-1]
	in.Count = float64(n)
	if fired {
		in.Files = c.files(r, func(e Ranked) bool { return e.Value > th })
	}
	return out
}

// collectiveReads is M02 (HIGH) and M04 (OK): MPI-IO reads none of which
// are collective.
//
//	reads = MPIIO_INDEP_READS + MPIIO_COLL_READS
//	M02 fires when MPIIO_COLL_READS = 0 and reads > collective.operations_absolute (1000);
//	M04 fires when MPIIO_COLL_READS > 0
//
// Value is reads (M02) or the collective share (M04). Decided when the log
// has MPI-IO data. Files (M02): MPI-IO records whose independent reads
// exceed collective.operations (0.5) of their independent operations,
// themselves more than collective.operations_absolute, among the records
// with most independent reads.
func collectiveReads(t *Totals, c *evalCtx, out []Insight) []Insight {
	return collective(t, c, out, "M02", "M04", "read", t.IndepReads, t.CollReads, &t.IndepReadRecords)
}

// collectiveWrites is M03 (HIGH) and M05 (OK): M02 and M04 for writes.
func collectiveWrites(t *Totals, c *evalCtx, out []Insight) []Insight {
	return collective(t, c, out, "M03", "M05", "write", t.IndepWrites, t.CollWrites, &t.IndepWriteRecords)
}

func collective(t *Totals, c *evalCtx, out []Insight, code, okCode, op string, indep, coll int64, r *Ranking) []Insight {
	if !t.usesMPIIO() {
		return out
	}
	total := indep + coll
	fired := coll == 0 && float64(total) > c.CollectiveOperationsAbsolute
	out = c.add(out, code, High, fired, float64(total), c.CollectiveOperationsAbsolute, func() (string, []string) {
		msg := fmt.Sprintf("%d MPI-IO %ss, %d collective; fires with no collective %s and more than %.0f", total, op, coll, op, c.CollectiveOperationsAbsolute)
		if fired {
			msg = fmt.Sprintf("MPI-IO %ss are all independent: %d (%s) independent %ss, none collective", op, indep, pct(ratio(indep, total)), op)
		}
		return msg, []string{
			fmt.Sprintf("Use collective %ss (MPI_File_%s_all, MPI_File_%s_at_all) and one aggregator per compute node (the cb_nodes hint)", op, op, op),
		}
	})
	in := &out[len(out)-1]
	in.Count = float64(coll)
	if fired {
		in.Files = c.files(r, func(e Ranked) bool {
			return e.Aux > 0 && e.Value/e.Aux > c.CollectiveOperations && e.Aux > c.CollectiveOperationsAbsolute
		})
	}
	share := nan
	if total > 0 {
		share = ratio(coll, total)
	}
	return c.add(out, okCode, OK, coll > 0, share, nan, func() (string, []string) {
		return fmt.Sprintf("%d of %d MPI-IO %ss (%s) are collective", coll, total, op, pct(share)), nil
	})
}

// blockingReads is M06 (WARN): MPI-IO reads, none of them non-blocking.
//
//	fires when MPIIO_NB_READS = 0 and the job reads through MPI-IO
//	(MPIIO_INDEP_READS + MPIIO_COLL_READS + MPIIO_SPLIT_READS > 0)
//
// Drishti fires whenever MPIIO_NB_READS is 0, reads or not; a job that
// reads nothing through MPI-IO has nothing to make asynchronous. Decided
// when the log has MPI-IO data; Value is MPIIO_NB_READS, no threshold.
func blockingReads(t *Totals, c *evalCtx, out []Insight) []Insight {
	return blocking(t, c, out, "M06", "read", t.NBReads, t.IndepReads+t.CollReads+t.SplitReads)
}

// blockingWrites is M07 (WARN): M06 for writes.
func blockingWrites(t *Totals, c *evalCtx, out []Insight) []Insight {
	return blocking(t, c, out, "M07", "write", t.NBWrites, t.IndepWrites+t.CollWrites+t.SplitWrites)
}

func blocking(t *Totals, c *evalCtx, out []Insight, code, op string, nb, blockingOps int64) []Insight {
	if !t.usesMPIIO() {
		return out
	}
	fired := nb == 0 && blockingOps > 0
	out = c.add(out, code, Warn, fired, float64(nb), nan, func() (string, []string) {
		msg := fmt.Sprintf("%d non-blocking and %d blocking MPI-IO %ss", nb, blockingOps, op)
		if fired {
			msg = fmt.Sprintf("All %d MPI-IO %ss block: none overlaps computation", blockingOps, op)
		}
		recs := []string{fmt.Sprintf("Start %ss early and wait for them late with non-blocking MPI-IO (MPI_File_i%s, MPI_File_i%s_all), overlapping I/O with computation", op, op, op)}
		if t.usesHDF5() {
			recs = append(recs, "HDF5: the asynchronous I/O VOL connector (hpc-io/vol-async) runs HDF5 I/O in the background")
		}
		return msg, recs
	})
	out[len(out)-1].Count = float64(blockingOps)
	return out
}

// aggregators is M08 (OK), M09 (HIGH) and M10 (OK): MPI-IO collective
// buffering aggregators against compute nodes.
//
//	aggregators = the cb_nodes MPI-IO hint (darshan's "h" job metadata)
//	nodes = distinct host names of the DXT records
//	M09 fires when aggregators > nodes (aggregators share nodes: inter-node traffic),
//	M08 when aggregators < nodes, M10 when they are equal
//
// Drishti asks SLURM (sacct) for the number of nodes; a log has no node
// count, but DXT records name their host. Decided only for logs with MPI-IO
// data, the cb_nodes hint and DXT; nodes whose ranks traced nothing are
// not seen, so nodes may be undercounted.
func aggregators(t *Totals, c *evalCtx, out []Insight) []Insight {
	nodes := int64(t.Nodes())
	if !t.usesMPIIO() || t.CBNodes == 0 || nodes == 0 {
		return out
	}
	cb := float64(t.CBNodes)
	desc := func() string { return fmt.Sprintf("cb_nodes=%d aggregators on %d compute nodes", t.CBNodes, nodes) }
	out = c.add(out, "M08", OK, t.CBNodes < nodes, cb, float64(nodes), func() (string, []string) {
		return "Fewer aggregators than nodes: " + desc(), nil
	})
	out = c.add(out, "M09", High, t.CBNodes > nodes, cb, float64(nodes), func() (string, []string) {
		return "More aggregators than nodes, so collective buffering crosses the network: " + desc(), []string{
			// The general advice first, the same for every job (the sidecar
			// exports a code's first recommendation once per code).
			"Set one aggregator per compute node: the MPI-IO hint cb_nodes, in a ROMIO_HINTS file or an MPI_Info",
			fmt.Sprintf("For this job: cb_nodes=%d", nodes),
		}
	})
	return c.add(out, "M10", OK, t.CBNodes == nodes, cb, float64(nodes), func() (string, []string) {
		return "One aggregator per compute node: " + desc(), nil
	})
}
