package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/testkit/darshantest"
)

// runBinary runs bin with args and returns its stdout, stderr and exit
// status. A run that does not end (an exporter started where a usage error
// was due) is killed after a while, so that the test fails rather than
// hangs.
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	return runEnv(t, bin, nil, args...)
}

// helpFlags are the flags a usage text lists in its flags columns: a flag
// line is indented 2 to 6 spaces (kingpin's layout), which leaves out a
// flag named in a description, wrapped or not.
var helpFlagLine = regexp.MustCompile(`(?m)^ {2,6}(?:-[a-zA-Z], )?--(?:\[no-\])?([a-z][a-z0-9._-]*[a-z0-9])`)

func helpFlags(text string) []string {
	var names []string
	for _, m := range helpFlagLine.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

// help runs `bin args… --help` and returns its output, which must be the
// usage of command.
func help(t *testing.T, bin, command string, args ...string) string {
	t.Helper()
	out, errOut, status := runBinary(t, bin, append(args, "--help")...)
	if status != exitOK || !strings.HasPrefix(out, "usage: hpcio_exporter "+command) {
		t.Fatalf("%q --help: status %d, stdout %.300q, stderr %.300q", args, status, out, errOut)
	}
	return out
}

func without(names, drop []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}

// Every one-shot command's --help lists its own flags and none of the
// server's; serve --help and --help-long list every server flag.
func TestCommandFlags(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	top := help(t, bin, "[<flags>] <command>")
	global := helpFlags(top)
	if !slices.Equal(global, []string{"help", "version"}) {
		t.Errorf("global flags %v, want help and version alone", global)
	}
	// The --help text is where the exit statuses are documented.
	for _, want := range []string{`"serve --help"`, "Exit status: 0 ok; 1 ", "2 usage error"} {
		if !strings.Contains(strings.Join(strings.Fields(top), " "), want) {
			t.Errorf("--help lacks %q:\n%s", want, top)
		}
	}

	server := without(helpFlags(help(t, bin, "serve", "serve")), global)
	want := []string{"web.listen-address", "web.config.file", "web.systemd-socket", "web.telemetry-path", "web.max-requests",
		"web.disable-exporter-metrics", "web.openmetrics-created-samples", "web.max-connections", "web.max-connections-per-address", "web.max-password-checks", "web.idle-timeout", "demo", "lustre.lctl-path", "lustre.lnetctl-path", "lustre.timeout",
		"collector.disable-defaults", "darshan.dir", "darshan.max-log-memory", "darshan.state-dir",
		"darshan.max-jobs", "darshan.max-jobs-per-user", "darshan.max-series", "dayu.dir",
		"dayu.max-file-size", "dayu.max-workflows", "dayu.max-stages", promslogflag.LevelFlagName, promslogflag.FormatFlagName}
	for _, c := range collector.Names() {
		want = append(want, "collector."+c)
	}
	for _, f := range want {
		if !slices.Contains(server, f) {
			t.Errorf("serve --help lacks --%s", f)
		}
	}
	long, _, status := runBinary(t, bin, "--help-long")
	if status != exitOK {
		t.Fatalf("--help-long: status %d", status)
	}
	// --help-long lists each command's flags indented under it.
	longFlags := regexp.MustCompile(`(?m)^ {2,8}(?:-[a-zA-Z], )?--(?:\[no-\])?([a-z][a-z0-9._-]*[a-z0-9])`).FindAllStringSubmatch(long, -1)
	for _, f := range server {
		if !slices.ContainsFunc(longFlags, func(m []string) bool { return m[1] == f }) {
			t.Errorf("--help-long lacks --%s", f)
		}
	}

	// Every command but serve, with the flags it declares; the ones named
	// here are checked against what they should declare.
	declared := map[string][]string{"darshan dump": {"dxt", "max-log-memory", "total"}, "darshan signals": {"format", "max-log-memory"}, "dayu graph": {"format", "max-file-size"},
		"report": {"darshan.dir", "format", "from", "insights.config", "jobid", "max-log-memory", "no-paths", "output", "prometheus.config", "prometheus.timeout", "prometheus.url", "to", "top-files"}}
	// Flags a command shares with serve by name, meaning the same thing:
	// report's --darshan.dir is where the sidecar's logs are.
	shared := map[string]bool{"report --darshan.dir": true}
	for _, sc := range subcommands {
		name := sc.cmd.FullCommand()
		var own []string
		for _, f := range sc.cmd.Model().Flags {
			own = append(own, f.Name)
		}
		sort.Strings(own)
		if d, ok := declared[name]; ok && !slices.Equal(own, d) {
			t.Errorf("%s declares %v, want %v", name, own, d)
		}
		delete(declared, name)
		got := without(helpFlags(help(t, bin, name, strings.Fields(name)...)), global)
		if !slices.Equal(got, own) {
			t.Errorf("%s --help lists %v, want its own flags %v", name, got, own)
		}
		for _, f := range got {
			if slices.Contains(server, f) && !shared[name+" --"+f] {
				t.Errorf("%s --help lists the server flag --%s", name, f)
			}
		}
	}
	for name := range declared {
		t.Errorf("no command %q", name)
	}
}

// The exit statuses: 0 ok, 1 bad input, 2 usage.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	dir := t.TempDir()
	data, err := darshantest.Job{JobID: 1, UID: 1, Exe: "/bin/a", End: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Ranks: 2, Bytes: 100}.Log()
	if err != nil {
		t.Fatal(err)
	}
	corrupt, err := darshantest.CorruptPOSIX(data)
	if err != nil {
		t.Fatal(err)
	}
	good, damaged, notLog, missing := filepath.Join(dir, "good.darshan"), filepath.Join(dir, "damaged.darshan"),
		filepath.Join(dir, "text.darshan"), filepath.Join(dir, "missing.darshan")
	for path, data := range map[string][]byte{good: data, damaged: corrupt, notLog: []byte("not a log\n")} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	emptyDir := t.TempDir()

	cases := []struct {
		args   []string
		status int
		stderr string // in the message
	}{
		{[]string{"darshan", "dump", good}, exitOK, ""},
		{[]string{"darshan", "dump", "--total", good}, exitOK, ""},
		{[]string{"darshan", "signals", good}, exitOK, ""},
		{[]string{"darshan", "signals", "--format=table", good}, exitOK, ""},
		{[]string{"--version"}, exitOK, ""},
		{[]string{"darshan", "dump", "--help"}, exitOK, ""},

		{[]string{"darshan", "dump", damaged}, exitFailure, "damaged.darshan"},
		{[]string{"darshan", "dump", "--total", damaged}, exitFailure, "damaged.darshan"},
		{[]string{"darshan", "dump", notLog}, exitFailure, "text.darshan"},
		{[]string{"darshan", "dump", missing}, exitFailure, "missing.darshan"},
		{[]string{"darshan", "signals", damaged}, exitFailure, "damaged.darshan"},
		{[]string{"darshan", "signals", missing}, exitFailure, "missing.darshan"},
		{[]string{"dayu", "graph", emptyDir}, exitFailure, "no readable DaYu stats"},
		{[]string{"dayu", "graph", filepath.Join(dir, "no-such-dir")}, exitFailure, "no-such-dir"},

		// A server flag is unknown to a one-shot command.
		{[]string{"darshan", "dump", "--demo", good}, exitUsage, "unknown long flag '--demo'"},
		{[]string{"darshan", "dump", "--web.listen-address=:9848", good}, exitUsage, "unknown long flag '--web.listen-address'"},
		{[]string{"darshan", "signals", "--log.level=debug", good}, exitUsage, "unknown long flag '--log.level'"},
		{[]string{"dayu", "graph", "--collector.dayu", emptyDir}, exitUsage, "unknown long flag '--collector.dayu'"},
		{[]string{"darshan", "dump", "--no-such-flag", good}, exitUsage, "unknown long flag"},
		{[]string{"darshan", "dump"}, exitUsage, "required argument 'log' not provided"},
		{[]string{"darshan", "signals"}, exitUsage, "required argument 'log' not provided"},
		{[]string{"darshan", "signals", "--format=json", good}, exitUsage, "enum value must be one of tsv,table"},
		{[]string{"dayu", "graph"}, exitUsage, "required argument 'dir' not provided"},
		{[]string{"darshan", "dump", "--total", "--dxt", good}, exitUsage, "--total and --dxt"},
		{[]string{"dayu", "graph", "--format=png", emptyDir}, exitUsage, "dot,mermaid"},
		{[]string{"no-such-command"}, exitUsage, "no-such-command"},
		{[]string{"darshan", "no-such-command"}, exitUsage, "no-such-command"},
		{[]string{"darshan"}, exitUsage, "subcommand"},
		// Unknown at the top and in serve, which the top selects.
		{[]string{"--no-such-flag"}, exitUsage, "unknown long flag '--no-such-flag'"},
		{[]string{"serve", "--no-such-flag"}, exitUsage, "unknown long flag '--no-such-flag'"},
		{[]string{"--web.max-requests=many"}, exitUsage, "many"},
		{[]string{"--web.listen-address"}, exitUsage, "expected argument"},
	}
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		name = strings.ReplaceAll(strings.ReplaceAll(name, dir+"/", ""), emptyDir, "empty-dir")
		t.Run(name, func(t *testing.T) {
			out, errOut, status := runBinary(t, bin, c.args...)
			if status != c.status || !strings.Contains(errOut, c.stderr) {
				t.Errorf("status %d, want %d; stderr %q, want it to hold %q", status, c.status, errOut, c.stderr)
			}
			if c.status == exitUsage && !strings.Contains(errOut, "try --help") {
				t.Errorf("a usage error without the way to help: %q", errOut)
			}
			if c.status == exitOK && out == "" {
				t.Error("no output")
			}
		})
	}
}

// The flags that select the default command, in the unit files' forms and
// every other the server is started with, parse without `serve`: followed
// by --help, the status is 0, where a flag or value kingpin did not take
// would be a usage error. (kingpin prints the top-level help then: it
// parses again for it without the default command. Starting the server
// with them is the end-to-end tests'.)
func TestDefaultCommandFlagForms(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	forms := [][]string{
		{"--web.listen-address", ":9848"},
		{"--web.listen-address=:9848", "--web.listen-address=[::1]:9849"},
		{"--web.config.file=/etc/hpcio-exporter/web-config.yml", "--web.systemd-socket"},
		{"--no-collector.lnet", "--collector.quota"},
		{"--collector.disable-defaults", "--collector.darshan", "--collector.dayu", "--darshan.dir=/d", "--dayu.dir", "/y"},
		{"--log.level", "debug", "--log.format=json"},
		{"--lustre.jobstats.max-series=5", "--no-lustre.jobstats.per-job-series", "--lustre.timeout=3s"},
		{"--demo"},
	}
	for _, unit := range []string{"hpcio-exporter.service", "hpcio-exporter-sidecar.service"} {
		forms = append(forms, unitFlags(t, filepath.Join("..", "..", "deploy", "systemd", unit)))
	}
	for _, args := range forms {
		help(t, bin, "[<flags>] <command>", args...)
	}
	// The control: a flag serve does not have.
	if _, errOut, status := runBinary(t, bin, "--web.listen-address=:9848", "--no-such-flag", "--help"); status != exitUsage {
		t.Errorf("an unknown flag before --help: status %d, %q", status, errOut)
	}
}

// unitFlags returns the flags of a unit's ExecStart (continuation lines
// joined), with the variables of its /etc/default file (shipped beside it
// as NAME.default) expanded as systemd does: the command line a packaged
// install runs.
func unitFlags(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	m := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(text)
	e := regexp.MustCompile(`(?m)^EnvironmentFile=-?/etc/default/(\S+)$`).FindStringSubmatch(text)
	if m == nil || e == nil {
		t.Fatalf("%s: no ExecStart or no EnvironmentFile", path)
	}
	env := map[string]string{}
	defaults, err := os.ReadFile(filepath.Join(filepath.Dir(path), e[1]+".default"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(defaults), "\n") {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(name, "#") {
			env[name] = strings.Trim(value, `"`)
		}
	}
	var flags []string
	for _, f := range strings.Fields(m[1])[1:] {
		if name, ok := strings.CutPrefix(f, "$"); ok {
			flags = append(flags, strings.Fields(env[name])...)
			continue
		}
		flags = append(flags, f)
	}
	if len(flags) < 2 {
		t.Fatalf("%s: flags %q", path, flags)
	}
	return flags
}

// `serve` named explicitly runs the server as the default command does
// (TestEndToEndDemo runs --demo without it).
func TestServeCommand(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startCommand(t, bin, nil, []string{"serve"}, "--demo", "--log.format=json")
	text, _ := scrapeMetrics(t, e, nil)
	if !strings.Contains(text, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`) {
		t.Fatalf("serve --demo: jobstats failed:\n%.2000s", text)
	}
	if !strings.Contains(e.Logs.String(), `"msg":"starting hpcio_exporter"`) {
		t.Errorf("--log.format=json: not JSON:\n%s", e.Logs)
	}
}

// The log flags on serve are promslog/flag's, which only an Application can
// take: same names, help, defaults and values.
func TestLogFlagsAsPromslog(t *testing.T) {
	describe := func(flags []*kingpin.FlagModel) []string {
		var out []string
		for _, f := range flags {
			if strings.HasPrefix(f.Name, "log.") {
				out = append(out, fmt.Sprintf("%s %q %q %T", f.Name, f.Help, f.Default, f.Value))
			}
		}
		return out
	}
	app := kingpin.New("want", "")
	promslogflag.AddFlags(app, &promslog.Config{})
	ours := kingpin.New("got", "")
	cmd := ours.Command("serve", "")
	var cfg promslog.Config
	addLogFlags(cmd, &cfg)
	want, got := describe(app.Model().Flags), describe(cmd.Model().Flags)
	if len(want) != 2 || !slices.Equal(got, want) {
		t.Errorf("log flags\n%q\nwant promslog's\n%q", got, want)
	}
	if _, err := ours.Parse([]string{"serve", "--log.level=warn", "--log.format=json"}); err != nil {
		t.Fatal(err)
	}
	if cfg.Level.String() != "warn" || cfg.Format.String() != "json" {
		t.Errorf("parsed level %s, format %s", cfg.Level, cfg.Format)
	}
	if _, err := ours.Parse([]string{"serve", "--log.level=loud"}); err == nil {
		t.Error("--log.level=loud accepted")
	}
}
