package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hpcio/hpcio_exporter/darshan"
)

// Found is what a search of Darshan log directories found for a job.
type Found struct {
	// Logs are the job's logs, in path order.
	Logs []string
	// Partial counts the job's *.darshan_partial files: logs the runtime
	// is still writing (or that a crash left), not read.
	Partial int
	// Other counts the files whose name has the job id but whose header
	// holds another job (the name's id is the runtime's fallback pid).
	Other int
	// Days counts the day directories searched.
	Days int
	// Unreadable are the directories that could not be listed (another
	// user's, say): skipped.
	Unreadable []string
}

// FindJobLogs finds the logs of job jobID (decimal) in Darshan log
// directories, as darshan-runtime lays them out:
// DIR/YYYY/M/D/<user>_<exe>_id<jobid>-<pid>_….darshan, the day being the
// job's start in the node's time zone. Only the day directories from a day
// before from to a day after to are listed (the day margin covers time zone
// differences); files directly in DIR, or in directories not named like a
// year, month or day, are looked at too. A file is a candidate when it is a
// regular file (not a link) named *.darshan with "_id<jobid>-" in its name;
// it is the job's when its header says so. Opening a candidate costs its
// header, job record and name table (within budget, the log memory
// budget): a candidate that cannot be opened is an error.
func FindJobLogs(dirs []string, jobID string, from, to time.Time, budget int64) (Found, error) {
	var f Found
	id, err := strconv.ParseInt(jobID, 10, 64)
	if err != nil || id <= 0 {
		return f, fmt.Errorf("--jobid=%q: a batch job id is a positive decimal number", jobID)
	}
	mark := "_id" + jobID + "-"
	firstDay := dayOf(from.AddDate(0, 0, -1))
	lastDay := dayOf(to.AddDate(0, 0, 1))
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil {
			return f, err
		}
		if !fi.IsDir() {
			return f, fmt.Errorf("%s: not a directory", dir)
		}
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrPermission) && d != nil && d.IsDir() && path != dir {
					f.Unreadable = append(f.Unreadable, path)
					return filepath.SkipDir
				}
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			parts := strings.Split(rel, string(filepath.Separator))
			if d.IsDir() {
				if rel == "." {
					return nil
				}
				if lo, hi, ok := dateRange(parts); ok {
					if hi < firstDay || lo > lastDay {
						return filepath.SkipDir
					}
					if len(parts) == 3 {
						f.Days++
					}
				}
				return nil
			}
			name := d.Name()
			if !strings.Contains(name, mark) || !d.Type().IsRegular() {
				return nil
			}
			switch {
			case strings.HasSuffix(name, ".darshan_partial"):
				f.Partial++
				return nil
			case !strings.HasSuffix(name, ".darshan"):
				return nil
			}
			l, err := darshan.OpenWith(path, darshan.Options{MemoryBudget: budget})
			if l != nil {
				l.Close()
			}
			if err != nil {
				return err
			}
			if logJobID(l.Job.JobID, path) != jobID {
				f.Other++
				return nil
			}
			f.Logs = append(f.Logs, path)
			return nil
		})
		if err != nil {
			return f, err
		}
	}
	slices.Sort(f.Logs)
	if len(f.Logs) == 0 {
		return f, fmt.Errorf("no Darshan log of job %s in %s between %s and %s%s", jobID, strings.Join(dirs, ", "),
			firstDay.format(), lastDay.format(), f.explain())
	}
	return f, nil
}

// explain says what was found instead of the job's logs.
func (f Found) explain() string {
	var s []string
	if f.Partial > 0 {
		s = append(s, fmt.Sprintf("%d still being written (*.darshan_partial)", f.Partial))
	}
	if f.Other > 0 {
		s = append(s, fmt.Sprintf("%d named with the job id but of another job (the runtime's fallback pid)", f.Other))
	}
	if len(f.Unreadable) > 0 {
		s = append(s, fmt.Sprintf("%d directories could not be listed (%s)", len(f.Unreadable), f.Unreadable[0]))
	}
	if len(s) == 0 {
		return ""
	}
	return ": " + strings.Join(s, ", ")
}

// Notes says what was found beside the job's logs: logs of the job still
// being written, files named with its id that are another job's, and
// directories that could not be listed (by count: their names are the
// site's, not the job's).
func (f Found) Notes() []string {
	var s []string
	if f.Partial > 0 {
		s = append(s, fmt.Sprintf("%d log(s) of the job still being written (*.darshan_partial), not read", f.Partial))
	}
	if f.Other > 0 {
		s = append(s, fmt.Sprintf("%d log(s) named with the job id hold another job (the runtime's fallback pid), not read", f.Other))
	}
	if len(f.Unreadable) > 0 {
		s = append(s, fmt.Sprintf("%d directories could not be listed, the first %s: the job may have more logs", len(f.Unreadable), f.Unreadable[0]))
	}
	return s
}

// day is a date as a comparable number, YYYYMMDD.
type day int

func dayOf(t time.Time) day {
	t = t.Local()
	return day(t.Year()*10000 + int(t.Month())*100 + t.Day())
}

func (d day) format() string {
	return fmt.Sprintf("%04d-%02d-%02d", int(d)/10000, int(d)/100%100, int(d)%100)
}

// dateRange reads the first three components of a relative directory
// path as year, month and day (darshan-runtime writes them without
// leading zeros; leading zeros are accepted) and returns the first and
// last day they cover; ok is false when they are not such a path.
func dateRange(parts []string) (lo, hi day, ok bool) {
	if len(parts) > 3 {
		return 0, 0, false
	}
	num := func(s string, min, max int) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= min && n <= max && s != "" && s[0] != '+' && s[0] != '-'
	}
	y, ok := num(parts[0], 1970, 9999)
	if !ok {
		return 0, 0, false
	}
	m1, m2, d1, d2 := 1, 12, 1, 31
	if len(parts) > 1 {
		if m1, ok = num(parts[1], 1, 12); !ok {
			return 0, 0, false
		}
		m2 = m1
	}
	if len(parts) > 2 {
		if d1, ok = num(parts[2], 1, 31); !ok {
			return 0, 0, false
		}
		d2 = d1
	}
	return day(y*10000 + m1*100 + d1), day(y*10000 + m2*100 + d2), true
}
