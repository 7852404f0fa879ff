// Package jobstats turns the job_stats of one lctl run after another into
// per-job counters: it classifies and repairs each raw job_id (package
// jobid), adds per raw series only increments (package rates) to one
// monotonic total per job identity, summarizes the identities (active
// count, rate density), caps the identities with series of their own and
// folds the others into "_other", and publishes the result of each run as
// an immutable View.
//
// A Tracker is driven by one run at a time (the Lustre source serializes
// them); Views are read by any number of scrapes at once, for as long as
// they like, without a lock: nothing in a published View changes.
//
// The package knows nothing of Prometheus; collector/jobstats.go exposes
// Views.
package jobstats

import (
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/hpcio/hpcio_exporter/jobid"
)

// Synthetic jobids of the identities that are not one job.
const (
	// OtherJob gathers the identities without series of their own: past
	// MaxSeries, or left out by the include/exclude filters.
	OtherJob = "_other"
	// UntrustedJob gathers the traffic of job_ids that were discarded.
	UntrustedJob = "_untrusted"
)

// LabelNames are the identity labels, in the order a View's keys hold them.
var LabelNames = [...]string{"jobid", "uid", "gid", "node", "exe"}

// Key is a job identity after the labels not kept were blanked, in the
// order of LabelNames.
type Key [len(LabelNames)]string

// FilterLabels are the identity labels that include/exclude filters apply
// to.
var FilterLabels = [...]string{"jobid", "uid", "node"}

// Config configures a Tracker.
type Config struct {
	// JobIDName is the jobid_name format of the job_ids; "" takes what
	// lctl reports as jobid_name, else jobid.DefaultFormat.
	JobIDName string
	// TTL: identities and raw series unseen this long are forgotten.
	TTL time.Duration
	// Labels are the identity labels kept, from LabelNames; the others are
	// blanked and their identities summed.
	Labels []string
	// EmitZero keeps values that are still zero in Views.
	EmitZero bool
	// UntrustedBucket counts the traffic of discarded job_ids under
	// UntrustedJob; without it that traffic is dropped, and per-job sums
	// fall short of the target's.
	UntrustedBucket bool
	// MaxSeries caps the identities with series per target; the others are
	// folded into OtherJob. 0: no cap.
	MaxSeries int
	// MaxEntries bounds the job_stats entries one run may hand the tracker,
	// over every target: past it, the entries are not looked at
	// (Tracker.OverBudget), so that job_ids cannot grow the tracker beyond
	// what MaxEntries of them cost. 0: no bound.
	MaxEntries int
	// Include and Exclude are anchored regular expressions on the
	// normalized FilterLabels, by label name: identities that do not match
	// an Include, or match an Exclude, are folded into OtherJob.
	Include, Exclude map[string]string
	// DensityBase is the base b of the rate density buckets b^k; 0 turns
	// the density off.
	DensityBase int
	Logger      *slog.Logger
}

// ConfigError names the setting of a Config that is wrong, by the suffix
// of its flag: "labels", "jobid-name", "include-jobid", "max-series",
// "rate-density.base".
type ConfigError struct {
	Setting string
	Err     error
}

func (e *ConfigError) Error() string { return e.Setting + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// filter holds the compiled include/exclude expressions.
type filter struct {
	include, exclude [len(FilterLabels)]*regexp.Regexp
}

func newFilter(include, exclude map[string]string) (*filter, error) {
	f := &filter{}
	for kind, exprs := range map[string]map[string]string{"include": include, "exclude": exclude} {
		for label, expr := range exprs {
			if expr == "" {
				continue
			}
			i := indexOf(FilterLabels[:], label)
			if i < 0 {
				return nil, &ConfigError{kind + "-" + label, fmt.Errorf("unknown label (known: %s)", strings.Join(FilterLabels[:], ","))}
			}
			re, err := regexp.Compile("^(?:" + expr + ")$")
			if err != nil {
				return nil, &ConfigError{kind + "-" + label, err}
			}
			if kind == "include" {
				f.include[i] = re
			} else {
				f.exclude[i] = re
			}
		}
	}
	return f, nil
}

// allows reports whether an identity gets series of its own.
func (f *filter) allows(id jobid.Identity) bool {
	for i, v := range [len(FilterLabels)]string{id.Job, id.UID, id.Node} {
		if f.include[i] != nil && !f.include[i].MatchString(v) {
			return false
		}
		if f.exclude[i] != nil && f.exclude[i].MatchString(v) {
			return false
		}
	}
	return true
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// keptLabels parses the list of labels kept.
func keptLabels(list []string) (keep [len(LabelNames)]bool, err error) {
	for _, name := range list {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := indexOf(LabelNames[:], name)
		if i < 0 {
			return keep, &ConfigError{"labels", fmt.Errorf("unknown label %q (known: %s)", name, strings.Join(LabelNames[:], ","))}
		}
		keep[i] = true
	}
	return keep, nil
}

// densityBounds are the upper bounds b^k of the density buckets, from below
// 1e-3 (one operation in a quarter of an hour) to above 1e11 (100 GB/s).
func densityBounds(base int) []float64 {
	b := float64(base)
	lo := int(math.Floor(math.Log(1e-3) / math.Log(b)))
	hi := int(math.Ceil(math.Log(1e11) / math.Log(b)))
	bounds := make([]float64, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		bounds = append(bounds, math.Pow(b, float64(k)))
	}
	return bounds
}
