package lnet

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

func parseStatsFile(t *testing.T, path string, parse func(*os.File) (*Stats, error)) *Stats {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func statsShow(f *os.File) (*Stats, error) { return ParseStats(f) }
func procStats(f *os.File) (*Stats, error) { return ParseProcStats(f) }

func TestLNetStatsFixtures(t *testing.T) {
	// Lustre 2.10: the first eleven counters, none of the health ones.
	old := parseStatsFile(t, fixture(t, "lnet-stats-show-2.10.txt"), statsShow)
	want := Stats{Found: true, MsgsAlloc: v(2), MsgsMax: v(1024), Errors: v(0), SendCount: v(3000000000),
		RecvCount: v(2999999000), RouteCount: v(0), DropCount: v(12), SendLength: v(987654321012),
		RecvLength: v(876543210987), RouteLength: v(0), DropLength: v(49152)}
	if !reflect.DeepEqual(*old, want) {
		t.Errorf("2.10:\n got %+v\nwant %+v", *old, want)
	}

	// libyaml's indentation, every counter, 64-bit lengths exactly, an
	// unknown key ignored.
	s := parseStatsFile(t, fixture(t, "lnet-stats-show-libyaml.txt"), statsShow)
	want = Stats{Found: true, MsgsAlloc: v(17), MsgsMax: v(4096), RstAlloc: v(9), Errors: v(3),
		SendCount: v(71234567), RecvCount: v(71230000), RouteCount: v(1000), DropCount: v(66),
		SendLength: v(18014398509481984), RecvLength: v(9007199254740993), RouteLength: v(1048576), DropLength: v(270336),
		ResendCount: v(41), ResponseTimeoutCount: v(5), LocalInterruptCount: v(1), LocalDroppedCount: v(2),
		LocalAbortedCount: v(3), LocalNoRouteCount: v(4), LocalTimeoutCount: v(6), LocalErrorCount: v(7),
		RemoteDroppedCount: v(8), RemoteErrorCount: v(9), RemoteTimeoutCount: v(10), NetworkTimeoutCount: v(11)}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("libyaml:\n got %+v\nwant %+v", *s, want)
	}

	down := parseStatsFile(t, fixture(t, "lnet-stats-show-down.txt"), statsShow)
	if down.Found || down.SendCount.OK || down.Err == nil || down.Err.Entity != "statistics" || down.Err.Errno != -100 {
		t.Errorf("down: %+v %+v", down, down.Err)
	}
}

func TestLNetStatsCorpus(t *testing.T) {
	dir := corpus.Dir(t, "lustre")
	wham := parseStatsFile(t, filepath.Join(dir, "whamcloud-lustrefs-exporter/lustrefs-exporter/fixtures/lnetctl_stats.txt"), statsShow)
	if wham.MsgsMax != v(39) || wham.RstAlloc != v(15) || wham.SendCount != v(1110532) || wham.DropCount != v(11) ||
		wham.SendLength != v(261865376) || wham.DropLength != v(4832) || wham.NetworkTimeoutCount != v(0) {
		t.Errorf("whamcloud: %+v", wham)
	}
	dd := parseStatsFile(t, filepath.Join(dir, "DataDog-integrations-core/lustre/tests/fixtures/all_lnet_stats.txt"), statsShow)
	if dd.MsgsMax != v(6) || dd.RecvCount != v(416009) || dd.RecvLength != v(113781044) {
		t.Errorf("DataDog: %+v", dd)
	}
	gsi := parseStatsFile(t, filepath.Join(dir, "GSI-HPC-lustre_exporter/sys/kernel/debug/lnet/stats"), procStats)
	if gsi.MsgsMax != v(28) || gsi.SendCount != v(101719323) || gsi.RecvLength != v(53029565353720) || gsi.RstAlloc.OK {
		t.Errorf("GSI: %+v", gsi)
	}
}

func TestLNetProcStatsAndMemused(t *testing.T) {
	s, err := ParseProcStats(strings.NewReader("\n1 2 3 4 5 6 7 8 9 10 11 12\n"))
	if err != nil || s.MsgsAlloc != v(1) || s.Errors != v(3) || s.DropLength != v(11) || !s.Found {
		t.Errorf("%+v %v", s, err)
	}
	// Short and damaged lines keep what parses.
	s, _ = ParseProcStats(strings.NewReader("0 x 5\n"))
	if !s.Found || s.MsgsMax.OK || s.Errors != v(5) || s.SendCount.OK {
		t.Errorf("damaged: %+v", s)
	}
	if s, _ := ParseProcStats(strings.NewReader("garbage\n")); s.Found {
		t.Error("garbage found")
	}
	if m, err := ParseMemused(strings.NewReader("36109496\n")); m != v(36109496) || err != nil {
		t.Errorf("memused %v %v", m, err)
	}
	if m, _ := ParseMemused(strings.NewReader("")); m.OK {
		t.Error("empty memused OK")
	}
}
