package jobid

import "strings"

// match matches s against f exactly, every field valid for its code. Fields
// that may contain a literal character (an executable "python3.11" under
// "%e.%u", a host under "%h") are tried at every length, so the split is
// the one that makes the rest of the id fit. Ids are at most a few dozen
// bytes, so the backtracking is cheap.
func match(f Format, s string) ([]string, bool) {
	vals := make([]string, 0, len(f.items))
	if matchFrom(f, f.items, s, &vals) {
		return vals, true
	}
	return nil, false
}

func matchFrom(f Format, items []item, s string, vals *[]string) bool {
	if len(items) == 0 {
		return s == ""
	}
	it := items[0]
	if it.code == 0 {
		return strings.HasPrefix(s, it.literal) && matchFrom(f, items[1:], s[len(it.literal):], vals)
	}
	// A field: the last one takes the rest; any other tries each end,
	// longest first, so that an executable "python3.11" under "%e.%u"
	// keeps its dots and the uid still fits.
	if len(items) == 1 {
		if !fieldMatches(it.code, s, f) {
			return false
		}
		*vals = append(*vals, s)
		return true
	}
	next := items[1]
	for end := len(s); end >= 0; end-- {
		if next.code == 0 && !strings.HasPrefix(s[end:], next.literal) {
			continue
		}
		v := s[:end]
		if !fieldMatches(it.code, v, f) {
			continue
		}
		mark := len(*vals)
		*vals = append(*vals, v)
		if matchFrom(f, items[1:], s[end:], vals) {
			return true
		}
		*vals = (*vals)[:mark]
	}
	return false
}

// fieldMatches: may v stand for code c in a well-formed id? Only the job
// may be empty (Lustre prints nothing for an unset job variable).
func fieldMatches(c Code, v string, f Format) bool {
	if v == "" {
		return c == CodeJob
	}
	if c == CodeShortHost {
		// A fully qualified host still matches %H; it is shortened.
		return validField(CodeHost, v, f)
	}
	return validField(c, v, f)
}

// validField checks the characters of a non-empty field value.
func validField(c Code, v string, f Format) bool {
	switch c {
	case CodeUID, CodeGID, CodePID:
		if len(v) > 10 {
			return false
		}
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return false
			}
		}
		return true
	case CodeJob:
		// Slurm ("123", arrays "123_4", het jobs "123+0"), PBS
		// ("123.server"), LSF and the like; never a format separator.
		for i := 0; i < len(v); i++ {
			ch := v[i]
			if !(isAlnum(ch) || strings.IndexByte("_.-+[]", ch) >= 0) || f.literalByte(ch) {
				return false
			}
		}
		return true
	case CodeShortHost:
		for i := 0; i < len(v); i++ {
			if !(isAlnum(v[i]) || v[i] == '-' || v[i] == '_') {
				return false
			}
		}
		return true
	case CodeHost:
		for i := 0; i < len(v); i++ {
			if !(isAlnum(v[i]) || v[i] == '-' || v[i] == '_' || v[i] == '.') {
				return false
			}
		}
		return v[0] != '.'
	case CodeExe:
		// Any printable name but a path.
		return !strings.ContainsRune(v, '/')
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}
