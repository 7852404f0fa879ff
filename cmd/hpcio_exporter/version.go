package main

import (
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

// devVersion is reported when neither the build (-ldflags) nor the go
// command (a module version) gave one: go run, tests, a go build outside a
// version control checkout.
const devVersion = "0.2.0-dev"

// buildStamp is the part of prometheus/common/version's variables that
// `make build` sets with -ldflags -X and a plain go build leaves empty.
type buildStamp struct {
	Version, Revision, BuildDate string
}

// setVersion completes prometheus/common/version's variables from what the
// go command recorded in the binary (bi, nil if none), before anything
// prints them: --version, the start-up log line, the landing page and
// hpcio_exporter_build_info all read them.
func setVersion(bi *debug.BuildInfo) {
	s := fillStamp(buildStamp{version.Version, version.Revision, version.BuildDate}, bi)
	version.Version, version.Revision, version.BuildDate = s.Version, s.Revision, s.BuildDate
}

// fillStamp fills in what -ldflags left empty. What -ldflags set is kept:
// `make build` knows better (the VERSION file, the branch, the build's own
// date).
//
//   - Version: the main module's version when the go command knows one — a
//     tag or pseudo-version from `go install …@version`, or, since Go 1.24,
//     from the checkout's tags and commit ("+dirty" when modified) — without
//     its leading "v", as Prometheus projects print versions; else devVersion.
//   - Revision: left empty (an "unknown" from a build that could not ask git
//     as well), because version.GetRevision then reports vcs.revision, with
//     "-modified" when vcs.modified is true; it is prometheus/common's own
//     fallback and done once, there.
//   - BuildDate: vcs.time, the commit's time (RFC 3339, UTC): what a
//     reproducible build knows of its date.
//
// Branch and BuildUser stay empty: the build info has neither.
func fillStamp(s buildStamp, bi *debug.BuildInfo) buildStamp {
	if s.Version == "" {
		s.Version = devVersion
		if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			s.Version = strings.TrimPrefix(bi.Main.Version, "v")
		}
	}
	if s.Revision == "unknown" {
		s.Revision = ""
	}
	if s.BuildDate == "" && bi != nil {
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.time" {
				s.BuildDate = kv.Value
			}
		}
	}
	return s
}
