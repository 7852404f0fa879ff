package lustre

import (
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/jobstats"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

// Snapshot is what one lctl run read, typed, published once and never
// changed afterwards: every collector of a scrape reads the same one, and a
// scrape may take as long as it likes over it.
//
// Only parameters read whole are in it: a section cut short (a killed lctl)
// is left out rather than exported half; of a quota list cut short, the ids
// read whole are kept, each standing alone. Values printed twice in one
// section (damaged output) count once, the first time.
type Snapshot struct {
	// Time is when the run started; Duration how long it took, parsing
	// included.
	Time     time.Time
	Duration time.Duration
	Result   toolrun.Result
	// Err is set when the run failed or was cut short: the sections read
	// before are in. Exit is lctl's non-zero exit after a whole output
	// in which some parameter asked for was printed (another pattern
	// matched nothing), which is no failure; a non-zero exit with no
	// parameter asked for is a failure (Result Failed, Err wrapping the
	// *toolrun.ExitError).
	Err  error
	Exit *toolrun.ExitError
	// Runs counts the runs since the exporter started by result (indexed
	// by toolrun.Result), this one included.
	Runs [len(toolrun.Results)]uint64
	// BadInput counts, by the Owner of the request, the values and lines
	// dropped since the exporter started because they could not be read.
	BadInput map[string]uint64

	Stats      []Param[lctl.StatsSection]
	Values     []Param[float64]
	Brw        []Param[lctl.BrwStats]
	Recovery   []Param[lctl.Recovery]
	Changelogs []Param[lctl.Changelog]
	Quotas     []Param[[]lctl.QuotaEntry]
	Health     []Param[bool]
	Versions   []Param[Version]
	// Jobs is the per-job state after this run; nil when no one asked
	// for job_stats.
	Jobs *jobstats.View

	refs int // see Source.Snapshot and Source.Release; under Source.mu
}

// Param is one parameter lctl printed, read for the request of Owner.
type Param[T any] struct {
	Name  string
	Owner string
	V     T
}

// Version is the Lustre version a node runs; Build is the build string of
// Lustre before 2.12, else "".
type Version struct {
	Version, Build string
}
