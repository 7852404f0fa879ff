// Package peer names the host a connection comes from, as the exporter's
// per-address bounds count it: the cap on one address's connections and
// the budget of its wrong passwords.
//
// A client picks its source address within what it holds, so a key is
// what one client cannot multiply:
//
//   - IPv4: the address (IPv4-mapped IPv6 addresses are IPv4).
//   - IPv6: the /64 prefix, the smallest block a host is usually given
//     (SLAAC, privacy addresses and a routed /64 hand one host all of it).
//   - The exporter's own host: every loopback address (127.0.0.0/8 and
//     ::1: on Linux a local client may bind any of 127.0.0.0/8) and a
//     connection whose source is the address it came in on, under one key,
//     Local. A local user may still connect from each of the host's other
//     addresses: each is a key of its own.
//   - Anything else (a Unix socket from systemd, vsock): the network and
//     the address text, with the port or vsock port left out where it can
//     be.
package peer

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Key names the host a connection comes from.
type Key string

// Local is the key of connections from the exporter's own host.
const Local Key = "local"

// Of returns the key of a connection from remote, accepted on local (nil
// if unknown).
func Of(remote, local net.Addr) Key {
	if remote == nil {
		return "unknown"
	}
	if tcp, ok := remote.(*net.TCPAddr); ok {
		ip, ok := netip.AddrFromSlice(tcp.IP)
		if !ok {
			return "unknown"
		}
		return ofIP(ip, localIP(local))
	}
	s := remote.String()
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ofIP(ap.Addr(), localIP(local))
	}
	// vsock's "vm(3):1024", or a Unix socket's path (often empty): the
	// port, where there is one, changes with each connection.
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		s = s[:i]
	}
	return Key(remote.Network() + ":" + s)
}

// OfRequest returns the key of the connection r came on: its RemoteAddr
// (an IP and port with every listener exporter-toolkit makes but a Unix
// socket) and the local address net/http puts in its context.
func OfRequest(r *http.Request) Key {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ofIP(ap.Addr(), localIP(local))
	}
	network := "unknown"
	if local != nil {
		network = local.Network()
	}
	s := r.RemoteAddr
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		s = s[:i]
	}
	return Key(network + ":" + s)
}

func localIP(local net.Addr) netip.Addr {
	if tcp, ok := local.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(tcp.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

func ofIP(ip, local netip.Addr) Key {
	ip = ip.Unmap().WithZone("")
	switch {
	case ip.IsLoopback(), ip == local:
		return Local
	case ip.Is4():
		return Key(ip.String())
	}
	prefix, _ := ip.Prefix(64)
	return Key(prefix.String())
}
