package lctl

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/golden"
)

// trace scans data with the sequential parser, or with a concurrent one
// cutting chunks of chunkSize, and writes down everything the handler got.
// A "\x00" in data cuts the output there, as a killed lctl does.
func trace(data []byte, chunkSize int) string { return traceReads(data, chunkSize, nil) }

// traceReads is trace with the output read through reads (iotest's
// readers), so that Scan's reads end anywhere: in a line, between a
// header and its body, in a "\r\n".
func traceReads(data []byte, chunkSize int, reads func(io.Reader) io.Reader) string {
	var s summarizer
	text, cut := data, false
	if i := bytes.IndexByte(data, 0); i >= 0 {
		text, cut = data[:i], true
	}
	var r io.Reader = bytes.NewReader(text)
	if reads != nil {
		r = reads(r)
	}
	if cut {
		r = io.MultiReader(r, errReader{})
	}
	err := Scan(r, "obdfilter.fuzz-OST0000.job_stats", func(param string) SectionParser {
		if _, _, ok := JobStatsParam(param); !ok {
			return nil
		}
		fmt.Fprintf(&s.out, "param %s\n", param)
		if chunkSize == 0 {
			return NewJobStatsParser(&s)
		}
		return newConcurrentJobStatsParser(&s, chunkSize, 3)
	})
	fmt.Fprintf(&s.out, "err %v\n", err)
	return s.out.String()
}

// The concurrent parser hands the handler exactly what the sequential one
// does, wherever the chunks are cut.
func TestConcurrentJobStatsSameAsSequential(t *testing.T) {
	inputs := map[string][]byte{}
	for _, name := range []string{"jobstats-edge.txt", "families-oss-2.15.txt"} {
		data, err := os.ReadFile(filepath.Join(corpus.Fixtures(t, "lustre"), name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
	var big bytes.Buffer
	big.WriteString("obdfilter.big-OST0000.job_stats=\njob_stats:\n")
	for i := range 3000 {
		fmt.Fprintf(&big, "- job_id: %d:1000:n%d\n  snapshot_time: %d\n  write_bytes: { samples: %d, unit: bytes, min: 1, max: 9, sum: %d }\n", i, i%7, 1700000000+i, i, 4096*i)
		if i%500 == 7 {
			big.WriteString("  garbage line\n- not_a_job: 1\n")
		}
	}
	inputs["big"] = big.Bytes()
	// An entry longer than Scan's buffer, in whole lines: no chunk of it
	// can be taken where it lies, and the parser copies it.
	var longEntry bytes.Buffer
	longEntry.WriteString("obdfilter.long-OST0000.job_stats=\njob_stats:\n- job_id: before\n  read: { samples: 1 }\n- job_id: long\n")
	for i := range 4000 {
		// Known names only: operation names are interned for the process.
		fmt.Fprintf(&longEntry, "  read_bytes: { samples: %d, unit: bytes, sum: %d }\n", i+1, i)
	}
	longEntry.WriteString("- job_id: after\n  write: { samples: 2 }\n")
	inputs["long entry"] = longEntry.Bytes()
	inputs["big cut"] = append(append([]byte(nil), big.Bytes()[:big.Len()-40]...), 0)
	inputs["big crlf"] = bytes.ReplaceAll(big.Bytes(), []byte("\n"), []byte("\r\n"))
	inputs["big crcrlf"] = bytes.ReplaceAll(big.Bytes(), []byte("\n"), []byte("\r\r\n"))
	// A second section after the first, and a line longer than Scan's
	// buffer in the middle of an entry.
	long := append(bytes.Clone(big.Bytes()), "  x: "+strings.Repeat("y", 300<<10)+"\n"...)
	inputs["two sections, long line"] = append(long, "obdfilter.two-OST0001.job_stats=\n"+big.String()[len("obdfilter.big-OST0000.job_stats=\n"):]...)
	reads := map[string]func(io.Reader) io.Reader{"whole": nil, "halves": iotest.HalfReader, "bytes": iotest.OneByteReader}
	for name, data := range inputs {
		want := trace(data, 0)
		for _, size := range []int{1, 100, 4096, 1 << 20} {
			for how, r := range reads {
				if how == "bytes" && size != 4096 {
					continue // slow, and one size is enough
				}
				if got := traceReads(data, size, r); got != want {
					t.Errorf("%s, chunks of %d, reads %s: differs from the sequential parser\n%s", name, size, how, golden.FirstDifference(want, got))
				}
			}
		}
	}
}

// FuzzConcurrentJobStats: on any output, the concurrent parser and the
// sequential one agree, with chunks cut anywhere an entry opens.
func FuzzConcurrentJobStats(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("job_stats:\n- job_id: a\n  x: { samples: 1 }\n- junk\n- job_id: b\n  read_bytes: { samples: 2, unit: bytes, sum: 3 }\n\x00"))
	// Job_ids holding line breaks (TestJobIDWithLineBreak).
	f.Add([]byte("job_stats:\n- job_id: x\n- job_id: f:6:n\n:1:n\n  snapshot_time: 1\n  x: { samples: 1 }\n- job_id: y\n\n  snapshot_time: 2\n  start_time: 1\n  start_time: 1\n  x: { samples: 1 }\n- job_id: z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		want := trace(data, 0)
		for _, size := range []int{1, 1 + len(data)/5} {
			if got := trace(data, size); got != want {
				t.Fatalf("chunks of %d: %s", size, golden.FirstDifference(want, got))
			}
		}
		// A byte at a time, or, on large inputs (the corpus' seeds), half
		// of what Scan asks for at a time: a byte at a time would take
		// seconds per input.
		reads, how := iotest.OneByteReader, "a byte"
		if len(data) > 64<<10 {
			reads, how = iotest.HalfReader, "half"
		}
		if got := traceReads(data, 1+len(data)/3, reads); got != want {
			t.Fatalf("read %s at a time: %s", how, golden.FirstDifference(want, got))
		}
	})
}

// The helpers never run more than a few chunks ahead of the handler: a
// handler that stalls holds the parse back.
func TestConcurrentJobStatsBounded(t *testing.T) {
	var s slowHandler
	p := newConcurrentJobStatsParser(&s, 64, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10000 {
			p.Line([]byte(fmt.Sprintf("- job_id: %d", i)))
			p.Line([]byte("  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }"))
			if got := int64(p.sent) - p.done.Load(); got > 2 {
				t.Errorf("%d chunks in flight, bound 2", got)
				return
			}
		}
		p.End(true)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the parser did not finish")
	}
	if s.jobs != 10000 || s.stats.Jobs != 10000 {
		t.Errorf("%d entries delivered, stats say %d", s.jobs, s.stats.Jobs)
	}
}

type slowHandler struct {
	jobs  int
	stats SectionStats
}

func (h *slowHandler) Job(*JobStat)                { h.jobs++ }
func (h *slowHandler) End(_ bool, st SectionStats) { h.stats = st }

// A handler that panics on the deliverer's goroutine costs the section, not
// the process: End raises the panic, the handler's own, on the goroutine
// that called Scan (where toolrun.Runner recovers a run's), after every
// chunk was taken (else Scan would wait for ever), at any place in the
// section.
func TestConcurrentJobStatsHandlerPanic(t *testing.T) {
	var big bytes.Buffer
	big.WriteString("obdfilter.fs-OST0000.job_stats=\njob_stats:\n")
	for i := range 5000 {
		fmt.Fprintf(&big, "- job_id: %d\n  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 1 }\n", i)
	}
	for _, at := range []int{0, 100, 2500, 4999} {
		h := &panicAt{at: at}
		got := func() (v any) {
			defer func() { v = recover() }()
			Scan(bytes.NewReader(big.Bytes()), "", func(string) SectionParser { return newConcurrentJobStatsParser(h, 4096, 3) })
			return nil
		}()
		if got != fmt.Sprintf("job %d", at) {
			t.Errorf("panic at job %d: recovered %v", at, got)
		}
	}
}

// panicAt panics once, at its job number at.
type panicAt struct {
	at, seen int
	done     bool
}

func (h *panicAt) Job(*JobStat) {
	if h.seen == h.at && !h.done {
		h.done = true
		panic(fmt.Sprintf("job %d", h.at))
	}
	h.seen++
}

func (h *panicAt) End(bool, SectionStats) {}

// Once Scan hands a read buffer to the parser with the lines a helper
// parses where they lie, neither Scan nor the parser reads it again: the
// helper gives it back (to the next Scan, of another server's output)
// when done. Here each helper runs at once, before the handing over
// returns, and scribbles digits over the buffer it gives back: a byte read
// from it afterwards changes what the handler gets (as it did when a
// fleet's servers scraped at once: a number made of two, a counter far
// beyond the truth).
func TestConcurrentJobStatsBufferGivenBack(t *testing.T) {
	big := manyJobs(20000)
	big.WriteString("obdfilter.big-OST0001.job_stats=\njob_stats:\n- job_id: last\n  read: { samples: 3 }\n")
	data := big.Bytes()
	want := trace(data, 0)
	for _, size := range []int{4096, 64 << 10} {
		for how, reads := range map[string]func(io.Reader) io.Reader{"whole": nil, "halves": iotest.HalfReader} {
			var s summarizer
			var r io.Reader = bytes.NewReader(data)
			if reads != nil {
				r = reads(r)
			}
			err := Scan(r, "obdfilter.fuzz-OST0000.job_stats", func(param string) SectionParser {
				fmt.Fprintf(&s.out, "param %s\n", param)
				p := newConcurrentJobStatsParser(&s, size, 3)
				p.runHelper = func(f func()) { f() }
				p.giveBack = func(buf *[]byte) {
					for i := range *buf {
						(*buf)[i] = '9'
					}
					readBuffers.Put(buf)
				}
				return p
			})
			fmt.Fprintf(&s.out, "err %v\n", err)
			if got := s.out.String(); got != want {
				t.Errorf("chunks of %d, reads %s: differs from the sequential parser\n%s", size, how, golden.FirstDifference(want, got))
			}
		}
	}
}

// Servers scraped at once (a fleet in one process, or the tests) share
// Scan's read buffers: each of several Scans at once hands the handler
// exactly what the sequential parser does. Run under the race detector
// (CI does), a buffer read after it was given back is a reported race.
func TestConcurrentJobStatsScansAtOnce(t *testing.T) {
	big := manyJobs(20000)
	data := big.Bytes()
	want := trace(data, 0)
	const scans = 4
	got := make([]string, scans)
	done := make(chan int)
	for k := range scans {
		go func() {
			var s summarizer
			err := Scan(iotest.HalfReader(bytes.NewReader(data)), "obdfilter.fuzz-OST0000.job_stats", func(param string) SectionParser {
				fmt.Fprintf(&s.out, "param %s\n", param)
				return NewConcurrentJobStatsParser(&s)
			})
			fmt.Fprintf(&s.out, "err %v\n", err)
			got[k] = s.out.String()
			done <- k
		}()
	}
	for range scans {
		k := <-done
		if got[k] != want {
			t.Errorf("scan %d of %d at once: differs from the sequential parser\n%s", k, scans, golden.FirstDifference(want, got[k]))
		}
	}
}

// manyJobs returns one OST's job_stats of n entries (some 2.4 MB for
// 20,000), enough for many chunks and several read buffers.
func manyJobs(n int) *bytes.Buffer {
	var b bytes.Buffer
	b.WriteString("obdfilter.big-OST0000.job_stats=\njob_stats:\n")
	for i := range n {
		fmt.Fprintf(&b, "- job_id: %d\n  snapshot_time: %d\n  write_bytes: { samples: %d, unit: bytes, min: 1, max: 9, sum: %d }\n", i, 1700000000+i, i, 4096*i)
	}
	return &b
}
