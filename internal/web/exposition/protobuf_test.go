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
		both := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lustre_both", Help: "Both.",
			Buckets: []float64{1, 2, 4}, NativeHistogramBucketFactor: 1.1})
		for _, v := range []float64{0.5, 1.5, 3, 5} {
			both.Observe(v)
		}
		ms = append(ms, both)
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
		if err := WriteResponse(&pb, expfmt.FmtProtoDelim, gather(t, ms...), streams, WithGaugeHistograms(map[string]bool{"lustre_job_bytes_rate_density": true})); err != nil {
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
		// A histogram with native buckets beside its classic ones keeps
		// both; the classic ones are all the text format has.
		if h := got["lustre_both"].Metric[0].Histogram; h.GetSchema() != 3 || len(h.PositiveSpan) == 0 || len(h.Bucket) != 3 {
			t.Errorf("rows %d: lustre_both %v", rows, h)
		}
	}
}
