package exposition

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"
)

func withProto() Option { return func(o *options) { o.proto = true } }

// decodeProto reads a delimited protobuf response with client_model's
// types and protodelim, and merges the messages of one family (parts are
// messages of their own), in order.
func decodeProto(t *testing.T, data []byte) (map[string]*dto.MetricFamily, []string) {
	t.Helper()
	fams := map[string]*dto.MetricFamily{}
	var order []string
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		mf := &dto.MetricFamily{}
		err := protodelim.UnmarshalFrom(r, mf)
		if errors.Is(err, io.EOF) {
			return fams, order
		}
		if err != nil {
			t.Fatalf("message %d: %v", len(order), err)
		}
		if prev := fams[mf.GetName()]; prev != nil {
			if prev.GetHelp() != mf.GetHelp() || prev.GetType() != mf.GetType() {
				t.Fatalf("family %s: messages disagree on help or type", mf.GetName())
			}
			prev.Metric = append(prev.Metric, mf.Metric...)
			continue
		}
		fams[mf.GetName()] = mf
		order = append(order, mf.GetName())
	}
}

// TestProtoMatchesClientGolang: the family this package writes in
// protobuf decodes to the very structs client_golang would encode, created
// timestamps included.
func TestProtoMatchesClientGolang(t *testing.T) {
	for _, typ := range []Type{Counter, Gauge} {
		got, order := decodeProto(t, []byte(write(t, typ, false, withProto())))
		want := referenceFamily(typ)
		if len(order) != 1 || !proto.Equal(got[want.GetName()], want) {
			t.Errorf("type %v: got %v\nwant %v", typ, got, want)
		}
	}
}

// series flattens a family into sample name and labels → value, as the
// text format has them: histograms as _bucket, _sum and _count.
func series(mf *dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.Metric {
		var ls []string
		for _, l := range m.Label {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(ls)
		key := func(suffix string, extra ...string) string {
			return mf.GetName() + suffix + "{" + strings.Join(append(slices.Clone(ls), extra...), ",") + "}"
		}
		switch {
		case m.Counter != nil:
			out[key("")] = m.Counter.GetValue()
		case m.Gauge != nil:
			out[key("")] = m.Gauge.GetValue()
		case m.Untyped != nil:
			out[key("")] = m.Untyped.GetValue()
		case m.Histogram != nil:
			h := m.Histogram
			out[key("_sum")] = h.GetSampleSum()
			out[key("_count")] = float64(h.GetSampleCount())
			for _, b := range h.Bucket {
				out[key("_bucket", "le="+fmt.Sprint(b.GetUpperBound()))] = float64(b.GetCumulativeCount())
			}
			out[key("_bucket", "le=+Inf")] = float64(h.GetSampleCount())
		}
	}
	return out
}

// density is a rate density as the jobstats collector gathers it: bounds
// base^k from 1e-3 to 1e11, rates counted below each bound.
func density(base int, rates []float64) prometheus.Metric {
	b := float64(base)
	lo := int(math.Floor(math.Log(1e-3) / math.Log(b)))
	hi := int(math.Ceil(math.Log(1e11) / math.Log(b)))
	buckets := map[float64]uint64{}
	var sum float64
	for k := lo; k <= hi; k++ {
		bound := math.Pow(b, float64(k))
		for _, r := range rates {
			if r < bound {
				buckets[bound]++
			}
		}
	}
	for _, r := range rates {
		sum += r
	}
	desc := prometheus.NewDesc("lustre_job_bytes_rate_density", "Identities by rate.", []string{"target", "operation"}, nil)
	return prometheus.MustNewConstHistogram(desc, uint64(len(rates)), sum, buckets, "fs-OST0000", fmt.Sprint("base", base))
}

// rates: idle jobs (0), and rates spread over 16 decades, some beyond the
// highest bound.
func rates(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		switch i % 10 {
		case 0:
			out[i] = 0
		case 1:
			out[i] = 1e12 * (1 + r.Float64())
		default:
			out[i] = math.Pow(10, -4+15*r.Float64())
		}
	}
	return out
}

func gather(t *testing.T, ms ...prometheus.Metric) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(constCollector(ms))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

type constCollector []prometheus.Metric

func (c constCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// TestProtoMatchesText: a response of gathered families (histograms among
// them) and streamed ones, parts and all, has in protobuf the same
// families, samples and values as in the text format, family by family.
func TestProtoMatchesText(t *testing.T) {
	// 20,000 rows of lustre_job_things, written at once, take more than
	// one message (maxMessage).
	for _, rows := range []int{0, 3, 20000} {
		var ms []prometheus.Metric
		for _, base := range []int{2, 10} {
			ms = append(ms, density(base, rates(500, uint64(base))))
		}
		build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "hpcio_exporter_build_info", Help: "Build.", ConstLabels: prometheus.Labels{"version": "x"}})
		build.Set(1)
		ms = append(ms, build)
		// Rows 1, 2 and 4 of a linear histogram: powers of two, not native.
		linear := prometheus.NewDesc("lustre_linear", "Linear.", nil, nil)
		ms = append(ms, prometheus.MustNewConstHistogram(linear, 3, 7, map[float64]uint64{1: 1, 2: 2, 4: 3}))
		streams := []Family{partsFamily(rows, 128), partsFamily(rows/10, 7)}
		streams[1].Name = "lustre_job_read_bytes"
		small := Family{Name: "lustre_job_things", Help: "Things.", Type: Gauge, Write: func(w *Writer) error {
			for r := range rows {
				w.ResetLabels()
				w.Label("jobid", fmt.Sprint(r))
				w.SampleFloat(float64(r)/3, 0)
			}
			return nil
		}}
		streams = append(streams, small)

		var text, pb bytes.Buffer
		if err := WriteResponse(&text, expfmt.FmtText, gather(t, ms...), streams); err != nil {
			t.Fatal(err)
		}
		if err := WriteResponse(&pb, expfmt.FmtProtoDelim, gather(t, ms...), streams, WithNativeHistograms(map[string]Exponential{"lustre_job_bytes_rate_density": {Base: 2, Gauge: true, ZeroBucket: true}})); err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.LegacyValidation)
		want, err := parser.TextToMetricFamilies(&text)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := decodeProto(t, pb.Bytes())
		if len(got) != len(want) {
			t.Errorf("rows %d: %d families in protobuf, %d in text", rows, len(got), len(want))
		}
		for name, wf := range want {
			gf := got[name]
			if gf == nil {
				t.Errorf("rows %d: %s missing from protobuf", rows, name)
				continue
			}
			wantType := wf.GetType()
			if name == "lustre_job_bytes_rate_density" {
				wantType = dto.MetricType_GAUGE_HISTOGRAM // a snapshot
			}
			if gf.GetType() != wantType || gf.GetHelp() != wf.GetHelp() {
				t.Errorf("rows %d: %s: type %v help %q, want %v %q", rows, name, gf.GetType(), gf.GetHelp(), wantType, wf.GetHelp())
			}
			gs, ws := series(gf), series(wf)
			if len(gs) != len(ws) {
				t.Errorf("rows %d: %s: %d samples in protobuf, %d in text", rows, name, len(gs), len(ws))
			}
			for k, v := range ws {
				if g, ok := gs[k]; !ok || g != v {
					t.Errorf("rows %d: %s = %v (present %v), text has %v", rows, k, g, ok, v)
					break
				}
			}
		}
		// Created timestamps are fields of the counters.
		if n := bytes.Count(pb.Bytes(), []byte("lustre_job_things")); rows == 20000 && n < 2 {
			t.Errorf("lustre_job_things in %d messages", n)
		}
		if wb := got["lustre_job_write_bytes_total"]; rows > 0 {
			ct := wb.Metric[1].GetCounter().GetCreatedTimestamp()
			if ct.GetSeconds() != 1700000001 || ct.GetNanos() != 0 {
				t.Errorf("rows %d: created timestamp %v, want 1700000001", rows, ct)
			}
		}
		// The density of base 2 is native too, that of base 10 classic
		// only; a histogram not named exponential stays classic.
		for _, m := range got["lustre_job_bytes_rate_density"].Metric {
			native := m.Histogram.Schema != nil
			if op := m.Label[0].GetValue(); native != (op == "base2") {
				t.Errorf("rows %d: %s native %v", rows, op, native)
			}
		}
		for _, m := range got["lustre_linear"].Metric {
			if m.Histogram.Schema != nil {
				t.Errorf("rows %d: lustre_linear made native", rows)
			}
		}
	}
}

// nativeBound is the upper bound of bucket idx of schema.
func nativeBound(schema int32, idx int) float64 {
	if schema >= 0 {
		return math.Pow(2, math.Ldexp(float64(idx), -int(schema)))
	}
	return math.Ldexp(1, idx<<-schema)
}

// TestNativeDensity: the rate density of each base maps to the schema
// whose bounds are the base's powers (or stays classic), and at each
// classic bound the native cumulative count is the classic one, so that
// histogram_fraction agrees with the buckets there.
func TestNativeDensity(t *testing.T) {
	// 8 = 2³: schema 0, every third bucket used.
	schemas := map[int]int32{2: 0, 4: -1, 8: 0, 16: -2, 256: -3, 65536: -4}
	for _, zero := range []bool{true, false} {
		for _, base := range []int{2, 3, 4, 8, 10, 16, 256, 65536} {
			rs := rates(2000, uint64(base))
			h := gather(t, density(base, rs))[0].Metric[0].Histogram
			addNative(h, Exponential{Base: float64(base), ZeroBucket: zero})
			want, native := schemas[base]
			if (h.Schema != nil) != native {
				t.Errorf("base %d: native %v, want %v", base, h.Schema != nil, native)
				continue
			}
			if !native {
				continue
			}
			if h.GetSchema() != want {
				t.Errorf("base %d: schema %d, want %d", base, h.GetSchema(), want)
			}
			if zero && h.GetZeroThreshold() != h.Bucket[0].GetUpperBound() {
				t.Errorf("base %d: zero threshold %v, lowest bound %v", base, h.GetZeroThreshold(), h.Bucket[0].GetUpperBound())
			}
			if !zero && (h.GetZeroThreshold() != emptyZeroThreshold || h.GetZeroCount() != 0) {
				t.Errorf("base %d: zero bucket %v ≤ %v", base, h.GetZeroCount(), h.GetZeroThreshold())
			}
			// The native buckets, expanded.
			counts := map[int]uint64{}
			idx, count := 0, int64(0)
			d := 0
			for _, s := range h.PositiveSpan {
				idx += int(s.GetOffset())
				for range s.GetLength() {
					count += h.PositiveDelta[d]
					d++
					if count < 0 {
						t.Fatalf("base %d: negative bucket count", base)
					}
					counts[idx] = uint64(count)
					idx++
				}
			}
			var total uint64 = h.GetZeroCount()
			for _, c := range counts {
				total += c
			}
			if total != h.GetSampleCount() || total != uint64(len(rs)) {
				t.Errorf("base %d: native buckets hold %d, count %d", base, total, h.GetSampleCount())
			}
			for _, b := range h.Bucket {
				cum := h.GetZeroCount()
				for i, c := range counts {
					if nativeBound(want, i) <= b.GetUpperBound() {
						cum += c
					}
				}
				if cum != b.GetCumulativeCount() {
					t.Errorf("base %d: at %v native %d, classic %d", base, b.GetUpperBound(), cum, b.GetCumulativeCount())
				}
			}
		}
	}
}

// Histograms whose bounds are not all powers of the base's schema, or
// that are already native, are left alone; brw_stats' sizes (4 KiB pages,
// rows printed sparsely) are schema 0 whichever rows are printed.
func TestNativeBounds(t *testing.T) {
	hist := func(bounds ...float64) *dto.Histogram {
		h := &dto.Histogram{SampleCount: proto.Uint64(uint64(len(bounds))), SampleSum: proto.Float64(1)}
		for i, b := range bounds {
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(uint64(i + 1))})
		}
		return h
	}
	log2 := Exponential{Base: 2}
	pages := hist(4096, 8192, 16384, 32768, 65536, 131072, 262144)
	addNative(pages, log2)
	if pages.Schema == nil || pages.GetSchema() != 0 || pages.GetZeroThreshold() != emptyZeroThreshold || pages.GetZeroCount() != 0 ||
		len(pages.PositiveSpan) != 1 || pages.PositiveSpan[0].GetOffset() != 12 || pages.PositiveSpan[0].GetLength() != 7 {
		t.Errorf("brw_stats RPC sizes: %v", pages)
	}
	// Rows 2^20, 2^22, 2^24: buckets 20, 22 and 24, the zero bucket as
	// before (a lower row appearing later changes no threshold).
	sparse := hist(1<<20, 1<<22, 1<<24)
	addNative(sparse, log2)
	if sparse.Schema == nil || sparse.GetSchema() != 0 || sparse.GetZeroThreshold() != emptyZeroThreshold || len(sparse.PositiveSpan) != 3 ||
		sparse.PositiveSpan[0].GetOffset() != 20 || sparse.PositiveSpan[1].GetOffset() != 1 || sparse.PositiveSpan[2].GetOffset() != 1 {
		t.Errorf("sparse brw_stats RPC sizes: %v", sparse)
	}
	for _, tc := range []struct {
		h    *dto.Histogram
		base float64
	}{
		{hist(0.001, 0.002, 0.004, 0.008), 2}, // brw_stats I/O times, in seconds
		{hist(0, 1, 2, 4), 2},                 // a bound of 0
		{hist(1, 2, 4), 10},
		{hist(1, 2, 4), 4}, // 2 is no power of 4
		{hist(4, 2), 2},
		{hist(), 2}, // nothing counted, yet a sum
	} {
		before := proto.Clone(tc.h)
		addNative(tc.h, Exponential{Base: tc.base})
		if !proto.Equal(tc.h, before) {
			t.Errorf("base %v, bounds %v made native: %v", tc.base, before, tc.h)
		}
	}
	// Nothing observed (an MDT's brw_stats): an empty native histogram of
	// the same schema, with or without the +Inf bucket.
	for _, h := range []*dto.Histogram{
		{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0)},
		{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0), Bucket: []*dto.Bucket{{UpperBound: proto.Float64(math.Inf(1)), CumulativeCount: proto.Uint64(0)}}},
	} {
		addNative(h, log2)
		if h.Schema == nil || h.GetSchema() != 0 || h.GetZeroThreshold() != emptyZeroThreshold || h.GetZeroCount() != 0 || len(h.PositiveSpan) != 0 {
			t.Errorf("empty brw_stats histogram: %v", h)
		}
	}
}
