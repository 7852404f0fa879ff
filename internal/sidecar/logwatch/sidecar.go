// Package logwatch is the Darshan sidecar: it reads each log that
// darshan-runtime drops (found by package dropdir, in the runtime's
// YYYY/M/D layout), once per version, in a bounded pool of workers; and
// keeps, per job, the summary of its logs and the values the collector
// exports — its signals and, when configured, the insights that fired —
// for a retention window after each log's end.
//
// It parses nothing itself (package darshan reads logs, darshan/signals and
// darshan/insights compute) and exports nothing (collector/darshan.go
// does).
package logwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/internal/sidecar/dropdir"
)

// Config configures a Sidecar; zero fields take the defaults below.
type Config struct {
	Dirs           []string      // drop directories, searched recursively
	RescanInterval time.Duration // default 30s
	Workers        int           // logs read at the same time; default 2
	Retention      time.Duration // after a log's end; default 24h
	// MaxJobs bounds the jobs held: past it, the user holding the most
	// loses its job that ended first. 0: no limit.
	MaxJobs int
	// MaxJobsPerUser bounds the jobs of one user (the uid in the logs'
	// headers): past it, that user's job that ended first is dropped,
	// never another user's. 0: no limit.
	MaxJobsPerUser int
	// MaxSeries bounds the series of the jobs' views as SeriesOf counts
	// them (the collector's per-job families): past it, when a scrape
	// asks for the views, the user whose jobs cost the most series loses
	// its job that ended first, until they fit. 0, or a nil SeriesOf: no
	// limit.
	MaxSeries  int
	SeriesOf   func(*JobView) int
	ExeLabel   bool // label jobs with the executable's base name
	MaxRecords int  // records kept per job; 0: none
	// Settle is how long a log that is still empty, has a zero header or
	// is truncated is retried as "being written" (counted waiting) before
	// it counts as failed; default 1m. The runtime writes the header last.
	Settle time.Duration
	// NoInotify turns inotify off: rescans only.
	NoInotify bool
	// MemoryBudget bounds what reading one log may cost, in bytes
	// (darshan.Options); 0: darshan.DefaultMemoryBudget. A log over it
	// counts too_large and is not read again until it changes. Workers
	// logs are read at the same time: Workers × MemoryBudget is what the
	// reads may hold at once.
	MemoryBudget int64
	// StateDir, when set, is where the sidecar keeps the logs being read
	// (StateFileName; see package dropdir), so that a log that kills the
	// process while it is read is skipped after the restart, counted
	// crashed. Without it, such a log is read again, and kills it again.
	StateDir string
	// Insights, when set, are the thresholds the insights of each job are
	// evaluated with (package darshan/insights); nil: no insights are
	// computed.
	Insights *insights.Config
	Now      func() time.Time
	Logger   *slog.Logger
}

const (
	partialSuffix = ".darshan_partial"
	logSuffix     = ".darshan"
)

// StateFileName is the sidecar's file in Config.StateDir.
const StateFileName = "darshan-reading.json"

// stateMinSize: logs smaller are not written down in the state file. A log
// inflates to at most darshan.MaxInflateRatio times its size per region
// (plus darshan.MinInflateBound each): one under 64 KiB unfolds to tens of
// MiB at most, which cannot kill the process, while writing it down would
// cost more than reading it (see package dropdir).
const stateMinSize = (16 << 20) / darshan.MaxInflateRatio

// Sidecar reads the logs of the drop directories. Start it with Start,
// stop it with Close.
type Sidecar struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	store   *store
	stats   stats
	watcher *dropdir.Watcher
	tally   tallies            // since the last report
	shown   map[string]waiting // by drop directory, as last reported
}

// Start checks the configuration, starts the watcher and its workers, and
// returns at once; the first scan runs in the background.
func Start(cfg Config) (*Sidecar, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("no directory to watch")
	}
	if cfg.Retention <= 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.Settle <= 0 {
		cfg.Settle = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Sidecar{cfg: cfg, log: cfg.Logger, now: cfg.Now, store: newStore(cfg), stats: newStats(), shown: map[string]waiting{}}
	if cfg.MemoryBudget < 0 {
		return nil, fmt.Errorf("invalid memory budget %d (negative)", cfg.MemoryBudget)
	}
	stateFile := ""
	if cfg.StateDir != "" {
		stateFile = filepath.Join(cfg.StateDir, StateFileName)
	}
	w, err := dropdir.Start(dropdir.Config{
		Dirs: cfg.Dirs, RescanInterval: cfg.RescanInterval, Workers: cfg.Workers,
		Wanted:    func(name string) bool { return strings.HasSuffix(name, logSuffix) },
		Partial:   func(name string) bool { return strings.HasSuffix(name, partialSuffix) },
		Retention: cfg.Retention,
		// Logs leave the window by their end time, checked at each scan.
		OnScan:    s.expire,
		OnReport:  s.report,
		StateFile: stateFile, StateMinSize: stateMinSize, OnCrashed: s.crashed,
		What: "Darshan", NoInotify: cfg.NoInotify, Now: cfg.Now, Logger: cfg.Logger,
	}, s)
	if err != nil {
		return nil, err
	}
	s.watcher = w
	return s, nil
}

// Close stops the sidecar and waits for its goroutines.
func (s *Sidecar) Close() error { return s.watcher.Close() }

// Sync scans now and returns when every log found is read (or ctx ends).
func (s *Sidecar) Sync(ctx context.Context) error { return s.watcher.Sync(ctx) }

// Gone implements dropdir.Handler: a log removed or renamed away leaves
// its job (and its bytes stay counted).
func (s *Sidecar) Gone(path string) {
	s.store.remove(path)
	s.stats.forget(path)
}
