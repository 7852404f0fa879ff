package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre/lnet"
)

// The lnet collector's metrics. Names keep the anchors' where they have
// one, under lustre_lnet_: HPE/GSI lustre_exporter's global
// lustre_send_count_total becomes lustre_lnet_send_count_total, and
// lustrefs-exporter's per-NID lustre_send_count_total becomes
// lustre_lnet_ni_send_count_total (one name cannot hold both: the two
// anchors use it for different things). Others follow lnetctl's keys, as
// DataDog's lustre.net.* do. docs/lnet-metrics.md has the table.

var (
	lnetNILabels = []string{"net_type", "nid"}

	lnetctlRunsDesc = prometheus.NewDesc(
		prometheus.BuildFQName(Namespace, "lnetctl", "runs_total"),
		"lnetctl runs by command (net show, stats show) and result: ok, partial (non-zero exit after a whole output), failed, killed (deadline).",
		[]string{"command", "result"}, nil)

	lnetNIStatusDesc = lnetDesc("ni_status",
		"Whether the local NI is up (1) or down (0), from lnetctl net show.", lnetNILabels...)
	lnetNIInterfaceDesc = lnetDesc("ni_interface_info",
		"The kernel interfaces a local NI runs over; always 1.", append(lnetNILabels, "interface")...)
	lnetNITunableDesc = lnetDesc("ni_tunable",
		"A local NI's tunables (peer_timeout in seconds, peer_credits, peer_buffer_credits, credits), from lnetctl net show -v.", append(lnetNILabels, "tunable")...)
	lnetNILNDTunableDesc = lnetDesc("ni_lnd_tunable",
		"A local NI's LND tunables (conns_per_peer, timeout in seconds, tos, map_on_demand, …), from lnetctl net show -v.", append(lnetNILabels, "tunable")...)
	lnetNIMsgDescs = [3]*prometheus.Desc{
		lnetDesc("ni_sent_messages_total", "LNet messages sent by the local NI, by type (put, get, reply, ack, hello).", append(lnetNILabels, "msg_type")...),
		lnetDesc("ni_received_messages_total", "LNet messages received by the local NI, by type (put, get, reply, ack, hello).", append(lnetNILabels, "msg_type")...),
		lnetDesc("ni_dropped_messages_total", "LNet messages dropped by the local NI, by type (put, get, reply, ack, hello).", append(lnetNILabels, "msg_type")...),
	}
)

func lnetDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("lustre_lnet_"+name, help, labels, nil)
}

type lnetNIMetric struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	get  func(*lnet.NI) lnet.Value
}

// lnetNIMetrics are the per-NI numbers of lnetctl net show -v 4.
var lnetNIMetrics = []lnetNIMetric{
	{lnetDesc("ni_send_count_total", "LNet messages sent through the local NI (net show: statistics send_count).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Stats.SendCount }},
	{lnetDesc("ni_receive_count_total", "LNet messages received through the local NI (net show: statistics recv_count).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Stats.RecvCount }},
	{lnetDesc("ni_drop_count_total", "LNet messages dropped by the local NI (net show: statistics drop_count).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Stats.DropCount }},
	{lnetDesc("ni_health_value", "Health value of the local NI: 1000 when healthy, lowered by each failure (health stats: health value).", lnetNILabels...),
		prometheus.GaugeValue, func(ni *lnet.NI) lnet.Value { return ni.Health.Value }},
	{lnetDesc("ni_health_fatal_error", "Non-zero while the local NI has a fatal error, such as its link down (health stats: fatal_error).", lnetNILabels...),
		prometheus.GaugeValue, func(ni *lnet.NI) lnet.Value { return ni.Health.FatalError }},
	{lnetDesc("ni_health_interrupts_total", "Sends through the local NI that failed: interrupted (health stats: interrupts).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.Interrupts }},
	{lnetDesc("ni_health_dropped_total", "Sends through the local NI that failed: dropped (health stats: dropped).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.Dropped }},
	{lnetDesc("ni_health_aborted_total", "Sends through the local NI that failed: aborted (health stats: aborted).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.Aborted }},
	{lnetDesc("ni_health_no_route_total", "Sends through the local NI that failed: no route (health stats: no route).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.NoRoute }},
	{lnetDesc("ni_health_timeouts_total", "Sends through the local NI that failed: timed out (health stats: timeouts).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.Timeouts }},
	{lnetDesc("ni_health_errors_total", "Sends through the local NI that failed: other error (health stats: error).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.Error }},
	{lnetDesc("ni_health_ping_count_total", "Recovery pings of the local NI (health stats: ping_count).", lnetNILabels...),
		prometheus.CounterValue, func(ni *lnet.NI) lnet.Value { return ni.Health.PingCount }},
}

// lnetMsgTypes are the message types of sent_stats, received_stats and
// dropped_stats.
var lnetMsgTypes = [5]string{"put", "get", "reply", "ack", "hello"}

func lnetMsgValues(m *lnet.MsgStats) [5]lnet.Value {
	return [5]lnet.Value{m.Put, m.Get, m.Reply, m.Ack, m.Hello}
}

type lnetStatsMetric struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	get  func(*lnet.Stats) lnet.Value
}

func lnetCounter(name, help string, get func(*lnet.Stats) lnet.Value) lnetStatsMetric {
	return lnetStatsMetric{lnetDesc(name, help), prometheus.CounterValue, get}
}

// lnetStatsMetrics are LNet's global counters, from lnetctl stats show.
var lnetStatsMetrics = []lnetStatsMetric{
	{lnetDesc("msgs_alloc", "LNet messages allocated now (stats show: msgs_alloc)."), prometheus.GaugeValue,
		func(s *lnet.Stats) lnet.Value { return s.MsgsAlloc }},
	{lnetDesc("msgs_max", "Most LNet messages allocated at once since LNet started (stats show: msgs_max)."), prometheus.GaugeValue,
		func(s *lnet.Stats) lnet.Value { return s.MsgsMax }},
	{lnetDesc("rst_alloc", "LNet response trackers allocated now (stats show: rst_alloc)."), prometheus.GaugeValue,
		func(s *lnet.Stats) lnet.Value { return s.RstAlloc }},
	lnetCounter("errors_total", "LNet errors (stats show: errors).", func(s *lnet.Stats) lnet.Value { return s.Errors }),
	lnetCounter("send_count_total", "LNet messages sent by this node (stats show: send_count).", func(s *lnet.Stats) lnet.Value { return s.SendCount }),
	lnetCounter("receive_count_total", "LNet messages received by this node (stats show: recv_count).", func(s *lnet.Stats) lnet.Value { return s.RecvCount }),
	lnetCounter("route_count_total", "LNet messages routed through this node (stats show: route_count).", func(s *lnet.Stats) lnet.Value { return s.RouteCount }),
	lnetCounter("drop_count_total", "LNet messages dropped by this node (stats show: drop_count).", func(s *lnet.Stats) lnet.Value { return s.DropCount }),
	lnetCounter("send_bytes_total", "Bytes of LNet messages sent by this node (stats show: send_length).", func(s *lnet.Stats) lnet.Value { return s.SendLength }),
	lnetCounter("receive_bytes_total", "Bytes of LNet messages received by this node (stats show: recv_length).", func(s *lnet.Stats) lnet.Value { return s.RecvLength }),
	lnetCounter("route_bytes_total", "Bytes of LNet messages routed through this node (stats show: route_length).", func(s *lnet.Stats) lnet.Value { return s.RouteLength }),
	lnetCounter("drop_bytes_total", "Bytes of LNet messages dropped by this node (stats show: drop_length).", func(s *lnet.Stats) lnet.Value { return s.DropLength }),
	lnetCounter("resend_count_total", "LNet messages resent after a failure (stats show: resend_count).", func(s *lnet.Stats) lnet.Value { return s.ResendCount }),
	lnetCounter("response_timeout_count_total", "Expected responses (ACK, REPLY) not received in time (stats show: response_timeout_count).",
		func(s *lnet.Stats) lnet.Value { return s.ResponseTimeoutCount }),
	lnetCounter("local_interrupt_count_total", "Sends that failed locally: interrupted (stats show: local_interrupt_count).",
		func(s *lnet.Stats) lnet.Value { return s.LocalInterruptCount }),
	lnetCounter("local_dropped_count_total", "Sends that failed locally: dropped (stats show: local_dropped_count).",
		func(s *lnet.Stats) lnet.Value { return s.LocalDroppedCount }),
	lnetCounter("local_aborted_count_total", "Sends that failed locally: aborted (stats show: local_aborted_count).",
		func(s *lnet.Stats) lnet.Value { return s.LocalAbortedCount }),
	lnetCounter("local_no_route_count_total", "Sends that failed locally: no route (stats show: local_no_route_count).",
		func(s *lnet.Stats) lnet.Value { return s.LocalNoRouteCount }),
	lnetCounter("local_timeout_count_total", "Sends that failed locally: timed out (stats show: local_timeout_count).",
		func(s *lnet.Stats) lnet.Value { return s.LocalTimeoutCount }),
	lnetCounter("local_error_count_total", "Sends that failed locally: other error (stats show: local_error_count).",
		func(s *lnet.Stats) lnet.Value { return s.LocalErrorCount }),
	lnetCounter("remote_dropped_count_total", "Sends that failed at the remote end: dropped (stats show: remote_dropped_count).",
		func(s *lnet.Stats) lnet.Value { return s.RemoteDroppedCount }),
	lnetCounter("remote_error_count_total", "Sends that failed at the remote end: error (stats show: remote_error_count).",
		func(s *lnet.Stats) lnet.Value { return s.RemoteErrorCount }),
	lnetCounter("remote_timeout_count_total", "Sends that failed at the remote end: timed out (stats show: remote_timeout_count).",
		func(s *lnet.Stats) lnet.Value { return s.RemoteTimeoutCount }),
	lnetCounter("network_timeout_count_total", "Sends that failed in the network: timed out (stats show: network_timeout_count).",
		func(s *lnet.Stats) lnet.Value { return s.NetworkTimeoutCount }),
}

// sendLNet sends one sample, unless the value is absent or, for a
// counter, negative (garbage, not a count).
func sendLNet(ch chan<- prometheus.Metric, desc *prometheus.Desc, typ prometheus.ValueType, v lnet.Value, labels ...string) {
	if !v.OK || (typ == prometheus.CounterValue && v.N < 0) {
		return
	}
	// The parser hands over only label-safe strings; an error here would
	// be a bug, and a bug must not panic a scrape.
	if m, err := prometheus.NewConstMetric(desc, typ, float64(v.N), labels...); err == nil {
		ch <- m
	}
}

func emitLNetNet(ch chan<- prometheus.Metric, ns *lnet.NetShow) {
	if ns == nil {
		return
	}
	for _, net := range ns.Nets {
		for i := range net.NIs {
			ni := &net.NIs[i]
			switch ni.Status {
			case "up":
				sendLNet(ch, lnetNIStatusDesc, prometheus.GaugeValue, lnet.Value{N: 1, OK: true}, net.Type, ni.NID)
			case "down":
				sendLNet(ch, lnetNIStatusDesc, prometheus.GaugeValue, lnet.Value{N: 0, OK: true}, net.Type, ni.NID)
			}
			for _, intf := range ni.Interfaces {
				sendLNet(ch, lnetNIInterfaceDesc, prometheus.GaugeValue, lnet.Value{N: 1, OK: true}, net.Type, ni.NID, intf)
			}
			for _, m := range lnetNIMetrics {
				sendLNet(ch, m.desc, m.typ, m.get(ni), net.Type, ni.NID)
			}
			for k, stats := range [3]*lnet.MsgStats{&ni.Sent, &ni.Received, &ni.Dropped} {
				for j, v := range lnetMsgValues(stats) {
					sendLNet(ch, lnetNIMsgDescs[k], prometheus.CounterValue, v, net.Type, ni.NID, lnetMsgTypes[j])
				}
			}
			for _, t := range ni.Tunables {
				sendLNet(ch, lnetNITunableDesc, prometheus.GaugeValue, lnet.Value{N: t.Value, OK: true}, net.Type, ni.NID, t.Name)
			}
			for _, t := range ni.LNDTunables {
				sendLNet(ch, lnetNILNDTunableDesc, prometheus.GaugeValue, lnet.Value{N: t.Value, OK: true}, net.Type, ni.NID, t.Name)
			}
		}
	}
}

func emitLNetStats(ch chan<- prometheus.Metric, s *lnet.Stats) {
	if s == nil {
		return
	}
	for _, m := range lnetStatsMetrics {
		sendLNet(ch, m.desc, m.typ, m.get(s))
	}
}
