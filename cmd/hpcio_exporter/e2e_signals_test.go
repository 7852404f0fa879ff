package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// pidsLctl writes a fake lctl that notes its pid and its child's in
// pidFile, runs child (a shell command) in the background, waits for it,
// then prints the edge fixture.
func pidsLctl(t *testing.T, pidFile, child string) string {
	t.Helper()
	fixture := filepath.Join(corpus.Fixtures(t, "lustre"), "jobstats-edge.txt")
	return fakeLctl(t, fmt.Sprintf("echo $$ >> %s\n%s &\necho $! >> %s\nwait\ncat %s", pidFile, child, pidFile, fixture))
}

// waitPids waits until pidFile holds n pids, and returns them.
func waitPids(t *testing.T, pidFile string, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(pidFile)
		fields := strings.Fields(string(data))
		if len(fields) >= n {
			var pids []int
			for _, f := range fields[:n] {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%s: %q", pidFile, data)
				}
				pids = append(pids, pid)
			}
			return pids
		}
	}
	t.Fatalf("the fake lctl did not start (no %d pids in %s)", n, pidFile)
	return nil
}

// alive tells whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// waitExit waits for the exporter to end, and returns its exit status (-1
// if a signal ended it: e.Cmd.ProcessState says which).
func waitExit(t *testing.T, e *exporter, within time.Duration) int {
	t.Helper()
	ended := make(chan error, 1)
	go func() { ended <- e.Wait() }()
	select {
	case <-ended:
	case <-time.After(within):
		e.Cmd.Process.Kill()
		<-ended
		t.Fatalf("the exporter did not end within %v of the signal:\n%s", within, e.Logs)
	}
	return e.Cmd.ProcessState.ExitCode()
}

// stoppingLine returns the exporter's log line saying it stops; there must
// be exactly one.
func stoppingLine(t *testing.T, logs string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "msg=stopping") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d lines msg=stopping, want 1:\n%s", len(lines), logs)
	}
	return lines[0]
}

// SIGTERM during a scrape (lctl running: it takes 2 s): the scrape is
// answered in full, the process exits 0 with one line, and no lctl nor
// its child is left. At e27eef4 it exited at once with status 143 and
// nothing logged, the scrape cut, lctl and its child orphaned.
func TestEndToEndSIGTERMMidScrape(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	lctl := pidsLctl(t, pidFile, "sleep 2")
	e := startExporter(t, bin, append(onlyCollectors("jobstats"), "--lustre.lctl-path="+lctl)...)

	type result struct {
		code int
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+e.Addr+"/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		done <- result{resp.StatusCode, string(body), err}
	}()
	pids := waitPids(t, pidFile, 2)
	e.Cmd.Process.Signal(syscall.SIGTERM)
	signalled := time.Now()

	r := <-done
	if r.err != nil || r.code != 200 {
		t.Fatalf("the scrape under way at SIGTERM: %d %v", r.code, r.err)
	}
	for _, want := range []string{`hpcio_exporter_scrape_collector_success{collector="jobstats"} 1`, `lustre_job_write_bytes_total{component="ost",target="edge-OST0000"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the scrape under way at SIGTERM lacks %s:\n%.2000s", want, r.body)
		}
	}
	if code := waitExit(t, e, 15*time.Second); code != 0 {
		t.Errorf("exit status %d (%v) after SIGTERM, want 0", code, e.Cmd.ProcessState)
	}
	t.Logf("exited %v after SIGTERM", time.Since(signalled).Round(10*time.Millisecond))
	line := stoppingLine(t, e.Logs.String())
	for _, want := range []string{"signal=SIGTERM", "scrapes_finished=1", "scrapes_cut=0"} {
		if !strings.Contains(line, want) {
			t.Errorf("stopping line without %s: %s", want, line)
		}
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the lctl run (lctl %d, its child %d) left running", pid, pids[0], pids[1])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// SIGTERM while lctl still runs for a scrape that went away (a run
// outlives its scrape, others may join it): the process exits 0 at once,
// and the run's process group is killed, its child too. At e27eef4, both
// were left running.
func TestEndToEndSIGTERMKillsToolRuns(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	lctl := pidsLctl(t, pidFile, "sleep 60")
	e := startExporter(t, bin, append(onlyCollectors("jobstats"), "--lustre.lctl-path="+lctl)...)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+e.Addr+"/metrics", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	pids := waitPids(t, pidFile, 2)
	cancel()
	<-done
	time.Sleep(200 * time.Millisecond) // the handler sees its client gone
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d ended before the signal: the test shows nothing", pid)
		}
	}
	e.Cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, e, 10*time.Second); code != 0 {
		t.Errorf("exit status %d (%v) after SIGTERM, want 0", code, e.Cmd.ProcessState)
	}
	stoppingLine(t, e.Logs.String())
	// SIGKILL is sent before the exporter exits; the kernel may take a
	// moment to end them.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && (alive(pids[0]) || alive(pids[1])); {
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d of the lctl run (lctl %d, its child %d) left running after the exporter exited", pid, pids[0], pids[1])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// SIGHUP is logged, once, and the exporter goes on serving. At e27eef4 it
// exited with status 129 and nothing logged.
func TestEndToEndSIGHUP(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	e := startExporter(t, bin, onlyCollectors()...)
	e.Cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(300 * time.Millisecond)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + e.Addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape after SIGHUP: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("scrape after SIGHUP: %s", resp.Status)
	}
	e.Cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, e, 10*time.Second); code != 0 {
		t.Errorf("exit status %d (%v) after SIGHUP then SIGTERM, want 0", code, e.Cmd.ProcessState)
	}
	if n := strings.Count(e.Logs.String(), "SIGHUP"); n != 1 {
		t.Errorf("%d log lines about SIGHUP, want 1:\n%s", n, e.Logs)
	}
}

// slowScrape reads a scrape of url at about 1 MB/s through a small receive
// buffer until the first 256 KB are in, then calls started and reads the
// rest at once.
func slowScrape(url string, started func()) (int, int, error) {
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		})
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableCompression: true}}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "30")
	resp, err := client.Do(req)
	if err != nil {
		started()
		return 0, 0, err
	}
	defer resp.Body.Close()
	buf := make([]byte, 16<<10)
	n, once := 0, false
	for {
		k, err := resp.Body.Read(buf)
		n += k
		if !once && n >= 256<<10 {
			once = true
			started()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if !once {
				started()
			}
			return resp.StatusCode, n, err
		}
		if !once {
			time.Sleep(time.Duration(k) * time.Second / (1 << 20))
		}
	}
	if !once {
		started()
	}
	return resp.StatusCode, n, nil
}

// The demo and the simulated fleet stop the same way: a scrape being read
// at SIGTERM is read to its end, and the process exits 0 with one line. At
// e27eef4 the fleet exited with status 143, its scrape cut. (The demo's
// 2.9 MB response fits in the kernel's socket buffers: its handler is done
// before the signal, and at e27eef4 the demo's own handler of SIGTERM
// exited 0 with one line too; here, the same line must not come twice.)
func TestEndToEndSIGTERMDemoAndFleet(t *testing.T) {
	t.Parallel()
	bin := buildExporter(t)
	for _, mode := range []string{"demo", "fleet"} {
		t.Run(mode, func(t *testing.T) {
			var e *exporter
			url := ""
			if mode == "demo" {
				e = startExporter(t, bin, "--demo")
				url = "http://" + e.Addr + "/metrics"
			} else {
				e = startFleetExporter(t, bin, 1, "--web.disable-exporter-metrics")
				host, port, _ := net.SplitHostPort(e.Addr)
				p, _ := strconv.Atoi(port)
				// The OSS: 13.6 MB, more than the socket buffers take.
				url = "http://" + net.JoinHostPort(host, strconv.Itoa(p+2)) + "/metrics"
			}
			whole, err := http.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			size, _ := io.Copy(io.Discard, whole.Body)
			whole.Body.Close()

			started := make(chan struct{})
			type result struct {
				code, n int
				err     error
			}
			done := make(chan result, 1)
			go func() {
				code, n, err := slowScrape(url, func() { close(started) })
				done <- result{code, n, err}
			}()
			<-started
			e.Cmd.Process.Signal(syscall.SIGTERM)
			r := <-done
			// The simulated counters move between two scrapes: the sizes
			// differ by a few bytes.
			if r.err != nil || r.code != 200 || r.n < int(size)*9/10 {
				t.Errorf("the scrape being read at SIGTERM: %d, %d bytes of about %d, %v", r.code, r.n, size, r.err)
			}
			if code := waitExit(t, e, 20*time.Second); code != 0 {
				t.Errorf("exit status %d (%v) after SIGTERM, want 0", code, e.Cmd.ProcessState)
			}
			line := stoppingLine(t, e.Logs.String())
			if mode == "fleet" && !strings.Contains(line, "scrapes_in_flight=1 scrapes_finished=1 scrapes_cut=0") {
				t.Errorf("stopping line: %s", line)
			}
		})
	}
}
