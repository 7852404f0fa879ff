package lctl

import "bytes"

// recovery_status (obdfilter.*.recovery_status, mdt.*.recovery_status) is a
// list of "key: value" lines:
//
//	status: COMPLETE
//	recovery_start: 1620410016
//	recovery_duration: 150
//	completed_clients: 4/8
//	replayed_requests: 0
//	last_transno: 4294967296
//	VBR: ENABLED
//
// While a target recovers it prints time_remaining, connected_clients a/b,
// req_replay_clients, lock_repay_clients (sic), evicted_clients instead.
// An idle target prints the single line "status: INACTIVE", which lctl puts
// on the header line.

// Recovery holds the fields of one recovery_status that the exporter uses.
// A field is valid when its bit is set in Has.
type Recovery struct {
	// Status is as printed: COMPLETE, INACTIVE, RECOVERING, WAITING,
	// WAITING_FOR_CLIENTS, … Interned for the known values.
	Status string
	Has    RecoveryField

	Start         float64 // recovery_start, Unix seconds
	Duration      float64 // recovery_duration, seconds (when complete)
	TimeRemaining float64 // time_remaining, seconds (while recovering)

	CompletedClients uint64 // completed_clients a (of a/b)
	ConnectedClients uint64 // connected_clients a (of a/b)
	// RecoverableClients is the b of "completed_clients: a/b" or
	// "connected_clients: a/b": the clients known before the restart.
	RecoverableClients uint64
	EvictedClients     uint64
	ReplayedRequests   uint64

	// Malformed counts lines that could not be read.
	Malformed int
}

// RecoveryField is a bit set of the fields a recovery_status printed.
type RecoveryField uint16

const (
	RecStatus RecoveryField = 1 << iota
	RecStart
	RecDuration
	RecTimeRemaining
	RecCompleted
	RecConnected
	RecRecoverable
	RecEvicted
	RecReplayed
)

// RecoveryStatuses are the values of status Lustre prints
// (lustre/ldlm/ldlm_lib.c, target_recovery_status and friends).
var RecoveryStatuses = []string{"COMPLETE", "INACTIVE", "RECOVERING", "WAITING", "WAITING_FOR_CLIENTS"}

// RecoveryParser is the SectionParser of a recovery_status parameter.
type RecoveryParser struct {
	rec  Recovery
	done func(rec *Recovery, complete bool)
}

// NewRecoveryParser returns a parser that hands the status to done.
func NewRecoveryParser(done func(rec *Recovery, complete bool)) *RecoveryParser {
	return &RecoveryParser{done: done}
}

// Line implements SectionParser.
func (p *RecoveryParser) Line(line []byte) {
	rest := trimLeft(line)
	if len(rest) == 0 {
		return
	}
	key, value, ok := splitKey(rest)
	if !ok {
		p.rec.Malformed++
		return
	}
	r := &p.rec
	switch string(key) {
	case "status":
		if s := internStatus(value); s != "" {
			r.Status, r.Has = s, r.Has|RecStatus
			return
		}
	case "recovery_start":
		if t, ok := parseSeconds(value); ok {
			r.Start, r.Has = t, r.Has|RecStart
			return
		}
	case "recovery_duration":
		if t, ok := parseSeconds(value); ok {
			r.Duration, r.Has = t, r.Has|RecDuration
			return
		}
	case "time_remaining":
		if t, ok := parseSeconds(value); ok {
			r.TimeRemaining, r.Has = t, r.Has|RecTimeRemaining
			return
		}
	case "completed_clients":
		if p.fraction(value, &r.CompletedClients, RecCompleted) {
			return
		}
	case "connected_clients":
		if p.fraction(value, &r.ConnectedClients, RecConnected) {
			return
		}
	case "evicted_clients":
		if v, ok := parseUint(value); ok {
			r.EvictedClients, r.Has = v, r.Has|RecEvicted
			return
		}
	case "replayed_requests":
		if v, ok := parseUint(value); ok {
			r.ReplayedRequests, r.Has = v, r.Has|RecReplayed
			return
		}
	default:
		// last_transno, VBR, IR, req_replay_clients, …: not exported.
		return
	}
	r.Malformed++
}

// fraction reads "a/b" (or a bare "a", as a cut output may end) into *a and
// the recoverable clients.
func (p *RecoveryParser) fraction(value []byte, a *uint64, bit RecoveryField) bool {
	num, den, hasDen := bytes.Cut(value, []byte{'/'})
	n, ok := parseUint(num)
	if !ok {
		return false
	}
	if hasDen {
		d, ok := parseUint(den)
		if !ok {
			return false
		}
		p.rec.RecoverableClients, p.rec.Has = d, p.rec.Has|RecRecoverable
	}
	*a, p.rec.Has = n, p.rec.Has|bit
	return true
}

func internStatus(b []byte) string {
	for _, s := range RecoveryStatuses {
		if string(b) == s {
			return s
		}
	}
	if len(b) == 0 || len(b) > 32 {
		return ""
	}
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return ""
		}
	}
	return string(b)
}

// End implements SectionParser.
func (p *RecoveryParser) End(complete bool) {
	p.done(&p.rec, complete)
	p.rec = Recovery{}
}
