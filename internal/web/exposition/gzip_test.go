package exposition

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, cut := range []int{0, 1, 7, 8, 1000, 65536, len(data) - 1, len(data)} {
		a, b := data[:cut], data[cut:]
		got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)))
		if want := crc32.ChecksumIEEE(data); got != want {
			t.Errorf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}

// partsFamily is a family of rows samples cut into parts of perPart rows,
// with label values that vary as job ids do.
func partsFamily(rows, perPart int) Family {
	return Family{Name: "lustre_job_write_bytes", Help: "Bytes written.", Type: Counter,
		Parts: (rows + perPart - 1) / perPart,
		WritePart: func(w *Writer, part int) error {
			for r := part * perPart; r < min(rows, (part+1)*perPart); r++ {
				w.ResetLabels()
				w.Label("component", "ost")
				w.Label("target", "fs-OST0000")
				w.Label("jobid", fmt.Sprint(1000000+r*7919%100003))
				w.Label("uid", fmt.Sprint(r%97))
				if err := w.SampleUint(uint64(r)*1048576+uint64(r%13), 1.7e9+float64(r)); err != nil {
					return err
				}
			}
			return nil
		}}
}

// TestGzipResponse: a response gzipped with Gzip, its large parts
// compressed apart and its small ones and the gathered families in
// sequence, is one gzip member holding the bytes of the plain response.
func TestGzipResponse(t *testing.T) {
	gathered := []*dto.MetricFamily{{Name: proto.String("hpcio_exporter_build_info"), Help: proto.String("Build."),
		Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(1)}}}}}
	for _, format := range []expfmt.Format{expfmt.FmtText, expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtProtoDelim} {
		for _, rows := range []int{0, 3, 5000, 40000} {
			streams := []Family{partsFamily(rows, 128), partsFamily(rows/10, 7), partsFamily(rows, 1000)}
			var plain bytes.Buffer
			if err := WriteResponse(&plain, format, gathered, streams); err != nil {
				t.Fatal(err)
			}
			var zipped bytes.Buffer
			z := NewGzip(nil)
			z.Reset(&zipped) // as the handler's pool does
			if err := WriteResponse(z, format, gathered, streams); err != nil {
				t.Fatal(err)
			}
			if err := z.Close(); err != nil {
				t.Fatal(err)
			}
			size := zipped.Len()
			zr, err := stdgzip.NewReader(&zipped)
			if err != nil {
				t.Fatal(err)
			}
			zr.Multistream(false) // one member, holding everything
			got, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s, %d rows: %v", format, rows, err)
			}
			if !bytes.Equal(got, plain.Bytes()) {
				t.Errorf("%s, %d rows: gunzipped %d bytes differ from the plain response's %d", format, rows, len(got), plain.Len())
			}
			if rest, _ := io.ReadAll(&zipped); len(rest) != 0 {
				t.Errorf("%s, %d rows: %d bytes after the gzip member", format, rows, len(rest))
			}
			if rows == 40000 && size*5 > plain.Len() {
				t.Errorf("%s: %d bytes gzipped for %d plain", format, size, plain.Len())
			}
		}
	}
}
