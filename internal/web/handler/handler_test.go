package handler

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

// demoServer serves a 20-job demo server's jobstats, and the collectors in
// also when given.
func demoServer(t *testing.T, opts Options, also ...string) *httptest.Server {
	t.Helper()
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats" || slices.Contains(also, name))
	}
	if len(also) > 0 {
		t.Cleanup(func() {
			for _, name := range collector.Names() {
				collector.SetEnabled(name, name == "jobstats")
			}
		})
	}
	cfg := lustresim.DemoConfig()
	cfg.Jobs = 20
	reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: lustresim.New(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(reg, prometheus.NewRegistry(), opts))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(data)
}

func TestNegotiation(t *testing.T) {
	srv := demoServer(t, Options{Instrument: true})
	tests := []struct {
		accept, encoding, wantType, wantEncoding string
	}{
		{"", "", "text/plain; version=0.0.4", ""},
		{"application/openmetrics-text;version=1.0.0", "gzip", "application/openmetrics-text; version=1.0.0", "gzip"},
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "", protoType, ""},
		// Prometheus 3's header when scrape_protocols puts PrometheusProto first.
		{prometheus3Accept, "gzip", protoType, "gzip"},
		// Prometheus 2's default: OpenMetrics first.
		{"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "gzip", "application/openmetrics-text; version=1.0.0", "gzip"},
		{"text/plain", "gzip;q=0", "text/plain; version=0.0.4", ""},
		{"*/*", "", "text/plain; version=0.0.4", ""},
	}
	for _, tc := range tests {
		resp, body := get(t, srv.URL, map[string]string{"Accept": tc.accept, "Accept-Encoding": tc.encoding})
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
			t.Errorf("Accept %q: content type %q, want %q", tc.accept, ct, tc.wantType)
		}
		if enc := resp.Header.Get("Content-Encoding"); enc != tc.wantEncoding {
			t.Errorf("Accept-Encoding %q: content encoding %q", tc.encoding, enc)
		}
		if strings.HasPrefix(tc.wantType, protoType) {
			body = protoAsText(t, body)
		}
		if !strings.Contains(body, "lustre_job_write_bytes_total{") || !strings.Contains(body, "promhttp_metric_handler_requests_total") {
			t.Errorf("Accept %q: body lacks per-job or promhttp metrics", tc.accept)
		}
		if om := strings.HasPrefix(tc.wantType, "application/openmetrics"); om != strings.HasSuffix(body, "# EOF\n") {
			t.Errorf("Accept %q: # EOF present = %v", tc.accept, !om)
		}
	}
}

const (
	protoType         = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
	prometheus3Accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.4,application/openmetrics-text;version=0.0.1;q=0.3,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.2,text/plain;version=0.0.4;q=0.1,*/*;q=0.05"
)

// protoAsText decodes a delimited protobuf body with client_golang's
// decoder and writes it in the text format.
func protoAsText(t *testing.T, body string) string {
	t.Helper()
	dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	var out strings.Builder
	enc := expfmt.NewEncoder(&out, expfmt.NewFormat(expfmt.TypeTextPlain))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("protobuf body: %v", err)
		}
		if err := enc.Encode(&mf); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

// No _created lines in OpenMetrics unless --web.openmetrics-created-samples.
func TestCreatedSamples(t *testing.T) {
	for _, on := range []bool{false, true} {
		srv := demoServer(t, Options{CreatedSamples: on})
		_, body := get(t, srv.URL, map[string]string{"Accept": "application/openmetrics-text;version=1.0.0"})
		if !strings.Contains(body, "lustre_job_write_bytes_total{") {
			t.Fatalf("created samples %v: no per-job series", on)
		}
		if got := strings.Contains(body, "lustre_job_write_bytes_created{"); got != on {
			t.Errorf("created samples %v: _created lines present: %v", on, got)
		}
		// The text format never has them.
		_, body = get(t, srv.URL, nil)
		if strings.Contains(body, "_created") {
			t.Errorf("created samples %v: _created in the text format", on)
		}
	}
}

// Beyond --web.max-requests concurrent scrapes, the next one gets 503.
func TestMaxRequests(t *testing.T) {
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats")
	}
	block := make(chan struct{})
	reg, err := collector.NewRegistry(collector.Env{Logger: slog.New(slog.DiscardHandler), LctlSource: blockingSource{block}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(reg, prometheus.NewRegistry(), Options{MaxRequests: 1}))
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		http.Get(srv.URL)
		close(done)
	}()
	time.Sleep(200 * time.Millisecond)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second concurrent scrape: %s, want 503", resp.Status)
	}
	close(block)
	<-done
}

type blockingSource struct{ block chan struct{} }

func (b blockingSource) GetParam(ctx context.Context, _ []string) (io.ReadCloser, error) {
	select {
	case <-b.block:
	case <-ctx.Done():
	}
	return io.NopCloser(strings.NewReader("")), nil
}

// TestProtoDemo: Prometheus 3's protobuf scrape of the demo has the
// families of the text scrape; brw_stats' sizes are native histograms of
// schema 0 beside their classic buckets, brw_stats' times (milliseconds)
// and the rate density of the default base (10) classic only (exposition's
// TestNativeDensity has the other bases).
func TestProtoDemo(t *testing.T) {
	srv := demoServer(t, Options{}, "brw_stats")
	get(t, srv.URL, nil) // the density needs an interval
	_, text := get(t, srv.URL, nil)
	resp, body := get(t, srv.URL, map[string]string{"Accept": prometheus3Accept, "Accept-Encoding": "gzip"})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, protoType) {
		t.Fatalf("content type %q", ct)
	}
	dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	got := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if prev := got[mf.GetName()]; prev != nil {
			prev.Metric = append(prev.Metric, mf.Metric...)
		} else {
			got[mf.GetName()] = &mf
		}
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	want, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for name := range want {
		if got[name] == nil {
			t.Errorf("%s missing from the protobuf scrape", name)
		}
	}
	for name, mf := range got {
		if want[name] == nil {
			t.Errorf("%s only in the protobuf scrape", name)
		}
		if density := strings.HasSuffix(name, "_rate_density"); density != (mf.GetType() == dto.MetricType_GAUGE_HISTOGRAM) {
			t.Errorf("%s: type %v", name, mf.GetType())
		}
		if mf.GetType() != dto.MetricType_HISTOGRAM && mf.GetType() != dto.MetricType_GAUGE_HISTOGRAM {
			continue
		}
		wantNative := name == "lustre_brw_rpc_size_bytes" || name == "lustre_brw_io_size_bytes"
		natives := 0
		for _, m := range mf.Metric {
			h := m.Histogram
			if len(h.Bucket) == 0 {
				continue // no row printed: nothing to map
			}
			if native := h.Schema != nil; native != wantNative || h.GetSchema() != 0 {
				t.Errorf("%s: native %v schema %d", name, native, h.GetSchema())
				break
			}
			if h.Schema != nil {
				natives++
			}
		}
		if wantNative && natives == 0 {
			t.Errorf("%s: no native histogram", name)
		}
	}
	for _, name := range []string{"lustre_job_bytes_rate_density", "lustre_brw_rpc_size_bytes", "lustre_brw_io_time_seconds", "lustre_job_write_bytes_total"} {
		if got[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	// Counters carry created timestamps as fields.
	if wb := got["lustre_job_write_bytes_total"]; wb != nil && wb.Metric[0].GetCounter().GetCreatedTimestamp() == nil {
		t.Errorf("lustre_job_write_bytes_total without created timestamp")
	}
}
