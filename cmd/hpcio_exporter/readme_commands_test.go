package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// Every `hpcio_exporter …` command line of the code blocks of the
// project's documents (commandDocs: README.md, CONTRIBUTING.md and every
// docs/*.md page, where the README's reference text moved) runs as written,
// on this machine, against the project's fixtures or the demo: a server
// starts and every collector it enables succeeds; a one-shot command
// (darshan …, dayu …, --version, --help) exits 0.
//
// A command is a line of a fenced code block whose first word is
// `hpcio_exporter` (or a path ending in /hpcio_exporter, or `go run
// ./cmd/hpcio_exporter`), with its continuation lines (ending in \). Of the
// line, only the exporter runs: a trailing comment, a trailing &, and what
// follows a | or a > (a pipe to dot, a redirection) are left out.
//
// Substitutions, the only changes made to a command (an argument naming a
// path that no rule covers fails the test, so that a new example gets a
// rule rather than being skipped):
//
//   - the binary: the one built from this tree;
//   - --web.listen-address: a free loopback port (added when the command
//     has none; for --demo.fleet.oss=N, N+2 consecutive free ports);
//   - --lustre.lctl-path=PATH: an lctl that prints fixtures/lustre's OSS
//     families and job_stats (families-oss-2.15.txt, jobstats-edge.txt);
//   - --lustre.lnetctl-path=PATH, and lnetctl looked up in $PATH: an lnetctl
//     that prints fixtures/lustre's lnet-*-libyaml.txt (a directory with
//     it, and the same lctl, comes first in $PATH);
//   - --darshan.dir=DIR: a temporary directory holding a Darshan log (the
//     project's writer) of a job that ended a minute ago;
//   - --dayu.dir=DIR: a temporary directory holding fixtures/dayu/json as
//     one run;
//   - the argument LOG: fixtures/darshan/all_modules.darshan;
//   - report's --prometheus.url=URL: a real Prometheus (Debian's) scraping
//     the demo every second, started once when a document has such a
//     command (a command with it is skipped, saying so, without
//     prometheus), with --jobid=ID the demo's MDT storm job, --from and
//     --to the last minutes, --prometheus.config=FILE an empty client
//     configuration; the --darshan.dir of such a command holds a log of
//     that job; -o FILE: a file in a temporary directory;
//   - the DIR of `dayu graph DIR`: fixtures/dayu/json.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts every server the documents show (the fleet example simulates 5,000 jobs)")
	}
	commands := docCommands(t)
	if len(commands) < minDocCommands {
		t.Fatalf("only %d hpcio_exporter commands found in %s: fewer than the %d the documents held when their text moved out of the README; is the extraction broken, or did an example get lost?",
			len(commands), strings.Join(commandDocs(t), ", "), minDocCommands)
	}
	bin := buildExporter(t)
	env := newCommandEnv(t)
	for _, c := range commands {
		if slices.ContainsFunc(c.args, func(a string) bool { return strings.HasPrefix(a, "--prometheus.url=") }) {
			env.startPrometheus(t, bin)
			break
		}
	}
	servers, oneShots := 0, 0
	for _, c := range commands {
		name := fmt.Sprintf("%s:%d", strings.ReplaceAll(c.doc, "/", "_"), c.line)
		t.Run(name, func(t *testing.T) {
			t.Logf("%s:%d: %s", c.doc, c.line, c.text)
			args := env.substitute(t, c.args)
			if isOneShot(args) {
				oneShots++
				env.runOneShot(t, bin, args)
				return
			}
			servers++
			env.runServer(t, bin, args)
		})
	}
	t.Logf("%d servers started, %d one-shot commands run", servers, oneShots)
	if servers == 0 || oneShots == 0 {
		t.Errorf("%d servers and %d one-shot commands: the documents' examples should have both", servers, oneShots)
	}
}

// minDocCommands is how many hpcio_exporter command lines the README held
// before its reference text moved to docs/ (15): the documents together must
// still show at least as many.
const minDocCommands = 15

type readmeCommand struct {
	doc  string // the document, relative to the repository's root
	line int
	text string
	args []string // after the binary
}

// commandDocs returns the documents whose commands run, relative to the
// repository's root: README.md, CONTRIBUTING.md and docs/*.md.
func commandDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(corpus.RepoRoot(), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	docs := []string{"README.md", "CONTRIBUTING.md"}
	for _, p := range pages {
		docs = append(docs, "docs/"+filepath.Base(p))
	}
	return docs
}

// docCommands returns the hpcio_exporter command lines of every document
// of commandDocs, in order.
func docCommands(t *testing.T) []readmeCommand {
	t.Helper()
	var out []readmeCommand
	for _, doc := range commandDocs(t) {
		text, err := os.ReadFile(filepath.Join(corpus.RepoRoot(), doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range readmeCommands(string(text)) {
			c.doc = doc
			out = append(out, c)
		}
	}
	return out
}

var (
	exporterWord = regexp.MustCompile(`^(\S*/)?hpcio_exporter$`)
	fenceLine    = regexp.MustCompile("^\\s*(```|~~~)")
)

// readmeCommands returns the hpcio_exporter command lines of the code
// blocks of a Markdown document.
func readmeCommands(doc string) []readmeCommand {
	var out []readmeCommand
	lines := strings.Split(doc, "\n")
	inFence := false
	for i := 0; i < len(lines); i++ {
		if fenceLine.MatchString(lines[i]) {
			inFence = !inFence
			continue
		}
		if !inFence {
			continue
		}
		start := i
		text := strings.TrimSpace(lines[i])
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(lines[i])
		}
		text = strings.TrimPrefix(text, "$ ")
		words := shellWords(text)
		switch {
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/hpcio_exporter":
			words = words[3:]
		case len(words) >= 1 && exporterWord.MatchString(words[0]):
			words = words[1:]
		default:
			continue
		}
		out = append(out, readmeCommand{line: start + 1, text: text, args: words})
	}
	return out
}

// shellWords splits a command line into words as sh would for these
// examples (quotes, no expansion), stopping at a comment, a pipe, a
// redirection, a command separator or a trailing &.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			flush()
		case !inWord && c == '#', c == '|', c == '>', c == '<', c == ';', c == '&':
			flush()
			return words
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

func isOneShot(args []string) bool {
	for _, a := range args {
		switch a {
		case "--version", "--help", "-h", "--help-long", "--help-man":
			return true
		case "darshan", "dayu", "report":
			return true
		}
	}
	return false
}

// commandEnv holds the fixtures and tools that substitutions point to.
type commandEnv struct {
	promURL    string // a Prometheus scraping the demo, for report
	tools      string // lctl and lnetctl, first in $PATH
	lctl       string
	lnetctl    string
	darshanLog string
	dayuRun    string
	env        []string
}

func newCommandEnv(t *testing.T) *commandEnv {
	t.Helper()
	lustre := corpus.Fixtures(t, "lustre")
	e := &commandEnv{tools: t.TempDir()}
	e.lctl = filepath.Join(e.tools, "lctl")
	e.lnetctl = filepath.Join(e.tools, "lnetctl")
	writeScript(t, e.lctl, fmt.Sprintf("cat '%s' '%s'", filepath.Join(lustre, "families-oss-2.15.txt"), filepath.Join(lustre, "jobstats-edge.txt")))
	writeScript(t, e.lnetctl, fmt.Sprintf(`case "$*" in
"net show -v 4") cat '%s' ;;
"stats show") cat '%s' ;;
*) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac`, filepath.Join(lustre, "lnet-net-show-libyaml.txt"), filepath.Join(lustre, "lnet-stats-show-libyaml.txt")))
	e.darshanLog = filepath.Join(corpus.Fixtures(t, "darshan"), "all_modules.darshan")
	e.dayuRun = corpus.Fixtures(t, "dayu", "json")
	e.env = append(os.Environ(), "PATH="+e.tools+":"+os.Getenv("PATH"))
	return e
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// substitute applies the rules of TestReadmeCommands to a command's
// arguments.
func (e *commandEnv) substitute(t *testing.T, args []string) []string {
	t.Helper()
	out := make([]string, 0, len(args)+1)
	listen := false
	fleet := 0
	dayuGraph := false
	withProm := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--prometheus.url=") })
	if withProm && e.promURL == "" {
		t.Skip("SKIPPED: no prometheus in $PATH (Debian's prometheus package) for report --prometheus.url")
	}
	jobID := int64(4242)
	if withProm {
		jobID = demoStormJob
	}
	for i, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case withProm && name == "--prometheus.url":
			a = name + "=" + e.promURL
		case withProm && name == "--jobid":
			a = name + "=" + strconv.FormatInt(jobID, 10)
		case withProm && name == "--from":
			a = name + "=" + strconv.FormatInt(time.Now().Add(-5*time.Minute).Unix(), 10)
		case withProm && name == "--to":
			a = name + "=" + strconv.FormatInt(time.Now().Unix(), 10)
		case name == "--prometheus.config" && hasValue:
			a = name + "=" + e.promConfig(t)
		case i > 0 && (args[i-1] == "-o" || args[i-1] == "--output"), name == "--output" && hasValue:
			file := filepath.Join(t.TempDir(), filepath.Base(value))
			if !hasValue {
				file = filepath.Join(t.TempDir(), filepath.Base(a))
				a = file
			} else {
				a = name + "=" + file
			}
		case a == "graph" && i > 0 && args[i-1] == "dayu":
			dayuGraph = true
		case name == "--web.listen-address":
			listen = true
			continue // set below
		case name == "--demo.fleet.oss" && hasValue:
			n, err := strconv.Atoi(value)
			if err != nil {
				t.Fatalf("--demo.fleet.oss=%s", value)
			}
			fleet = n
		case name == "--lustre.lctl-path" && hasValue:
			a = name + "=" + e.lctl
		case name == "--lustre.lnetctl-path" && hasValue:
			a = name + "=" + e.lnetctl
		case name == "--darshan.dir" && hasValue:
			a = name + "=" + e.darshanDir(t, jobID)
		case name == "--dayu.dir" && hasValue:
			a = name + "=" + e.dayuDir(t)
		case a == "LOG":
			a = e.darshanLog
		case dayuGraph && strings.HasPrefix(a, "/"):
			a = e.dayuRun
		}
		v := a
		if strings.HasPrefix(a, "-") {
			_, v, _ = strings.Cut(a, "=")
		}
		if strings.Contains(v, "/") && !strings.HasPrefix(v, e.tools) && !strings.HasPrefix(v, os.TempDir()) &&
			!strings.HasPrefix(v, corpus.RepoRoot()) && !(e.promURL != "" && v == e.promURL) {
			t.Fatalf("argument %q names a path that no substitution rule covers: add one to TestReadmeCommands", a)
		}
		out = append(out, a)
	}
	if !isOneShot(out) || listen {
		out = append(out, "--web.listen-address="+exportertest.FreeAddresses(t, 2+fleet))
	}
	return out
}

// darshanDir returns a drop directory holding one recent Darshan log of
// job jobID.
func (e *commandEnv) darshanDir(t *testing.T, jobID int64) string {
	t.Helper()
	dir := t.TempDir()
	end := time.Now().Add(-time.Minute)
	day := filepath.Join(dir, strconv.Itoa(end.Year()), strconv.Itoa(int(end.Month())), strconv.Itoa(end.Day()))
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	log, err := darshantest.Job{JobID: jobID, UID: 1000, Exe: "/apps/sim --in x", End: end, Ranks: 2, Bytes: 1 << 20}.Log()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, fmt.Sprintf("user_sim_id%d-1_1-15-43200-1_1.darshan", jobID)), log, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dayuDir returns a drop directory holding one DaYu run.
func (e *commandEnv) dayuDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", e.dayuRun, filepath.Join(dir, "run1")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dir
}

// runOneShot runs a command that ends and checks it exits 0.
func (e *commandEnv) runOneShot(t *testing.T, bin string, args []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	// A command writing to -o FILE prints nothing: its file holds it.
	output := ""
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--output="); ok {
			output = v
		} else if (a == "-o" || a == "--output") && i+1 < len(args) {
			output = args[i+1]
		}
	}
	if output != "" {
		if fi, err := os.Stat(output); err != nil || fi.Size() == 0 {
			t.Errorf("%s: wrote no %s (%v)", strings.Join(args, " "), output, err)
		}
	} else if stdout.Len() == 0 {
		t.Errorf("%s: printed nothing", strings.Join(args, " "))
	}
}

var collectorSuccessLine = regexp.MustCompile(`(?m)^hpcio_exporter_scrape_collector_success\{collector="([^"]+)"\} (\S+)$`)

// runServer starts a server command and checks that every collector of
// every server it runs succeeds (the fleet's servers are those its
// /demo/fleet lists), after a sidecar has read what its drop directories
// hold.
func (e *commandEnv) runServer(t *testing.T, bin string, args []string) {
	t.Helper()
	var addr string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--web.listen-address="); ok {
			addr = v
		}
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = e.env, &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("its log:\n%s", logs.String())
		}
	}()
	client := &http.Client{Timeout: 60 * time.Second}
	get := func(u string) (string, error) {
		resp, err := client.Get(u)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return string(body), err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := get("http://" + addr + "/"); err == nil {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the server exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not answer on %s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	targets := []string{addr}
	if strings.Contains(strings.Join(args, " "), "--demo.fleet.oss") {
		body, err := get("http://" + addr + "/demo/fleet")
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Targets []string `json:"targets"`
		}
		if err := json.Unmarshal([]byte(body), &groups); err != nil {
			t.Fatal(err)
		}
		targets = nil
		for _, g := range groups {
			targets = append(targets, g.Targets...)
		}
	}
	// A sidecar's drop directory holds one Darshan log, or one DaYu run:
	// both read, the collector had something to succeed on.
	var want []string
	for _, a := range args {
		if strings.HasPrefix(a, "--darshan.dir=") {
			want = append(want, "darshan_logs_processed_total 1")
		}
		if strings.HasPrefix(a, "--dayu.dir=") {
			want = append(want, `dayu_workflow_stages{workflow="run1"}`)
		}
	}
	for _, w := range want {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			text, err := get("http://" + addr + "/metrics")
			if err == nil && strings.Contains(text, w) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 30 s (%v)", w, err)
			}
		}
	}
	for _, target := range targets {
		text, err := get("http://" + target + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m := collectorSuccessLine.FindAllStringSubmatch(text, -1)
		if len(m) == 0 {
			t.Errorf("%s: no hpcio_exporter_scrape_collector_success in the scrape", target)
		}
		var names []string
		for _, c := range m {
			names = append(names, c[1])
			if c[2] != "1" {
				t.Errorf("%s: collector %s failed", target, c[1])
			}
		}
		t.Logf("%s: %d collectors, all checked: %s", target, len(names), strings.Join(names, " "))
	}
}

// demoStormJob is the demo's MDT storm job (lustresim.StormJobID).
const demoStormJob = 90000002

// startPrometheus starts the demo and Debian's Prometheus scraping it
// every second, and waits until Prometheus holds a few samples of the
// demo's storm job: the servers' view of report's examples. Without
// prometheus in $PATH it does nothing (those commands are skipped).
func (e *commandEnv) startPrometheus(t *testing.T, bin string) {
	t.Helper()
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Logf("no prometheus in $PATH: the report commands with --prometheus.url are skipped")
		return
	}
	demo := exportertest.Command("demo", bin, "--demo", "--collector.disable-defaults", "--collector.jobstats")
	demo.Addr = exportertest.FreeAddress(t)
	demo.Cmd.Args = append(demo.Cmd.Args, "--web.listen-address="+demo.Addr)
	demo.Start(t).WaitListening(t, 30*time.Second)
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, []byte("global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n- job_name: lustre\n  static_configs: [{targets: ['"+demo.Addr+"']}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := exportertest.Command("prometheus", prom, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"))
	p.Addr = exportertest.FreeAddress(t)
	p.Cmd.Args = append(p.Cmd.Args, "--web.listen-address="+p.Addr)
	p.Start(t).WaitListening(t, 60*time.Second)
	url := "http://" + p.Addr
	query := url + "/api/v1/query?query=" + "count_over_time(lustre_job_write_bytes_total%7Bjobid%3D%22" + strconv.Itoa(demoStormJob) + "%22%7D%5B1m%5D)"
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		var r struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if resp, err := http.Get(query); err == nil {
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
		}
		// Five samples: rate() and increase() have something to work on.
		if len(r.Data.Result) > 0 {
			if n, _ := r.Data.Result[0].Value[1].(string); len(n) > 0 {
				if count, err := strconv.ParseFloat(n, 64); err == nil && count >= 5 {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus at %s has no five samples of job %d after 90 s", url, demoStormJob)
		}
	}
	e.promURL = url
}

// promConfig returns an HTTP client configuration for Prometheus with
// nothing to set: the server of the examples needs no TLS or auth.
func (e *commandEnv) promConfig(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "prometheus-client.yml")
	if err := os.WriteFile(file, []byte("follow_redirects: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
