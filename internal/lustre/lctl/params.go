package lctl

import "strings"

// Parameter names of the Lustre families other than job_stats. lctl prints
// a parameter's path with '/' turned into '.', so a name such as
// "obdfilter.fs-OST0000.exports.10.0.0.1@tcp.stats" cannot be split on
// every dot: a NID holds dots (IPv4) or colons (IPv6). The helpers here cut
// names at the places Lustre's tree has a fixed shape instead.

// DeviceParam splits "<prefix>.<device>.<leaf>" where the device holds no
// dot, e.g. "osd-ldiskfs.fs-OST0000.kbytestotal" → ("osd-ldiskfs",
// "fs-OST0000", "kbytestotal"). The leaf may itself hold dots
// ("quota_slave.acct_user").
func DeviceParam(name string) (prefix, device, leaf string, ok bool) {
	prefix, rest, found := strings.Cut(name, ".")
	if !found || prefix == "" {
		return "", "", "", false
	}
	device, leaf, found = strings.Cut(rest, ".")
	if !found || device == "" || leaf == "" || strings.ContainsRune(device, '*') {
		return "", "", "", false
	}
	return prefix, device, leaf, true
}

// ExportParam recognizes the per-client parameters of a target,
// "<obd>.<target>.exports.<nid>.<leaf>" (obd is obdfilter, mdt or mgs), and
// returns the component (ost, mdt, mgs), the target, the client's NID and
// the leaf. The NID is everything between "exports." and the last dot:
// "10.0.0.1@o2ib", "0@lo", "2001:db8::1@tcp", "[2001:db8::1]@tcp".
func ExportParam(name string) (component, target, nid, leaf string, ok bool) {
	prefix, device, rest, found := DeviceParam(name)
	if !found {
		return "", "", "", "", false
	}
	rest, found = strings.CutPrefix(rest, "exports.")
	if !found {
		return "", "", "", "", false
	}
	dot := strings.LastIndexByte(rest, '.')
	if dot <= 0 || dot == len(rest)-1 {
		return "", "", "", "", false
	}
	nid, leaf = rest[:dot], rest[dot+1:]
	if !strings.ContainsRune(nid, '@') {
		return "", "", "", "", false
	}
	switch prefix {
	case "obdfilter":
		component = "ost"
	case "mdt":
		component = "mdt"
	case "mgs":
		component = "mgs"
	default:
		return "", "", "", "", false
	}
	return component, device, nid, leaf, true
}

// TargetComponent tells a target's kind from its name: "fs-OST000a" is an
// ost, "fs-MDT0000" an mdt, "MGS" the mgs; anything else (a client-side
// device, a name Lustre may invent later) is "".
func TargetComponent(target string) string {
	if target == "MGS" || strings.HasSuffix(target, "-MGS") {
		return "mgs"
	}
	for _, kind := range [...]struct{ tag, component string }{{"OST", "ost"}, {"MDT", "mdt"}} {
		i := strings.LastIndex(target, kind.tag)
		if i < 0 || (i > 0 && target[i-1] != '-') {
			continue
		}
		if index := target[i+len(kind.tag):]; index != "" && isHex(index) {
			return kind.component
		}
	}
	return ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ParamLeaf is the last dotted part of a parameter name ("kbytesfree" of
// "osd-ldiskfs.fs-OST0000.kbytesfree"); collectors use it to report bad
// input once per kind of parameter rather than once per target.
func ParamLeaf(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}
