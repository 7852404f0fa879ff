package lctl

import "strings"

// MatchPattern reports whether a parameter name matches a get_param
// pattern as lctl's globbing does: lctl turns the dots between the
// components of a parameter path into directory separators and globs, so
// '*' and '?' stay within one component. A NID is one component although
// it holds dots ("exports.10.0.0.1@o2ib.stats").
func MatchPattern(pattern, name string) bool {
	pc := components(pattern)
	nc := components(name)
	if len(pc) != len(nc) {
		return false
	}
	for i := range pc {
		if !globComponent(pc[i], nc[i]) {
			return false
		}
	}
	return true
}

// components splits a parameter name at its dots, gluing back the dotted
// parts of an IPv4 NID ("10.0.0.1@o2ib").
func components(name string) []string {
	parts := strings.Split(name, ".")
	out := parts[:0]
	for _, p := range parts {
		if strings.IndexByte(p, '@') > 0 {
			// Pull the all-digit parts before it (at most three) into it.
			k := len(out)
			for k > 0 && len(out)-k < 3 && isDigits(out[k-1]) {
				k--
			}
			if k < len(out) {
				p = strings.Join(out[k:], ".") + "." + p
				out = out[:k]
			}
		}
		out = append(out, p)
	}
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// globComponent matches one component, '*' any run, '?' one character.
func globComponent(pattern, name string) bool {
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == name[n]):
			p++
			n++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
