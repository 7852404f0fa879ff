package darshan

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// inflateAll decodes one zlib stream of src with the inflater.
func inflateAll(src []byte) ([]byte, int, error) {
	z := newInflater()
	z.reset(src, 0)
	var out []byte
	buf := make([]byte, 7919) // odd size: reads cut across window slides
	for {
		n, err := z.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, z.next(), nil
		}
		if err != nil {
			return out, z.next(), err
		}
	}
}

// testInputs returns data of the kinds deflate meets: random bytes, runs,
// small-alphabet text and Darshan-like records (mostly small integers).
func testInputs(r *rand.Rand) [][]byte {
	var ins [][]byte
	for _, n := range []int{0, 1, 2, 100, 4096, 40000, 300000} {
		random := make([]byte, n)
		for i := range random {
			random[i] = byte(r.Uint32())
		}
		runs := make([]byte, n)
		for i := range runs {
			runs[i] = byte(i / 1000)
		}
		text := make([]byte, n)
		for i := range text {
			text[i] = "abcdefgh  \n"[r.IntN(11)]
		}
		records := make([]byte, n)
		for i := 0; i+8 <= n; i += 8 {
			v := uint64(r.IntN(5000))
			if r.IntN(4) == 0 {
				v = r.Uint64()
			}
			for k := range 8 {
				records[i+k] = byte(v >> (8 * k))
			}
		}
		ins = append(ins, random, runs, text, records)
	}
	return ins
}

// TestInflateMatchesZlib checks the inflater against compress/zlib on every
// compression level (stored, Huffman only, fast to best).
func TestInflateMatchesZlib(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, in := range testInputs(r) {
		for _, level := range []int{zlib.NoCompression, zlib.HuffmanOnly, 1, 6, 9} {
			var buf bytes.Buffer
			w, _ := zlib.NewWriterLevel(&buf, level)
			w.Write(in)
			w.Close()
			stream := buf.Bytes()
			got, end, err := inflateAll(append(stream, "next stream"...))
			if err != nil {
				t.Fatalf("level %d, %d bytes: %v", level, len(in), err)
			}
			if !bytes.Equal(got, in) {
				t.Fatalf("level %d, %d bytes: output differs", level, len(in))
			}
			if end != len(stream) {
				t.Fatalf("level %d, %d bytes: stream ends at %d, want %d", level, len(in), end, len(stream))
			}
		}
	}
}

// TestInflateDamage checks that truncated and corrupted streams fail (or,
// rarely for bit flips, decode) without panicking, and that truncation is
// reported as io.ErrUnexpectedEOF.
func TestInflateDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, in := range testInputs(r)[:16] {
		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		w.Write(in)
		w.Close()
		stream := buf.Bytes()
		for cut := 0; cut < len(stream); cut += 1 + len(stream)/50 {
			if _, _, err := inflateAll(stream[:cut]); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("cut at %d of %d: err = %v", cut, len(stream), err)
			}
		}
		for range 50 {
			bad := bytes.Clone(stream)
			bad[r.IntN(len(bad))] ^= byte(1 << r.IntN(8))
			got, _, err := inflateAll(bad)
			want, werr := zlibDecode(bad)
			if (err == nil) != (werr == nil) || (err == nil && !bytes.Equal(got, want)) {
				t.Fatalf("bit flip: inflater err %v, zlib err %v", err, werr)
			}
		}
	}
}

// zlibDecode decodes one stream with compress/zlib.
func zlibDecode(data []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// FuzzInflate holds the inflater to compress/zlib both ways: the same
// output where both accept, and neither accepting what the other rejects
// (an inflater that refused valid streams would drop real logs).
func FuzzInflate(f *testing.F) {
	for _, in := range [][]byte{nil, []byte("darshan"), bytes.Repeat([]byte("ab"), 1000)} {
		for _, level := range []int{0, 1, 9, -2} {
			var buf bytes.Buffer
			w, _ := zlib.NewWriterLevel(&buf, level)
			w.Write(in)
			w.Close()
			f.Add(buf.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, err := inflateAll(data)
		want, werr := zlibDecode(data)
		if err == nil && werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("output differs from compress/zlib")
		}
		if err == nil && werr != nil {
			t.Fatalf("inflater accepts what compress/zlib rejects (%v)", werr)
		}
		if err != nil && werr == nil {
			t.Fatalf("inflater rejects what compress/zlib accepts: %v", err)
		}
	})
}

// BenchmarkInflate compares the inflater with compress/zlib on the DXT
// region of a corpus log (1024 streams, 5 MB inflated).
func BenchmarkInflate(b *testing.B) {
	data := benchRegion(b)
	b.Run("inflater", func(b *testing.B) {
		buf := make([]byte, 64<<10)
		z := newStreamsForBench(data)
		b.SetBytes(int64(len(data)))
		defer cpuPerOp(b)()
		for b.Loop() {
			z.reset()
			for {
				if _, err := z.Read(buf); err != nil {
					break
				}
			}
		}
	})
	b.Run("compress-zlib", func(b *testing.B) {
		buf := make([]byte, 64<<10)
		b.SetBytes(int64(len(data)))
		var zr io.ReadCloser
		defer cpuPerOp(b)()
		for b.Loop() {
			in := bytes.NewReader(data)
			for in.Len() > 0 {
				if zr == nil {
					zr, _ = zlib.NewReader(in)
				} else {
					zr.(zlib.Resetter).Reset(in, nil)
				}
				for {
					if _, err := zr.Read(buf); err != nil {
						break
					}
				}
			}
		}
	})
}

type benchStreams struct {
	data []byte
	s    *zlibStreams
}

func newStreamsForBench(data []byte) *benchStreams { return &benchStreams{data: data} }
func (b *benchStreams) reset()                     { b.s = newZlibStreams(b.data, nil) }
func (b *benchStreams) Read(p []byte) (int, error) { return b.s.Read(p) }

// TestHuffmanTables checks every entry of tables built from random
// complete codes against a brute-force decode of the canonical code: the
// codes that all fit the primary table (placed in symbol order) and the
// longer ones (sorted, with subtables).
func TestHuffmanTables(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 3000 {
		root := []uint{litRoot, distRoot, 7}[iter%3]
		n := 2 + r.IntN(287)
		maxLen := 1 + r.IntN(15)
		lens := randomCompleteCode(r, n, maxLen)
		var tbl huffTable
		if !tbl.build(lens, root, litAlphabet[:n], true) {
			t.Fatalf("lengths %v: a complete code refused", lens)
		}
		// canonical codes (RFC 1951 3.2.2)
		var count, next [16]int
		for _, l := range lens {
			count[l]++
		}
		count[0] = 0
		code := 0
		for l := 1; l < 16; l++ {
			code = (code + count[l-1]) << 1
			next[l] = code
		}
		for sym, l := range lens {
			if l == 0 {
				continue
			}
			c := reverse(next[l], int(l))
			next[l]++
			// every input whose low l bits are the code decodes to sym
			for _, high := range []uint64{0, 1<<16 - 1, r.Uint64()} {
				in := high<<l | uint64(c)
				e := tbl.lookup(in)
				if want := litAlphabet[sym] | entry(l); e != want {
					t.Fatalf("root %d, lengths %v: symbol %d (code %b, %d bits) looks up %#x, want %#x",
						root, lens, sym, c, l, e, want)
				}
			}
		}
	}
}

// randomCompleteCode returns code lengths of at most maxLen bits for n
// symbols forming a complete prefix code of at least two codes, the others
// unused (0).
func randomCompleteCode(r *rand.Rand, n, maxLen int) []uint8 {
	leaves := []int{0} // depths of the tree's leaves
	want := 2 + r.IntN(min(n, 1<<maxLen)-1)
	for len(leaves) < want {
		i := r.IntN(len(leaves))
		if leaves[i] == maxLen {
			continue
		}
		leaves[i]++
		leaves = append(leaves, leaves[i])
	}
	lens := make([]uint8, n)
	for i, sym := range r.Perm(n)[:len(leaves)] {
		lens[sym] = uint8(leaves[i])
	}
	return lens
}
