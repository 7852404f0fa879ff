package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/exportertest"
)

// startFleetExporter runs the exporter with a simulated site of oss OSS and waits
// for its index to listen (the servers listen before it).
func startFleetExporter(t *testing.T, bin string, oss int, args ...string) *exporter {
	t.Helper()
	addr := exportertest.FreeAddresses(t, oss+2)
	e := exportertest.Command("exporter", bin, append([]string{"--web.listen-address=" + addr, "--demo", "--demo.fleet.oss=" + strconv.Itoa(oss)}, args...)...)
	e.Addr = addr
	return launch(t, e)
}

func getBody(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return body
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal(getBody(t, url), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

var (
	jobSeries   = regexp.MustCompile(`(?m)^(lustre_job_[a-z_]+)\{[^}]*target="([^"]*)"[^}]*\} (\S+)$`)
	lustreLines = regexp.MustCompile(`(?m)^lustre_`)
)

type fleetTruth struct {
	Jobs map[string]struct {
		Write float64 `json:"write_bytes_per_second"`
	} `json:"jobs"`
	Targets map[string]struct {
		Component string  `json:"component"`
		Server    string  `json:"server"`
		Write     float64 `json:"write_bytes_per_second"`
	} `json:"targets"`
}

// A site of 2 OSS of 2 OSTs and an MDS: the index lists the servers for
// Prometheus' HTTP service discovery, each server exposes the per-job
// series of its own targets only, every target of the truth is on exactly
// one server, and the job bytes summed over the servers grow as the truth
// says.
func TestEndToEndFleet(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startFleetExporter(t, bin, 2, "--demo.fleet.osts-per-oss=2", "--demo.fleet.mdts=1", "--demo.fleet.jobs=500")

	var groups []struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	getJSON(t, "http://"+e.Addr+"/demo/fleet", &groups)
	_, portText, _ := net.SplitHostPort(e.Addr)
	port, _ := strconv.Atoi(portText)
	want := [][2]string{{"mds0", "mds"}, {"oss00", "oss"}, {"oss01", "oss"}}
	if len(groups) != len(want) {
		t.Fatalf("/demo/fleet lists %d groups, want %d: %+v", len(groups), len(want), groups)
	}
	for i, g := range groups {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port+1+i))
		if !slices.Equal(g.Targets, []string{addr}) || g.Labels["server"] != want[i][0] || g.Labels["role"] != want[i][1] || len(g.Labels) != 2 {
			t.Errorf("group %d: %+v, want %s at %s (%s)", i, g, want[i][0], addr, want[i][1])
		}
	}

	var truth fleetTruth
	getJSON(t, "http://"+e.Addr+"/demo/fleet/truth", &truth)
	if len(truth.Targets) != 5 || len(truth.Jobs) < 100 {
		t.Fatalf("truth: %d targets, %d jobs; want 5 targets and hundreds of jobs", len(truth.Targets), len(truth.Jobs))
	}

	first := scrapeFleet(t, groups[0].Targets[0], groups[1].Targets[0], groups[2].Targets[0])
	exposedBy := map[string][]string{}
	for i, text := range first.texts {
		server := groups[i].Labels["server"]
		for target := range jobTargets(text) {
			exposedBy[target] = append(exposedBy[target], server)
			if truth.Targets[target].Server != server {
				t.Errorf("%s exposes per-job series of %s, which the truth puts on %q", server, target, truth.Targets[target].Server)
			}
		}
	}
	for target := range truth.Targets {
		if len(exposedBy[target]) != 1 {
			t.Errorf("%s exposed by %v, want one server", target, exposedBy[target])
		}
	}

	time.Sleep(2 * time.Second)
	second := scrapeFleet(t, groups[0].Targets[0], groups[1].Targets[0], groups[2].Targets[0])
	checkSiteWrites(t, truth, first, second)

	index := string(getBody(t, "http://"+e.Addr+"/metrics"))
	if lustreLines.MatchString(index) || !strings.Contains(index, "hpcio_exporter_build_info{") {
		t.Errorf("the index's /metrics should hold the exporter's own metrics only:\n%.1000s", index)
	}
	landing := string(getBody(t, "http://"+e.Addr+"/"))
	for _, link := range []string{`href="/demo/fleet"`, `href="/demo/fleet/truth"`} {
		if !strings.Contains(landing, link) {
			t.Errorf("landing page lacks %s", link)
		}
	}
}

// fleetScrape is one scrape of every server.
type fleetScrape struct {
	at    time.Time
	texts []string
}

func scrapeFleet(t *testing.T, addrs ...string) fleetScrape {
	t.Helper()
	s := fleetScrape{at: time.Now()}
	for _, addr := range addrs {
		text := string(getBody(t, "http://"+addr+"/metrics"))
		if !strings.Contains(text, `hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`) {
			t.Fatalf("%s: the jobstats collector failed:\n%.2000s", addr, text)
		}
		s.texts = append(s.texts, text)
	}
	return s
}

// jobTargets returns the targets of a scrape's per-job series.
func jobTargets(text string) map[string]bool {
	targets := map[string]bool{}
	for _, m := range jobSeries.FindAllStringSubmatch(text, -1) {
		targets[m[2]] = true
	}
	return targets
}

// writeBytes sums lustre_job_write_bytes_total over a scrape of every
// server.
func (s fleetScrape) writeBytes() float64 {
	sum := 0.0
	for _, text := range s.texts {
		for _, m := range jobSeries.FindAllStringSubmatch(text, -1) {
			if m[1] == "lustre_job_write_bytes_total" {
				v, _ := strconv.ParseFloat(m[3], 64)
				sum += v
			}
		}
	}
	return sum
}

// checkSiteWrites compares the site's job write rate, summed over the
// servers between two scrapes, with the truth. The scrapes' times are
// not the lctl runs' to the millisecond: a loose bound, which still
// catches a server counting another's targets.
func checkSiteWrites(t *testing.T, truth fleetTruth, first, second fleetScrape) {
	t.Helper()
	want := 0.0
	for _, tt := range truth.Targets {
		want += tt.Write
	}
	got := (second.writeBytes() - first.writeBytes()) / second.at.Sub(first.at).Seconds()
	t.Logf("site writes %.4g B/s in the scrapes, truth %.4g B/s", got, want)
	if want == 0 || math.Abs(got-want) > 0.25*want {
		t.Errorf("site writes %.4g B/s in the scrapes, truth %.4g B/s", got, want)
	}
}

// The fleet flags need --demo, and the others --demo.fleet.oss: usage
// errors.
func TestFleetFlagsUsage(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo.fleet.oss=2"}, "--demo.fleet.oss needs --demo"},
		{[]string{"serve", "--demo.fleet.jobs=10"}, "--demo.fleet.jobs needs --demo"},
		{[]string{"--demo", "--demo.fleet.osts-per-oss=4"}, "--demo.fleet.osts-per-oss needs --demo.fleet.oss"},
		{[]string{"--demo", "--demo.fleet.oss=2", "--demo.fleet.hot-jobs=1.5"}, "hot-jobs is a fraction"},
		{[]string{"--demo", "--demo.fleet.oss=2", "--demo.fleet.mdts=0"}, "at least 1"},
	} {
		_, errOut, status := runBinary(t, bin, append(c.args, "--web.listen-address=127.0.0.1:0")...)
		if status != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", c.args, status, errOut, exitUsage, c.want)
		}
	}
}

// A simulated server that cannot listen stops the exporter, with its name.
func TestFleetPortTaken(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	// Three free ports, the third taken here: another test may take it
	// between the two (go test runs packages side by side), then three
	// others are tried.
	var addr string
	for try := 1; ; try++ {
		addr = exportertest.FreeAddresses(t, 3)
		_, portText, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(portText)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+2))
		if err == nil {
			defer l.Close()
			break
		}
		if try == 10 {
			t.Fatal(err)
		}
	}
	_, errOut, status := runBinary(t, bin, "--web.listen-address="+addr, "--demo", "--demo.fleet.oss=1", "--demo.fleet.jobs=10")
	if status != exitFailure || !strings.Contains(errOut, "simulated server oss00") {
		t.Errorf("status %d, stderr %q; want %d naming oss00", status, errOut, exitFailure)
	}
}
