package deploy

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The packages: `make package` builds the .deb and the .rpm; each holds the
// binary, the units, the configuration files, the man page, the examples
// and deploy/'s files where the README says, and scripts that create the
// system user and never enable or start a unit. Under CI (as root), the
// .deb is installed with dpkg, its binary runs the demo for one scrape, and
// the package is removed and purged again, leaving nothing of its files.
func TestPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building the packages takes a minute or two")
	}
	needPackagingTool(t, "make")
	needPackagingTool(t, "dpkg-deb")
	version := strings.TrimSpace(readFile(t, "../VERSION"))
	deb := filepath.Join("..", "dist", "hpcio_exporter_"+version+"_amd64.deb")
	rpm := filepath.Join("..", "dist", "hpcio_exporter-"+version+".x86_64.rpm")
	os.Remove(deb)
	os.Remove(rpm)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "make", "-C", "..", "package").CombinedOutput(); err != nil {
		t.Fatalf("make package: %v\n%s", err, out)
	}

	want := packagedFiles(t)
	t.Run("deb", func(t *testing.T) {
		for field, v := range map[string]string{"Package": "hpcio-exporter", "Version": version, "Architecture": "amd64"} {
			if out, err := run(t, "dpkg-deb", "--field", deb, field); err != nil || strings.TrimSpace(out) != v {
				t.Errorf("%s: %s is %q (%v), want %q", deb, field, strings.TrimSpace(out), err, v)
			}
		}
		out, err := run(t, "dpkg-deb", "--contents", deb)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 6 && !strings.HasPrefix(f[0], "d") {
				files = append(files, strings.TrimPrefix(f[5], "."))
				if f[5] == "./usr/bin/hpcio_exporter" && f[0] != "-rwxr-xr-x" {
					t.Errorf("the binary's mode is %s", f[0])
				}
			}
		}
		sameFiles(t, "deb", files, want)
		ctl := t.TempDir()
		if out, err := run(t, "dpkg-deb", "--control", deb, ctl); err != nil {
			t.Fatalf("dpkg-deb --control: %v\n%s", err, out)
		}
		conffiles := strings.Fields(readFile(t, filepath.Join(ctl, "conffiles")))
		slices.Sort(conffiles)
		if !slices.Equal(conffiles, []string{"/etc/default/hpcio-exporter", "/etc/default/hpcio-exporter-sidecar"}) {
			t.Errorf("conffiles %v", conffiles)
		}
		checkScripts(t, "deb", readFile(t, filepath.Join(ctl, "preinst"))+readFile(t, filepath.Join(ctl, "postinst"))+
			readFile(t, filepath.Join(ctl, "prerm"))+readFile(t, filepath.Join(ctl, "postrm")))
		// The man page is kingpin's, from this build.
		root := t.TempDir()
		if out, err := run(t, "dpkg-deb", "--extract", deb, root); err != nil {
			t.Fatalf("dpkg-deb --extract: %v\n%s", err, out)
		}
		man, err := run(t, "sh", "-c", "gzip -dc "+filepath.Join(root, "usr/share/man/man1/hpcio_exporter.1.gz"))
		if err != nil || !strings.HasPrefix(man, ".TH hpcio_exporter 1 ") || strings.Count(strings.SplitN(man, "\n", 2)[0], " ") > 6 ||
			!strings.Contains(man, "lustre.lctl-path") || !strings.Contains(man, "darshan") {
			t.Errorf("man page (%v): %.300q", err, man)
		}
	})

	t.Run("rpm", func(t *testing.T) {
		needPackagingTool(t, "rpm")
		out, err := run(t, "rpm", "-qp", "--queryformat", "%{NAME} %{VERSION} %{ARCH} %{LICENSE}", rpm)
		if err != nil || out != "hpcio-exporter "+version+" x86_64 Apache-2.0" {
			t.Errorf("rpm -qp: %q (%v)", out, err)
		}
		out, err = run(t, "rpm", "-qpl", rpm)
		if err != nil {
			t.Fatalf("rpm -qpl: %v\n%s", err, out)
		}
		// rpm also owns the directories of the trees, so that a removal
		// takes them along.
		wantRPM := append(slices.Clone(want), packagedDirs(t)...)
		slices.Sort(wantRPM)
		sameFiles(t, "rpm", strings.Fields(out), wantRPM)
		out, err = run(t, "rpm", "-qpc", rpm)
		if err != nil || strings.Join(strings.Fields(out), " ") != "/etc/default/hpcio-exporter /etc/default/hpcio-exporter-sidecar" {
			t.Errorf("rpm -qpc: %q (%v)", out, err)
		}
		out, err = run(t, "rpm", "-qp", "--scripts", rpm)
		if err != nil {
			t.Fatalf("rpm -qp --scripts: %v\n%s", err, out)
		}
		for _, s := range []string{"preinstall", "postinstall", "preuninstall", "postuninstall"} {
			if !strings.Contains(out, s+" scriptlet") {
				t.Errorf("rpm: no %s scriptlet", s)
			}
		}
		checkScripts(t, "rpm", out)
	})

	t.Run("install", func(t *testing.T) {
		installDeb(t, deb, version)
	})
}

// needPackagingTool is needTool for the packaging tools (.ci/run installs
// Debian's rpm; make and dpkg-deb are on every Debian).
func needPackagingTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if underCI() {
		t.Fatalf("%s not found, and CI=true requires it (apt-get install make dpkg rpm)", name)
	}
	t.Skipf("%s not installed: skipping (apt-get install make dpkg rpm)", name)
}

// packagedFiles lists the files the packages must hold, from the
// repository: the fixed ones, and every file of deploy/prometheus,
// deploy/alertmanager and deploy/grafana under /usr/share/hpcio_exporter.
func packagedFiles(t *testing.T) []string {
	t.Helper()
	files := []string{
		"/usr/bin/hpcio_exporter",
		"/usr/share/man/man1/hpcio_exporter.1.gz",
		"/usr/lib/systemd/system/hpcio-exporter.service",
		"/usr/lib/systemd/system/hpcio-exporter-sidecar.service",
		"/etc/default/hpcio-exporter",
		"/etc/default/hpcio-exporter-sidecar",
		"/usr/share/doc/hpcio-exporter/README.md",
		"/usr/share/doc/hpcio-exporter/CHANGELOG.md",
		"/usr/share/doc/hpcio-exporter/LICENSE",
		"/usr/share/doc/hpcio-exporter/examples/hpcio-exporter.sudoers",
		"/usr/share/doc/hpcio-exporter/examples/lctl-sudo",
		"/usr/share/doc/hpcio-exporter/examples/lnetctl-sudo",
		"/usr/share/doc/hpcio-exporter/examples/web-config.yml",
		"/usr/share/hpcio_exporter/README.md",
	}
	for _, dir := range []string{"prometheus", "alertmanager", "grafana"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, "/usr/share/hpcio_exporter/"+filepath.ToSlash(path))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The reference pages the README links, beside it.
	err := filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, "/usr/share/doc/hpcio-exporter/docs/"+filepath.ToSlash(strings.TrimPrefix(path, "../docs/")))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// packagedDirs lists the directories of the trees under
// /usr/share/hpcio_exporter, and of docs/ under /usr/share/doc/hpcio-exporter.
func packagedDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, dir := range []string{"prometheus", "alertmanager", "grafana"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, "/usr/share/hpcio_exporter/"+filepath.ToSlash(path))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			rel, _ := filepath.Rel("../docs", path)
			dirs = append(dirs, filepath.ToSlash(filepath.Join("/usr/share/doc/hpcio-exporter/docs", rel)))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func sameFiles(t *testing.T, what string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	for _, f := range want {
		if _, ok := slices.BinarySearch(got, f); !ok {
			t.Errorf("%s: %s missing", what, f)
		}
	}
	for _, f := range got {
		if _, ok := slices.BinarySearch(want, f); !ok {
			t.Errorf("%s: %s is not meant to be there", what, f)
		}
	}
}

// checkScripts: the scripts create the system user and reload systemd, and
// never enable or start a unit.
func checkScripts(t *testing.T, what, scripts string) {
	t.Helper()
	for _, s := range []string{"useradd --system", "groupadd --system", "daemon-reload"} {
		if !strings.Contains(scripts, s) {
			t.Errorf("%s scripts: no %q", what, s)
		}
	}
	for _, line := range strings.Split(scripts, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.Contains(line, "systemctl") && (strings.Contains(line, " enable ") || strings.Contains(line, " start ")) {
			t.Errorf("%s scripts enable or start a unit: %s", what, line)
		}
	}
}

// installDeb installs the .deb with dpkg, runs its binary, and removes and
// purges the package: under CI, as root, on a machine without the package.
// Elsewhere only with HPCIO_TEST_INSTALL=1, as it changes the machine.
func installDeb(t *testing.T, deb, version string) {
	if !underCI() && os.Getenv("HPCIO_TEST_INSTALL") != "1" {
		t.Skip("installs a package on this machine: only under CI=true, or with HPCIO_TEST_INSTALL=1 (as root)")
	}
	needPackagingTool(t, "dpkg")
	// As root, or through sudo as .ci/run installs packages.
	root := func(name string, args ...string) (string, error) { return run(t, name, args...) }
	if os.Geteuid() != 0 {
		if _, err := run(t, "sudo", "-n", "true"); err != nil {
			if underCI() {
				t.Fatalf("dpkg -i needs root, and sudo -n fails: %v", err)
			}
			t.Skip("dpkg -i needs root")
		}
		root = func(name string, args ...string) (string, error) {
			return run(t, "sudo", append([]string{"-n", name}, args...)...)
		}
	}
	if out, err := run(t, "dpkg-query", "--show", "--showformat=${Status}", "hpcio-exporter"); err == nil && strings.Contains(out, "installed") {
		t.Skipf("hpcio-exporter is installed on this machine already (%s): not touching it", out)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			root("dpkg", "--purge", "hpcio-exporter")
		}
	})
	if out, err := root("dpkg", "--install", deb); err != nil {
		t.Fatalf("dpkg --install: %v\n%s", err, out)
	}
	if out, err := run(t, "id", "hpcio"); err != nil {
		t.Errorf("no system user hpcio after install: %v %s", err, out)
	}
	for _, f := range []string{"/usr/bin/hpcio_exporter", "/usr/lib/systemd/system/hpcio-exporter.service", "/etc/default/hpcio-exporter", "/usr/share/hpcio_exporter/prometheus/prometheus.yml"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after install: %v", err)
		}
	}
	// Nothing started: no exporter runs.
	// (Only the installed binary: the other tests run exporters of their own.)
	out, _ := run(t, "pgrep", "-x", "hpcio_exporter")
	for _, pid := range strings.Fields(out) {
		if exe, err := os.Readlink("/proc/" + pid + "/exe"); err == nil && exe == "/usr/bin/hpcio_exporter" {
			t.Errorf("the installed exporter runs after install (pid %s): the package must not start it", pid)
		}
	}

	out, err := run(t, "/usr/bin/hpcio_exporter", "--version")
	if err != nil || !strings.Contains(out, "version "+version+" ") || strings.Contains(out, "revision: unknown") ||
		strings.Contains(out, "build user:       \n") {
		t.Errorf("hpcio_exporter --version (%v):\n%s", err, out)
	}
	t.Logf("installed: %s", strings.SplitN(out, "\n", 2)[0])

	// The installed binary on its demo, for one scrape.
	addr := freePort(t)
	p := start(t, "installed exporter", "/usr/bin/hpcio_exporter", "--demo", "--web.listen-address="+addr)
	waitHTTP(t, p, "http://"+addr+"/metrics", 30*time.Second)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "lustre_job_write_bytes_total{") ||
		!strings.Contains(string(body), `hpcio_exporter_build_info{`) || !strings.Contains(string(body), `version="`+version+`"`) {
		t.Errorf("the installed demo's scrape: %s, %d bytes", resp.Status, len(body))
	}
	p.Cmd.Process.Kill()
	p.Wait()

	if out, err := root("dpkg", "--remove", "hpcio-exporter"); err != nil {
		t.Fatalf("dpkg --remove: %v\n%s", err, out)
	}
	if _, err := os.Stat("/usr/bin/hpcio_exporter"); err == nil {
		t.Error("the binary is left after dpkg --remove")
	}
	if _, err := os.Stat("/etc/default/hpcio-exporter"); err != nil {
		t.Error("dpkg --remove removed a configuration file (only --purge may)")
	}
	if out, err := root("dpkg", "--purge", "hpcio-exporter"); err != nil {
		t.Fatalf("dpkg --purge: %v\n%s", err, out)
	}
	removed = true
	for _, f := range []string{"/etc/default/hpcio-exporter", "/etc/default/hpcio-exporter-sidecar", "/usr/share/hpcio_exporter", "/usr/share/doc/hpcio-exporter"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is left after dpkg --purge", f)
		}
	}
	if out, err := run(t, "dpkg-query", "--show", "--showformat=${Status}", "hpcio-exporter"); err == nil && strings.Contains(out, "installed") {
		t.Errorf("dpkg still lists the package: %s", out)
	}
}
