package logwatch

import (
	"cmp"
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/darshan/insights"
	"github.com/hpcio/hpcio_exporter/darshan/signals"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// The one read of a log (readLog) gives exactly what the two calls it
// replaced give — signals.Summarize, then insights.FromLog on the same
// log when its signals met no damage — on every log of the shared corpus
// (the damaged ones included) and of fixtures/darshan: the same summary to
// the bit, the same error, the same Totals without file names (the
// sidecar's Builder looks none up, WithoutNames) and the same decisions.
// Without names, entries of equal value in a Ranking are ordered by their
// Aux alone: where a full Ranking keeps some of several equal values,
// which Aux it keeps may differ (sameTotals), never a value.
func TestOnePassMatchesTwoCalls(t *testing.T) {
	paths := darshanLogs(t, corpus.Fixtures(t, "darshan"))
	paths = append(paths, darshanLogs(t, corpus.Dir(t, "darshan"))...)
	budget := darshan.Options{MemoryBudget: 64 << 20}
	decider := insights.NewDecider(insights.DefaultConfig())
	insightsChecked := 0
	for _, p := range paths {
		name := strings.TrimPrefix(p, filepath.Dir(filepath.Dir(p))+"/")
		for _, maxRecords := range []int{0, 10} {
			// the two calls, as the sidecar made them, on one Log
			l, openErr := darshan.OpenWith(p, budget)
			if l == nil {
				continue // no header: neither reads a record
			}
			want := signals.Summarize(l, maxRecords)
			var wantT *insights.Totals
			var wantErr error
			if openErr == nil && want.Err == nil {
				wantT, wantErr = insights.FromLog(l)
			}
			l.Close()

			l, _ = darshan.OpenWith(p, budget)
			got, packed, gotErr := readLog(l, maxRecords, openErr == nil)
			l.Close()
			gotT := unpacked(t, packed)

			if errText(got.Err) != errText(want.Err) {
				t.Errorf("%s: signals error %q, want %q", name, errText(got.Err), errText(want.Err))
			}
			g, w := *got, *want
			g.Err, w.Err = nil, nil
			if !sameValue(reflect.ValueOf(g), reflect.ValueOf(w)) {
				t.Errorf("%s (%d records): summary\n%+v\nwant\n%+v", name, maxRecords, g, w)
			}
			if errText(gotErr) != errText(wantErr) {
				t.Errorf("%s: insights error %q, want %q", name, errText(gotErr), errText(wantErr))
			}
			if wantT != nil {
				wantT.ForgetNames()
			}
			if !sameTotals(gotT, wantT) {
				t.Errorf("%s: totals\n%+v\nwant\n%+v", name, gotT, wantT)
			}
			if gotT != nil && wantT != nil {
				gotFired, gotN := decider.Fired(nil, gotT)
				wantFired, wantN := decider.Fired(nil, wantT)
				if gotN != wantN || !sameValue(reflect.ValueOf(gotFired), reflect.ValueOf(wantFired)) {
					t.Errorf("%s: insights\n%+v\nwant\n%+v", name, gotFired, wantFired)
				}
			}
			if wantT != nil && maxRecords == 0 {
				insightsChecked++
			}
		}
	}
	// The comparison is worth something only if most logs have insights.
	if insightsChecked < len(paths)/2 {
		t.Errorf("only %d of %d logs had insights to compare", insightsChecked, len(paths))
	}
	t.Logf("%d logs, %d with insights", len(paths), insightsChecked)
}

// sameTotals reports whether a and b are the same Totals (sameValue), but
// for the Aux of the entries of a full Ranking's last value when it
// offered more entries than it kept: of several equal values at the cut,
// which it keeps is decided by their names, and without names by their
// Aux.
func sameTotals(a, b *insights.Totals) bool {
	if a == nil || b == nil {
		return a == b
	}
	a, b = cloneTotals(a), cloneTotals(b)
	ra, rb := rankingsOf(a), rankingsOf(b)
	for i := range ra {
		x, y := ra[i], rb[i]
		if len(x.Top) != len(y.Top) || len(x.Top) == 0 {
			continue // sameValue tells
		}
		// Entries of equal value come in Aux order in one, name order in
		// the other: each run of equal values is compared sorted.
		sortRuns(x.Top)
		sortRuns(y.Top)
		if n := len(x.Top); n == insights.MaxFiles && x.N > int64(n) {
			last := x.Top[n-1].Value
			for k := range x.Top {
				if x.Top[k].Value == last && y.Top[k].Value == last {
					x.Top[k].Aux, y.Top[k].Aux = 0, 0
				}
			}
		}
	}
	// The exported fields: where the entries lie (a Totals' own array,
	// an unpacked one's) is no part of the Totals.
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !sameValue(va.Field(i), vb.Field(i)) {
			return false
		}
	}
	return true
}

// unpacked returns the Totals p holds, nil for a nil p.
func unpacked(t *testing.T, p insights.Packed) *insights.Totals {
	t.Helper()
	if p == nil {
		return nil
	}
	var tot insights.Totals
	if err := p.Unpack(&tot); err != nil {
		t.Fatal(err)
	}
	return &tot
}

// cloneTotals copies t and its Rankings' entries.
func cloneTotals(t *insights.Totals) *insights.Totals {
	c := *t
	for _, r := range rankingsOf(&c) {
		r.Top = slices.Clone(r.Top)
	}
	return &c
}

// rankingsOf returns the Rankings of t, found by their type.
func rankingsOf(t *insights.Totals) []*insights.Ranking {
	var out []*insights.Ranking
	v := reflect.ValueOf(t).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if r, ok := v.Field(i).Addr().Interface().(*insights.Ranking); ok {
			out = append(out, r)
		}
	}
	return out
}

// sortRuns sorts each run of entries of equal value by Aux.
func sortRuns(top []insights.Ranked) {
	for i := 0; i < len(top); {
		j := i + 1
		for j < len(top) && top[j].Value == top[i].Value {
			j++
		}
		slices.SortFunc(top[i:j], func(a, b insights.Ranked) int { return cmp.Compare(a.Aux, b.Aux) })
		i = j
	}
}

// darshanLogs lists the *.darshan files under dir.
func darshanLogs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".darshan") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no Darshan log under %s", dir)
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameValue is reflect.DeepEqual with floating point numbers compared by
// their bits: a NaN equals the same NaN, 0 differs from -0.
func sameValue(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() || (a.Kind() == reflect.Slice && a.IsNil() != b.IsNil()) {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if v := b.MapIndex(k); !v.IsValid() || !sameValue(a.MapIndex(k), v) {
				return false
			}
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.String:
		return a.String() == b.String()
	}
	panic("sameValue: unexpected kind " + a.Kind().String())
}
