package lustresim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// LNet simulates lnetctl on a server whose LNet came up at Boot: the
// loopback NI and two o2ib NIs (multi-rail over ib0 and ib1), with message
// counters advancing with wall time. The second NI has a brief fault every
// 15 minutes: for a minute its health value drops and its health counters
// (timeouts, drops) grow, as a flapping link would show.
type LNet struct {
	Boot time.Time
}

var demoLNet = &LNet{Boot: time.Now()}

// Lnetctl is the demo's lnetctl: what `lnetctl args...` prints now, for
// the commands the exporter runs (`net show [-v N]`, `stats show`).
func Lnetctl(args ...string) ([]byte, error) {
	return demoLNet.Output(time.Now(), args...)
}

// The simulated NIs. Rates are messages per second; the byte counters
// (global only, as in lnetctl) assume 64 KiB per message on average.
var simNIs = []struct {
	net, nid, intf   string
	sendRate, recvPM float64 // recvPM: received per sent message
	dropEvery        float64 // seconds between two dropped messages
	faulty           bool
}{
	{"lo", "0@lo", "", 20, 1, 0, false},
	{"o2ib", "192.168.100.10@o2ib", "ib0", 1500, 0.98, 600, false},
	{"o2ib", "192.168.101.10@o2ib", "ib1", 1400, 0.98, 300, true},
}

const (
	simFaultPeriod = 900 // seconds between faults of the faulty NI
	simFaultStart  = 300 // offset of a fault in its period
	simFaultLength = 60
	simBytesPerMsg = 65536
)

// niCounts is one NI's counters at a time.
type niCounts struct {
	sent, recv, drop              [5]int64 // put, get, reply, ack, hello
	health                        int64
	faults, timeouts, hdropped    int64
	sendCount, recvCount, dropped int64
}

func (l *LNet) counts(i int, elapsed float64) niCounts {
	ni := simNIs[i]
	var c niCounts
	sent := int64(ni.sendRate * elapsed)
	recv := int64(ni.sendRate * ni.recvPM * elapsed)
	// Puts carry the data, gets ask for it, replies answer gets.
	c.sent = [5]int64{sent * 7 / 10, sent - sent*7/10, 0, 0, 0}
	c.recv = [5]int64{recv * 6 / 10, recv * 2 / 10, recv - recv*8/10, 0, 0}
	if ni.dropEvery > 0 {
		d := int64(elapsed / ni.dropEvery)
		c.drop = [5]int64{d, 0, 0, 0, 0}
	}
	c.health = 1000
	if ni.faulty {
		periods := int64(elapsed / simFaultPeriod)
		into := elapsed - float64(periods)*simFaultPeriod
		c.faults = periods
		if into >= simFaultStart {
			c.faults++
		}
		if into >= simFaultStart && into < simFaultStart+simFaultLength {
			// Each failure costs health_sensitivity (100); recovery pings
			// restore it as the fault ends.
			c.health = 1000 - 100*int64(1+(into-simFaultStart)/20)
		}
		c.timeouts, c.hdropped = 3*c.faults, c.faults
	}
	for k := range 5 {
		c.sendCount += c.sent[k]
		c.recvCount += c.recv[k]
		c.dropped += c.drop[k]
	}
	return c
}

// Output returns what `lnetctl args...` prints at now.
func (l *LNet) Output(now time.Time, args ...string) ([]byte, error) {
	elapsed := max(now.Sub(l.Boot).Seconds(), 0)
	switch {
	case len(args) >= 2 && args[0] == "net" && args[1] == "show":
		detail := 0
		if len(args) == 4 && args[2] == "-v" {
			d, err := strconv.Atoi(args[3])
			if err != nil {
				return nil, fmt.Errorf("lnetctl (simulated): bad verbosity %q", args[3])
			}
			detail = d
		} else if len(args) != 2 {
			return nil, fmt.Errorf("lnetctl (simulated): unsupported arguments %q", strings.Join(args, " "))
		}
		return l.netShow(elapsed, detail), nil
	case len(args) == 2 && args[0] == "stats" && args[1] == "show":
		return l.statsShow(elapsed), nil
	}
	return nil, fmt.Errorf("lnetctl (simulated): unsupported command %q", strings.Join(args, " "))
}

// netShow prints in the layout of lnetctl's cYAML printer (Lustre ≤ 2.14).
func (l *LNet) netShow(elapsed float64, detail int) []byte {
	var b bytes.Buffer
	b.WriteString("net:\n")
	prevNet := ""
	for i, ni := range simNIs {
		c := l.counts(i, elapsed)
		if ni.net != prevNet {
			fmt.Fprintf(&b, "    - net type: %s\n      local NI(s):\n", ni.net)
			prevNet = ni.net
		}
		fmt.Fprintf(&b, "        - nid: %s\n          status: up\n", ni.nid)
		if ni.intf != "" {
			fmt.Fprintf(&b, "          interfaces:\n              0: %s\n", ni.intf)
		}
		if detail == 0 {
			continue
		}
		fmt.Fprintf(&b, "          statistics:\n              send_count: %d\n              recv_count: %d\n              drop_count: %d\n",
			c.sendCount, c.recvCount, c.dropped)
		if detail >= 2 {
			for k, name := range []string{"sent_stats", "received_stats", "dropped_stats"} {
				v := [][5]int64{c.sent, c.recv, c.drop}[k]
				fmt.Fprintf(&b, "          %s:\n              put: %d\n              get: %d\n              reply: %d\n              ack: %d\n              hello: %d\n",
					name, v[0], v[1], v[2], v[3], v[4])
			}
			fmt.Fprintf(&b, "          health stats:\n              fatal_error: 0\n              health value: %d\n"+
				"              interrupts: 0\n              dropped: %d\n              aborted: 0\n              no route: 0\n"+
				"              timeouts: %d\n              error: 0\n              ping_count: %d\n              next_ping: 0\n",
				c.health, c.hdropped, c.timeouts, c.faults)
		}
		if ni.net == "lo" {
			b.WriteString("          tunables:\n              peer_timeout: 0\n              peer_credits: 0\n" +
				"              peer_buffer_credits: 0\n              credits: 0\n          lnd tunables:\n")
		} else {
			b.WriteString("          tunables:\n              peer_timeout: 180\n              peer_credits: 32\n" +
				"              peer_buffer_credits: 0\n              credits: 256\n" +
				"          lnd tunables:\n              peercredits_hiw: 16\n              map_on_demand: 1\n" +
				"              concurrent_sends: 64\n              ntx: 512\n              conns_per_peer: 1\n" +
				"              timeout: 100\n              tos: -1\n")
		}
		fmt.Fprintf(&b, "          dev cpt: %d\n          CPT: \"[0,1]\"\n", max(i-1, 0))
	}
	return b.Bytes()
}

func (l *LNet) statsShow(elapsed float64) []byte {
	var send, recv, drop, timeouts, faults int64
	for i := range simNIs {
		c := l.counts(i, elapsed)
		send += c.sendCount
		recv += c.recvCount
		drop += c.dropped
		timeouts += c.timeouts
		faults += c.faults
	}
	var b bytes.Buffer
	b.WriteString("statistics:\n")
	for _, kv := range []struct {
		k string
		v int64
	}{
		{"msgs_alloc", 20 + int64(elapsed)%40}, {"msgs_max", 512}, {"rst_alloc", 8}, {"errors", 0},
		{"send_count", send}, {"resend_count", timeouts}, {"response_timeout_count", faults},
		{"local_interrupt_count", 0}, {"local_dropped_count", faults}, {"local_aborted_count", 0},
		{"local_no_route_count", 0}, {"local_timeout_count", timeouts}, {"local_error_count", 0},
		{"remote_dropped_count", 0}, {"remote_error_count", 0}, {"remote_timeout_count", 0},
		{"network_timeout_count", faults},
		{"recv_count", recv}, {"route_count", 0}, {"drop_count", drop},
		{"send_length", send * simBytesPerMsg}, {"recv_length", recv * simBytesPerMsg},
		{"route_length", 0}, {"drop_length", drop * simBytesPerMsg},
	} {
		fmt.Fprintf(&b, "    %s: %d\n", kv.k, kv.v)
	}
	return b.Bytes()
}

// StartLnetctl is Lnetctl as a toolrun.StartFunc: what --demo runs instead
// of lnetctl.
func StartLnetctl(_ context.Context, args ...string) (io.ReadCloser, error) {
	out, err := Lnetctl(args...)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}
