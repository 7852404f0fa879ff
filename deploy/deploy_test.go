package deploy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ---------------------------------------------------------------- Grafana

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type target struct {
	RefID      string `json:"refId"`
	Expr       string `json:"expr"`
	Datasource *dsRef `json:"datasource"`
	Instant    bool   `json:"instant"`
	Format     string `json:"format"`
}

type panel struct {
	ID         int      `json:"id"`
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	Datasource *dsRef   `json:"datasource"`
	Targets    []target `json:"targets"`
	Panels     []panel  `json:"panels"` // a collapsed row's panels
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Transformations []struct {
		ID      string         `json:"id"`
		Options map[string]any `json:"options"`
	} `json:"transformations"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	Datasource *dsRef          `json:"datasource"`
}

type dashboard struct {
	file          string
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Panels        []panel
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string `json:"name"`
			Datasource *dsRef `json:"datasource"`
			Expr       string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

// allPanels flattens rows.
func (d *dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// variableQuery returns a query variable's PromQL (label_values(…) etc.).
func (v variable) variableQuery() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	json.Unmarshal(v.Query, &o)
	return o.Query
}

func loadDashboards(t testing.TB) []*dashboard {
	t.Helper()
	var out []*dashboard
	for _, f := range globFiles(t, "grafana/dashboards/*.json") {
		var d dashboard
		if err := json.Unmarshal([]byte(readFile(t, f)), &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d.file = filepath.Base(f)
		out = append(out, &d)
	}
	return out
}

// The data source every panel, target, variable and annotation must use:
// the dashboard's own variable, so that one import works on any Grafana.
const dsVar = "${datasource}"

var (
	// Grafana's built-in variables.
	builtinVars = map[string]bool{"__rate_interval": true, "__interval": true, "__interval_ms": true, "__range": true,
		"__range_s": true, "__range_ms": true, "__from": true, "__to": true, "__name": true}
	// $name or ${name}; $1 of label_replace is no variable.
	varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	// label lists of by, without, on, ignoring, group_left, group_right.
	labelList = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	panelKind = map[string]bool{"row": true, "timeseries": true, "stat": true, "table": true, "bargauge": true,
		"heatmap": true, "nodeGraph": true, "gauge": true, "barchart": true, "text": true}
)

// checkIdentityLabels reports expressions that treat Prometheus' job or
// instance as a job's identity: a label list that mixes them with jobid or
// uid, `job` without `instance` (the scrape job alone is never what one
// groups HPC data by), or a job matcher fed with $jobid.
func checkIdentityLabels(expr string) []string {
	var bad []string
	for _, m := range labelList.FindAllStringSubmatch(expr, -1) {
		labels := map[string]bool{}
		for _, l := range strings.Split(m[2], ",") {
			labels[strings.TrimSpace(l)] = true
		}
		if (labels["job"] || labels["instance"]) && (labels["jobid"] || labels["uid"]) {
			bad = append(bad, m[0]+": job/instance mixed with the job identity")
		}
		if labels["job"] && !labels["instance"] {
			bad = append(bad, m[0]+": the scrape job without its instance")
		}
	}
	if regexp.MustCompile(`\b(job|instance)\s*=~?\s*"\$\{?jobid`).MatchString(expr) {
		bad = append(bad, "job or instance matched against $jobid")
	}
	return bad
}

// Dashboards: valid JSON, unique uids and panel ids, the data source
// variable everywhere, sane layout, defined template variables, and the
// panels the issue asks for.
func TestDashboards(t *testing.T) {
	t.Parallel()
	dashboards := loadDashboards(t)
	uids := map[string]string{}
	titles := map[string]bool{}
	for _, d := range dashboards {
		t.Run(d.file, func(t *testing.T) {
			if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
				t.Errorf("uid %q, title %q, schemaVersion %d", d.UID, d.Title, d.SchemaVersion)
			}
			if other, ok := uids[d.UID]; ok {
				t.Errorf("uid %s also in %s", d.UID, other)
			}
			uids[d.UID] = d.file
			titles[d.Title] = true

			defined := map[string]bool{}
			for i, v := range d.Templating.List {
				defined[v.Name] = true
				if i == 0 && (v.Name != "datasource" || v.Type != "datasource" || strings.Trim(string(v.Query), `"`) != "prometheus") {
					t.Errorf("the first variable must be the Prometheus data source variable, got %s (%s)", v.Name, v.Type)
				}
				if v.Type == "query" {
					if v.Datasource == nil || v.Datasource.UID != dsVar {
						t.Errorf("variable %s does not use %s", v.Name, dsVar)
					}
					if v.variableQuery() == "" {
						t.Errorf("variable %s has no query", v.Name)
					}
				}
			}
			if !defined["datasource"] {
				t.Fatal("no datasource variable")
			}
			for _, a := range d.Annotations.List {
				if a.Datasource == nil || a.Datasource.UID != dsVar {
					t.Errorf("annotation %q does not use %s", a.Name, dsVar)
				}
			}

			ids := map[int]string{}
			queries := 0
			for _, p := range d.allPanels() {
				where := "panel " + p.Title
				if prev, ok := ids[p.ID]; ok || p.ID <= 0 {
					t.Errorf("%s: id %d not unique (also %q)", where, p.ID, prev)
				}
				ids[p.ID] = p.Title
				if !panelKind[p.Type] {
					t.Errorf("%s: unknown panel type %q", where, p.Type)
				}
				g := p.GridPos
				if g.W < 1 || g.H < 1 || g.X < 0 || g.X+g.W > 24 || g.Y < 0 {
					t.Errorf("%s: gridPos %+v", where, g)
				}
				if p.Type == "row" {
					continue
				}
				if p.Title == "" {
					t.Errorf("panel %d has no title", p.ID)
				}
				if p.Datasource == nil || p.Datasource.UID != dsVar || p.Datasource.Type != "prometheus" {
					t.Errorf("%s: data source %+v, want prometheus %s", where, p.Datasource, dsVar)
				}
				if len(p.Targets) == 0 {
					t.Errorf("%s: no queries", where)
				}
				refs := map[string]bool{}
				for _, q := range p.Targets {
					queries++
					if q.Datasource == nil || q.Datasource.UID != dsVar {
						t.Errorf("%s, query %s: data source %+v, want %s", where, q.RefID, q.Datasource, dsVar)
					}
					if strings.TrimSpace(q.Expr) == "" || q.RefID == "" || refs[q.RefID] {
						t.Errorf("%s: query %q with refId %q (empty or repeated)", where, q.Expr, q.RefID)
					}
					refs[q.RefID] = true
					for _, m := range varRef.FindAllStringSubmatch(q.Expr, -1) {
						if name := m[1] + m[2]; !defined[name] && !builtinVars[name] {
							t.Errorf("%s: $%s is not a variable of the dashboard", where, name)
						}
					}
					for _, b := range checkIdentityLabels(q.Expr) {
						t.Errorf("%s: %s", where, b)
					}
					if p.Type == "heatmap" && q.Format != "heatmap" {
						t.Errorf("%s: heatmap query not in heatmap format", where)
					}
				}
				if p.Type == "nodeGraph" {
					// The node graph needs one instant table with id,
					// source, target and mainstat (collector/dayu.go).
					q := p.Targets[0]
					if !q.Instant || q.Format != "table" || !strings.Contains(q.Expr, `"id", " -> ", "source", "target"`) {
						t.Errorf("%s: not the documented instant table query with id, source, target", where)
					}
					renamed := false
					for _, tr := range p.Transformations {
						if r, ok := tr.Options["renameByName"].(map[string]any); ok && r["Value"] == "mainstat" {
							renamed = true
						}
					}
					if !renamed {
						t.Errorf("%s: Value is not renamed to mainstat", where)
					}
				}
			}
			if queries == 0 {
				t.Error("no queries")
			}
		})
	}

	// What the issue asks of each dashboard, by the words of its panels'
	// titles and queries.
	want := map[string][]string{
		"lustre-overview.json": {"Write throughput per OST", "Read RPCs per OST", "Metadata operations per MDT",
			"Space used per target", "Inodes used per target", "Servers not healthy", "Recovery status", "LNet interface health"},
		"jobs.json": {"Top jobs by bytes moved", "Top users by bytes moved", "Job write rates on OSTs",
			"Writes of $jobid per target", "Darshan signals of $jobid"},
		"darshan.json": {"POSIX access pattern", "Bytes per layer", "Burstiness per layer", "Insights of $jobid",
			"Lustre servers' view of $jobid: bytes per OST", "Lustre servers' view of $jobid: metadata"},
		"workflows.json": {"Dataflow"},
	}
	for _, d := range dashboards {
		have := map[string]bool{}
		for _, p := range d.allPanels() {
			have[p.Title] = true
		}
		for _, title := range want[d.file] {
			if !have[title] {
				t.Errorf("%s: no panel %q", d.file, title)
			}
		}
		delete(want, d.file)
	}
	for f := range want {
		t.Errorf("dashboard %s missing", f)
	}
	// The drill-down joins Lustre and Darshan through jobid.
	for _, d := range dashboards {
		if d.file != "jobs.json" {
			continue
		}
		joined := false
		for _, p := range d.allPanels() {
			for _, q := range p.Targets {
				if strings.Contains(q.Expr, "lustre_job_") && strings.Contains(q.Expr, "darshan_job_") && strings.Contains(q.Expr, "on (jobid)") {
					joined = true
				}
			}
		}
		if !joined {
			t.Error("jobs.json: no query joins lustre_job_* and darshan_job_* on (jobid)")
		}
	}
}

// ---------------------------------------------------------------- rules

type ruleDef struct {
	kind, name, file string
	body             string // the rule's lines
	severity         string
}

var ruleStart = regexp.MustCompile(`(?m)^\s*- (alert|record): *(\S+)\s*$`)

// loadRules splits the rule files into rules. The files are this
// repository's, in one style; promtool checks their syntax.
func loadRules(t testing.TB) []ruleDef {
	t.Helper()
	var out []ruleDef
	for _, f := range globFiles(t, "prometheus/rules/*.rules.yml") {
		text := readFile(t, f)
		idx := ruleStart.FindAllStringSubmatchIndex(text, -1)
		for i, m := range idx {
			end := len(text)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			r := ruleDef{kind: text[m[2]:m[3]], name: text[m[4]:m[5]], file: filepath.Base(f), body: text[m[0]:end]}
			if s := regexp.MustCompile(`(?m)^\s+severity: *(\S+)`).FindStringSubmatch(r.body); s != nil {
				r.severity = s[1]
			}
			out = append(out, r)
		}
	}
	return out
}

var recordName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*:[a-z][a-z0-9_]*:[a-z0-9_]+$`)

// Rule conventions: level:metric:operations names, severities that
// Alertmanager routes, annotations, no job/instance as job identity.
func TestRuleConventions(t *testing.T) {
	t.Parallel()
	rules := loadRules(t)
	if len(rules) < 40 {
		t.Fatalf("%d rules found: the file layout changed?", len(rules))
	}
	for _, r := range rules {
		switch r.kind {
		case "record":
			if !recordName.MatchString(r.name) {
				t.Errorf("%s: not level:metric:operations", r.name)
			}
			level := strings.Split(strings.SplitN(r.name, ":", 2)[0], "_")
			if slices.Contains(level, "job") || slices.Contains(level, "instance") {
				t.Errorf("%s: aggregated by job/instance", r.name)
			}
		case "alert":
			if !slices.Contains([]string{"critical", "warning", "info"}, r.severity) {
				t.Errorf("%s: severity %q", r.name, r.severity)
			}
			for _, a := range []string{"summary:", "description:"} {
				if !strings.Contains(r.body, a) {
					t.Errorf("%s: no %s annotation", r.name, a)
				}
			}
		}
		for _, b := range checkIdentityLabels(r.body) {
			t.Errorf("%s: %s", r.name, b)
		}
	}
}

// promtool check config and check rules.
func TestPromtoolCheck(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	if out, err := run(t, promtool, "check", "config", "prometheus/prometheus.yml"); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	} else if !strings.Contains(out, "2 rule files found") {
		t.Errorf("prometheus.yml does not load both rule files:\n%s", out)
	}
	args := append([]string{"check", "rules"}, globFiles(t, "prometheus/rules/*.yml")...)
	if out, err := run(t, promtool, args...); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// promtool test rules on every test file, and every rule has a test: each
// recording rule is the expression of a promql_expr_test, each alert has a
// case where it fires (with each of its severities) and one where it
// does not.
func TestPromtoolTestRules(t *testing.T) {
	t.Parallel()
	promtool := needTool(t, "promtool")
	files := globFiles(t, "prometheus/tests/*.test.yml")
	exprTested := map[string]bool{}
	fired := map[string]map[string]bool{} // alert → severities expected
	quiet := map[string]bool{}            // alert with an empty exp_alerts case
	exprLine := regexp.MustCompile(`^\s*- expr: *(.+)$`)
	nameLine := regexp.MustCompile(`^\s*alertname: *(\S+)`)
	sevLine := regexp.MustCompile(`^\s*severity: *(\S+)`)
	for _, f := range files {
		var current string
		for _, line := range strings.Split(readFile(t, f), "\n") {
			if m := exprLine.FindStringSubmatch(line); m != nil {
				for _, w := range regexp.MustCompile(`[a-z_]+:[a-z_0-9]+:[a-z_0-9]+`).FindAllString(m[1], -1) {
					exprTested[w] = true
				}
			}
			if m := nameLine.FindStringSubmatch(line); m != nil {
				current = m[1]
				if fired[current] == nil {
					fired[current] = map[string]bool{}
				}
			}
			if current != "" && strings.Contains(line, "exp_alerts: []") {
				quiet[current] = true
			}
			if m := sevLine.FindStringSubmatch(line); m != nil && current != "" {
				fired[current][m[1]] = true
			}
			if strings.Contains(line, "- eval_time:") {
				current = ""
			}
		}
	}
	for _, r := range loadRules(t) {
		switch r.kind {
		case "record":
			if !exprTested[r.name] {
				t.Errorf("recording rule %s has no promql_expr_test", r.name)
			}
		case "alert":
			if !fired[r.name][r.severity] {
				t.Errorf("alert %s (%s) is never expected to fire in a test", r.name, r.severity)
			}
			if !quiet[r.name] {
				t.Errorf("alert %s has no test where it must not fire", r.name)
			}
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			// promtool resolves rule_files relative to the test file.
			if out, err := run(t, promtool, "test", "rules", f); err != nil {
				t.Errorf("promtool test rules %s: %v\n%s", f, err, out)
			}
		})
	}
}

// ---------------------------------------------------------------- Alertmanager

// Alertmanager's example is valid and routes each severity the rules use
// to its receiver.
func TestAlertmanagerConfig(t *testing.T) {
	t.Parallel()
	amtool := needTool(t, "amtool")
	cfg := "alertmanager/alertmanager.yml"
	if out, err := run(t, amtool, "check-config", cfg); err != nil {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}
	receivers := map[string]string{"critical": "storage-oncall", "warning": "storage-team", "info": "user-support"}
	used := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.kind == "alert" {
			used[r.severity] = true
		}
	}
	for sev := range used {
		recv, ok := receivers[sev]
		if !ok {
			t.Errorf("severity %s has no expected receiver", sev)
			continue
		}
		out, err := run(t, amtool, "config", "routes", "test", "--config.file="+cfg, "--verify.receivers="+recv, "severity="+sev)
		if err != nil {
			t.Errorf("severity=%s does not route to %s: %v\n%s", sev, recv, err, out)
		}
	}
}

// ---------------------------------------------------------------- systemd

// execStart returns a unit's ExecStart arguments, continuation lines
// joined, with the variables of its EnvironmentFile expanded as systemd
// does ($VAR: the value split at white space): the flags a packaged
// install runs with, the unit's own and those of /etc/default.
func execStart(t testing.TB, unit string) []string {
	t.Helper()
	text := strings.ReplaceAll(readFile(t, unit), "\\\n", " ")
	m := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s: no ExecStart", unit)
	}
	env := unitEnvironment(t, unit, text)
	var args []string
	for _, a := range strings.Fields(m[1]) {
		if name, ok := strings.CutPrefix(a, "$"); ok {
			v, ok := env[name]
			if !ok {
				t.Fatalf("%s: $%s is not set in its EnvironmentFile", unit, name)
			}
			args = append(args, strings.Fields(v)...)
			continue
		}
		args = append(args, a)
	}
	return args
}

// unitEnvironment reads the variables of a unit's EnvironmentFile
// (/etc/default/NAME, shipped as systemd/NAME.default): NAME="value"
// lines, comments and blank lines skipped.
func unitEnvironment(t testing.TB, unit, text string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^EnvironmentFile=-?/etc/default/(\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s: no EnvironmentFile in /etc/default", unit)
	}
	file := filepath.Join(filepath.Dir(unit), m[1]+".default")
	env := map[string]string{}
	for i, line := range strings.Split(readFile(t, file), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || !regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`).MatchString(name) {
			t.Fatalf("%s:%d: not NAME=value: %q", file, i+1, line)
		}
		if unq, err := strconv.Unquote(value); err == nil {
			value = unq
		}
		env[name] = value
	}
	return env
}

// exporterFlags returns the flags hpcio_exporter accepts, and its collectors.
func exporterFlags(t testing.TB) (flags map[string]bool, collectors []string) {
	t.Helper()
	out, err := run(t, exporterBinary(t), "--help-long")
	if err != nil {
		t.Fatalf("hpcio_exporter --help-long: %v\n%s", err, out)
	}
	flags = map[string]bool{}
	for _, m := range regexp.MustCompile(`--(\[no-\])?([a-z][a-z0-9._-]*)`).FindAllStringSubmatch(out, -1) {
		flags[m[2]] = true
		if m[1] != "" {
			flags["no-"+m[2]] = true
		}
		if c, ok := strings.CutPrefix(m[2], "collector."); ok && m[1] != "" && c != "disable-defaults" && !slices.Contains(collectors, c) {
			collectors = append(collectors, c)
		}
	}
	sort.Strings(collectors)
	return flags, collectors
}

// sidecarCollectors are the collectors of sidecar mode.
var sidecarCollectors = []string{"darshan", "dayu"}

// The units: every flag of their command lines is one the exporter takes,
// the sidecar turns off every collector that would run lctl or lnetctl,
// and systemd-analyze verify (where it exists) has nothing to say.
func TestSystemdUnits(t *testing.T) {
	t.Parallel()
	flags, collectors := exporterFlags(t)
	if len(collectors) < 10 {
		t.Fatalf("collectors from --help-long: %v", collectors)
	}
	units := globFiles(t, "systemd/*.service")
	for _, u := range units {
		cmd := execStart(t, u)
		if cmd[0] != "/usr/bin/hpcio_exporter" {
			t.Errorf("%s: runs %s, not the packaged /usr/bin/hpcio_exporter", u, cmd[0])
		}
		for _, a := range cmd[1:] {
			if !strings.HasPrefix(a, "--") {
				t.Errorf("%s: argument %q is not a flag", u, a)
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !flags[name] {
				t.Errorf("%s: hpcio_exporter has no flag --%s", u, name)
			}
		}
	}
	side := execStart(t, "systemd/hpcio-exporter-sidecar.service")
	if !slices.Contains(side, "--collector.disable-defaults") {
		t.Error("sidecar unit: the collectors are left at their defaults (no --collector.disable-defaults)")
	}
	for _, c := range collectors {
		on := slices.Contains(side, "--collector."+c)
		if slices.Contains(sidecarCollectors, c) != on {
			t.Errorf("sidecar unit: collector %s is %s", c, map[bool]string{true: "on", false: "off"}[on])
		}
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: units not verified")
		return
	}
	// verify checks that ExecStart's binary exists: give it a root with
	// the units, a stand-in binary and the system's own units.
	root := t.TempDir()
	for _, dir := range []string{"etc/systemd/system", "usr/bin", "usr/lib/systemd"} {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/bin/hpcio_exporter"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "cp", "-r", "/usr/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/")); err != nil {
		t.Logf("no system units to verify against (%v %s): units not verified", err, out)
		return
	}
	args := []string{"verify", "--root=" + root}
	for _, u := range units {
		data := readFile(t, u)
		if err := os.WriteFile(filepath.Join(root, "etc/systemd/system", filepath.Base(u)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "/etc/systemd/system/"+filepath.Base(u))
	}
	out, err := run(t, analyze, args...)
	if err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The web configuration example works: with a certificate in its place,
// the exporter serves TLS only, to the user and password it documents.
func TestWebConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certPEM, keyPEM, pool := selfSigned(t)
	os.WriteFile(filepath.Join(dir, "server.crt"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "server.key"), keyPEM, 0o600)
	cfg := readFile(t, "systemd/web-config.yml")
	for _, f := range []string{"server.crt", "server.key"} {
		old := "/etc/hpcio-exporter/tls/" + f
		if !strings.Contains(cfg, old) {
			t.Fatalf("web-config.yml no longer names %s", old)
		}
		cfg = strings.ReplaceAll(cfg, old, filepath.Join(dir, f))
	}
	cfgPath := filepath.Join(dir, "web-config.yml")
	os.WriteFile(cfgPath, []byte(cfg), 0o600)

	_, collectors := exporterFlags(t)
	addr := freePort(t)
	args := []string{"--web.listen-address=" + addr, "--web.config.file=" + cfgPath}
	for _, c := range collectors {
		args = append(args, "--no-collector."+c) // nothing to collect but the exporter's own
	}
	p := start(t, "exporter with web-config.yml", exporterBinary(t), args...)

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(user, pass string) (int, error) {
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, err := get("prometheus", "change-me")
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("https with the documented user: %d %v\n%s", code, err, p.Tail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, err := get("prometheus", "wrong"); err != nil || code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d %v", code, err)
	}
	if code, err := get("", ""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("no password: %d %v", code, err)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served metrics")
		}
	}
}

// selfSigned makes a certificate for 127.0.0.1.
func selfSigned(t testing.TB) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), pool
}
