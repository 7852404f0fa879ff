package peer

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func tcp(s string) *net.TCPAddr {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s))
}

func TestOf(t *testing.T) {
	server := tcp("192.0.2.10:9848")
	for _, c := range []struct {
		remote net.Addr
		local  net.Addr
		want   Key
	}{
		{tcp("192.0.2.7:40000"), server, "192.0.2.7"},
		{tcp("192.0.2.7:40001"), server, "192.0.2.7"}, // the port is not the host
		{tcp("[::ffff:192.0.2.7]:40000"), server, "192.0.2.7"},
		{tcp("192.0.2.8:40000"), server, "192.0.2.8"},
		{tcp("[2001:db8:1:2:a:b:c:d]:40000"), server, "2001:db8:1:2::/64"},
		{tcp("[2001:db8:1:2:ffff::1]:40000"), server, "2001:db8:1:2::/64"},
		{tcp("[2001:db8:1:3::1]:40000"), server, "2001:db8:1:3::/64"},
		{tcp("[fe80::1%eth0]:40000"), server, "fe80::/64"},
		// The exporter's own host, whatever loopback address or port.
		{tcp("127.0.0.1:40000"), server, Local},
		{tcp("127.45.6.7:40000"), server, Local},
		{tcp("[::1]:40000"), server, Local},
		{tcp("[::ffff:127.0.0.1]:40000"), server, Local},
		{tcp("192.0.2.10:40000"), server, Local},
		{tcp("192.0.2.10:40000"), nil, "192.0.2.10"},
		{&net.UnixAddr{Name: "", Net: "unix"}, nil, "unix:"},
		{&net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, nil, "unix:/run/x.sock"},
		{nil, server, "unknown"},
	} {
		if got := Of(c.remote, c.local); got != c.want {
			t.Errorf("Of(%v, %v) = %q, want %q", c.remote, c.local, got, c.want)
		}
	}
}

func request(remote string, local net.Addr) *http.Request {
	r, _ := http.NewRequest("GET", "/metrics", nil)
	r.RemoteAddr = remote
	if local != nil {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
	}
	return r
}

// A request's key is its connection's.
func TestOfRequest(t *testing.T) {
	server := tcp("192.0.2.10:9848")
	for _, remote := range []string{"192.0.2.7:40000", "[2001:db8:1:2:a:b:c:d]:40000", "127.0.0.2:1", "[::1]:2", "192.0.2.10:3"} {
		want := Of(tcp(remote), server)
		if got := OfRequest(request(remote, server)); got != want {
			t.Errorf("OfRequest(%s) = %q, want %q as its connection", remote, got, want)
		}
	}
	if got := OfRequest(request("@", &net.UnixAddr{Name: "/run/x.sock", Net: "unix"})); got != "unix:@" {
		t.Errorf("a Unix socket's request: %q", got)
	}
}

// Whatever RemoteAddr holds, a key comes back, the port never in it.
func FuzzOfRequest(f *testing.F) {
	for _, s := range []string{"192.0.2.7:40000", "[2001:db8::1]:1", "[::1]:80", "@", "", "vm(3):1024", "[fe80::1%eth0]:2", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		k := OfRequest(request(remote, tcp("192.0.2.10:9848")))
		if k == "" {
			t.Fatalf("%q: empty key", remote)
		}
		if ap, err := netip.ParseAddrPort(remote); err == nil {
			if strings.Contains(string(k), "%") {
				t.Errorf("%q: key %q keeps the zone", remote, k)
			}
			other := netip.AddrPortFrom(ap.Addr(), ap.Port()+1)
			if k2 := OfRequest(request(other.String(), tcp("192.0.2.10:9848"))); k2 != k {
				t.Errorf("%q and %q: keys %q and %q", remote, other, k, k2)
			}
		}
	})
}
