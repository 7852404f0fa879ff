package darshan

import (
	"fmt"
	"sync/atomic"
)

// The memory budget of a log.
//
// MaxInflateRatio bounds each region by its compressed size, which still
// lets a 4 MB log unfold into a gigabyte of names or records, and what the
// reader keeps (the name table) or its callers derive (one entry per
// record) grows with that. So each log also has a budget, fixed before a
// byte of it is read, and everything the reader reads, inflates or keeps
// for the log is charged against it:
//
//   - each region's compressed bytes, held while it is read, and every byte
//     it inflates: a region is charged for the most of it any reader got
//     through, so reading a module twice (the signals, then the insights)
//     costs no more than reading it once;
//   - each entry of the name table: its bytes and what a map entry costs
//     (nameEntryCost), on top of the inflated bytes it came from;
//   - the segments a DXT record holds while it is decoded (its slices grow
//     with the record: the only record whose size follows the data rather
//     than a format limit), also charged once per region, for the most
//     any reader held;
//   - each record that ReadModule or Index keeps.
//
// The charge only grows. Once it would pass the budget, the read under way
// stops with a *FormatError naming the region, whose cause is a
// *BudgetError (which is ErrTooLarge), and so does every later read of the
// log: it is refused as a whole, and what it cost is about the budget (a
// window of inflated data more at most), never its inflated size.

// DefaultMemoryBudget is the budget of Open and NewReader, and of OpenWith
// and NewReaderWith when Options.MemoryBudget is 0. No real log comes near
// it: the costliest of the corpus (3.6 MB, with DXT traces) costs 14 MiB
// read whole (TestCorpusCost).
const DefaultMemoryBudget = 256 << 20

// Options tune how a log is read.
type Options struct {
	// MemoryBudget bounds, in bytes, what reading the log may hold, inflate
	// or keep (see DefaultMemoryBudget); 0 means DefaultMemoryBudget, a
	// negative value is invalid.
	MemoryBudget int64
}

// budget returns the budget the options ask for.
func (o Options) budget() (int64, error) {
	switch {
	case o.MemoryBudget < 0:
		return 0, fmt.Errorf("darshan: invalid memory budget %d (negative)", o.MemoryBudget)
	case o.MemoryBudget == 0:
		return DefaultMemoryBudget, nil
	}
	return o.MemoryBudget, nil
}

// BudgetError is the cause of a *FormatError when a log costs more than its
// memory budget. It is ErrTooLarge for errors.Is; errors.As tells it from
// the inflate bound (MaxInflateRatio), which no budget can raise.
type BudgetError struct {
	Budget int64 // the budget, in bytes
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%v: over the memory budget of %d bytes", ErrTooLarge, e.Budget)
}

// Is makes a BudgetError match ErrTooLarge.
func (e *BudgetError) Is(target error) bool { return target == ErrTooLarge }

const (
	// nameEntryCost is what a name table entry costs beside its bytes: the
	// map's slot (8-byte key, 16-byte string header) at the lowest load a
	// growing swiss table has, the string's allocation rounding, and the
	// old table alive while the map grows.
	nameEntryCost = 64
	// segmentCost is the size of a decoded Segment.
	segmentCost = 48
	// keptRecordCost is what a record kept by ReadModule or Index costs
	// beside its data: its struct, slice headers and the slot of the
	// result. Its data is charged at 1.5 times the bytes it was decoded
	// from: decoded fields are never more than that (DXT_MPIIO version 1
	// segments: 32 bytes become 48).
	keptRecordCost = 128
)

// Regions are charged by slot: one per module, then the name and job regions.
const (
	slotNames = MaxModules
	slotJob   = MaxModules + 1
	slots     = MaxModules + 2
)

// memory is the budget of one log and what is charged against it; safe for
// the concurrent RecordReaders a Log allows.
type memory struct {
	limit   int64 // 0: DefaultMemoryBudget (a Log made by hand, in tests)
	charged atomic.Int64
	// region[s] is what region slot s has been charged: its compressed
	// bytes and the most any reader inflated of it.
	region [slots]atomic.Int64
	// held[s] is the most region slot s's decoded records held at once.
	held [slots]atomic.Int64
}

func (m *memory) budget() int64 {
	if m.limit == 0 {
		return DefaultMemoryBudget
	}
	return m.limit
}

// charge adds n bytes and fails once the total passes the budget (and from
// then on: the log is refused as a whole).
func (m *memory) charge(n int64) error {
	if m.charged.Add(n) > m.budget() {
		return &BudgetError{Budget: m.budget()}
	}
	return nil
}

// remaining returns what the budget has left (negative once it is passed).
func (m *memory) remaining() int64 { return m.budget() - m.charged.Load() }

// chargeRegion raises region slot s's charge to n bytes if it is below.
func (m *memory) chargeRegion(s int, n int64) error { return m.raise(&m.region[s], n) }

// chargeHeld raises what region slot s's records hold (the segments of a
// DXT record) to n bytes if it is below. Readers of the same region in turn
// hold no more than one does; readers at the same time each hold theirs,
// which is charged once: the budget is about a log, not exact.
func (m *memory) chargeHeld(s int, n int64) error { return m.raise(&m.held[s], n) }

// raise raises the high-water mark r to n and charges the difference; at or
// under the mark it charges nothing, but still fails once the log is over
// its budget.
func (m *memory) raise(r *atomic.Int64, n int64) error {
	for {
		old := r.Load()
		if n <= old {
			if m.charged.Load() > m.budget() {
				return &BudgetError{Budget: m.budget()}
			}
			return nil
		}
		if r.CompareAndSwap(old, n) {
			return m.charge(n - old)
		}
	}
}

// MemoryBudget returns the log's memory budget in bytes.
func (l *Log) MemoryBudget() int64 { return l.mem.budget() }

// MemoryCharged returns the bytes charged against the log's memory budget
// so far: after a whole read, what the log costs (see DefaultMemoryBudget).
func (l *Log) MemoryCharged() int64 { return l.mem.charged.Load() }
