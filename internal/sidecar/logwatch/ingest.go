package logwatch

import (
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"strconv"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// Reasons a log counts as failed (darshan_logs_failed_total{reason}).
const (
	ReasonCorrupt            = "corrupt"             // data that does not decompress or cannot be right
	ReasonTruncated          = "truncated"           // ends before the data its header promises
	ReasonIncomplete         = "incomplete"          // empty or zero header, still so after the settle time
	ReasonUnsupportedVersion = "unsupported_version" // log format or module version this reader does not know
	ReasonNotDarshan         = "not_darshan"         // no Darshan magic number, or not a regular file
	ReasonTooLarge           = "too_large"           // inflates past the reader's bounds or the memory budget
	ReasonPermission         = "permission"          // cannot be opened by the exporter's user
	ReasonSymlinkOwner       = "symlink_owner"       // a link not followed: its owner is neither root nor the target's
	ReasonCrashed            = "crashed"             // being read when the exporter died (killed?): skipped while unchanged
	ReasonIO                 = "io_error"            // any other read error
)

// Reasons lists every failure reason, for exporting them at 0.
var Reasons = []string{ReasonCorrupt, ReasonTruncated, ReasonIncomplete, ReasonUnsupportedVersion,
	ReasonNotDarshan, ReasonTooLarge, ReasonPermission, ReasonSymlinkOwner, ReasonCrashed, ReasonIO}

// reasonOf classifies the error of reading a log. The magic number comes
// first: a file without it is not a log, whatever else is wrong with it.
func reasonOf(err error) string {
	switch {
	case errors.Is(err, darshan.ErrNotDarshan), errors.Is(err, dropdir.ErrNotRegular), errors.Is(err, darshan.ErrNotRegular):
		return ReasonNotDarshan
	case errors.Is(err, dropdir.ErrSymlinkOwner):
		return ReasonSymlinkOwner
	case errors.Is(err, fs.ErrPermission):
		return ReasonPermission
	case errors.Is(err, darshan.ErrIncomplete):
		return ReasonIncomplete
	case errors.Is(err, darshan.ErrTruncated):
		return ReasonTruncated
	case errors.Is(err, darshan.ErrUnsupportedVersion), errors.Is(err, darshan.ErrModuleVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, darshan.ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, darshan.ErrCorrupt), errors.Is(err, darshan.ErrUnknownModule):
		return ReasonCorrupt
	}
	var fe *darshan.FormatError
	if errors.As(err, &fe) {
		return ReasonCorrupt
	}
	return ReasonIO
}

// Read implements dropdir.Handler: ReadOpen on the file opened by
// dropdir.OpenFile. The watcher calls ReadOpen itself.
func (s *Sidecar) Read(path string) (os.FileInfo, dropdir.Status) {
	f, fi, err := dropdir.OpenFile(path)
	if f != nil {
		defer f.Close()
	}
	return s.ReadOpen(path, f, fi, err)
}

// ReadOpen implements dropdir.OpenReader: it reads one log, opened by the
// watcher (regular files only, links by their owner: dropdir.OpenFile),
// within the memory budget, and records the outcome. Nothing a log holds
// can stop the sidecar: a bad log is counted, logged (its path and what is
// wrong, never a byte of it) and left out; one over the budget is not read
// again until it changes.
func (s *Sidecar) ReadOpen(path string, f *os.File, fi os.FileInfo, err error) (os.FileInfo, dropdir.Status) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Renamed or removed since it was found.
			s.Gone(path)
			return nil, dropdir.Done
		}
		return nil, s.fail(path, nil, err)
	}
	if fi.Size() == 0 {
		return fi, s.fail(path, fi, darshan.ErrIncomplete) // just created
	}
	l, err := darshan.NewReaderWith(f, fi.Size(), path, darshan.Options{MemoryBudget: s.cfg.MemoryBudget})
	if l == nil || errors.Is(err, darshan.ErrTooLarge) {
		// Over the budget, the rest of the log would fail too: it costs
		// nothing more left unread.
		return fi, s.fail(path, fi, err)
	}
	sum, totals := s.summarize(path, l, err == nil && s.cfg.Insights != nil)
	cmdline := l.Exe
	err = errors.Join(err, sum.Err)
	if err != nil {
		return fi, s.fail(path, fi, err)
	}
	id := Identity{JobID: jobID(sum.JobID, path), UID: strconv.FormatInt(sum.UID, 10)}
	if s.cfg.ExeLabel {
		id.Exe = exeName(cmdline)
	}
	now := s.now()
	res := s.store.add(path, id, sum, totals, cmdline, fi.ModTime(), now)
	// A copy's bytes are counted with the log it copies.
	s.stats.processed(path, sum, fi.ModTime(), res != duplicate)
	switch res {
	case duplicate:
		s.log.Debug("Darshan log is a copy of one already read", "path", path)
		s.note(path, func(t *dirTally) { t.duplicates++ })
	case alreadyExpired:
		s.log.Debug("Darshan log ended before the retention window", "path", path)
		end := retentionClock(sum, fi.ModTime(), now)
		s.note(path, func(t *dirTally) { t.ended(1, end, end) })
	default:
		s.note(path, func(t *dirTally) { t.parsed++ })
	}
	return fi, dropdir.Done
}

// summarize returns the signals of l and, with withInsights, its insight
// Totals (packed), from one read of its records (readLog). A failure of the
// insights (an error, or a panic on input nobody foresaw) costs the log
// its insights only, never its signals: it is counted
// (darshan_insights_failed_total) and logged; the job's insights are then
// those of its other logs.
func (s *Sidecar) summarize(path string, l *darshan.Log, withInsights bool) (*signals.Summary, insights.Packed) {
	sum, t, err := readLog(l, s.cfg.MaxRecords, withInsights)
	if err != nil {
		s.insightsFailed(path, err)
		return sum, nil
	}
	return sum, t
}

// readLog reads the records of l once and returns its signals and, with
// withInsights, its insight Totals, packed (insights.Packed: what the
// store keeps of them), or why it has none (err): each record
// decoded feeds both, where the sidecar used to decode each log twice (a
// log is most of its time, and decoding its records most of a log's).
// It gives what signals.Summarize and then insights.FromLog give, the
// Totals without file names (Builder.WithoutNames: where a full Ranking
// cuts between equal values, the Aux it keeps may differ, never a value or
// a decision; TestOnePassMatchesTwoCalls): the signals' modules are read
// first, in module id order, as Summarize reads them (those without a
// region, which hold no record, are not opened), and the modules only the
// insights read (DXT, for the hosts) after, as FromLog read them after the
// signals. A log whose signals met damage is refused whole: its insights
// are not finished (no Totals, no error).
func readLog(l *darshan.Log, maxRecords int, withInsights bool) (*signals.Summary, insights.Packed, error) {
	sig := signals.NewSummarizer(l, maxRecords)
	var pass insightsPass
	var ins *insightsPass // nil: no insights
	if withInsights {
		ins = &pass
		ins.start(l)
	}
	var errs []error
	// Only the modules with a region: one without has no record, and
	// opening its reader (two allocations, for some fifteen modules a log
	// does not have) cost a small log more than its insights.
	for set := signalsModules & withData(l); set != 0; set &= set - 1 {
		m := darshan.ModuleID(bits.TrailingZeros64(set))
		feed := ins.reads(m)
		rd := l.Records(m)
		if feed {
			ins.walk(rd, sig)
		} else {
			for rd.Next() {
				sig.Add(rd.Record())
			}
		}
		if err := rd.Err(); err != nil {
			errs = append(errs, err)
			if feed {
				ins.fail(err)
			}
		}
	}
	sum := sig.Summary(errors.Join(errs...))
	if ins == nil || sum.Err != nil {
		return sum, nil, nil
	}
	// The modules only the insights read, after the signals' (a log over
	// its memory budget there loses its insights, not its signals). Their
	// decoding is the insights' alone: a panic in it costs the log its
	// insights, as when FromLog read them.
	for rest := ins.modules() &^ signalsModules; rest != 0 && ins.err == nil; rest &= rest - 1 {
		m := darshan.ModuleID(bits.TrailingZeros64(rest))
		ins.guard(func() {
			rd := l.Records(m)
			for rd.Next() {
				ins.b.Add(rd.Record())
			}
			ins.fail(rd.Err())
		})
	}
	t, err := ins.totals()
	return sum, t, err
}

// signalsModules is the set of modules the signals read (signals.Reads),
// bit 1<<m for module m: asked once, not for each module of each log.
var signalsModules = func() (set uint64) {
	for m := range darshan.ModuleID(darshan.MaxModules) {
		if signals.Reads(m) {
			set |= moduleBit(m)
		}
	}
	return set
}()

func moduleBit(m darshan.ModuleID) uint64 { return 1 << uint(m) }

// withData returns the set of l's modules whose region is not empty.
func withData(l *darshan.Log) (set uint64) {
	for i, reg := range l.Header.ModuleRegions {
		if reg.Length != 0 && i < 64 {
			set |= 1 << uint(i)
		}
	}
	return set
}

// totalsBuilder is what the sidecar needs of an insights.Builder.
type totalsBuilder interface {
	Modules() uint64 // bit 1<<m: the Builder reads module m
	Add(darshan.Record)
	Packed(error) (insights.Packed, error)
}

// newBuilder and evaluate are insights.NewBuilder and
// insights.Decider.Fired (a view keeps only the insights that fired, and
// no message: writing them was most of an evaluation; the store's scratch
// slice is reused, under its lock); tests replace them with failing ones.
var (
	newBuilder = builderOf
	evaluate   = (*insights.Decider).Fired
)

// builderOf starts the Totals of l without file names: the sidecar
// exports no file, so it keeps no path, and looks none up.
func builderOf(l *darshan.Log) (totalsBuilder, error) {
	b, err := insights.NewBuilder(l)
	if err != nil {
		return nil, err
	}
	b.WithoutNames()
	return b, nil
}

// insightsPass runs an insights Builder beside the signals: its first
// error or panic stops it (and is what totals returns), without stopping
// the records' walk. A nil insightsPass reads nothing.
type insightsPass struct {
	b     totalsBuilder
	err   error
	asked bool   // mods is known
	mods  uint64 // bit m: the Builder reads module m
}

func (p *insightsPass) start(l *darshan.Log) {
	p.guard(func() { p.b, p.err = newBuilder(l) })
}

// guard runs f, turning a panic into the pass' error.
func (p *insightsPass) guard(f func()) {
	defer func() {
		if v := recover(); v != nil {
			p.fail(fmt.Errorf("panic: %v", v))
		}
	}()
	f()
}

// modules returns the modules the Builder reads (none once it failed). It
// asks the Builder once: a guard per question cost more than the insights
// of a small log.
func (p *insightsPass) modules() uint64 {
	if p == nil || p.err != nil {
		return 0
	}
	if !p.asked {
		p.asked = true
		p.guard(func() { p.mods = p.b.Modules() })
	}
	if p.err != nil {
		return 0
	}
	return p.mods
}

// reads reports whether the Builder reads module m (and has not failed).
func (p *insightsPass) reads(m darshan.ModuleID) bool { return p.modules()&moduleBit(m) != 0 }

// walk gives the records of rd to the signals and to the Builder. A panic
// in the Builder stops the insights (it is the pass' error) and the walk
// goes on for the signals. One recover per module, not per record: that
// cost a small log's record more than its insights.
func (p *insightsPass) walk(rd *darshan.RecordReader, sig *signals.Summarizer) {
	if p.walkToPanic(rd, sig) {
		for rd.Next() {
			sig.Add(rd.Record())
		}
	}
}

// walkToPanic is walk until the Builder panics, if it does (true).
func (p *insightsPass) walkToPanic(rd *darshan.RecordReader, sig *signals.Summarizer) (panicked bool) {
	inBuilder := false // a panic now is the Builder's
	defer func() {
		if inBuilder {
			p.fail(fmt.Errorf("panic: %v", recover()))
			panicked = true
		}
	}()
	for rd.Next() {
		r := rd.Record()
		sig.Add(r)
		inBuilder = true
		p.b.Add(r)
		inBuilder = false
	}
	return false
}

// fail stops the pass at its first error (a nil err is none).
func (p *insightsPass) fail(err error) {
	if p != nil && p.err == nil && err != nil {
		p.err = err
	}
}

func (p *insightsPass) totals() (t insights.Packed, err error) {
	if p.err != nil {
		return nil, p.err
	}
	p.guard(func() { t, err = p.b.Packed(nil) })
	if p.err != nil {
		return nil, p.err
	}
	return t, err
}

func (s *Sidecar) insightsFailed(path string, err error) {
	s.stats.insightsFailed()
	s.log.Warn("cannot compute the insights of a Darshan log; its signals are exported", "path", path, "err", err)
}

// note tallies what became of a log, for its directory's next report.
func (s *Sidecar) note(path string, f func(*dirTally)) {
	s.tally.note(dropdir.Root(s.cfg.Dirs, path), f)
}

// crashed records a log version skipped because it was being read when
// the exporter died (dropdir's OnCrashed): it counts as failed, once per
// version found, as any other.
func (s *Sidecar) crashed(path string, fi os.FileInfo) {
	s.stats.failed(ReasonCrashed)
	s.note(path, func(t *dirTally) { t.failed[ReasonCrashed]++ })
	s.log.Warn("cannot read Darshan log", "path", path, "reason", ReasonCrashed,
		"err", "it was being read when the exporter stopped (killed: out of memory?); this version is not read again", "size", fi.Size())
}

// fail records a log that could not be read. One that looks unfinished
// (empty, zero header, truncated) and changed within the settle time is
// being written: it waits and is read again at the next scan or write.
func (s *Sidecar) fail(path string, fi os.FileInfo, err error) dropdir.Status {
	reason := reasonOf(err)
	if fi != nil && (reason == ReasonIncomplete || reason == ReasonTruncated) &&
		s.now().Sub(fi.ModTime()) < s.cfg.Settle {
		return dropdir.Waiting
	}
	s.stats.failed(reason)
	s.note(path, func(t *dirTally) { t.failed[reason]++ })
	s.log.Warn("cannot read Darshan log", "path", path, "reason", reason, "err", err)
	return dropdir.Failed
}
