package exposition

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf exposition (application/vnd.google.protobuf;
// proto=io.prometheus.client.MetricFamily; encoding=delimited) is a
// sequence of MetricFamily messages, each preceded by its length as a
// varint. The streamed families are encoded here field by field, as the
// text is: client_golang's encoder would need every sample as a struct.
//
// A message's length comes before it, so a family cannot be sent before it
// ends. Instead each part of a family (Family.Parts), and each
// maxMessage bytes of a family written at once, is a message of its own
// with the family's name, help and type: a delimited stream may repeat a
// family, and Prometheus' parser reads each message by itself. Memory stays
// bounded and the parts are still encoded on every core.
//
// Field numbers are those of io/prometheus/client/metrics.proto
// (github.com/prometheus/client_model).
const (
	familyName   = 1 // MetricFamily.name
	familyHelp   = 2 // MetricFamily.help
	familyType   = 3 // MetricFamily.type (COUNTER 0, GAUGE 1)
	familyMetric = 4 // MetricFamily.metric
	metricLabel  = 1 // Metric.label
	metricGauge  = 2 // Metric.gauge
	metricCount  = 3 // Metric.counter
	labelName    = 1 // LabelPair.name
	labelValue   = 2 // LabelPair.value
	valueField   = 1 // Gauge.value, Counter.value
	counterCT    = 3 // Counter.created_timestamp
	tsSeconds    = 1 // google.protobuf.Timestamp.seconds
	tsNanos      = 2 // google.protobuf.Timestamp.nanos

	typeCounter = 0
	typeGauge   = 1
)

// maxMessage: a family written at once (Family.Write) is cut into
// messages of about this size, so that its encoding needs no more memory
// than a part's.
const maxMessage = 256 << 10

// Every field number here is below 16: a tag is one byte.
func tag(num protowire.Number, typ protowire.Type) byte { return byte(num)<<3 | byte(typ) }

// appendVarint is protowire.AppendVarint with the short values, most of
// them here (lengths of labels and samples), inlined.
func appendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<7:
		return append(b, byte(v))
	case v < 1<<14:
		return append(b, byte(v)|0x80, byte(v>>7))
	}
	return protowire.AppendVarint(b, v)
}

// varintSize is protowire.SizeVarint, inlined for short values.
func varintSize(v uint64) int {
	switch {
	case v < 1<<7:
		return 1
	case v < 1<<14:
		return 2
	}
	return protowire.SizeVarint(v)
}

// appendLabelPair appends one Metric.label field.
func appendLabelPair(b []byte, name, value string) []byte {
	n := 2 + varintSize(uint64(len(name))) + len(name) + varintSize(uint64(len(value))) + len(value)
	b = append(b, tag(metricLabel, protowire.BytesType))
	b = appendVarint(b, uint64(n))
	b = append(b, tag(labelName, protowire.BytesType))
	b = appendVarint(b, uint64(len(name)))
	b = append(b, name...)
	b = append(b, tag(labelValue, protowire.BytesType))
	b = appendVarint(b, uint64(len(value)))
	return append(b, value...)
}

// appendTimestamp appends a google.protobuf.Timestamp's fields for t Unix
// seconds, rounded to the nanosecond as timestamppb.New does a time.Time.
func appendTimestamp(b []byte, t float64) []byte {
	sec := int64(t)
	nanos := int64(math.Round((t - float64(sec)) * 1e9))
	if nanos >= 1e9 {
		sec, nanos = sec+1, nanos-1e9
	}
	if sec != 0 {
		b = append(b, tag(tsSeconds, protowire.VarintType))
		b = protowire.AppendVarint(b, uint64(sec))
	}
	if nanos != 0 {
		b = append(b, tag(tsNanos, protowire.VarintType))
		b = protowire.AppendVarint(b, uint64(nanos))
	}
	return b
}

// protoSample appends one Metric to the message being built: the labels,
// then a Gauge or a Counter with its value and, when created is positive,
// its created_timestamp.
func (w *Writer) protoSample(v, created float64) error {
	w.samples = true
	var tsb [24]byte
	var ts []byte
	field := protowire.Number(metricGauge)
	inner := 9 // value: tag and fixed64
	if w.fam.Type == Counter {
		field = metricCount
		if created > 0 {
			ts = appendTimestamp(tsb[:0], created)
			inner += 2 + len(ts)
		}
	}
	n := len(w.labels) + 2 + inner
	b := append(w.pb, tag(familyMetric, protowire.BytesType))
	b = appendVarint(b, uint64(n))
	b = append(b, w.labels...)
	b = append(b, tag(field, protowire.BytesType), byte(inner))
	b = append(b, tag(valueField, protowire.Fixed64Type))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	if ts != nil {
		b = append(b, tag(counterCT, protowire.BytesType), byte(len(ts)))
		b = append(b, ts...)
	}
	w.pb = b
	if len(w.pb) >= maxMessage {
		w.endMessage()
	}
	return nil
}

// endMessage writes the Metrics built so far as one delimited
// MetricFamily, after the family's name (with _total for a counter, as
// client_golang names it), help and type.
func (w *Writer) endMessage() {
	if len(w.pb) == 0 {
		return
	}
	h := w.scratch[:0]
	h = protowire.AppendTag(h, familyName, protowire.BytesType)
	if w.fam.Type == Counter {
		h = protowire.AppendVarint(h, uint64(len(w.fam.Name)+len("_total")))
		h = append(h, w.fam.Name...)
		h = append(h, "_total"...)
	} else {
		h = protowire.AppendString(h, w.fam.Name)
	}
	h = protowire.AppendTag(h, familyHelp, protowire.BytesType)
	h = protowire.AppendString(h, w.fam.Help)
	h = protowire.AppendTag(h, familyType, protowire.VarintType)
	if w.fam.Type == Counter {
		h = protowire.AppendVarint(h, typeCounter)
	} else {
		h = protowire.AppendVarint(h, typeGauge)
	}
	var lb [binary.MaxVarintLen64]byte
	w.write(protowire.AppendVarint(lb[:0], uint64(len(h)+len(w.pb))))
	w.write(h)
	w.write(w.pb)
	w.scratch = h
	w.pb = w.pb[:0]
}
