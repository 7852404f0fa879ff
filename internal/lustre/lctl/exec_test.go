package lctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/mechanism/toolrun"
)

func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lctl")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] != "Z"
}

// A hanging lctl is killed at the deadline with its whole process group,
// children included, and the output read so far reads as cut short.
func TestCommandKilledAtDeadline(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cmd := &Command{Path: script(t, `echo "obdfilter.a-OST0000.job_stats="
echo "job_stats:"
echo "- job_id: 1:2:n"
echo "  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: 5 }"
echo "- job_id: 3:4:n"
sleep 60 &
echo $! > `+pidFile+`
sleep 60
`)}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	begin := time.Now()
	out, err := cmd.GetParam(ctx, []string{"obdfilter.*.job_stats"})
	if err != nil {
		t.Fatal(err)
	}
	var s summarizer
	scanErr := Scan(out, "", s.route)
	closeErr := out.Close()
	if !errors.Is(scanErr, toolrun.ErrKilled) {
		t.Fatalf("scan error %v, want ErrKilled", scanErr)
	}
	if !errors.Is(closeErr, toolrun.ErrKilled) {
		t.Errorf("close error %v, want ErrKilled", closeErr)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("took %v to give up", took)
	}
	got := s.out.String()
	if !strings.Contains(got, `job "1:2:n"`) || strings.Contains(got, `job "3:4:n"`) || !strings.Contains(got, "complete=false") {
		t.Errorf("parsed:\n%s", got)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("lctl's child %d survived the kill", pid)
	}
}

// lctl exits non-zero when a pattern matches nothing but prints the rest:
// the output is complete, Close reports the exit.
func TestCommandNonZeroExit(t *testing.T) {
	cmd := &Command{Path: script(t, `echo "obdfilter.a-OST0000.job_stats="
echo "job_stats:"
echo "error: get_param: param_path 'mdt/*/job_stats': No such file or directory" >&2
exit 2
`)}
	out, err := cmd.GetParam(context.Background(), []string{"obdfilter.*.job_stats", "mdt.*.job_stats"})
	if err != nil {
		t.Fatal(err)
	}
	var s summarizer
	if err := Scan(out, "", s.route); err != nil {
		t.Fatalf("scan: %v", err)
	}
	var exit *toolrun.ExitError
	if err := out.Close(); !errors.As(err, &exit) || exit.Code != 2 || !strings.Contains(exit.Stderr, "mdt/*/job_stats") {
		t.Fatalf("close: %v", err)
	}
	if !strings.Contains(s.out.String(), "end complete=true jobs=0") {
		t.Errorf("parsed:\n%s", s.out.String())
	}
}

func TestCommandMissing(t *testing.T) {
	_, err := (&Command{Path: "/nonexistent/lctl"}).GetParam(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "starting /nonexistent/lctl") {
		t.Fatalf("err = %v", err)
	}
}

// The arguments reach lctl in order, after get_param.
func TestCommandArgs(t *testing.T) {
	cmd := &Command{Path: script(t, `echo "jobid_name=$*"`)}
	out, err := cmd.GetParam(context.Background(), []string{"jobid_name", "obdfilter.*.job_stats"})
	if err != nil {
		t.Fatal(err)
	}
	var s summarizer
	Scan(out, "", s.route)
	out.Close()
	if want := `value jobid_name="get_param jobid_name obdfilter.*.job_stats"`; !strings.Contains(s.out.String(), want) {
		t.Errorf("got %s, want %s", s.out.String(), want)
	}
}
