package exposition

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

type sample struct {
	labels  [][2]string
	value   float64
	integer bool
	created float64
}

var samples = []sample{
	{labels: [][2]string{{"target", "fs-OST0000"}, {"jobid", "123"}, {"uid", "1000"}}, value: 11025514496, integer: true, created: 1723102025.057286},
	{labels: [][2]string{{"target", "fs-OST0000"}, {"jobid", `we"ird\job` + "\n"}}, value: 7.304967},
	{labels: [][2]string{{"target", "fs-OST0000"}, {"jobid", "x"}, {"node", ""}}, value: math.Inf(1)},
	{labels: nil, value: 0, integer: true},
}

// write produces the family with this package.
func write(t *testing.T, typ Type, openMetrics bool, opt ...Option) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, openMetrics, opt...)
	fam := Family{Name: "lustre_job_things", Help: "Things \\ of the job.\nSecond line.", Type: typ, Write: func(w *Writer) error {
		for _, s := range samples {
			w.ResetLabels()
			for _, l := range s.labels {
				w.Label(l[0], l[1])
			}
			var err error
			if s.integer {
				err = w.SampleUint(uint64(s.value), s.created)
			} else {
				err = w.SampleFloat(s.value, s.created)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}}
	empty := Family{Name: "lustre_job_nothing", Help: "never written", Type: Counter, Write: func(*Writer) error { return nil }}
	if err := w.WriteFamily(&empty); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFamily(&fam); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// reference produces the same family with client_golang's encoders.
func reference(t *testing.T, typ Type, format expfmt.Format, opt ...expfmt.EncoderOption) string {
	t.Helper()
	mf := referenceFamily(typ)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, format, opt...)
	if err := enc.Encode(mf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// referenceFamily is the family write writes, as client_golang's structs.
func referenceFamily(typ Type) *dto.MetricFamily {
	name := "lustre_job_things"
	mf := &dto.MetricFamily{Name: proto.String(name), Help: proto.String("Things \\ of the job.\nSecond line.")}
	if typ == Counter {
		mf.Type = dto.MetricType_COUNTER.Enum()
		mf.Name = proto.String(name + "_total")
	} else {
		mf.Type = dto.MetricType_GAUGE.Enum()
	}
	for _, s := range samples {
		m := &dto.Metric{}
		for _, l := range s.labels {
			if l[1] == "" {
				continue
			}
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(l[0]), Value: proto.String(l[1])})
		}
		if typ == Counter {
			m.Counter = &dto.Counter{Value: proto.Float64(s.value)}
			if s.created > 0 {
				sec, frac := math.Modf(s.created)
				m.Counter.CreatedTimestamp = &timestamppb.Timestamp{Seconds: int64(sec), Nanos: int32(math.Round(frac * 1e9))}
			}
		} else {
			m.Gauge = &dto.Gauge{Value: proto.Float64(s.value)}
		}
		mf.Metric = append(mf.Metric, m)
	}
	return mf
}

// canonical rewrites every sample value as a float, so that "6832128" and
// "6.832128e+06" compare equal, and drops the label set's order.
func canonical(t *testing.T, text string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "#") {
			out = append(out, line)
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if strings.Contains(line[:i], "_created") {
			v = math.Round(v*1e6) / 1e6 // the reference rounds to nanoseconds
		}
		out = append(out, line[:i]+" "+strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strings.Join(out, "\n")
}

// TestMatchesClientGolang: the same bytes (up to number spelling and label
// order) as client_golang's encoders, with _created lines in OpenMetrics
// only when asked, as client_golang's EnableOpenMetricsTextCreatedSamples.
func TestMatchesClientGolang(t *testing.T) {
	for _, typ := range []Type{Counter, Gauge} {
		for _, om := range []bool{false, true} {
			for _, created := range []bool{false, true} {
				format := expfmt.FmtText
				if om {
					format = expfmt.FmtOpenMetrics_1_0_0
				}
				var opt []Option
				var ref []expfmt.EncoderOption
				if created {
					opt, ref = append(opt, WithCreatedSamples()), append(ref, expfmt.WithCreatedLines())
				}
				out := write(t, typ, om, opt...)
				got := canonical(t, out)
				want := canonical(t, reference(t, typ, format, ref...))
				if got != want {
					t.Errorf("type %v openmetrics=%v created=%v:\n got:\n%s\nwant:\n%s", typ, om, created, got, want)
				}
				if has := strings.Contains(out, "_created"); has != (om && created && typ == Counter) {
					t.Errorf("type %v openmetrics=%v created=%v: _created lines present: %v", typ, om, created, has)
				}
			}
		}
	}
}

// The text output parses with Prometheus' own parser.
func TestParsesAsText(t *testing.T) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(write(t, Counter, false)))
	if err != nil {
		t.Fatal(err)
	}
	mf := fams["lustre_job_things_total"]
	if mf == nil || len(mf.Metric) != len(samples) {
		t.Fatalf("parsed %v", fams)
	}
	if v := mf.Metric[0].GetCounter().GetValue(); v != 11025514496 {
		t.Errorf("first value %v", v)
	}
	if _, ok := fams["lustre_job_nothing_total"]; ok {
		t.Error("a family without samples was written")
	}
}

func TestLabelMarks(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, false)
	fam := Family{Name: "x", Help: "h", Type: Gauge, Write: func(w *Writer) error {
		w.Label("a", "1")
		mark := w.LabelMark()
		for _, op := range []string{"open", "close"} {
			w.TruncateLabels(mark)
			w.Label("op", op)
			w.SampleUint(1, 0)
		}
		return nil
	}}
	w.WriteFamily(&fam)
	w.Flush()
	want := "# HELP x h\n# TYPE x gauge\nx{a=\"1\",op=\"open\"} 1\nx{a=\"1\",op=\"close\"} 1\n"
	if buf.String() != want {
		t.Fatalf("got %q want %q", buf.String(), want)
	}
}
