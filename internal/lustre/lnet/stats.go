package lnet

import (
	"io"
	"strings"
)

// Stats is LNet's global counters, from `lnetctl stats show` (or the
// debugfs file lnet/stats, which has the first eleven). Fields absent
// from the output are not OK: Lustre 2.10 prints no health counters.
type Stats struct {
	// Found is set when the output has a "statistics" section.
	Found bool `json:"found"`
	// Err is an error lnetctl printed instead of the statistics.
	Err *Error `json:"error,omitempty"`

	MsgsAlloc Value `json:"msgs_alloc"` // messages allocated now
	MsgsMax   Value `json:"msgs_max"`   // most messages allocated at once
	RstAlloc  Value `json:"rst_alloc"`  // response trackers allocated now
	Errors    Value `json:"errors"`

	SendCount   Value `json:"send_count"`
	RecvCount   Value `json:"recv_count"`
	RouteCount  Value `json:"route_count"`
	DropCount   Value `json:"drop_count"`
	SendLength  Value `json:"send_length"` // bytes
	RecvLength  Value `json:"recv_length"`
	RouteLength Value `json:"route_length"`
	DropLength  Value `json:"drop_length"`

	ResendCount          Value `json:"resend_count"`
	ResponseTimeoutCount Value `json:"response_timeout_count"`
	LocalInterruptCount  Value `json:"local_interrupt_count"`
	LocalDroppedCount    Value `json:"local_dropped_count"`
	LocalAbortedCount    Value `json:"local_aborted_count"`
	LocalNoRouteCount    Value `json:"local_no_route_count"`
	LocalTimeoutCount    Value `json:"local_timeout_count"`
	LocalErrorCount      Value `json:"local_error_count"`
	RemoteDroppedCount   Value `json:"remote_dropped_count"`
	RemoteErrorCount     Value `json:"remote_error_count"`
	RemoteTimeoutCount   Value `json:"remote_timeout_count"`
	NetworkTimeoutCount  Value `json:"network_timeout_count"`
}

// fields maps the normalized keys of `stats show` to their fields.
func (s *Stats) fields() map[string]*Value {
	return map[string]*Value{
		"msgs alloc": &s.MsgsAlloc, "msgs max": &s.MsgsMax, "rst alloc": &s.RstAlloc, "errors": &s.Errors,
		"send count": &s.SendCount, "recv count": &s.RecvCount, "route count": &s.RouteCount, "drop count": &s.DropCount,
		"send length": &s.SendLength, "recv length": &s.RecvLength, "route length": &s.RouteLength, "drop length": &s.DropLength,
		"resend count": &s.ResendCount, "response timeout count": &s.ResponseTimeoutCount,
		"local interrupt count": &s.LocalInterruptCount, "local dropped count": &s.LocalDroppedCount,
		"local aborted count": &s.LocalAbortedCount, "local no route count": &s.LocalNoRouteCount,
		"local timeout count": &s.LocalTimeoutCount, "local error count": &s.LocalErrorCount,
		"remote dropped count": &s.RemoteDroppedCount, "remote error count": &s.RemoteErrorCount,
		"remote timeout count": &s.RemoteTimeoutCount, "network timeout count": &s.NetworkTimeoutCount,
	}
}

// ParseStats reads the output of `lnetctl stats show`. It returns an error
// only when reading r fails, with what was read before.
func ParseStats(r io.Reader) (*Stats, error) {
	root, err := readTree(r)
	s := &Stats{Err: findError(root, "statistics")}
	section := root.get("statistics")
	if section == nil {
		return s, err
	}
	s.Found = true
	fields := s.fields()
	for _, k := range section.kids {
		if f := fields[k.key]; f != nil && !f.OK {
			*f = number(k)
		}
	}
	return s, err
}

// procStatsOrder is the order of the numbers in debugfs lnet/stats (and
// /proc/sys/lnet/stats before it).
var procStatsOrder = []string{"msgs alloc", "msgs max", "errors", "send count", "recv count", "route count",
	"drop count", "send length", "recv length", "route length", "drop length"}

// ParseProcStats reads debugfs lnet/stats: one line of eleven numbers.
// Found is set when the line has at least one number; what does not parse
// is left absent.
func ParseProcStats(r io.Reader) (*Stats, error) {
	line, err := firstLine(r)
	s := &Stats{}
	fields := s.fields()
	for i, f := range strings.Fields(line) {
		if i == len(procStatsOrder) {
			break
		}
		if v := parseNumber(f); v.OK {
			*fields[procStatsOrder[i]] = v
			s.Found = true
		}
	}
	return s, err
}

// ParseMemused reads debugfs lnet/lnet_memused (bytes LNet has allocated),
// also printed by `lctl get_param -n lnet_memused`.
func ParseMemused(r io.Reader) (Value, error) {
	line, err := firstLine(r)
	return parseNumber(line), err
}

// firstLine returns the first non-blank line of r, without its blanks.
func firstLine(r io.Reader) (string, error) {
	lines, err := readLines(r)
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			return l, err
		}
	}
	return "", err
}
