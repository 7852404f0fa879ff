package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFillStamp(t *testing.T) {
	vcs := func(mainVersion string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/hpcio/hpcio_exporter", Version: mainVersion}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev, date = "0123456789abcdef0123456789abcdef01234567", "2026-01-02T03:04:05Z"
	goBuild := vcs("v0.3.1-0.20260102030405-0123456789ab+dirty", "vcs", "git", "vcs.revision", rev, "vcs.time", date, "vcs.modified", "true")
	cases := []struct {
		name string
		in   buildStamp
		bi   *debug.BuildInfo
		want buildStamp
	}{
		{"make build: kept", buildStamp{"0.2.0", rev[:12], "20260101-00:00:00"}, goBuild, buildStamp{"0.2.0", rev[:12], "20260101-00:00:00"}},
		{"go build in a checkout", buildStamp{}, goBuild, buildStamp{"0.3.1-0.20260102030405-0123456789ab+dirty", "", date}},
		{"go install @version", buildStamp{}, vcs("v0.2.0"), buildStamp{"0.2.0", "", ""}},
		{"go build without vcs", buildStamp{}, vcs("(devel)"), buildStamp{devVersion, "", ""}},
		{"go run: vcs.time only", buildStamp{}, vcs("(devel)", "vcs.time", date), buildStamp{devVersion, "", date}},
		{"no version from go", buildStamp{}, vcs(""), buildStamp{devVersion, "", ""}},
		{"no build info", buildStamp{}, nil, buildStamp{devVersion, "", ""}},
		// A build that could not ask git: version.GetRevision takes over.
		{"revision unknown", buildStamp{"0.2.0", "unknown", ""}, goBuild, buildStamp{"0.2.0", "", date}},
	}
	for _, c := range cases {
		if got := fillStamp(c.in, c.bi); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A plain go build of a git checkout reports what the go command stamped:
// the tag as version, the commit and its time, "-modified" (and the
// module's "+dirty") once the tree changes; hpcio_exporter_build_info
// says the same. The sources the binary needs are copied into a fresh
// repository, because the go command stamps nothing in a linked git
// worktree (golang/go#58218: it looks for a .git directory) and the
// repository's own history is not the test's to choose.
func TestVersionFromGoBuild(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	copyModuleSources(t, repo)
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z", "GOWORK=off")
	command := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	command("git", "init", "-q")
	command("git", "add", "-A")
	command("git", "commit", "-q", "-m", "version test")
	command("git", "tag", "v1.2.3")
	rev := command("git", "rev-parse", "HEAD")
	build := func() string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), "hpcio_exporter")
		// -buildvcs=true: a GOFLAGS=-buildvcs=false of the environment
		// would leave nothing to test. -trimpath: what is compiled does
		// not depend on the temporary directory, so the build cache
		// serves every run after the first.
		command("go", "build", "-buildvcs=true", "-trimpath", "-o", bin, "./cmd/hpcio_exporter")
		return bin
	}

	bin := build()
	out, _, status := runBinary(t, bin, "--version")
	for _, want := range []string{"hpcio_exporter, version 1.2.3 (", "revision: " + rev + ")", "build date:       2026-01-02T03:04:05Z"} {
		if status != exitOK || !strings.Contains(out, want) {
			t.Errorf("--version lacks %q: status %d\n%s", want, status, out)
		}
	}
	e := startExporter(t, bin, "--collector.disable-defaults")
	text, _ := scrapeMetrics(t, e, nil)
	info := regexp.MustCompile(`(?m)^hpcio_exporter_build_info\{.*\} 1$`).FindString(text)
	for _, want := range []string{`revision="` + rev + `"`, `version="1.2.3"`} {
		if !strings.Contains(info, want) {
			t.Errorf("build_info lacks %s: %q", want, info)
		}
	}

	if err := os.WriteFile(filepath.Join(repo, "untracked"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runBinary(t, build(), "--version")
	for _, want := range []string{"version 1.2.3+dirty (", "revision: " + rev + "-modified)"} {
		if !strings.Contains(out, want) {
			t.Errorf("modified tree: --version lacks %q:\n%s", want, out)
		}
	}
}

// copyModuleSources copies go.mod, go.sum and the files of every package
// of this module that the exporter is built from into dst.
func copyModuleSources(t *testing.T, dst string) {
	t.Helper()
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.TrimSpace(string(root))
	list, err := exec.Command("go", "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .CgoFiles}}{{$d}}/{{.}}
{{end}}{{range .SFiles}}{{$d}}/{{.}}
{{end}}{{range .HFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(mod, "go.mod"), filepath.Join(mod, "go.sum")}
	for _, f := range strings.Split(string(list), "\n") {
		if f != "" {
			files = append(files, f)
		}
	}
	for _, f := range files {
		rel, err := filepath.Rel(mod, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%s is outside the module %s", f, mod)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d files to build the exporter from", len(files))
	}
}

// The version of a build that knows none is the coming release's, from
// the VERSION file that `make build` stamps.
func TestDevVersionFollowsVersionFile(t *testing.T) {
	data, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(data)) + "-dev"; devVersion != want {
		t.Errorf("devVersion %q, VERSION says %q", devVersion, want)
	}
}
