package signals

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// An independent computation of the signals from darshan-parser's text
// (the .darshan.txt references of the corpus), written straight from
// SIGNALS.md with counter names looked up in maps: no code is shared with
// the package. darshan-parser prints floating point counters with six
// decimals, so every float read from the text is an interval of ±5e-7 and
// every signal computed from it an interval; a divisor whose interval
// holds 0 cannot tell a value from NA, and either is accepted.

// refRecord is one record of the text: every counter line with the same
// module, rank and record id, in a row.
type refRecord struct {
	module, rank, id, name string
	vals                   map[string]string
}

type refLog struct {
	header  []string // the non-empty lines before the description of columns
	records []*refRecord
}

// readReference reads <log>.darshan.txt or its .gz; ok is false when
// neither exists.
func readReference(path string) (*refLog, bool, error) {
	var r io.Reader
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		r = f
	} else if f, err := os.Open(path + ".gz"); err == nil {
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, true, err
		}
		r = z
	} else {
		return nil, false, nil
	}
	return parseReference(r), true, nil
}

func parseReference(r io.Reader) *refLog {
	out := &refLog{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	inHeader := true
	var cur *refRecord
	for sc.Scan() {
		line := sc.Text()
		if inHeader {
			if line == "# description of columns:" {
				inHeader = false
			} else if strings.TrimSpace(line) != "" {
				out.header = append(out.header, line)
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 5 {
			continue
		}
		if cur == nil || cur.module != f[0] || cur.rank != f[1] || cur.id != f[2] {
			cur = &refRecord{module: f[0], rank: f[1], id: f[2], vals: map[string]string{}}
			if len(f) > 5 {
				cur.name = f[5]
			}
			out.records = append(out.records, cur)
		}
		cur.vals[f[3]] = f[4]
	}
	return out
}

// iv is a closed interval of reals.
type iv struct{ lo, hi float64 }

func exactly(v float64) iv      { return iv{v, v} }
func (a iv) plus(b iv) iv       { return iv{a.lo + b.lo, a.hi + b.hi} }
func (a iv) times(k float64) iv { return iv{a.lo * k, a.hi * k} } // k ≥ 0
func (a iv) contains(v float64) bool {
	slack := 1e-9*math.Max(math.Abs(a.lo), math.Abs(a.hi)) + 1e-300
	return v >= a.lo-slack && v <= a.hi+slack
}

// counter states in the text
const (
	cOK = iota
	cAbsent
	cMinusOne
)

// source gives the counters of a record or of a sum of records.
type source func(name string) (iv, int)

func (r *refRecord) counter(name string) (iv, int) {
	s, ok := r.vals[name]
	if !ok {
		return iv{}, cAbsent
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return iv{}, cAbsent
	}
	if v == -1 {
		return iv{}, cMinusOne
	}
	if strings.Contains(s, ".") { // %.6f
		return iv{v - 5e-7, v + 5e-7}, cOK
	}
	return exactly(v), cOK
}

// sumOf returns the source of the sums over recs: -1 values skipped; a
// counter no record has is absent, one that every record has as -1 is -1.
func sumOf(recs []*refRecord) source {
	return func(name string) (iv, int) {
		var t iv
		have, monitored := false, false
		for _, r := range recs {
			v, st := r.counter(name)
			if st == cAbsent {
				continue
			}
			have = true
			if st == cOK {
				monitored = true
				t = t.plus(v)
			}
		}
		switch {
		case len(recs) > 0 && !have:
			return iv{}, cAbsent
		case have && !monitored:
			return iv{}, cMinusOne
		}
		return t, cOK
	}
}

// expectation is what the reference says of one signal.
type expectation struct {
	na      string // a definite NA reason
	val     iv     // the value, when na is ""
	maybeNA string // the reference cannot tell NA(maybeNA) from a value in val
	// quirk names a reference bug that makes the signal unverifiable.
	quirk string
}

func (e expectation) String() string {
	switch {
	case e.quirk != "":
		return "unverifiable (" + e.quirk + ")"
	case e.na != "":
		return "NA(" + e.na + ")"
	case e.maybeNA != "":
		return fmt.Sprintf("NA(%s) or ≥ %g", e.maybeNA, e.val.lo)
	}
	return fmt.Sprintf("[%g, %g]", e.val.lo, e.val.hi)
}

// accepts reports whether our report's value (as printed) agrees.
func (e expectation) accepts(got string) bool {
	if e.quirk != "" {
		return true
	}
	if e.na != "" {
		return got == "NA("+e.na+")"
	}
	if e.maybeNA != "" && got == "NA("+e.maybeNA+")" {
		return true
	}
	v, err := strconv.ParseFloat(got, 64)
	if err != nil {
		return false
	}
	return e.val.contains(v)
}

// inputsNA applies the first two NA rules to the named inputs.
func inputsNA(src source, names ...string) (string, []iv) {
	vals := make([]iv, len(names))
	states := make([]int, len(names))
	for i, n := range names {
		vals[i], states[i] = src(n)
	}
	for _, st := range states {
		if st == cAbsent {
			return "not_available", nil
		}
	}
	for _, st := range states {
		if st == cMinusOne {
			return "not_monitored", nil
		}
	}
	return "", vals
}

// divide returns n/d, or NA(reason) when d is 0 (or ≤ 0).
func divide(n, d iv, reason string) expectation {
	switch {
	case d.hi <= 0:
		return expectation{na: reason}
	case d.lo > 0:
		q := []float64{n.lo / d.lo, n.lo / d.hi, n.hi / d.lo, n.hi / d.hi}
		return expectation{val: iv{slicesMin(q), slicesMax(q)}}
	}
	// d may be 0 or a tiny positive number: NA, or a value at least n/d.hi.
	return expectation{maybeNA: reason, val: iv{math.Min(n.lo/d.hi, 0), math.Inf(1)}}
}

func slicesMin(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func slicesMax(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func sumIv(v []iv) iv {
	var t iv
	for _, x := range v {
		t = t.plus(x)
	}
	return t
}

// refModule is a data module as the text names it, with its counters.
type refModule struct {
	prefix        string
	reads, writes []string
}

var refModules = map[string]refModule{
	"POSIX":       {"POSIX", []string{"READS"}, []string{"WRITES"}},
	"STDIO":       {"STDIO", []string{"READS"}, []string{"WRITES"}},
	"MPI-IO":      {"MPIIO", []string{"INDEP_READS", "COLL_READS", "SPLIT_READS", "NB_READS"}, []string{"INDEP_WRITES", "COLL_WRITES", "SPLIT_WRITES", "NB_WRITES"}},
	"H5D":         {"H5D", []string{"READS"}, []string{"WRITES"}},
	"PNETCDF_VAR": {"PNETCDF_VAR", []string{"INDEP_READS", "COLL_READS", "NB_READS"}, []string{"INDEP_WRITES", "COLL_WRITES", "NB_WRITES"}},
	"DFS":         {"DFS", []string{"READS", "READXS"}, []string{"WRITES", "WRITEXS"}},
	"DAOS":        {"DAOS", []string{"ARRAY_READS", "OBJ_FETCHES", "KV_GETS"}, []string{"ARRAY_WRITES", "OBJ_UPDATES", "KV_PUTS"}},
}

func prefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + "_" + n
	}
	return out
}

// calc computes a signal from named inputs: the NA rules on the inputs,
// then f on their values.
func calc(src source, names []string, f func(v []iv) expectation) expectation {
	if na, vals := inputsNA(src, names...); na != "" {
		return expectation{na: na}
	} else {
		return f(vals)
	}
}

const refMiB = 1048576.0

// refJob returns the level 1 signals: sums over the POSIX and STDIO
// records, one pool of values per counter.
func refJob(recs []*refRecord) map[string]expectation {
	out := map[string]expectation{}
	for sig, counter := range map[string]string{
		"TOTAL_BYTES_READ": "BYTES_READ", "TOTAL_BYTES_WRITTEN": "BYTES_WRITTEN",
		"TOTAL_READS": "READS", "TOTAL_WRITES": "WRITES",
	} {
		var t iv
		seen, have, monitored := false, false, false
		for _, r := range recs {
			if r.module != "POSIX" && r.module != "STDIO" {
				continue
			}
			seen = true
			v, st := r.counter(r.module + "_" + counter)
			if st != cAbsent {
				have = true
			}
			if st == cOK {
				monitored = true
				t = t.plus(v)
			}
		}
		switch {
		case seen && !have:
			out[sig] = expectation{na: "not_available"}
		case have && !monitored:
			out[sig] = expectation{na: "not_monitored"}
		default:
			out[sig] = expectation{val: t}
		}
	}
	return out
}

// refCommon returns the six signals every data module has, at module level
// (module true: rates over the whole time) or record level.
func refCommon(src source, m refModule, module bool) map[string]expectation {
	p := m.prefix
	br, bw := p+"_BYTES_READ", p+"_BYTES_WRITTEN"
	rt, wt, mt := p+"_F_READ_TIME", p+"_F_WRITE_TIME", p+"_F_META_TIME"
	reads, writes := prefixed(p, m.reads), prefixed(p, m.writes)
	out := map[string]expectation{}
	if module {
		timeNames := []string{rt, wt, mt}
		rate := func(sig string, first []string, scale float64) {
			out[sig] = calc(src, append(append([]string{}, first...), timeNames...), func(v []iv) expectation {
				k := len(first)
				return divide(sumIv(v[:k]).times(scale), sumIv(v[k:]), "no_time")
			})
		}
		rate("READ_BW", []string{br}, 1/refMiB)
		rate("WRITE_BW", []string{bw}, 1/refMiB)
		rate("READ_IOPS", reads, 1)
		rate("WRITE_IOPS", writes, 1)
	} else {
		rate := func(sig string, first []string, time string, scale float64, reason string) {
			out[sig] = calc(src, append(append([]string{}, first...), time), func(v []iv) expectation {
				k := len(first)
				return divide(sumIv(v[:k]).times(scale), v[k], reason)
			})
		}
		rate("READ_BW", []string{br}, rt, 1/refMiB, "no_read_time")
		rate("WRITE_BW", []string{bw}, wt, 1/refMiB, "no_write_time")
		rate("READ_IOPS", reads, rt, 1, "no_read_time")
		rate("WRITE_IOPS", writes, wt, 1, "no_write_time")
	}
	out["AVG_READ_SIZE"] = calc(src, append([]string{br}, reads...), func(v []iv) expectation {
		return divide(v[0], sumIv(v[1:]), "no_reads")
	})
	out["AVG_WRITE_SIZE"] = calc(src, append([]string{bw}, writes...), func(v []iv) expectation {
		return divide(v[0], sumIv(v[1:]), "no_writes")
	})
	return out
}

// refPOSIX returns the POSIX-only signals of a record, or of a sum of
// records (the job-level access-pattern signals); shared tells rank -1.
func refPOSIX(src source, shared bool) map[string]expectation {
	out := map[string]expectation{}
	pair := func(sig, n, d, reason string) {
		out[sig] = calc(src, []string{"POSIX_" + n, "POSIX_" + d}, func(v []iv) expectation { return divide(v[0], v[1], reason) })
	}
	pair("SEQ_READ_RATIO", "SEQ_READS", "READS", "no_reads")
	pair("SEQ_WRITE_RATIO", "SEQ_WRITES", "WRITES", "no_writes")
	pair("CONSEC_READ_RATIO", "CONSEC_READS", "READS", "no_reads")
	pair("CONSEC_WRITE_RATIO", "CONSEC_WRITES", "WRITES", "no_writes")
	pair("UNALIGNED_READ_RATIO", "FILE_NOT_ALIGNED", "READS", "no_reads")
	pair("UNALIGNED_WRITE_RATIO", "FILE_NOT_ALIGNED", "WRITES", "no_writes")
	both := func(sig, a, b string) {
		out[sig] = calc(src, []string{"POSIX_" + a, "POSIX_" + b, "POSIX_READS", "POSIX_WRITES"}, func(v []iv) expectation {
			return divide(v[0].plus(v[1]), v[2].plus(v[3]), "no_io")
		})
	}
	both("SEQ_RATIO", "SEQ_READS", "SEQ_WRITES")
	both("CONSEC_RATIO", "CONSEC_READS", "CONSEC_WRITES")
	meta := []string{"POSIX_OPENS", "POSIX_STATS", "POSIX_SEEKS", "POSIX_FSYNCS", "POSIX_FDSYNCS"}
	out["META_OPS"] = calc(src, meta, func(v []iv) expectation { return expectation{val: sumIv(v)} })
	out["META_INTENSITY"] = calc(src, append(append([]string{}, meta...), "POSIX_READS", "POSIX_WRITES"), func(v []iv) expectation {
		return divide(sumIv(v[:5]), v[5].plus(v[6]), "no_io")
	})
	out["META_FRACTION"] = calc(src, []string{"POSIX_F_META_TIME", "POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME"}, func(v []iv) expectation {
		return divide(v[0], sumIv(v), "no_time")
	})
	small := func(sig, dir, ops, reason string) {
		names := []string{}
		for _, b := range []string{"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M"} {
			names = append(names, "POSIX_SIZE_"+dir+"_"+b)
		}
		out[sig] = calc(src, append(names, "POSIX_"+ops), func(v []iv) expectation { return divide(sumIv(v[:5]), v[5], reason) })
	}
	small("SMALL_READ_RATIO", "READ", "READS", "no_reads")
	small("SMALL_WRITE_RATIO", "WRITE", "WRITES", "no_writes")
	out["REUSE_PROXY"] = calc(src, []string{"POSIX_BYTES_READ", "POSIX_MAX_BYTE_READ", "POSIX_MAX_BYTE_WRITTEN"}, func(v []iv) expectation {
		d := iv{math.Max(v[1].lo, v[2].lo) + 1, math.Max(v[1].hi, v[2].hi) + 1}
		return divide(v[0], d, "no_file_size")
	})
	out["RANK_IMBALANCE_RATIO"] = calc(src, []string{"POSIX_SLOWEST_RANK_BYTES", "POSIX_FASTEST_RANK_BYTES", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN"}, func(v []iv) expectation {
		switch {
		case !shared:
			return expectation{na: "not_shared_file"}
		case v[2].plus(v[3]).hi <= 0:
			return expectation{na: "no_bytes"}
		}
		return divide(v[0], v[1], "no_fastest_bytes")
	})
	out["BW_VARIANCE_PROXY"] = calc(src, []string{"POSIX_F_VARIANCE_RANK_BYTES", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN"}, func(v []iv) expectation {
		switch {
		case !shared:
			return expectation{na: "not_shared_file"}
		case v[1].plus(v[2]).hi <= 0:
			return expectation{na: "no_bytes"}
		}
		return expectation{val: v[0]}
	})
	if shared {
		out["IS_SHARED"] = expectation{val: exactly(1)}
	} else {
		out["IS_SHARED"] = expectation{val: exactly(0)}
	}
	return out
}

// refHeatmap returns the HEATMAP signals of a record.
func refHeatmap(r *refRecord) map[string]expectation {
	names := []string{"TOTAL_READ_EVENTS", "TOTAL_WRITE_EVENTS", "ACTIVE_BINS", "ACTIVE_TIME", "ACTIVITY_SPAN",
		"PEAK_ACTIVITY_BIN", "PEAK_ACTIVITY_VALUE", "READ_ACTIVITY_ENTROPY_NORM", "WRITE_ACTIVITY_ENTROPY_NORM", "TOP1_SHARE"}
	all := func(e expectation) map[string]expectation {
		out := map[string]expectation{}
		for _, n := range names {
			out[n] = e
		}
		return out
	}
	var read, write []float64
	for k := 0; ; k++ {
		rs, rok := r.vals["HEATMAP_READ_BIN_"+strconv.Itoa(k)]
		ws, wok := r.vals["HEATMAP_WRITE_BIN_"+strconv.Itoa(k)]
		if !rok && !wok {
			break
		}
		rv, _ := strconv.ParseFloat(rs, 64)
		wv, _ := strconv.ParseFloat(ws, 64)
		read, write = append(read, rv), append(write, wv)
	}
	width, st := r.counter("HEATMAP_F_BIN_WIDTH_SECONDS")
	if st == cMinusOne || slicesContains(read, -1) || slicesContains(write, -1) {
		return all(expectation{na: "not_monitored"})
	}
	if st == cAbsent || width.hi <= 0 {
		return all(expectation{na: "no_bin_width"})
	}
	n := len(read)
	var tr, tw, ta, peak float64
	active, first, last, peakBin := 0, -1, -1, 0
	for k := 0; k < n; k++ {
		a := read[k] + write[k]
		tr, tw, ta = tr+read[k], tw+write[k], ta+a
		if a > 0 {
			active++
			if first == -1 {
				first = k
			}
			last = k
		}
		if a > peak {
			peak, peakBin = a, k
		}
	}
	entropy := func(b []float64, total float64) float64 {
		if total == 0 || n <= 1 {
			return 0
		}
		h := 0.0
		for _, x := range b {
			if x > 0 {
				h += -(x / total) * math.Log(x/total)
			}
		}
		return h / math.Log(float64(n))
	}
	span := iv{}
	if first >= 0 {
		span = width.times(float64(last - first + 1))
	}
	top := 0.0
	if ta > 0 {
		top = peak / ta
	}
	v := func(x float64) expectation { return expectation{val: exactly(x)} }
	return map[string]expectation{
		"TOTAL_READ_EVENTS": v(tr), "TOTAL_WRITE_EVENTS": v(tw), "ACTIVE_BINS": v(float64(active)),
		"ACTIVE_TIME": {val: width.times(float64(active))}, "ACTIVITY_SPAN": {val: span},
		"PEAK_ACTIVITY_BIN": v(float64(peakBin)), "PEAK_ACTIVITY_VALUE": v(peak),
		"READ_ACTIVITY_ENTROPY_NORM": v(entropy(read, tr)), "WRITE_ACTIVITY_ENTROPY_NORM": v(entropy(write, tw)),
		"TOP1_SHARE": v(top),
	}
}

func slicesContains(v []float64, x float64) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// refSignals computes every line of the report from the text: a map from
// "module\trank\tid\tSIGNAL_NAME" to what the line must hold.
func refSignals(l *refLog) map[string]expectation {
	out := map[string]expectation{}
	put := func(module, rank, id string, sigs map[string]expectation) {
		for s, e := range sigs {
			out[module+"\t"+rank+"\t"+id+"\tSIGNAL_"+s] = e
		}
	}
	put("JOB", "-1", "0", refJob(l.records))
	byModule := map[string][]*refRecord{}
	for _, r := range l.records {
		byModule[r.module] = append(byModule[r.module], r)
	}
	for name, m := range refModules {
		if recs := byModule[name]; len(recs) > 0 {
			put(name, "-1", "MODULE", refCommon(sumOf(recs), m, true))
		}
	}
	for _, r := range l.records {
		if r.module == "HEATMAP" {
			put(r.module, r.rank, r.id, refHeatmap(r))
			continue
		}
		m, ok := refModules[r.module]
		if !ok {
			continue
		}
		put(r.module, r.rank, r.id, refCommon(r.counter, m, false))
		if r.module == "POSIX" {
			put(r.module, r.rank, r.id, refPOSIX(r.counter, r.rank == "-1"))
		}
	}
	return out
}

// reportLines splits our report into its header lines and its signal
// lines, keyed as refSignals keys them, in order.
func reportLines(report []byte) (header []string, keys []string, vals map[string]string, err error) {
	vals = map[string]string{}
	for line := range bytes.Lines(report) {
		s := strings.TrimSuffix(string(line), "\n")
		if strings.HasPrefix(s, "#") {
			header = append(header, s)
			continue
		}
		f := strings.Split(s, "\t")
		if len(f) != 5 {
			return nil, nil, nil, fmt.Errorf("report line %q has %d fields", s, len(f))
		}
		k := strings.Join(f[:4], "\t")
		if _, dup := vals[k]; dup {
			return nil, nil, nil, fmt.Errorf("report line %q repeats a signal", s)
		}
		keys = append(keys, k)
		vals[k] = f[4]
	}
	return header, keys, vals, nil
}
