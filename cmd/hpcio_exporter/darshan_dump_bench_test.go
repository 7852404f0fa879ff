package main

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// BenchmarkDarshanDumpProcess is `darshan dump` as users get it: the
// built binary as a whole process, start-up included, against
// darshan-util 3.5.0's `darshan-parser --show-incomplete`, both writing
// to /dev/null, on every Darshan log of the shared corpus over 1 MiB.
// Each iteration runs every contender once, in an order rotated from one
// iteration to the next (interleaved: the machine's noise falls on all of
// them alike); the benchmark reports each one's median wall time and
// median CPU time (user + system, of the process: what a loaded machine
// changes least), and the ratios darshan-parser / dump of both. Its ns/op
// is one round of all contenders.
//
// DARSHAN_UTIL_BIN is darshan-util's bin directory (skipped without it).
// HPCIO_EXPORTER_BASELINE, when set, is a colon-separated list of other
// builds of the exporter (an older commit's), each run as one more
// contender named by its file name, for a before/after in the same
// rounds. Run it with -benchtime=9x or more for
// a median of at least 9.
func BenchmarkDarshanDumpProcess(b *testing.B) {
	util := os.Getenv("DARSHAN_UTIL_BIN")
	if util == "" {
		b.Skip("DARSHAN_UTIL_BIN is not set: no reference darshan-util to run")
	}
	logs := bigLogs(b, corpus.Dir(b, "darshan"), 1<<20)
	bin := exportertest.Binary(b)
	contenders := []struct {
		name string
		argv func(log string) []string
	}{
		{"parser", func(log string) []string {
			return []string{filepath.Join(util, "darshan-parser"), "--show-incomplete", log}
		}},
		{"dump", func(log string) []string { return []string{bin, "darshan", "dump", log} }},
	}
	for base := range strings.SplitSeq(os.Getenv("HPCIO_EXPORTER_BASELINE"), ":") {
		if base == "" {
			continue
		}
		contenders = append(contenders, struct {
			name string
			argv func(log string) []string
		}{filepath.Base(base), func(log string) []string { return []string{base, "darshan", "dump", log} }})
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for _, log := range logs {
		b.Run(logName(log), func(b *testing.B) {
			times := make([][]time.Duration, len(contenders))
			cpu := make([][]time.Duration, len(contenders))
			round := 0
			for b.Loop() {
				for k := range contenders {
					i := (k + round) % len(contenders)
					argv := contenders[i].argv(log)
					cmd := exec.Command(argv[0], argv[1:]...)
					cmd.Stdout = null
					start := time.Now()
					if out, err := cmdRun(cmd); err != nil {
						b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
					}
					times[i] = append(times[i], time.Since(start))
					cpu[i] = append(cpu[i], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
				}
				round++
			}
			med := make([]float64, len(contenders))
			medCPU := make([]float64, len(contenders))
			for i, c := range contenders {
				med[i] = float64(median(times[i])) / 1e6
				medCPU[i] = float64(median(cpu[i])) / 1e6
				b.ReportMetric(med[i], c.name+"-ms")
				b.ReportMetric(medCPU[i], c.name+"-cpu-ms")
			}
			b.ReportMetric(med[0]/med[1], "parser/dump")
			b.ReportMetric(medCPU[0]/medCPU[1], "parser/dump-cpu")
			for i := 2; i < len(med); i++ {
				b.ReportMetric(med[0]/med[i], "parser/"+contenders[i].name)
				b.ReportMetric(medCPU[0]/medCPU[i], "parser/"+contenders[i].name+"-cpu")
			}
		})
	}
}

// cmdRun runs cmd with its stderr kept for the error.
func cmdRun(cmd *exec.Cmd) (string, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// bigLogs lists the *.darshan files under dir larger than size, largest
// first.
func bigLogs(b *testing.B, dir string, size int64) []string {
	type log struct {
		path string
		size int64
	}
	var found []log
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".darshan") {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.Size() > size {
			found = append(found, log{p, fi.Size()})
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if len(found) == 0 {
		b.Skipf("no Darshan log over %d bytes under %s", size, dir)
	}
	slices.SortFunc(found, func(x, y log) int { return cmp.Compare(y.size, x.size) })
	out := make([]string, len(found))
	for i, l := range found {
		out[i] = l.path
	}
	return out
}

// logName is a short sub-benchmark name for a log: its first two
// underscore-separated words and its size.
func logName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".darshan")
	parts := strings.SplitN(base, "_", 3)
	if len(parts) > 2 {
		base = parts[0] + "_" + parts[1]
	}
	size := int64(0)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	return fmt.Sprintf("%s-%.1fMB", base, float64(size)/1e6)
}
