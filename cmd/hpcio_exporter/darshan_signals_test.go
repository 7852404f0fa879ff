package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

var (
	tableRow     = regexp.MustCompile(`^  (\S+) +(\S+)(?:  (.+))?$`)
	tableSection = regexp.MustCompile(`^(== job|== [A-Z0-9-]+ \(module\)|-- [A-Z0-9-]+ record \d+, (rank \d+|shared by every rank))$`)
)

// --format=table shows the report's signals for a person: the log's header,
// then a section per level with a column header, each signal with its value
// to 4 significant digits and its unit, values right-aligned in one column.
// The TSV stays the default, byte for byte.
func TestDarshanSignalsTable(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	data, err := darshantest.Job{JobID: 77, UID: 1000, Exe: "/apps/bin/sim -x", End: time.Unix(1.7e9, 0), Ranks: 2, Bytes: 1 << 20}.Log()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "job.darshan")
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}

	tsv, _, status := runBinary(t, bin, "darshan", "signals", log)
	explicit, _, status2 := runBinary(t, bin, "darshan", "signals", "--format=tsv", log)
	if status != exitOK || status2 != exitOK || tsv != explicit {
		t.Fatalf("the default is not --format=tsv (status %d, %d)", status, status2)
	}
	table, errOut, status := runBinary(t, bin, "darshan", "signals", "--format=table", log)
	if status != exitOK {
		t.Fatalf("--format=table: status %d: %s", status, errOut)
	}

	var tsvSignals int
	for line := range strings.Lines(tsv) {
		if !strings.HasPrefix(line, "#") {
			tsvSignals++
		} else if !strings.Contains(table, line) {
			t.Errorf("the table lacks the header line %q", line)
		}
	}

	rows, sections, valueEnd := 0, map[string]bool{}, -1
	values := map[string]string{} // signal name → "value unit", of the first section that has it
	inSection := false
	for line := range strings.Lines(table) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "#"), line == "":
			inSection = false
		case tableSection.MatchString(line):
			sections[strings.Fields(line)[1]] = true
			inSection = true
		case !inSection:
			t.Errorf("line outside a section: %q", line)
		default:
			m := tableRow.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("not a row: %q", line)
				continue
			}
			end := strings.Index(line, " "+m[2]) + 1 + len(m[2])
			if valueEnd < 0 {
				valueEnd = end
			} else if end != valueEnd {
				t.Errorf("value not aligned (ends at %d, not %d): %q", end, valueEnd, line)
			}
			if m[1] == "signal" {
				if m[2] != "value" || m[3] != "unit" {
					t.Errorf("column header %q", line)
				}
				continue
			}
			rows++
			if digits := strings.TrimLeft(strings.NewReplacer(".", "", "-", "").Replace(m[2]), "0"); m[2] != "NA" && m[2] != "yes" && m[2] != "no" && len(digits) > 4 {
				t.Errorf("%s: %s has more than 4 significant digits", m[1], m[2])
			}
			if _, seen := values[m[1]]; !seen {
				values[m[1]] = strings.TrimSpace(m[2] + " " + m[3])
			}
		}
	}
	if rows != tsvSignals {
		t.Errorf("the table shows %d signals, the report %d", rows, tsvSignals)
	}
	for _, s := range []string{"job", "POSIX", "STDIO", "HEATMAP"} {
		if !sections[s] {
			t.Errorf("no %s section", s)
		}
	}
	// Rank r writes (r+1) MiB, STDIO 1000 bytes: 3 MiB + 1000 B.
	for signal, want := range map[string]string{
		"total_bytes_written": "3.001 MiB", "total_writes": "26 ops", "avg_write_size": "192 KiB",
		"seq_write_ratio": "0.875 ratio", "avg_read_size": "1 MiB", "is_shared": "no",
		"rank_imbalance_ratio": "NA (not_shared_file)", "active_time": "1.5 s", "active_bins": "3 bins",
	} {
		if values[signal] != want {
			t.Errorf("%s: %q, want %q", signal, values[signal], want)
		}
	}
	for signal, unit := range map[string]string{"read_bw": "B/s", "write_iops": "ops/s", "meta_fraction": "ratio"} {
		if v := values[signal]; !strings.HasSuffix(v, unit) && !strings.Contains(v, "NA") {
			t.Errorf("%s: %q, want a value in %s", signal, v, unit)
		}
	}
}
