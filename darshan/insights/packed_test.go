package insights

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// sameTotals reports whether a and b hold the same Totals, whichever
// array their Rankings' entries lie in.
func sameTotals(a, b *Totals) bool {
	x, y := *a, *b
	x.entries, y.entries = nil, nil
	return reflect.DeepEqual(x, y)
}

// filledTotals returns a Totals with every field set, each integer to
// another value (negative ones among them), so that a field Packed forgot
// comes back different.
func filledTotals() *Totals {
	t := &Totals{}
	v := reflect.ValueOf(t).Elem()
	next := int64(1)
	var fill func(f reflect.Value)
	fill = func(f reflect.Value) {
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(next * 1000003 * int64(1-2*(next%3/2))) // every third negative
			next++
		case reflect.Uint64:
			f.SetUint(uint64(next) << 40)
			next++
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Array:
			for i := range f.Len() {
				fill(f.Index(i))
			}
		}
	}
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() {
			fill(v.Field(i))
		}
	}
	t.Hosts = []uint64{3, 1 << 63, 42}
	for i, r := range t.rankings() {
		r.N = int64(100 + i)
		for k := range i % 4 {
			name := ""
			if k%2 == 0 {
				name = "/scratch/f" + string(rune('a'+k))
			}
			r.Top = append(r.Top, Ranked{Name: name, Value: float64(i*10+k) + 0.25, Aux: -float64(k)})
		}
	}
	t.MetaTime.Top = append(t.MetaTime.Top, Ranked{Value: math.Inf(1), Aux: math.MaxFloat64})
	return t
}

func TestPackedRoundTrip(t *testing.T) {
	want := filledTotals()
	p := want.AppendPacked(nil)
	var got Totals
	if err := p.Unpack(&got); err != nil {
		t.Fatal(err)
	}
	if !sameTotals(&got, want) {
		t.Fatalf("unpacked\n%+v\nwant\n%+v", got, *want)
	}
	// Every integer field is in ints: one set alone comes back.
	v := reflect.ValueOf(want).Elem()
	fields := 0
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int64:
			fields++
		case reflect.Array:
			fields += f.Len()
		}
	}
	if fields != numInts {
		t.Errorf("Totals has %d int64 fields and array elements, ints lists %d", fields, numInts)
	}
	// An empty Totals, and Unpack into a Totals that held more.
	if err := (&Totals{}).AppendPacked(nil).Unpack(&got); err != nil || !sameTotals(&got, &Totals{}) {
		t.Errorf("empty Totals unpacked as %+v, %v", got, err)
	}
}

// TestPackedLogs packs the Totals of real logs: a Builder's Packed is the
// packed form of its Totals, byte for byte, and unpacks into them.
func TestPackedLogs(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(corpus.Fixtures(t, "darshan"), "*.darshan"))
	if root := corpus.Root(); root != "" {
		more, _ := filepath.Glob(filepath.Join(root, "corpus", "darshan", "*", "*.darshan"))
		paths = append(paths, more...)
	} else {
		t.Log("shared corpus absent: the project's fixtures only")
	}
	entries := 0
	var into Totals
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tot, packed, err := totalsAndPacked(data)
		if err != nil {
			continue // a damaged log: no Totals either way
		}
		if want := tot.AppendPacked(nil); !bytes.Equal(packed, want) {
			t.Errorf("%s: Builder.Packed differs from Totals.AppendPacked", filepath.Base(path))
		}
		if err := packed.Unpack(&into); err != nil || !sameTotals(&into, tot) {
			t.Errorf("%s: unpacked %+v, %v\nwant %+v", filepath.Base(path), into, err, *tot)
		}
		for _, r := range tot.rankings() {
			entries += len(r.Top)
		}
	}
	if entries == 0 {
		t.Fatal("no Ranking entry in any log: nothing checked")
	}
}

// totalsAndPacked reads the log in data twice: its Totals, and a Builder's
// Packed.
func totalsAndPacked(data []byte) (*Totals, Packed, error) {
	open := func() (*darshan.Log, error) {
		return darshan.NewReader(bytes.NewReader(data), int64(len(data)), "log.darshan")
	}
	l, err := open()
	if err != nil {
		return nil, nil, err
	}
	tot, err := FromLog(l)
	l.Close()
	if err != nil {
		return nil, nil, err
	}
	l, err = open()
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	b, err := NewBuilder(l)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range builderModules {
		if b.Reads(m) {
			rd := l.Records(m)
			for rd.Next() {
				b.Add(rd.Record())
			}
			if err := rd.Err(); err != nil {
				return nil, nil, err
			}
		}
	}
	p, err := b.Packed(nil)
	return tot, p, err
}

// Unpacking into the same Totals again allocates nothing once its entries
// have room: a sidecar evaluates every changed job so.
func TestUnpackReusesEntries(t *testing.T) {
	p := filledTotals().AppendPacked(nil)
	var into Totals
	if err := p.Unpack(&into); err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, r := range into.rankings() {
		for _, e := range r.Top {
			if e.Name != "" {
				named++
			}
		}
	}
	// The names are new strings, and the hosts a new slice: those
	// allocations, and none for the entries.
	if n := testing.AllocsPerRun(20, func() { p.Unpack(&into) }); n != float64(named+1) {
		t.Errorf("%v allocations per Unpack, want %d (the names and the hosts)", n, named+1)
	}
}

// TestUnpackRefuses: a Packed cut short, one with bytes after its end, or
// one whose counts claim more than it holds is an error, never a panic.
func TestUnpackRefuses(t *testing.T) {
	p := filledTotals().AppendPacked(nil)
	var into Totals
	for _, bad := range []Packed{nil, p[:len(p)-1], p[:len(p)/2], append(slices.Clone(p), 0),
		{1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if err := bad.Unpack(&into); err == nil {
			t.Errorf("% x unpacked", bad)
		}
		if !sameTotals(&into, &Totals{}) {
			t.Errorf("a refused Packed left %+v", into)
		}
	}
}

// FuzzUnpack: any bytes are unpacked or refused, never a panic, and what
// unpacks packs into bytes that unpack the same. The two Totals are
// compared by their packed bytes, which hold every bit of every field: a
// NaN, which the bytes may hold, is equal to nothing in a DeepEqual.
func FuzzUnpack(f *testing.F) {
	f.Add([]byte(filledTotals().AppendPacked(nil)))
	f.Add([]byte((&Totals{Logs: 1, MaxByteRead: -1}).AppendPacked(nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a, b Totals
		if Packed(data).Unpack(&a) != nil {
			return
		}
		p := a.AppendPacked(nil)
		if err := p.Unpack(&b); err != nil || !bytes.Equal(b.AppendPacked(nil), p) {
			t.Fatalf("repacked: %+v, %v\nwant %+v", b, err, a)
		}
	})
}
