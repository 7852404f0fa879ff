package exposition

import (
	"bufio"
	"io"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// responseWriters keep the write buffers of responses between scrapes.
var responseWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

// Option changes what WriteResponse writes.
type Option func(*options)

type options struct {
	createdSamples  bool
	gaugeHistograms map[string]bool
	proto           bool // NewWriter's protobuf, for tests; WriteResponse's comes from its format
}

// WithCreatedSamples writes each counter's creation time as a _created
// line in OpenMetrics, which Prometheus stores as a series of its own
// unless it ingests created timestamps; client_golang leaves them out
// unless asked (EnableOpenMetricsTextCreatedSamples), and so does this
// package. The text format never carries them.
func WithCreatedSamples() Option { return func(o *options) { o.createdSamples = true } }

// WithGaugeHistograms names the gathered histogram families that are
// snapshots, not counts since a start: in protobuf their MetricType is
// GAUGE_HISTOGRAM (whose series Prometheus names as a histogram's, and
// whose counts may go down without a reset), which client_golang's
// registry, typing every histogram a counter one, cannot give.
func WithGaugeHistograms(families map[string]bool) Option {
	return func(o *options) { o.gaugeHistograms = families }
}

// WriteResponse encodes the gathered families, then the streamed ones,
// then the OpenMetrics end marker, in format (text 0.0.4, OpenMetrics or
// delimited protobuf). In protobuf, the gathered histograms named by
// WithGaugeHistograms are gauge histograms, changed in place, and created
// timestamps are fields.
// When out is a Gzip, the large parts of streamed families are compressed
// on the goroutines that encode them; out is not closed.
func WriteResponse(out io.Writer, format expfmt.Format, families []*dto.MetricFamily, streams []Family, opt ...Option) error {
	var o options
	for _, f := range opt {
		f(&o)
	}
	openMetrics := format.FormatType() == expfmt.TypeOpenMetrics
	protobuf := format.FormatType() == expfmt.TypeProtoDelim
	if protobuf {
		// Gathered families are made afresh by each Gather: this
		// changes no one else's.
		for _, mf := range families {
			if o.gaugeHistograms[mf.GetName()] && mf.GetType() == dto.MetricType_HISTOGRAM {
				mf.Type = dto.MetricType_GAUGE_HISTOGRAM.Enum()
			}
		}
	}
	var opts []expfmt.EncoderOption
	if openMetrics && o.createdSamples {
		opts = append(opts, expfmt.WithCreatedLines())
	}
	bw := responseWriters.Get().(*bufio.Writer)
	bw.Reset(out)
	defer func() {
		bw.Reset(nil)
		responseWriters.Put(bw)
	}()
	enc := expfmt.NewEncoder(bw, format, opts...)
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	ew := &Writer{bw: bw, openMetrics: openMetrics, createdLines: openMetrics && o.createdSamples, proto: protobuf}
	if gz, ok := out.(*Gzip); ok {
		ew.gz = gz
	}
	for i := range streams {
		if err := ew.WriteFamily(&streams[i]); err != nil {
			return err
		}
	}
	if err := ew.Flush(); err != nil {
		return err
	}
	if c, ok := enc.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			return err
		}
	}
	return bw.Flush()
}
