package lctl

// MatchPattern reports whether a parameter name matches a get_param
// pattern, where '*' stands for any run of characters and '?' for one, as
// lctl's globbing does within the parameter tree.
func MatchPattern(pattern, name string) bool {
	// Iterative glob with a single backtrack point: linear in practice.
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
