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

// WriteResponse encodes the gathered families, then the streamed ones,
// then the OpenMetrics end marker, in format (text 0.0.4 or OpenMetrics).
// When out is a Gzip, the large parts of streamed families are compressed
// on the goroutines that encode them; out is not closed.
func WriteResponse(out io.Writer, format expfmt.Format, families []*dto.MetricFamily, streams []Family) error {
	openMetrics := format.FormatType() == expfmt.TypeOpenMetrics
	var opts []expfmt.EncoderOption
	if openMetrics {
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
	ew := &Writer{bw: bw, openMetrics: openMetrics}
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
