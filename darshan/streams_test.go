package darshan

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// zlibStream compresses data as one zlib stream at the given level.
func zlibStream(tb testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// readStreams reads a region of concatenated zlib streams cut into chunks,
// with up to ahead helpers (0: the reader alone), by reads of an odd size.
func readStreams(src []byte, chunks, ahead int, missing error) ([]byte, error) {
	s := newZlibStreams(src, missing)
	s.nchunks, s.ahead = chunks, ahead
	defer s.close()
	var out []byte
	buf := make([]byte, 3001)
	for {
		n, err := s.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// randomRegion returns a region of streams of the kinds testInputs makes,
// at random levels, and what it inflates to.
func randomRegion(tb testing.TB, r *rand.Rand, streams, maxLen int) (region, want []byte) {
	inputs := testInputs(r)
	levels := []int{zlib.NoCompression, zlib.HuffmanOnly, 1, 6, 9}
	for range streams {
		in := inputs[r.IntN(len(inputs))]
		in = in[:r.IntN(min(len(in), maxLen)+1)]
		region = append(region, zlibStream(tb, in, levels[r.IntN(len(levels))])...)
		want = append(want, in...)
	}
	return region, want
}

// TestSplitStreams checks that a region inflated by helpers gives the same
// bytes as one inflated sequentially, for any number of parts.
func TestSplitStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	trials := 30
	if testing.Short() {
		trials = 8
	}
	for trial := range trials {
		region, want := randomRegion(t, r, 1+r.IntN(40), 1<<20)
		for chunks := 1; chunks <= 9; chunks++ {
			for _, ahead := range []int{0, 1, 3} {
				got, err := readStreams(region, chunks, ahead, nil)
				if err != nil {
					t.Fatalf("trial %d, %d chunks, %d ahead: %v", trial, chunks, ahead, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("trial %d, %d chunks, %d ahead: %d bytes differ from the %d written", trial, chunks, ahead, len(got), len(want))
				}
			}
		}
	}
}

// TestSplitStreamsFalseStart builds a region where a helper's first guess
// is wrong: a stored stream whose payload is itself a whole, valid zlib
// stream, with the cut between parts just before it. The helper decodes
// the embedded stream; the reader's chain of streams passes over it, so
// the helper's output must not be used.
func TestSplitStreamsFalseStart(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var region, want []byte
	add := func(data []byte, level int) {
		region = append(region, zlibStream(t, data, level)...)
		want = append(want, data...)
	}
	random := make([]byte, 20000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	add(random, 6)
	embedded := zlibStream(t, bytes.Repeat([]byte("not a stream of this region "), 50), 6)
	payload := append(append([]byte("padding"), embedded...), "more padding after the embedded stream"...)
	outer := zlibStream(t, payload, zlib.NoCompression)
	embeddedAt := len(region) + bytes.Index(outer, embedded)
	add(payload, zlib.NoCompression)
	for i := range 5 {
		add(bytes.Repeat([]byte{byte(i)}, 2000+i), 1)
	}
	// A stored stream pads the region to twice embeddedAt, so that the cut
	// of two parts falls on the embedded stream.
	overhead := len(zlibStream(t, make([]byte, 100), zlib.NoCompression)) - 100
	add(make([]byte, 2*embeddedAt-len(region)-overhead), zlib.NoCompression)
	if len(region) != 2*embeddedAt {
		t.Fatalf("region of %d bytes, want %d", len(region), 2*embeddedAt)
	}

	p := startPart(region, len(region)/2, len(region), new(atomic.Bool))
	<-p.done
	if len(p.starts) != 1 || p.starts[0] != embeddedAt {
		t.Fatalf("helper from %d decoded streams at %v, want only the embedded one at %d", p.cut, p.starts, embeddedAt)
	}
	got, err := readStreams(region, 2, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("after a false start: %d bytes differ from the %d written", len(got), len(want))
	}
}

// TestSplitStreamsDamage checks that a region damaged in a helper's part
// yields what a sequential read yields: the same bytes before the damage
// and the same error.
func TestSplitStreamsDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	missing := errors.New("file cut short")
	for trial := range 40 {
		region, _ := randomRegion(t, r, 2+r.IntN(30), 1<<20)
		bad := bytes.Clone(region)
		if trial%2 == 0 {
			bad[len(bad)/2+r.IntN(len(bad)/2)] ^= byte(1 << r.IntN(8))
		} else {
			bad = bad[:len(bad)/2+r.IntN(len(bad)/2)]
		}
		want, werr := readStreams(bad, 1, 0, missing)
		for chunks := 2; chunks <= 5; chunks++ {
			for _, ahead := range []int{1, 3} {
				got, err := readStreams(bad, chunks, ahead, missing)
				if !bytes.Equal(got, want) {
					t.Fatalf("trial %d, %d chunks: %d bytes before the damage, want %d", trial, chunks, len(got), len(want))
				}
				if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
					t.Fatalf("trial %d, %d chunks: error %v, want %v", trial, chunks, err, werr)
				}
			}
		}
	}
}

// TestSplitStreamsAbandoned closes regions at every point of their
// reading while helpers may still run (meaningful under -race: the
// compressed bytes go back to the pool only once the helpers stopped).
func TestSplitStreamsAbandoned(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	region, want := randomRegion(t, r, 40, 1<<20)
	for stopAfter := 0; stopAfter < len(want); stopAfter += 1 + len(want)/20 {
		s := newZlibStreams(region, nil)
		s.nchunks, s.ahead = 6, 3
		buf := make([]byte, 997)
		var got []byte
		for len(got) < stopAfter {
			n, err := s.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		s.close()
		if !bytes.Equal(got, want[:len(got)]) {
			t.Fatalf("stopped after %d bytes: output differs", stopAfter)
		}
	}
}

// FuzzSplitStreams compares a region read with helpers to the same region
// read sequentially, on any input.
func FuzzSplitStreams(f *testing.F) {
	r := rand.New(rand.NewPCG(19, 20))
	for range 4 {
		region, _ := randomRegion(f, r, 5, 2000)
		f.Add(region, uint8(3))
	}
	f.Fuzz(func(t *testing.T, region []byte, plan uint8) {
		want, werr := readStreams(region, 1, 0, nil)
		got, err := readStreams(region, 2+int(plan%7), 1+int(plan>>3%3), nil)
		if !bytes.Equal(got, want) || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("with helpers: %d bytes, err %v; sequentially: %d bytes, err %v", len(got), err, len(want), werr)
		}
	})
}

// TestSplitStreamsBomb: helpers on a region of streams that each inflate a
// thousandfold stop at their bound (partRatio), instead of buffering their
// whole chunk's output.
func TestSplitStreamsBomb(t *testing.T) {
	one := zlibStream(t, make([]byte, 1<<20), 9) // a MiB of zeros in about a KiB
	var region []byte
	for len(region) < 512<<10 {
		region = append(region, one...)
	}
	const chunks, ahead = 8, 3
	var read int
	n := allocated(func() {
		s := newZlibStreams(region, nil)
		s.nchunks, s.ahead = chunks, ahead
		buf := make([]byte, 64<<10)
		for read < 64<<20 {
			k, err := s.Read(buf)
			read += k
			if err != nil {
				t.Fatal(err)
			}
		}
		s.close()
	})
	// Unbounded, each helper would buffer its chunk's 64 MiB.
	perHelper := partRatio*len(region)/chunks + MinInflateBound
	if limit := uint64(2*ahead*perHelper + 8<<20); n > limit {
		t.Errorf("reading %d MiB allocated %d MiB, want at most %d MiB", read>>20, n>>20, limit>>20)
	}
}

// helpedRecords is the number of POSIX records of helpedPOSIXLog.
const helpedRecords = 3000

// helpedPOSIXLog writes a log whose POSIX region is big enough for helpers
// (over helpedMin): random counters, incompressible enough.
func helpedPOSIXLog(t *testing.T, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Job = Job{NProcs: 100}
	w.RecordsPerStream = 10
	layout := LayoutOf(POSIX, 4)
	for i := range helpedRecords {
		rec := &CounterRecord{Key: Key{Module: POSIX, Rank: int64(i / 20), ID: r.Uint64()}, Layout: layout,
			Ints: make([]int64, len(layout.Ints)), Floats: make([]float64, len(layout.Floats))}
		for k := range rec.Ints {
			rec.Ints[k] = r.Int64N(1 << 40)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHelpersStopBeforeRelease: a log whose big POSIX region is damaged in
// its first stream, read while helpers decode the chunks after it, and
// while another goroutine reads an intact log. The region's buffers go
// back to the pools as the reader stops; under -race this fails if a
// helper still reads them when the other reader takes them.
func TestHelpersStopBeforeRelease(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("helpers need GOMAXPROCS > 1")
	}
	good := helpedPOSIXLog(t, 21)
	l := readBack(t, good)
	reg := l.Header.ModuleRegions[POSIX]
	if chunks, ahead := chunkPlan(int(reg.Length)); ahead == 0 {
		t.Fatalf("POSIX region of %d bytes gets %d chunks and no helper", reg.Length, chunks)
	}
	bad := bytes.Clone(good)
	bad[reg.Offset+100] ^= 0xff // inside the first stream
	// The intact log is read meanwhile, taking buffers from the pools.
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20 {
			if recs, err := readBack(t, good).ReadModule(POSIX); err != nil || len(recs) != helpedRecords {
				t.Errorf("intact log: %d records, %v", len(recs), err)
				return
			}
		}
	})
	for range 20 {
		recs, err := readBack(t, bad).ReadModule(POSIX)
		if !errors.Is(err, ErrCorrupt) || len(recs) >= 10 {
			t.Errorf("damaged first stream: %d records, %v; want fewer than 10 and ErrCorrupt", len(recs), err)
			break
		}
	}
	wg.Wait()
}

// TestCloseStopsHelpers reads a few records of a region big enough for
// helpers and closes the reader, while another goroutine reads the whole
// log: Close returns the region's buffers to the pools only after its
// helpers stopped (under -race this fails otherwise), the closed reader
// yields nothing more and no error, and the other reader reads every
// record whole.
func TestCloseStopsHelpers(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("helpers need GOMAXPROCS > 1")
	}
	data := helpedPOSIXLog(t, 23)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 10 {
			if recs, err := readBack(t, data).ReadModule(POSIX); err != nil || len(recs) != helpedRecords {
				t.Errorf("whole read: %d records, %v", len(recs), err)
				return
			}
		}
	})
	for i := range 10 {
		rd := readBack(t, data).Records(POSIX)
		for k := 0; k <= i && rd.Next(); k++ {
		}
		rd.Close()
		rd.Close() // a second Close does nothing
		if rd.Next() || rd.Err() != nil || rd.Count() != i+1 {
			t.Fatalf("after Close at record %d: Next true or error %v, %d records counted", i+1, rd.Err(), rd.Count())
		}
	}
	wg.Wait()
}
