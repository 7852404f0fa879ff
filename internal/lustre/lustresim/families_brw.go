package lustresim

import (
	"math/bits"
	"strconv"
)

// brw_stats of a simulated target, from its jobs' bulk RPCs: each job does
// I/O of one size (4 KiB, 64 KiB, 1 MiB or 4 MiB), the disk takes at most
// 1 MiB at once, and the other histograms take fixed shapes.

// brwHist is one histogram of 32 buckets, read and write, and how its
// labels print (0: linear, 1: log2).
type brwHist struct {
	title, unit string
	scale       int
	read, write [32]uint64
}

// inFlight and ioTime spread disk I/Os over the in-flight count (1 to 8)
// and the log2 millisecond buckets.
var inFlightShares = []float64{0.40, 0.25, 0.15, 0.10, 0.05, 0.03, 0.01, 0.01}

func (s *Sim) writeBrwStats(w *writer, param string, r *targetRates, t float64) {
	hists := [...]*brwHist{
		{title: "pages per bulk r/w", unit: "rpcs", scale: 1},
		{title: "discontiguous pages", unit: "rpcs"},
		{title: "discontiguous blocks", unit: "rpcs"},
		{title: "disk fragmented I/Os", unit: "ios"},
		{title: "disk I/Os in flight", unit: "ios"},
		{title: "I/O time (1/1000s)", unit: "ios", scale: 1},
		{title: "disk I/O size", unit: "ios", scale: 1},
	}
	pages, discPages, discBlocks, frags, inFlight, ioTime, ioSize := hists[0], hists[1], hists[2], hists[3], hists[4], hists[5], hists[6]
	for _, side := range []struct {
		rpc   map[uint64]float64
		write bool
	}{{r.readRPC, false}, {r.writeRPC, true}} {
		pick := func(h *brwHist) *[32]uint64 {
			if side.write {
				return &h.write
			}
			return &h.read
		}
		for _, size := range sortedSizes(side.rpc) {
			n := s.count(side.rpc[size], t)
			if n == 0 {
				continue
			}
			pick(pages)[log2Bucket(size/4096)] += n
			pick(discPages)[0] += n - n/32
			pick(discPages)[1] += n / 32
			pick(discBlocks)[0] += n - n/20
			pick(discBlocks)[1] += n / 20
			fragments := max(size>>20, 1)
			pick(frags)[min(fragments, 31)] += n
			ios := n * fragments
			diskSize := min(size, 1<<20)
			pick(ioSize)[log2Bucket(diskSize)] += ios
			for i, share := range inFlightShares {
				pick(inFlight)[i+1] += uint64(float64(ios) * share)
			}
			// A 4 KiB I/O takes about a millisecond, a 1 MiB one about 8;
			// writes twice as long.
			ms := max(diskSize>>17, 1)
			if side.write {
				ms *= 2
			}
			b := log2Bucket(ms)
			pick(ioTime)[b] += ios - ios/5
			pick(ioTime)[b+1] += ios / 5
		}
	}

	w.str(param)
	w.str("=\n")
	if s.cfg.Dialect == Lustre215 {
		w.str("snapshot_time:            ")
		w.seconds(t)
		w.str("start_time:               ")
		w.seconds(s.boot(t))
		w.str("elapsed_time:             ")
		w.seconds(t - s.boot(t))
	} else {
		w.str("snapshot_time:         " + strconv.FormatFloat(t, 'f', 9, 64) + " (secs.nsecs)\n")
	}
	for _, h := range hists {
		h.print(w)
	}
}

// log2Bucket is the bucket Lustre's lprocfs_oh_tally_log2 counts v in.
func log2Bucket(v uint64) int {
	if v <= 1 {
		return 0
	}
	return min(bits.Len64(v-1), 31)
}

func sortedSizes(m map[uint64]float64) []uint64 {
	var out []uint64
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// print writes a histogram as lustre/osd-ldiskfs/osd_lproc.c does: the
// rows from the first to the last non-empty bucket.
func (h *brwHist) print(w *writer) {
	w.str("\n                           read      |     write\n")
	w.str(h.title)
	for i := len(h.title); i < 22; i++ {
		w.bw.WriteByte(' ')
	}
	w.str(" " + h.unit)
	for i := len(h.unit); i < 5; i++ {
		w.bw.WriteByte(' ')
	}
	w.str(" % cum % |  " + h.unit)
	for i := len(h.unit); i < 11; i++ {
		w.bw.WriteByte(' ')
	}
	w.str(" % cum %\n")
	var readTotal, writeTotal, readCum, writeCum uint64
	for i := range h.read {
		readTotal += h.read[i]
		writeTotal += h.write[i]
	}
	pct := func(a, b uint64) uint64 {
		if b == 0 {
			return 0
		}
		return a * 100 / b
	}
	for i := range h.read {
		r, wr := h.read[i], h.write[i]
		readCum += r
		writeCum += wr
		if readCum == 0 && writeCum == 0 {
			continue
		}
		switch {
		case h.scale == 0:
			w.str(strconv.Itoa(i))
		case i < 10:
			w.str(strconv.Itoa(h.scale << i))
		case i < 20:
			w.str(strconv.Itoa(h.scale<<(i-10)) + "K")
		default:
			w.str(strconv.Itoa(h.scale<<(i-20)) + "M")
		}
		w.str(":\t\t")
		w.padded(r, 10)
		w.bw.WriteByte(' ')
		w.padded(pct(r, readTotal), 3)
		w.bw.WriteByte(' ')
		w.padded(pct(readCum, readTotal), 3)
		w.str("   | ")
		w.padded(wr, 4)
		w.bw.WriteByte(' ')
		w.padded(pct(wr, writeTotal), 3)
		w.bw.WriteByte(' ')
		w.padded(pct(writeCum, writeTotal), 3)
		w.nl()
		if readCum == readTotal && writeCum == writeTotal {
			break
		}
	}
}
