package lctl

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
)

// A server with tens of thousands of jobs prints hundreds of megabytes of
// job_stats per scrape, and reading them is most of a scrape. The
// ConcurrentJobStatsParser reads them on every core: it gathers the lines
// of a section into chunks, cut only where a "- job_id:" line opens an
// entry, so that each chunk parses alone exactly as it would in sequence;
// helpers parse the chunks (most of them Scan's own read buffers, handed
// over: TakeLines and Keep), and the entries reach the handler in order,
// one at a time, as JobStatsParser delivers them: on a goroutine of the
// parser's while the section is read, the last ones and End on the
// goroutine that calls End, which returns once every entry is delivered.
// The handler need not be safe for concurrent use, but must not share
// unguarded state with what the goroutine calling Line, Block, TakeLines
// and Keep does meanwhile.

// ConcurrentJobStatsParser is a JobStatsParser that parses on helper
// goroutines. Memory stays bounded: at most a few chunks are parsed ahead
// of the entries being delivered.
type ConcurrentJobStatsParser struct {
	h         JobStatsHandler
	chunkSize int
	ahead     int
	chunk     []byte // whole lines as Scan reads them, each ending in '\n'
	// The entries are delivered on a goroutine of their own, the
	// deliverer, so that the reading goroutine only reads: handing 10,000
	// entries to the handler was as much of its work as the reading, and
	// the pipe waited meanwhile. queue holds, in order, the result of each
	// chunk handed to a helper; inFlight bounds the chunks handed out and
	// not yet delivered (a token taken per chunk, given back once its
	// entries are delivered); delivered is closed when the deliverer has
	// delivered every chunk of the closed queue.
	queue     chan chan *jobBatch
	inFlight  chan struct{}
	delivered chan struct{}
	sent      int          // chunks handed to helpers
	done      atomic.Int64 // chunks delivered
	stats     SectionStats // the deliverer's until delivered is closed
	panicked  any          // the deliverer's until delivered is closed
	// js is the entry handed to the handler, which does not keep it: one
	// for the section, not one escaping to the heap per chunk.
	js JobStat
	// runHelper starts a helper (go f() when nil) and giveBack returns a
	// read buffer to readBuffers (when nil): tests run helpers at once
	// and scribble over what they give back.
	runHelper func(f func())
	giveBack  func(buf *[]byte)
}

// NewConcurrentJobStatsParser returns a parser that hands each entry to h
// in order, as NewJobStatsParser's does, parsing on up to GOMAXPROCS
// helpers.
func NewConcurrentJobStatsParser(h JobStatsHandler) *ConcurrentJobStatsParser {
	return newConcurrentJobStatsParser(h, 64<<10, max(runtime.GOMAXPROCS(0)+1, minChunksAhead))
}

// minChunksAhead is the fewest chunks parsed ahead of the entries being
// delivered: half a megabyte, half of what lctl's pipe holds (toolrun), so
// that the reader keeps emptying the pipe while a helper waits for a core.
// With one chunk per core and one more, a 2-core server's lctl run took 8 %
// longer at 10,000 jobs and a third longer at 100,000 (BinaryScrape's
// lctl-run-ms); 16 chunks were no faster than 8, and held up to 3 MB more.
const minChunksAhead = 8

func newConcurrentJobStatsParser(h JobStatsHandler, chunkSize, ahead int) *ConcurrentJobStatsParser {
	return &ConcurrentJobStatsParser{h: joinContinued(h), chunkSize: chunkSize, ahead: max(ahead, 1)}
}

// Line implements SectionParser.
func (p *ConcurrentJobStatsParser) Line(line []byte) {
	if len(p.chunk) >= p.chunkSize && opensEntry(line) {
		p.dispatch()
	}
	if p.chunk == nil {
		p.chunk = (*chunkBuffers.Get().(*[]byte))[:0]
	}
	p.chunk = append(p.chunk, line...)
	// Chunks hold lines as Scan reads them, which parseChunk trims with
	// trimEOL: a line that still ends in '\r' (it ended in "\r\r\n")
	// gets back the one trimEOL takes.
	if len(line) > 0 && line[len(line)-1] == '\r' {
		p.chunk = append(p.chunk, '\r')
	}
	p.chunk = append(p.chunk, '\n')
}

// Block implements BlockParser: lines are copied into chunks once, cut
// before a line that opens an entry once a chunk holds chunkSize bytes.
func (p *ConcurrentJobStatsParser) Block(lines []byte) {
	for len(lines) > 0 {
		if p.chunk == nil {
			p.chunk = (*chunkBuffers.Get().(*[]byte))[:0]
		}
		if len(p.chunk) >= p.chunkSize {
			i := firstEntry(lines)
			if i < 0 {
				p.chunk = append(p.chunk, lines...)
				return
			}
			p.chunk = append(p.chunk, lines[:i]...)
			lines = lines[i:]
			p.dispatch()
			continue
		}
		// Up to chunkSize, at the end of a line.
		need := p.chunkSize - len(p.chunk)
		if need >= len(lines) {
			p.chunk = append(p.chunk, lines...)
			return
		}
		cut := need + bytes.IndexByte(lines[need-1:], '\n')
		p.chunk = append(p.chunk, lines[:cut]...)
		lines = lines[cut:]
	}
}

// TakeLines implements ChunkParser: a run of whole entries of at least
// chunkSize bytes becomes a chunk as it lies in Scan's buffer (Keep).
// Lines gathered before (the section's first ones, or those Block copied)
// are completed up to the first entry and parsed apart; what follows the
// last entry that opens in lines waits for the lines that end it.
func (p *ConcurrentJobStatsParser) TakeLines(lines []byte, more bool) (int, []byte) {
	taken := 0
	if len(p.chunk) > 0 {
		i := firstEntry(lines)
		if i < 0 {
			p.Block(lines)
			return len(lines), nil
		}
		p.Block(lines[:i])
		if len(p.chunk) > 0 {
			p.dispatch()
		}
		taken = i
	}
	rest := lines[taken:]
	cut := lastEntry(rest)
	if more && cut < p.chunkSize {
		return taken, nil // too little yet: Scan reads more
	}
	if !more && cut <= 0 {
		p.Block(rest)
		return len(lines), nil
	}
	if !more {
		// The last entry is copied, so that End parses it whole with
		// whatever line (one without a line ending) may still follow.
		// Its chunk goes to a helper after the kept one (End), so the
		// order holds.
		p.Block(rest[cut:])
		return len(lines), rest[:cut]
	}
	return taken + cut, rest[:cut]
}

// Keep implements ChunkParser: the kept lines go to a helper, which puts
// their buffer back in readBuffers once they are parsed.
func (p *ConcurrentJobStatsParser) Keep(lines []byte, buf *[]byte) {
	p.send(lines, func() {
		if p.giveBack != nil {
			p.giveBack(buf)
			return
		}
		readBuffers.Put(buf)
	})
}

// firstEntry returns where the first line of lines (whole lines) that
// opens an entry begins, or -1.
func firstEntry(lines []byte) int {
	for i := 0; i < len(lines); {
		end := i + bytes.IndexByte(lines[i:], '\n')
		if opensEntry(lines[i:end]) {
			return i
		}
		i = end + 1
	}
	return -1
}

// lastEntry returns where the last line of lines (whole lines) that opens
// an entry begins, or -1.
func lastEntry(lines []byte) int {
	for end := len(lines) - 1; end >= 0; {
		start := bytes.LastIndexByte(lines[:end], '\n') + 1
		if opensEntry(lines[start:end]) {
			return start
		}
		end = start - 1
	}
	return -1
}

// End implements SectionParser.
func (p *ConcurrentJobStatsParser) End(complete bool) {
	// The last chunk is parsed here, while the helpers and the deliverer
	// finish the others; a panic of its parse is raised after them, so
	// that the deliverer always ends.
	last := parseChunkGuarded(p.chunk, complete)
	p.releaseChunk(p.chunk)
	p.chunk = nil
	if p.queue != nil {
		close(p.queue)
		<-p.delivered
		p.queue = nil
	}
	panicked := p.panicked
	if panicked == nil {
		panicked = last.panicked
	}
	if panicked != nil {
		p.panicked = nil
		panic(panicked)
	}
	p.deliver(last)
	p.h.End(complete, p.stats)
	p.stats = SectionStats{}
}

// dispatch hands the chunk gathered so far to a helper, once fewer than
// ahead chunks are in flight.
func (p *ConcurrentJobStatsParser) dispatch() {
	chunk := p.chunk
	p.chunk = nil
	p.send(chunk, func() { p.releaseChunk(chunk) })
}

func (p *ConcurrentJobStatsParser) send(chunk []byte, release func()) {
	if p.queue == nil {
		p.queue = make(chan chan *jobBatch, p.ahead)
		p.inFlight = make(chan struct{}, p.ahead)
		p.delivered = make(chan struct{})
		go p.deliverAll(p.queue, p.delivered)
	}
	p.inFlight <- struct{}{}
	slot := make(chan *jobBatch, 1)
	p.sent++
	helper := func() {
		defer release()
		// Cut before an entry: the chunk's last entry is whole.
		slot <- parseChunkGuarded(chunk, true)
	}
	if p.runHelper != nil {
		p.runHelper(helper)
	} else {
		go helper()
	}
	p.queue <- slot
}

// parseChunkGuarded is parseChunk with a panic, which on a helper would
// take the process down, coming back as the batch's panicked, for End to
// raise on the goroutine of the run, whose caller turns it into a failed
// run (toolrun.Runner). A parser's bug costs a run, not the process.
func parseChunkGuarded(chunk []byte, complete bool) (b *jobBatch) {
	defer func() {
		if v := recover(); v != nil {
			b = &jobBatch{panicked: v}
		}
	}()
	return parseChunk(chunk, complete)
}

// deliverAll is the deliverer: it hands the entries of each chunk to the
// handler in the order the chunks were read. After a panic (a helper's or
// the handler's), it only takes the chunks still coming, so that the
// reader is never left waiting, and End raises the panic.
func (p *ConcurrentJobStatsParser) deliverAll(queue <-chan chan *jobBatch, delivered chan<- struct{}) {
	for slot := range queue {
		b := <-slot
		switch {
		case p.panicked != nil:
		case b.panicked != nil:
			p.panicked = b.panicked
		default:
			p.deliverGuarded(b)
		}
		p.done.Add(1)
		<-p.inFlight
	}
	close(delivered)
}

// deliverGuarded is deliver on the deliverer, a panic kept for End.
func (p *ConcurrentJobStatsParser) deliverGuarded(b *jobBatch) {
	defer func() {
		if v := recover(); v != nil {
			p.panicked = v // the batch, half delivered, is not reused
		}
	}()
	p.deliver(b)
}

// deliver hands a chunk's entries to the handler.
func (p *ConcurrentJobStatsParser) deliver(b *jobBatch) {
	for i := range b.jobs {
		e := &b.jobs[i]
		p.js = JobStat{JobID: b.ids[e.id:e.idEnd], SnapshotTime: e.snapshot, StartTime: e.start,
			Ops: b.ops[e.op:e.opEnd:e.opEnd], Malformed: e.malformed}
		p.h.Job(&p.js)
	}
	p.js = JobStat{} // nothing of the batch kept past its reuse
	p.stats.Jobs += b.stats.Jobs
	p.stats.Stray += b.stats.Stray
	b.reset()
	jobBatches.Put(b)
}

func (p *ConcurrentJobStatsParser) releaseChunk(c []byte) {
	if c != nil && cap(c) <= 4*p.chunkSize {
		c = c[:0]
		chunkBuffers.Put(&c)
	}
}

// opensEntry reports whether a line is "- job_id: …", where the sequential
// parser ends the entry before and starts a new one whatever came before.
func opensEntry(line []byte) bool {
	rest := trimLeft(line)
	if len(rest) == 0 || rest[0] != '-' {
		return false
	}
	key, _, ok := splitKey(trimLeft(rest[1:]))
	return ok && string(key) == "job_id"
}

// jobBatch is the parsed entries of a chunk. Entries point into shared
// arrays, so that a chunk costs a few allocations, not some per entry.
type jobBatch struct {
	jobs  []batchJob
	ids   []byte
	ops   []OpStat
	stats SectionStats
	// parser is kept with the batch for its slices.
	parser JobStatsParser
	// panicked is what parsing the chunk panicked with (parseChunkGuarded).
	panicked any
}

type batchJob struct {
	id, idEnd, op, opEnd int
	snapshot, start      float64
	malformed            int
}

func (b *jobBatch) reset() {
	b.jobs, b.ids, b.ops, b.stats = b.jobs[:0], b.ids[:0], b.ops[:0], SectionStats{}
}

// Job implements JobStatsHandler: it keeps a copy of the entry.
func (b *jobBatch) Job(js *JobStat) {
	e := batchJob{id: len(b.ids), op: len(b.ops), snapshot: js.SnapshotTime, start: js.StartTime, malformed: js.Malformed}
	b.ids = append(b.ids, js.JobID...)
	b.ops = append(b.ops, js.Ops...)
	e.idEnd, e.opEnd = len(b.ids), len(b.ops)
	b.jobs = append(b.jobs, e)
}

// End implements JobStatsHandler.
func (b *jobBatch) End(_ bool, stats SectionStats) { b.stats = stats }

var (
	jobBatches   = sync.Pool{New: func() any { return new(jobBatch) }}
	chunkBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 80<<10); return &b }}
)

// parseChunk parses whole lines with a JobStatsParser of its own.
func parseChunk(chunk []byte, complete bool) *jobBatch {
	b := jobBatches.Get().(*jobBatch)
	// A fresh parser but for the capacity of its slices, and the idle
	// values it knows (kept by their exact bytes: true of any chunk).
	p := &b.parser
	*p = JobStatsParser{h: b, job: JobStat{JobID: p.job.JobID[:0], Ops: p.job.Ops[:0]}, names: p.names,
		idle: p.idle, idleNext: p.idleNext}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		p.Line(trimEOL(chunk[:i+1]))
		chunk = chunk[i+1:]
	}
	p.End(complete)
	return b
}
