package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
)

// `hpcio_exporter darshan insights LOG` reports Drishti's I/O insights of a
// log (docs/insights.md): a terminal report, JSON or CSV.
func init() {
	c := darshanCmd.Command("insights", "Report the I/O insights of a Darshan log (Drishti's triggers: S01, P01–P22, M01–M10) with their numbers and recommendations; see docs/insights.md.")
	path := c.Arg("log", "Darshan log file.").Required().String()
	format := c.Flag("format", "Output: text (a report by level), json (one object, a stable schema) or csv (Drishti's --export_csv: a header of codes and a row of True/False).").Default("text").Enum("text", "json", "csv")
	config := c.Flag("config", "JSON file of thresholds overriding the defaults, in Drishti's --config format (docs/insights.md).").PlaceHolder("FILE").String()
	fullPaths := c.Flag("full-paths", "Show files with their full paths, not only their base names.").Bool()
	budget := maxLogMemoryFlag(c)
	addCommand(c, func() error {
		return darshanInsights(os.Stdout, *path, *format, *config, *fullPaths, int64(*budget))
	})
}

// darshanInsights reads the whole log first: a damaged log prints nothing
// but the error (and exits 1), since insights from part of a log would
// mislead.
func darshanInsights(w io.Writer, path, format, configPath string, fullPaths bool, budget int64) error {
	cfg := insights.DefaultConfig()
	if configPath != "" {
		var err error
		if cfg, err = insights.LoadConfig(configPath); err != nil {
			return err
		}
	}
	l, err := openLog(path, budget)
	if err != nil {
		if l != nil {
			l.Close()
		}
		return err
	}
	defer l.Close()
	t, err := insights.FromLog(l)
	if err != nil {
		return overBudget(err)
	}
	found := insights.Evaluate(t, cfg)
	if !fullPaths {
		for i := range found {
			found[i].Files = slices.Clone(found[i].Files)
			for j, f := range found[i].Files {
				found[i].Files[j] = filepath.Base(f)
			}
		}
	}
	out := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "json":
		err = insightsJSON(out, l, found)
	case "csv":
		err = insightsCSV(out, l, found)
	default:
		insightsText(out, l, t, found)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// insightJSON is the JSON schema of one insight. Its keys are stable:
// numbers that are NaN (no threshold) are null.
type insightJSON struct {
	Code            string   `json:"code"`
	Level           string   `json:"level"`
	Fired           bool     `json:"fired"`
	Value           *float64 `json:"value"`
	Threshold       *float64 `json:"threshold"`
	Count           *float64 `json:"count"`
	CountThreshold  *float64 `json:"count_threshold"`
	Message         string   `json:"message"`
	Recommendations []string `json:"recommendations"`
	Files           []string `json:"files"`
}

type reportJSON struct {
	Log      string        `json:"log"`
	JobID    int64         `json:"jobid"`
	Insights []insightJSON `json:"insights"`
}

func number(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func insightsJSON(w io.Writer, l *darshan.Log, found []insights.Insight) error {
	r := reportJSON{Log: filepath.Base(l.Name), JobID: l.Job.JobID, Insights: []insightJSON{}}
	for _, in := range found {
		j := insightJSON{Code: in.Code, Level: in.Level.String(), Fired: in.Fired,
			Value: number(in.Value), Threshold: number(in.Threshold),
			Count: number(in.Count), CountThreshold: number(in.CountThreshold),
			Message: in.Message, Recommendations: in.Recommendations, Files: in.Files}
		if j.Recommendations == nil {
			j.Recommendations = []string{}
		}
		if j.Files == nil {
			j.Files = []string{}
		}
		r.Insights = append(r.Insights, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// insightsCSV writes what Drishti's --export_csv writes: a header, JOB and
// every code in Drishti's order, then one row, the job id and, per code,
// True when the insight was reported (fired), False otherwise.
func insightsCSV(w io.Writer, l *darshan.Log, found []insights.Insight) error {
	fired := map[string]bool{}
	for _, in := range found {
		fired[in.Code] = fired[in.Code] || in.Fired
	}
	header := append([]string{"JOB"}, insights.Codes...)
	row := []string{strconv.FormatInt(l.Job.JobID, 10)}
	for _, c := range insights.Codes {
		row = append(row, map[bool]string{true: "True", false: "False"}[fired[c]])
	}
	cw := csv.NewWriter(w)
	cw.Write(header)
	cw.Write(row)
	cw.Flush()
	return cw.Error()
}

// insightsText is the terminal report: the job, the count of issues, then
// the insights that fired by level (HIGH first) with their numbers, files
// and recommendations, then the codes checked and quiet, and those the log
// could not decide.
func insightsText(w io.Writer, l *darshan.Log, t *insights.Totals, found []insights.Insight) {
	counts := map[insights.Level]int{}
	recs := 0
	for _, in := range found {
		if in.Fired {
			counts[in.Level]++
			recs += len(in.Recommendations)
		}
	}
	exe := l.Exe
	if f := strings.Fields(exe); len(f) > 0 {
		exe = f[0]
	}
	fmt.Fprintf(w, "Darshan log   %s\n", filepath.Base(l.Name))
	fmt.Fprintf(w, "job           %d, %d processes, %.2f s, %s\n", l.Job.JobID, l.Job.NProcs, l.RunTime(), filepath.Base(exe))
	if n := t.Nodes(); n > 0 {
		fmt.Fprintf(w, "nodes (DXT)   %d\n", n)
	}
	fmt.Fprintf(w, "found         %d high, %d warnings, %d info; %d recommendations\n",
		counts[insights.High], counts[insights.Warn], counts[insights.Info], recs)
	for lv := insights.High; ; lv-- {
		first := true
		for _, in := range found {
			if !in.Fired || in.Level != lv {
				continue
			}
			if first {
				fmt.Fprintf(w, "\n%s\n", lv)
				first = false
			}
			fmt.Fprintf(w, "  [%s] %s\n", in.Code, in.Message)
			if nums := numbers(in); nums != "" {
				fmt.Fprintf(w, "        %s\n", nums)
			}
			for _, f := range in.Files {
				fmt.Fprintf(w, "        file: %s\n", f)
			}
			for _, r := range in.Recommendations {
				fmt.Fprintf(w, "        -> %s\n", r)
			}
		}
		if lv == insights.OK {
			break
		}
	}
	var quiet []string
	seen := map[string]bool{}
	for _, in := range found {
		seen[in.Code] = true
		if !in.Fired {
			quiet = append(quiet, in.Code)
		}
	}
	slices.Sort(quiet)
	if len(quiet) > 0 {
		fmt.Fprintf(w, "\nchecked, not triggered: %s\n", strings.Join(quiet, " "))
	}
	var undecided []string
	for _, c := range insights.Codes {
		if !seen[c] {
			undecided = append(undecided, c)
		}
	}
	if len(undecided) > 0 {
		fmt.Fprintf(w, "not decided by this log (module absent, nothing to divide, or no DXT/cb_nodes for M08–M10): %s\n", strings.Join(undecided, " "))
	}
}

// numbers is the value and threshold line of an insight.
func numbers(in insights.Insight) string {
	var parts []string
	if !math.IsNaN(in.Value) {
		p := "value " + num(in.Value)
		if !math.IsNaN(in.Threshold) {
			p += ", threshold " + num(in.Threshold)
		}
		parts = append(parts, p)
	}
	if !math.IsNaN(in.Count) {
		p := "count " + num(in.Count)
		if !math.IsNaN(in.CountThreshold) {
			p += ", threshold " + num(in.CountThreshold)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// num prints counts and byte offsets whole, shares and times to six
// significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
