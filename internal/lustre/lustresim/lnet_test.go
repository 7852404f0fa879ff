package lustresim

import (
	"bytes"
	"testing"
	"time"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lnet"
)

func simNet(t *testing.T, l *LNet, at time.Time) *lnet.NetShow {
	t.Helper()
	out, err := l.Output(at, "net", "show", "-v", "4")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := lnet.ParseNetShow(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// The simulated lnetctl parses as real output does, and its counters
// grow with time; the faulty NI shows its fault.
func TestLNetSim(t *testing.T) {
	boot := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &LNet{Boot: boot}

	early := simNet(t, l, boot.Add(100*time.Second))
	if len(early.Nets) != 2 || len(early.Nets[1].NIs) != 2 || early.Skipped != 0 {
		t.Fatalf("nets %+v", early.Nets)
	}
	ib0 := early.Nets[1].NIs[0]
	// 1500 messages/s for 100 s, 70% puts.
	if ib0.NID != "192.168.100.10@o2ib" || ib0.Stats.SendCount.N != 150000 || ib0.Sent.Put.N != 105000 || ib0.Status != "up" {
		t.Errorf("ib0 at 100 s: %+v", ib0)
	}

	// 330 s: inside the first fault of ib1 (300–360 s).
	during := simNet(t, l, boot.Add(330*time.Second)).Nets[1].NIs[1]
	if during.Health.Value.N >= 1000 || during.Health.Timeouts.N != 3 {
		t.Errorf("ib1 during its fault: %+v", during.Health)
	}
	after := simNet(t, l, boot.Add(400*time.Second)).Nets[1].NIs[1]
	if after.Health.Value.N != 1000 || after.Health.Timeouts.N != 3 {
		t.Errorf("ib1 after its fault: %+v", after.Health)
	}

	// Counters never go down from one scrape to the next.
	var prev *lnet.Stats
	for s := 0; s < 3600; s += 37 {
		out, err := l.Output(boot.Add(time.Duration(s)*time.Second), "stats", "show")
		if err != nil {
			t.Fatal(err)
		}
		st, _ := lnet.ParseStats(bytes.NewReader(out))
		if !st.Found || !st.SendLength.OK || !st.NetworkTimeoutCount.OK {
			t.Fatalf("stats at %d s: %+v", s, st)
		}
		if prev != nil && (st.SendCount.N < prev.SendCount.N || st.RecvLength.N < prev.RecvLength.N ||
			st.LocalTimeoutCount.N < prev.LocalTimeoutCount.N || st.DropCount.N < prev.DropCount.N) {
			t.Fatalf("a counter went down at %d s", s)
		}
		prev = st
	}
	if prev.SendCount.N <= 0 || prev.NetworkTimeoutCount.N != 4 {
		t.Errorf("after an hour: send %v, network timeouts %v", prev.SendCount, prev.NetworkTimeoutCount)
	}

	// Without -v: NIDs and status only.
	if plain := simNet2(t, l, boot.Add(time.Hour), "net", "show"); plain.Nets[1].NIs[0].Stats.Present {
		t.Error("net show without -v has statistics")
	}
	for _, bad := range [][]string{{"peer", "show"}, {"net", "show", "-v", "x"}, {"net", "show", "--json"}} {
		if _, err := l.Output(boot, bad...); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if out, err := Lnetctl("stats", "show"); err != nil || !bytes.HasPrefix(out, []byte("statistics:\n")) {
		t.Errorf("Lnetctl: %q %v", out, err)
	}
}

func simNet2(t *testing.T, l *LNet, at time.Time, args ...string) *lnet.NetShow {
	t.Helper()
	out, err := l.Output(at, args...)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := lnet.ParseNetShow(bytes.NewReader(out))
	return ns
}
