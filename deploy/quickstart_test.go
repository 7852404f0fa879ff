package deploy

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The README's quickstart, run as written: the commands between the
// markers below, in bash, from the repository's root, with the ports they
// name (9848 for the demo, 9090 for Prometheus). One substitution: the first
// command's `git clone … && cd …` becomes a cd to this repository (the test
// runs on the clone it is in). The environment is the test's, except that
// GOPATH is a temporary directory (so that `go install` does not write into
// the user's; the module cache stays where it is), GOBIN is unset and TMPDIR
// is the test's (where `mktemp -d` makes Prometheus' storage). Everything the
// commands start is killed with their process group at the end.
//
// It then checks what the section promises: the last command printed
// per-job rates; Prometheus has the demo's per-job rates by jobid; the graph
// URL of the section answers; every target (the demo as a Lustre server and
// as a sidecar) is up with every collector successful, no collector
// scraped by both jobs; Darshan and DaYu series are there.
const (
	quickstartBegin = "<!-- quickstart: begin"
	quickstartEnd   = "<!-- quickstart: end -->"
)

func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the quickstart builds the exporter and runs Prometheus for about a minute")
	}
	needTool(t, "prometheus")
	needTool(t, "curl")
	needTool(t, "bash")
	for _, port := range []string{"9848", "9090"} {
		l, err := net.Listen("tcp", ":"+port)
		if err != nil {
			t.Skipf("port %s is busy (%v): the quickstart runs its commands as written, with their ports; free it to run this test", port, err)
		}
		l.Close()
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	section, commands := quickstartSection(t, readFile(t, filepath.Join(root, "README.md")))
	if n := countCommands(commands); n > 10 {
		t.Errorf("the quickstart has %d commands, more than ten", n)
	}
	lines := strings.Split(commands, "\n")
	clone := regexp.MustCompile(`^git clone \S+ && cd \S+(\s+#.*)?$`)
	if !clone.MatchString(lines[0]) {
		t.Fatalf("the quickstart's first command is not `git clone URL && cd DIR`: %q", lines[0])
	}
	lines[0] = "cd '" + root + "'"
	script := "set -e\n" + strings.Join(lines, "\n") + "\n"

	dir := t.TempDir()
	gomodcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GOPATH", "GOBIN", "GOMODCACHE", "TMPDIR":
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "GOPATH="+filepath.Join(dir, "gopath"), "GOMODCACHE="+strings.TrimSpace(string(gomodcache)), "TMPDIR="+dir)

	// Output to files, not pipes: the commands' background processes
	// outlive the script and would hold a pipe open.
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command("bash", "-c", script)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			out, _ := os.ReadFile(filepath.Join(dir, "stderr"))
			t.Logf("the commands' standard error (last 4 KB):\n%s", out[max(0, len(out)-4096):])
		}
	})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the quickstart's commands failed: %v", err)
		}
	case <-time.After(10 * time.Minute):
		t.Fatal("the quickstart's commands did not end within 10 minutes")
	}
	t.Logf("the quickstart's commands ended after %v", time.Since(begin).Round(time.Second))

	// The last command's answer: per-job rates.
	out, err := os.ReadFile(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Status string `json:"status"`
		Data   struct {
			Result []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatalf("the last command did not print Prometheus' JSON answer: %v\n%.2000s", err, out)
	}
	if answer.Status != "success" || len(answer.Data.Result) < 5 || answer.Data.Result[0].Metric["jobid"] == "" {
		t.Fatalf("the last command printed no per-job rates:\n%.2000s", out)
	}
	t.Logf("the last command printed the rates of %d jobs", len(answer.Data.Result))

	api := promAPI{base: "http://localhost:9090"}
	// The graph of the section: its page answers, its expression has data.
	graph := regexp.MustCompile(`<(http://localhost:9090/graph\?[^>]+)>`).FindStringSubmatch(section)
	if graph == nil {
		t.Fatal("the quickstart section has no <http://localhost:9090/graph?…> link")
	}
	u, err := url.Parse(graph[1])
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(graph[1])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET %s: %s", graph[1], resp.Status)
	}
	expr := u.Query().Get("g0.expr")
	if !strings.Contains(expr, "lustre_job_") || !strings.Contains(expr, "jobid") {
		t.Errorf("the graph link draws %q, not per-job rates", expr)
	}
	if s, err := api.query(expr, time.Time{}); err != nil || len(s) < 5 {
		t.Errorf("the graph's expression %s: %d series, %v", expr, len(s), err)
	}
	// Per-job rates of every kind the demo has.
	for _, q := range []string{
		`sum by (jobid) (rate(lustre_job_write_bytes_total[1m]))`,
		`sum by (jobid) (rate(lustre_job_read_bytes_total[1m]))`,
		`sum by (jobid) (rate(lustre_job_stats_total{component="mdt"}[1m]))`,
	} {
		if s, err := api.query(q, time.Time{}); err != nil || len(s) < 5 {
			t.Errorf("%s: %d jobs, %v", q, len(s), err)
		}
	}

	// Every target up, every collector successful, each collector in one
	// job only (collect[] splits the demo into a server and a sidecar).
	if s, err := api.query(`up`, time.Time{}); err != nil || len(s) != 2 {
		t.Errorf("targets: %v (%v), want the demo twice: lustre-oss and hpcio-sidecar", s, err)
	} else {
		for _, x := range s {
			if x.value() != 1 {
				t.Errorf("target %v is down", x.Metric)
			}
		}
	}
	if s, err := api.query(`hpcio_exporter_scrape_collector_success == 0`, time.Time{}); err != nil || len(s) > 0 {
		t.Errorf("failing collectors: %v (%v)", s, err)
	}
	if s, err := api.query(`count by (collector) (hpcio_exporter_scrape_collector_success) > 1`, time.Time{}); err != nil || len(s) > 0 {
		t.Errorf("collectors scraped by both jobs (collect[] not honoured?): %v (%v)", s, err)
	}
	for _, q := range []string{`count(darshan_job_read_bytes{job="hpcio-sidecar"})`, `count(dayu_workflow_stages{job="hpcio-sidecar"})`,
		`count(lustre_job_write_bytes_total{job="lustre-oss"})`} {
		if s, err := api.query(q, time.Time{}); err != nil || len(s) == 0 {
			t.Errorf("%s: no data (%v): the demo should serve it", q, err)
		}
	}
}

// The quickstart's configuration, without running it: Debian's Prometheus
// 2.42 accepts it (promtool check config, which also reads the rules it
// takes from ../prometheus/rules), and its two jobs, which scrape the one
// demo, ask with collect[] for every collector the demo runs (every
// collector enabled by default: the demo gives darshan and dayu their
// drop directories), each collector in exactly one job, the sidecar's in
// hpcio-sidecar: no series stored twice, none missing.
func TestQuickstartConfig(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	if out, err := run(t, promtool, "check", "config", "quickstart/prometheus.yml"); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	} else if !strings.Contains(out, "2 rule files found") {
		t.Errorf("quickstart/prometheus.yml does not load deploy/'s two rule files:\n%s", out)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string              `yaml:"job_name"`
			Params        map[string][]string `yaml:"params"`
			FileSDConfigs []struct {
				Files []string `yaml:"files"`
			} `yaml:"file_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "quickstart/prometheus.yml")), &cfg); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, exporterBinary(t), "--help-long")
	if err != nil {
		t.Fatalf("hpcio_exporter --help-long: %v\n%s", err, out)
	}
	defaults := map[string]bool{}
	help := strings.Join(strings.Fields(out), " ")
	for _, m := range regexp.MustCompile(`--\[no-\]collector\.(\w+) Enable the \w+ collector \(default: (enabled|disabled)\)`).FindAllStringSubmatch(help, -1) {
		if m[2] == "enabled" {
			defaults[m[1]] = true
		}
	}
	if len(defaults) < 5 {
		t.Fatalf("only %d collectors enabled by default found in --help-long", len(defaults))
	}
	jobOf := map[string]string{}
	for _, sc := range cfg.ScrapeConfigs {
		if len(sc.FileSDConfigs) != 1 || len(sc.FileSDConfigs[0].Files) != 1 || sc.FileSDConfigs[0].Files[0] != "targets/demo.yml" {
			t.Errorf("job %s does not scrape targets/demo.yml", sc.JobName)
		}
		for _, c := range sc.Params["collect[]"] {
			switch {
			case !defaults[c]:
				t.Errorf("job %s asks for %s, which the demo does not run", sc.JobName, c)
			case jobOf[c] != "":
				t.Errorf("jobs %s and %s both ask for %s: its series would be stored twice", jobOf[c], sc.JobName, c)
			}
			jobOf[c] = sc.JobName
		}
	}
	for c := range defaults {
		want := "lustre-oss"
		if c == "darshan" || c == "dayu" {
			want = "hpcio-sidecar"
		}
		if jobOf[c] != want {
			t.Errorf("collector %s is scraped by %q, want %s", c, jobOf[c], want)
		}
	}
	targets := readFile(t, "quickstart/targets/demo.yml")
	if !strings.Contains(targets, "'localhost:9848'") {
		t.Errorf("quickstart/targets/demo.yml does not list the demo at localhost:9848:\n%s", targets)
	}
}

// quickstartSection returns the README's Quickstart section and the
// commands of its marked code block.
func quickstartSection(t *testing.T, readme string) (section, commands string) {
	t.Helper()
	start := strings.Index(readme, "\n## Quickstart\n")
	if start < 0 {
		t.Fatal("README.md has no ## Quickstart section")
	}
	section = readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	b := strings.Index(section, quickstartBegin)
	e := strings.Index(section, quickstartEnd)
	if b < 0 || e < b {
		t.Fatalf("the Quickstart section has no %q … %q markers", quickstartBegin, quickstartEnd)
	}
	block := section[b:e]
	fenceStart := strings.Index(block, "```sh\n")
	fenceEnd := strings.LastIndex(block, "```")
	if fenceStart < 0 || fenceEnd <= fenceStart {
		t.Fatal("no ```sh block between the quickstart markers")
	}
	return section, strings.TrimSpace(block[fenceStart+len("```sh\n") : fenceEnd])
}

// countCommands counts the commands of a script: each line's commands
// joined by && or ;, comments left out.
func countCommands(script string) int {
	n := 0
	for _, line := range strings.Split(script, "\n") {
		line = stripComment(line)
		if strings.TrimSpace(line) == "" {
			continue
		}
		n += 1 + strings.Count(line, "&&") + strings.Count(line, ";")
	}
	return n
}

// stripComment drops a shell comment (a # after a space, outside quotes).
func stripComment(line string) string {
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i]
		}
	}
	return line
}
