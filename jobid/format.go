// Package jobid reads Lustre job_ids: the jobid_name grammar that made them
// (%e %h %H %j %u %g %p and literal separators), and the repair and
// classification of the broken ids that production servers print: fully
// qualified hosts, missing jobs, truncated ids, extra and overwritten
// characters (see docs/jobids.md).
package jobid

import (
	"fmt"
	"strings"
)

// Code is a jobid_name format code.
type Code byte

const (
	CodeExe       Code = 'e' // executable name
	CodeHost      Code = 'h' // fully qualified host name
	CodeShortHost Code = 'H' // host name up to the first dot
	CodeJob       Code = 'j' // the job id from the variable named by jobid_var
	CodeUID       Code = 'u' // user id
	CodeGID       Code = 'g' // group id
	CodePID       Code = 'p' // process id
)

type item struct {
	code    Code   // 0 for a literal
	literal string // for a literal
}

// Format is a parsed jobid_name.
type Format struct {
	raw   string
	items []item
	// sep is the one literal that separates every pair of fields, when
	// the format is that regular (as "%j:%u:%H" is); repairs need it.
	sep byte
}

// DefaultFormat is the jobid_name this exporter assumes when neither
// --lustre.jobid-name nor lctl says otherwise: job, user and short host.
const DefaultFormat = "%j:%u:%H"

// FallbackFormat is what Lustre prints for processes outside a job (no
// job variable set, as on login nodes): executable and user.
const FallbackFormat = "%e.%u"

// ParseFormat parses a jobid_name such as "%j:%u:%H". "%%" is a literal
// percent sign.
func ParseFormat(s string) (Format, error) {
	f := Format{raw: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.items = append(f.items, item{literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return Format{}, fmt.Errorf("jobid_name %q: trailing %%", s)
		}
		i++
		switch c := Code(s[i]); c {
		case CodeExe, CodeHost, CodeShortHost, CodeJob, CodeUID, CodeGID, CodePID:
			flush()
			f.items = append(f.items, item{code: c})
		case '%':
			lit.WriteByte('%')
		default:
			return Format{}, fmt.Errorf("jobid_name %q: unknown code %%%c", s, s[i])
		}
	}
	flush()
	if len(f.items) == 0 {
		return Format{}, fmt.Errorf("jobid_name is empty")
	}
	hasField := false
	for _, it := range f.items {
		if it.code != 0 {
			hasField = true
		}
	}
	if !hasField {
		return Format{}, fmt.Errorf("jobid_name %q has no %% code", s)
	}
	f.sep = regularSeparator(f.items)
	return f, nil
}

// MustParseFormat is ParseFormat for formats known to be valid.
func MustParseFormat(s string) Format {
	f, err := ParseFormat(s)
	if err != nil {
		panic(err)
	}
	return f
}

// String returns the format as jobid_name spells it.
func (f Format) String() string { return f.raw }

// Has reports whether the format contains code c.
func (f Format) Has(c Code) bool {
	for _, it := range f.items {
		if it.code == c {
			return true
		}
	}
	return false
}

// regularSeparator returns the separator byte when the format is fields
// joined by one and the same single-byte literal, with no literal at either
// end; else 0.
func regularSeparator(items []item) byte {
	var sep byte
	for i, it := range items {
		fieldExpected := i%2 == 0
		if fieldExpected != (it.code != 0) {
			return 0
		}
		if it.code == 0 {
			if len(it.literal) != 1 || (sep != 0 && it.literal[0] != sep) {
				return 0
			}
			sep = it.literal[0]
		}
	}
	if len(items)%2 == 0 { // ends with a literal
		return 0
	}
	return sep
}

// fields returns the codes of the format's fields in order.
func (f Format) fields() []Code {
	var out []Code
	for _, it := range f.items {
		if it.code != 0 {
			out = append(out, it.code)
		}
	}
	return out
}

// literalBytes reports whether b occurs in one of the format's literals.
func (f Format) literalByte(b byte) bool {
	for _, it := range f.items {
		if it.code == 0 && strings.IndexByte(it.literal, b) >= 0 {
			return true
		}
	}
	return false
}
