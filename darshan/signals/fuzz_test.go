package signals

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hpcio/hpcio_exporter/darshan"
	"github.com/hpcio/hpcio_exporter/internal/testkit/corpus"
)

// FuzzReport feeds arbitrary bytes through the reader into the signals:
// whatever the log holds (NaN and huge floats, negative counts, bins in
// the millions), the report is well formed — every line a header line or
// five fields with a known signal and a number or NA(known reason) — and
// summaries stay bounded. The reader itself is fuzzed by its owner.
//
//	go test ./darshan/signals -run XXX -fuzz FuzzReport
func FuzzReport(f *testing.F) {
	for _, fx := range sigFixtures {
		if data, err := os.ReadFile(filepath.Join(corpus.Fixtures(f, "darshan-signals"), fx.name+".darshan")); err == nil {
			f.Add(data)
		}
	}
	known := map[string]bool{}
	for s := range NumSignals {
		known[s.ReportName()] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, _ := darshan.NewReader(bytes.NewReader(data), int64(len(data)), "fuzz")
		if l == nil {
			return
		}
		var out bytes.Buffer
		_ = WriteReport(&out, l)
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) != 5 || !known[f[3]] {
				t.Fatalf("malformed line %q", line)
			}
			if r, ok := strings.CutPrefix(f[4], "NA("); ok {
				if _, ok := ParseReason(strings.TrimSuffix(r, ")")); !ok || !strings.HasSuffix(r, ")") {
					t.Fatalf("unknown NA in %q", line)
				}
			} else if _, err := strconv.ParseFloat(f[4], 64); err != nil {
				t.Fatalf("value of %q: %v", line, err)
			}
		}
		s := Summarize(l, 4)
		m := Merge(4, s, s)
		if len(m.Records) > 4 {
			t.Fatalf("%d records kept", len(m.Records))
		}
		for _, ly := range m.Layers {
			if len(ly.Read) > maxLayerBins+1 {
				t.Fatalf("layer %s has %d bins", ly.Name, len(ly.Read))
			}
			ly.Signals()
		}
		for _, sig := range POSIXJobSignals {
			m.POSIXJobSignal(sig)
		}
	})
}
