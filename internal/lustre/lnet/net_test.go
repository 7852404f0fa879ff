package lnet

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

func parseNetFile(t *testing.T, path string) *NetShow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ns, err := ParseNetShow(f)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func fixture(t testing.TB, name string) string {
	return filepath.Join(corpus.Fixtures(t, "lustre"), name)
}

func v(n int64) Value { return Value{N: n, OK: true} }

// findNI returns the NI with the NID and its network's name.
func findNI(t *testing.T, ns *NetShow, nid string) (NI, string) {
	t.Helper()
	for _, n := range ns.Nets {
		for _, ni := range n.NIs {
			if ni.NID == nid {
				return ni, n.Type
			}
		}
	}
	t.Fatalf("no NI %s", nid)
	return NI{}, ""
}

// The same output in the two printers' layouts parses to the same values.
func TestLNetNetShowBothLayouts(t *testing.T) {
	cy := parseNetFile(t, fixture(t, "lnet-net-show-cyaml.txt"))
	ly := parseNetFile(t, fixture(t, "lnet-net-show-libyaml.txt"))
	if !reflect.DeepEqual(cy, ly) {
		t.Fatalf("layouts parse differently:\ncYAML   %+v\nlibyaml %+v", cy, ly)
	}

	var names []string
	for _, n := range cy.Nets {
		names = append(names, n.Type)
	}
	if got := strings.Join(names, ","); got != "lo,o2ib,tcp1" || !cy.Found || cy.Err != nil || cy.Skipped != 0 {
		t.Fatalf("nets %s, found %v, err %v, skipped %d", got, cy.Found, cy.Err, cy.Skipped)
	}

	// The down NI, value by value as written in the fixture.
	down, net := findNI(t, cy, "10.10.1.21@o2ib")
	want := NI{
		NID: "10.10.1.21@o2ib", Status: "down", Interfaces: []string{"ib1"},
		Stats:    NIStats{Present: true, SendCount: v(1200), RecvCount: v(1100), DropCount: v(250)},
		Sent:     MsgStats{Present: true, Put: v(1000), Get: v(200), Reply: v(0), Ack: v(0), Hello: v(0)},
		Received: MsgStats{Present: true, Put: v(900), Get: v(100), Reply: v(100), Ack: v(0), Hello: v(0)},
		Dropped:  MsgStats{Present: true, Put: v(200), Get: v(50), Reply: v(0), Ack: v(0), Hello: v(0)},
		Health: Health{Present: true, Value: v(0), FatalError: v(1), Interrupts: v(4), Dropped: v(120), Aborted: v(2),
			NoRoute: v(7), Timeouts: v(96), Error: v(21), PingCount: v(311), NextPing: v(187345)},
		Tunables: []Tunable{{"peer_timeout", 180}, {"peer_credits", 32}, {"peer_buffer_credits", 0}, {"credits", 256}},
		LNDTunables: []Tunable{{"peercredits_hiw", 16}, {"map_on_demand", 1}, {"concurrent_sends", 64},
			{"fmr_pool_size", 512}, {"fmr_flush_trigger", 384}, {"fmr_cache", 1}, {"ntx", 512},
			{"conns_per_peer", 1}, {"timeout", 100}, {"tos", -1}},
		DevCPT: v(1), CPT: "[0,1]",
	}
	if net != "o2ib" || !reflect.DeepEqual(down, want) {
		t.Errorf("down NI in %s:\n got %+v\nwant %+v", net, down, want)
	}

	// An IPv6 NID keeps its colons; "udsp info" (-v 4) is skipped.
	v6, net := findNI(t, cy, "2001:db8:10::21@tcp1")
	if net != "tcp1" || v6.Status != "up" || v6.Stats.SendCount != v(5000) || v6.DevCPT != v(-1) ||
		!reflect.DeepEqual(v6.LNDTunables, []Tunable{{"conns_per_peer", 4}, {"timeout", 50}, {"tos", 104}}) {
		t.Errorf("IPv6 NI in %s: %+v", net, v6)
	}
	lo, _ := findNI(t, cy, "0@lo")
	if len(lo.Interfaces) != 0 || len(lo.LNDTunables) != 0 || lo.Health.Value != v(1000) {
		t.Errorf("lo: %+v", lo)
	}
}

// What is missing stays absent, what is damaged is skipped, and the rest
// is read.
func TestLNetNetShowSparse(t *testing.T) {
	ns := parseNetFile(t, fixture(t, "lnet-net-show-sparse.txt"))
	var names []string
	for _, n := range ns.Nets {
		names = append(names, n.Type)
	}
	// o2ib3 printed twice is one network; gni has no NI but is a network.
	if got := strings.Join(names, ","); got != "lo,o2ib3,gni,tcp" {
		t.Errorf("nets %s", got)
	}
	// The NI without a NID, and the repeated 10.20.0.5@o2ib3 (the first,
	// up, is kept).
	if ns.Skipped != 2 {
		t.Errorf("skipped %d, want 2", ns.Skipped)
	}
	lo, _ := findNI(t, ns, "0@lo")
	if lo.Status != "up" || lo.Stats.Present || lo.Health.Present || lo.Sent.Present || lo.DevCPT.OK {
		t.Errorf("-v 0 NI has data: %+v", lo)
	}
	ni, _ := findNI(t, ns, "10.20.0.5@o2ib3")
	if ni.Status != "up" || !reflect.DeepEqual(ni.Interfaces, []string{"ib0", "ib1"}) {
		t.Errorf("status %q interfaces %v", ni.Status, ni.Interfaces)
	}
	// "not supported" is absent; above 32 bits is kept; spelling variants
	// of health keys are read; the future section is skipped whole.
	if ni.Stats != (NIStats{Present: true, SendCount: v(100), DropCount: v(4294967296)}) {
		t.Errorf("stats %+v", ni.Stats)
	}
	if ni.Health != (Health{Present: true, Value: v(900), NoRoute: v(3)}) {
		t.Errorf("health %+v", ni.Health)
	}
	// The string tunable and the repeated peer_credits are left out.
	if !reflect.DeepEqual(ni.Tunables, []Tunable{{"peer_timeout", 180}, {"peer_credits", 8}}) {
		t.Errorf("tunables %+v", ni.Tunables)
	}
	// Quoted NID and status; 1.2e3 is an integer, 7.5 is not.
	q, net := findNI(t, ns, "fe80::1%eth0@tcp")
	if net != "tcp" || q.Status != "up" || q.Stats != (NIStats{Present: true, SendCount: v(1200), RecvCount: v(0)}) {
		t.Errorf("quoted NI in %s: %+v", net, q)
	}
	if _, net := findNI(t, ns, "10.20.1.5@o2ib3"); net != "o2ib3" {
		t.Errorf("second o2ib3 NI in %s", net)
	}
}

// LNet down: no networks, the error lnetctl printed.
func TestLNetNetShowDown(t *testing.T) {
	ns := parseNetFile(t, fixture(t, "lnet-net-show-down.txt"))
	want := &Error{Command: "show", Entity: "net", Errno: -19, Descr: "cannot get networks: No such device"}
	if ns.Found || len(ns.Nets) != 0 || !reflect.DeepEqual(ns.Err, want) {
		t.Fatalf("%+v, err %+v", ns, ns.Err)
	}
	if got := ns.Err.Error(); got != "show net: cannot get networks: No such device (errno -19)" {
		t.Errorf("message %q", got)
	}
}

// Values read by hand from the corpus files.
func TestLNetNetShowCorpus(t *testing.T) {
	dir := corpus.Dir(t, "lustre")
	wham := parseNetFile(t, filepath.Join(dir, "whamcloud-lustrefs-exporter/lustrefs-exporter/fixtures/lnetctl_net_show.txt"))
	ni, net := findNI(t, wham, "172.16.0.25@tcp")
	if net != "tcp" || ni.Interfaces[0] != "mlxen1" || ni.Stats.SendCount != v(464886) || ni.Received.Reply != v(61994) ||
		ni.Dropped.Put != v(3) || ni.Health.Value != v(1000) || ni.Health.PingCount.OK {
		t.Errorf("whamcloud 172.16.0.25@tcp in %s: %+v", net, ni)
	}
	if len(wham.Nets) != 2 || len(wham.Nets[1].NIs) != 2 {
		t.Errorf("whamcloud nets %+v", wham.Nets)
	}

	dd := parseNetFile(t, filepath.Join(dir, "DataDog-integrations-core/lustre/tests/fixtures/all_lnet_net.txt"))
	ni, net = findNI(t, dd, "172.31.16.218@tcp")
	if net != "tcp" || ni.Interfaces[0] != "eth0" || ni.Stats.RecvCount != v(253491) || ni.Received.Ack != v(105) ||
		ni.Health.NextPing != v(0) || ni.DevCPT != v(-1) ||
		!reflect.DeepEqual(ni.LNDTunables, []Tunable{{"conns_per_peer", 1}, {"timeout", 49}, {"tos", -1}}) {
		t.Errorf("DataDog 172.31.16.218@tcp in %s: %+v", net, ni)
	}
}

// Without a "net type", an NI is filed under its NID's network; without
// either it is skipped (found by fuzzing: "0@" made a network "").
func TestLNetNetShowNetworkFromNID(t *testing.T) {
	in := "net:\n    - local NI(s):\n        - nid: 10.1.1.1@o2ib2\n        - nid: 0@\n        - nid: 10.1.1.2\n"
	ns, err := ParseNetShow(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.Nets) != 1 || ns.Nets[0].Type != "o2ib2" || len(ns.Nets[0].NIs) != 1 || ns.Skipped != 2 {
		t.Errorf("%+v skipped %d", ns.Nets, ns.Skipped)
	}
}
