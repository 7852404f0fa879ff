package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/internal/lustre"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lctl"
)

// The recovery collector: recovery_status of every OST and MDT, the state a
// target is in after a restart or failover and how its clients came back.

func init() {
	registerLustre("recovery", true, lustre.Recovery, []string{"obdfilter.*.recovery_status", "mdt.*.recovery_status"},
		func(param string) bool {
			component, _, leaf, ok := obdParam(param)
			return ok && leaf == "recovery_status" && component != "mgs"
		},
		func(snap *lustre.Snapshot, ch chan<- prometheus.Metric) {
			for p := range owned(snap.Recovery, "recovery") {
				component, target, _, _ := obdParam(p.Name)
				sendRecovery(ch, &p.V, component, target)
			}
		})
}

var (
	recoveryLabels     = []string{"component", "target"}
	recoveryStatusDesc = prometheus.NewDesc("lustre_recovery_status",
		"Recovery state of the target as a state set: 1 for the status recovery_status prints (COMPLETE, INACTIVE, RECOVERING, WAITING, WAITING_FOR_CLIENTS, or another it may print), 0 for the others.",
		[]string{"component", "target", "status"}, nil)
	recoveryCompletedDesc = prometheus.NewDesc("lustre_recovery_status_completed_clients",
		"Clients that completed recovery (completed_clients).", recoveryLabels, nil)
	recoveryConnectedDesc = prometheus.NewDesc("lustre_recovery_status_connected_clients",
		"Clients that reconnected during recovery (connected_clients, printed while recovering).", recoveryLabels, nil)
	recoveryTotalDesc = prometheus.NewDesc("lustre_recovery_status_total_clients",
		"Clients the target knew before it restarted, and expects back (the denominator of completed_clients or connected_clients).", recoveryLabels, nil)
	recoveryEvictedDesc = prometheus.NewDesc("lustre_recovery_status_evicted_clients",
		"Clients evicted because they did not come back in time (evicted_clients).", recoveryLabels, nil)
	recoveryReplayedDesc = prometheus.NewDesc("lustre_recovery_status_replayed_requests",
		"Requests the clients replayed during recovery (replayed_requests).", recoveryLabels, nil)
	recoveryDurationDesc = prometheus.NewDesc("lustre_recovery_status_duration_seconds",
		"How long the last recovery took (recovery_duration).", recoveryLabels, nil)
	recoveryRemainingDesc = prometheus.NewDesc("lustre_recovery_status_time_remaining_seconds",
		"Time left before recovery gives up on the missing clients (time_remaining, printed while recovering).", recoveryLabels, nil)
	recoveryStartDesc = prometheus.NewDesc("lustre_recovery_status_start_timestamp_seconds",
		"When the last recovery started, in Unix seconds (recovery_start).", recoveryLabels, nil)
)

func sendRecovery(ch chan<- prometheus.Metric, r *lctl.Recovery, component, target string) {
	if r.Has&lctl.RecStatus != 0 {
		known := false
		for _, s := range lctl.RecoveryStatuses {
			v := 0.0
			if s == r.Status {
				v, known = 1, true
			}
			ch <- gauge(recoveryStatusDesc, v, component, target, s)
		}
		if !known {
			ch <- gauge(recoveryStatusDesc, 1, component, target, r.Status)
		}
	}
	for _, f := range []struct {
		bit  lctl.RecoveryField
		desc *prometheus.Desc
		v    float64
	}{
		{lctl.RecCompleted, recoveryCompletedDesc, float64(r.CompletedClients)},
		{lctl.RecConnected, recoveryConnectedDesc, float64(r.ConnectedClients)},
		{lctl.RecRecoverable, recoveryTotalDesc, float64(r.RecoverableClients)},
		{lctl.RecEvicted, recoveryEvictedDesc, float64(r.EvictedClients)},
		{lctl.RecReplayed, recoveryReplayedDesc, float64(r.ReplayedRequests)},
		{lctl.RecDuration, recoveryDurationDesc, r.Duration},
		{lctl.RecTimeRemaining, recoveryRemainingDesc, r.TimeRemaining},
		{lctl.RecStart, recoveryStartDesc, r.Start},
	} {
		if r.Has&f.bit != 0 {
			ch <- gauge(f.desc, f.v, component, target)
		}
	}
}
