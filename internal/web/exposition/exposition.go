// Package exposition writes metric families straight into a Prometheus text
// (0.0.4), OpenMetrics (1.0.0) or delimited protobuf response, sample by
// sample.
//
// client_golang materializes every sample of a scrape as protobuf structs
// before encoding; at 100,000 Lustre jobs that is several hundred megabytes
// per scrape. Families written here cost a few bytes of scratch space each,
// whatever their size. The rest of the exporter's metrics still go through
// client_golang; the HTTP handler writes these after them.
package exposition

import (
	"bufio"
	"io"
	"math"
	"strconv"
)

// Type is a metric family's type.
type Type int

const (
	Counter Type = iota
	Gauge
)

// Family is one metric family whose samples are written by Write.
type Family struct {
	// Name is the family's name; for a counter, without the _total suffix,
	// which the writer adds to its samples.
	Name string
	Help string
	Type Type
	// Write writes the family's samples with Writer.Sample. It may write
	// none, in which case the family is left out of the response.
	Write func(w *Writer) error
	// WritePart, when set, replaces Write: the samples are cut into Parts
	// parts, in order, and WritePart writes part i. Parts are
	// written concurrently (parts.go), each with a Writer of its own, so
	// WritePart must only read what no one changes meanwhile.
	Parts     int
	WritePart func(w *Writer, part int) error
}

// Writer writes samples of one format to an underlying io.Writer.
type Writer struct {
	bw *bufio.Writer
	// direct: the Writer encodes a part (parts.go), appending to out
	// instead of bw. A sample built in bufio's free space was copied onto
	// itself by Write, and the part's buffer copied again into the part:
	// two copies of every byte of the largest families.
	direct      bool
	out         []byte
	openMetrics bool
	// createdLines: OpenMetrics _created lines are written (off by
	// default, as client_golang's: each is a series of its own in
	// Prometheus 2 and 3).
	createdLines bool
	// proto: delimited io.prometheus.client.MetricFamily messages
	// (protobuf.go) instead of text; labels then holds encoded
	// LabelPairs and pb the Metrics of the message being built.
	proto bool
	pb    []byte
	// gz is bw's writer when the response is gzipped: parts are then
	// compressed by their encoders.
	gz *Gzip

	fam        *Family
	famWritten bool
	samples    bool   // a sample was written since the family began
	labels     []byte // the label block of the sample being built, without braces
	line       []byte // the value being written
	scratch    []byte // for headers and created timestamps
}

// NewWriter returns a Writer writing OpenMetrics when openMetrics is set,
// else the Prometheus text format 0.0.4.
func NewWriter(w io.Writer, openMetrics bool, opt ...Option) *Writer {
	var o options
	for _, f := range opt {
		f(&o)
	}
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10), openMetrics: openMetrics, createdLines: openMetrics && o.createdSamples, proto: o.proto}
}

// WriteFamily writes f's header and samples. A family without samples
// writes nothing.
func (w *Writer) WriteFamily(f *Family) error {
	if f.WritePart != nil {
		if f.Parts == 0 {
			return nil
		}
		return w.writeParts(f)
	}
	w.fam, w.famWritten = f, false
	err := f.Write(w)
	if w.proto {
		w.endMessage()
	}
	w.fam = nil
	return err
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// Label appends one label to the sample being built. Empty values are
// skipped: Prometheus treats an empty label as an absent one, and leaving it
// out shortens the response.
func (w *Writer) Label(name, value string) {
	if w.proto || !NeedsEscape(value) {
		w.LabelPlain(name, value)
		return
	}
	// Rare (a hostile job name, a path): the escaped copy is a string of
	// its own.
	w.LabelPlain(name, string(appendEscaped(nil, value, true)))
}

// LabelPlain is Label for a value the caller knows to hold no byte that
// needs escaping (a backslash, a double quote, a newline), and for the
// protobuf exposition, which escapes nothing: it is copied as it is.
func (w *Writer) LabelPlain(name, value string) {
	if value == "" {
		return
	}
	if w.proto {
		w.labels = appendLabelPair(w.labels, name, value)
		return
	}
	if len(w.labels) > 0 {
		w.labels = append(w.labels, ',')
	}
	w.labels = append(w.labels, name...)
	w.labels = append(w.labels, '=', '"')
	w.labels = append(w.labels, value...)
	w.labels = append(w.labels, '"')
}

// ResetLabels discards the labels appended since the last sample.
func (w *Writer) ResetLabels() { w.labels = w.labels[:0] }

// LabelMark returns a position to which TruncateLabels can return, so that a
// caller can write the labels shared by several samples once.
func (w *Writer) LabelMark() int { return len(w.labels) }

// TruncateLabels drops the labels appended after mark.
func (w *Writer) TruncateLabels(mark int) { w.labels = w.labels[:mark] }

// SampleUint writes one sample with the labels appended so far and an
// integer value, which is exact where a float64 would round. created, when
// positive, is the counter's creation time in Unix seconds; OpenMetrics
// carries it as a _created line when asked (WithCreatedSamples). The labels are kept, for LabelMark/TruncateLabels.
func (w *Writer) SampleUint(value uint64, created float64) error {
	if w.proto {
		return w.protoSample(float64(value), created)
	}
	w.line = strconv.AppendUint(w.line[:0], value, 10)
	return w.sample(created)
}

// SampleFloat is SampleUint for a float value.
func (w *Writer) SampleFloat(value float64, created float64) error {
	if w.proto {
		return w.protoSample(value, created)
	}
	w.line = AppendFloat(w.line[:0], value)
	return w.sample(created)
}

func (w *Writer) sample(created float64) error {
	w.samples = true
	if !w.famWritten {
		w.writeHeader()
		w.famWritten = true
	}
	// The line is put together in the buffer's free space and written
	// once (bufio's AvailableBuffer idiom): a million samples a scrape at
	// 100,000 jobs, where a write per piece was a third of the encoding.
	// A line that would not fit is not built in a new slice: the buffer
	// is flushed first (an error stays in bw, for the last Flush).
	var b []byte
	if w.direct {
		b = w.out
	} else {
		need := 2*(len(w.fam.Name)+len("_created")+len(w.labels)+4) + len(w.line) + 32
		if w.bw.Available() < need {
			w.bw.Flush()
		}
		b = w.bw.AvailableBuffer()
	}
	b = w.appendName(b, "")
	b = append(b, w.line...)
	b = append(b, '\n')
	if w.createdLines && w.fam.Type == Counter && created > 0 {
		b = w.appendName(b, "_created")
		b = AppendFloat(b, created)
		b = append(b, '\n')
	}
	if w.direct {
		w.out = b
	} else {
		w.bw.Write(b)
	}
	return nil
}

// write writes p to the output: bw, or a part's out.
func (w *Writer) write(p []byte) {
	if w.direct {
		w.out = append(w.out, p...)
	} else {
		w.bw.Write(p)
	}
}

// appendName appends the sample's name (with suffix, or _total for a
// counter) and its labels, up to the space before the value.
func (w *Writer) appendName(b []byte, suffix string) []byte {
	b = append(b, w.fam.Name...)
	if suffix != "" {
		b = append(b, suffix...)
	} else if w.fam.Type == Counter {
		b = append(b, "_total"...)
	}
	if len(w.labels) > 0 {
		b = append(b, '{')
		b = append(b, w.labels...)
		b = append(b, '}')
	}
	return append(b, ' ')
}

func (w *Writer) writeHeader() {
	if w.proto {
		return // each message has its own (endMessage)
	}
	name := w.fam.Name
	if !w.openMetrics && w.fam.Type == Counter {
		name += "_total"
	}
	w.bw.WriteString("# HELP ")
	w.bw.WriteString(name)
	w.bw.WriteByte(' ')
	w.scratch = appendEscaped(w.scratch[:0], w.fam.Help, false)
	w.bw.Write(w.scratch)
	w.bw.WriteString("\n# TYPE ")
	w.bw.WriteString(name)
	if w.fam.Type == Counter {
		w.bw.WriteString(" counter\n")
	} else {
		w.bw.WriteString(" gauge\n")
	}
}

// appendEscaped escapes a label value (backslash, double quote, newline) or
// a HELP text (backslash, newline; OpenMetrics also escapes the quote, which
// the text format leaves alone; HELP texts here contain none).
func appendEscaped(b []byte, s string, quote bool) []byte {
	if !NeedsEscape(s) {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '"' && quote:
			b = append(b, '\\', '"')
		default:
			b = append(b, c)
		}
	}
	return b
}

// NeedsEscape reports whether s holds a byte the text formats escape in a
// label value; a value that holds none can go to LabelPlain. Label values
// are short: a loop beats strings.ContainsAny, which builds its set each
// call.
func NeedsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '"' || c == '\n' {
			return true
		}
	}
	return false
}

// AppendFloat formats v as Prometheus does: shortest representation, with
// NaN and ±Inf spelled out.
func AppendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
