package logwatch

import (
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
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
// the bit, the same Totals (file names included), the same error.
func TestOnePassMatchesTwoCalls(t *testing.T) {
	paths := darshanLogs(t, corpus.Fixtures(t, "darshan"))
	paths = append(paths, darshanLogs(t, corpus.Dir(t, "darshan"))...)
	budget := darshan.Options{MemoryBudget: 64 << 20}
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
			got, gotT, gotErr := readLog(l, maxRecords, openErr == nil)
			l.Close()

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
			if !sameValue(reflect.ValueOf(gotT), reflect.ValueOf(wantT)) {
				t.Errorf("%s: totals\n%+v\nwant\n%+v", name, gotT, wantT)
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
