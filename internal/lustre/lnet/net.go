package lnet

import (
	"io"
	"strings"
)

// NetShow is what `lnetctl net show -v 4` reports.
type NetShow struct {
	// Nets are the local networks in the order printed, one per network
	// name even when lnetctl printed a network twice.
	Nets []Net `json:"nets"`
	// Found is set when the output has a "net" section, even an empty
	// one (LNet up without networks).
	Found bool `json:"found"`
	// Err is an error lnetctl printed, such as "cannot get networks:
	// Network is down". lnetctl also reports errors after printing the
	// networks (an ioctl an older kernel module lacks), so Nets may be
	// complete beside it.
	Err *Error `json:"error,omitempty"`
	// Skipped counts NI entries left out: without a NID, with one that
	// cannot be a label value, repeating a NID already read, or with no
	// network (no "net type" and no "@net" in the NID).
	Skipped int `json:"skipped,omitempty"`
}

// Net is one local network ("net type": tcp, o2ib1, lo).
type Net struct {
	Type string `json:"type"`
	NIs  []NI   `json:"nis"`
}

// NI is one local network interface.
type NI struct {
	NID string `json:"nid"`
	// Status is what lnetctl printed: "up" or "down" ("" when absent).
	Status string `json:"status"`
	// Interfaces are the kernel interfaces the NI runs over (ib0).
	Interfaces []string `json:"interfaces"`

	// Stats is "statistics" (-v 1 and up).
	Stats NIStats `json:"statistics"`
	// Sent, Received and Dropped count messages by type (-v 2 and up).
	Sent     MsgStats `json:"sent_stats"`
	Received MsgStats `json:"received_stats"`
	Dropped  MsgStats `json:"dropped_stats"`
	// Health is "health stats" (-v 2 and up, Lustre 2.11+).
	Health Health `json:"health_stats"`

	// Tunables are the numeric "tunables" (peer_timeout, credits, …) and
	// LNDTunables the numeric "lnd tunables" (conns_per_peer, …), in the
	// order printed.
	Tunables    []Tunable `json:"tunables"`
	LNDTunables []Tunable `json:"lnd_tunables"`

	DevCPT Value  `json:"dev_cpt"`
	CPT    string `json:"cpt"`
}

// NIStats is an NI's "statistics" section.
type NIStats struct {
	Present   bool  `json:"present"`
	SendCount Value `json:"send_count"`
	RecvCount Value `json:"recv_count"`
	DropCount Value `json:"drop_count"`
}

// MsgStats counts LNet messages by type.
type MsgStats struct {
	Present bool  `json:"present"`
	Put     Value `json:"put"`
	Get     Value `json:"get"`
	Reply   Value `json:"reply"`
	Ack     Value `json:"ack"`
	Hello   Value `json:"hello"`
}

// Health is an NI's "health stats" section.
type Health struct {
	Present bool `json:"present"`
	// Value is the health value, 1000 when healthy; each failure lowers
	// it by the health sensitivity.
	Value Value `json:"health_value"`
	// FatalError is set (non-zero) while the NI has a fatal error, such as
	// its link down.
	FatalError Value `json:"fatal_error"`
	Interrupts Value `json:"interrupts"`
	Dropped    Value `json:"dropped"`
	Aborted    Value `json:"aborted"`
	NoRoute    Value `json:"no_route"`
	Timeouts   Value `json:"timeouts"`
	Error      Value `json:"error"`
	PingCount  Value `json:"ping_count"`
	// NextPing is when the NI is next pinged for recovery, in seconds of
	// the node's monotonic clock.
	NextPing Value `json:"next_ping"`
}

// Tunable is one numeric tunable. Name is lnetctl's key, lower case with
// underscores (peer_credits).
type Tunable struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// ParseNetShow reads the output of `lnetctl net show` (any -v level). It
// returns an error only when reading r fails, with what was read before.
func ParseNetShow(r io.Reader) (*NetShow, error) {
	root, err := readTree(r)
	return netShow(root), err
}

func netShow(root *node) *NetShow {
	ns := &NetShow{Nets: []Net{}}
	ns.Err = findError(root, "net")
	section := root.get("net")
	if section == nil {
		return ns
	}
	ns.Found = true
	items := section.kids
	if !section.list {
		// A single network printed as a mapping.
		items = []*node{section}
	}
	index := map[string]int{} // network name → position in Nets
	seen := map[string]bool{} // NIDs read
	for _, item := range items {
		name := scalar(item.get("net type"))
		for _, nin := range item.get("local ni(s)").items() {
			ni, ok := parseNI(nin)
			if !ok || seen[ni.NID] {
				ns.Skipped++
				continue
			}
			typ := name
			if !labelSafe(typ) {
				// The network is the NID's part after '@'.
				typ = ""
				if at := strings.LastIndexByte(ni.NID, '@'); at >= 0 {
					typ = ni.NID[at+1:]
				}
			}
			if !labelSafe(typ) {
				ns.Skipped++ // no network to file it under
				continue
			}
			seen[ni.NID] = true
			i, ok := index[typ]
			if !ok {
				i = len(ns.Nets)
				index[typ] = i
				ns.Nets = append(ns.Nets, Net{Type: typ, NIs: []NI{}})
			}
			ns.Nets[i].NIs = append(ns.Nets[i].NIs, ni)
		}
		if _, ok := index[name]; !ok && labelSafe(name) {
			// A network without NIs is still a network.
			index[name] = len(ns.Nets)
			ns.Nets = append(ns.Nets, Net{Type: name, NIs: []NI{}})
		}
	}
	return ns
}

// items returns the entries of a sequence, or the node itself when it is
// a lone mapping where a sequence was expected.
func (n *node) items() []*node {
	switch {
	case n == nil:
		return nil
	case n.list:
		return n.kids
	case len(n.kids) > 0:
		return []*node{n}
	}
	return nil
}

func parseNI(n *node) (NI, bool) {
	ni := NI{
		NID:         scalar(n.get("nid")),
		Status:      scalar(n.get("status")),
		Interfaces:  interfaces(n.get("interfaces")),
		Tunables:    tunables(n.get("tunables")),
		LNDTunables: tunables(n.get("lnd tunables")),
		DevCPT:      number(n.get("dev cpt")),
		CPT:         scalar(n.get("cpt")),
	}
	if !labelSafe(ni.NID) {
		return ni, false
	}
	if s := n.get("statistics"); s != nil {
		ni.Stats = NIStats{Present: true,
			SendCount: number(s.get("send count")),
			RecvCount: number(s.get("recv count")),
			DropCount: number(s.get("drop count")),
		}
	}
	ni.Sent = msgStats(n.get("sent stats"))
	ni.Received = msgStats(n.get("received stats"))
	ni.Dropped = msgStats(n.get("dropped stats"))
	if h := n.get("health stats"); h != nil {
		ni.Health = Health{Present: true,
			Value:      number(h.get("health value")),
			FatalError: number(h.get("fatal error")),
			Interrupts: number(h.get("interrupts")),
			Dropped:    number(h.get("dropped")),
			Aborted:    number(h.get("aborted")),
			NoRoute:    number(h.get("no route")),
			Timeouts:   number(h.get("timeouts")),
			Error:      number(h.get("error")),
			PingCount:  number(h.get("ping count")),
			NextPing:   number(h.get("next ping")),
		}
	}
	return ni, true
}

func msgStats(n *node) MsgStats {
	if n == nil {
		return MsgStats{}
	}
	return MsgStats{Present: true,
		Put:   number(n.get("put")),
		Get:   number(n.get("get")),
		Reply: number(n.get("reply")),
		Ack:   number(n.get("ack")),
		Hello: number(n.get("hello")),
	}
}

// interfaces reads "interfaces", printed as a mapping ("0: ib0") by every
// lnetctl seen, and also accepted as a sequence or a single name.
func interfaces(n *node) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(s string) {
		if labelSafe(s) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	switch {
	case n == nil:
	case len(n.kids) == 0:
		add(n.value)
	default:
		for _, k := range n.kids {
			add(scalar(k))
		}
	}
	return out
}

// tunables reads the numeric entries of a tunables mapping; others (such
// as strings) are skipped, and so is a name printed twice.
func tunables(n *node) []Tunable {
	out := []Tunable{}
	if n == nil || n.list {
		return out
	}
	seen := map[string]bool{}
	for _, k := range n.kids {
		v := number(k)
		name := strings.ReplaceAll(k.key, " ", "_")
		if v.OK && labelSafe(name) && !seen[name] {
			seen[name] = true
			out = append(out, Tunable{Name: name, Value: v.N})
		}
	}
	return out
}
