package handler

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/lustre/lustresim"
)

func demoServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	for _, name := range collector.Names() {
		collector.SetEnabled(name, name == "jobstats")
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
		// Protobuf is not offered: the per-job families are written as text.
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "", "text/plain; version=0.0.4", ""},
		{"text/plain", "gzip;q=0", "text/plain; version=0.0.4", ""},
	}
	for _, tc := range tests {
		resp, body := get(t, srv.URL, map[string]string{"Accept": tc.accept, "Accept-Encoding": tc.encoding})
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
			t.Errorf("Accept %q: content type %q, want %q", tc.accept, ct, tc.wantType)
		}
		if enc := resp.Header.Get("Content-Encoding"); enc != tc.wantEncoding {
			t.Errorf("Accept-Encoding %q: content encoding %q", tc.encoding, enc)
		}
		if !strings.Contains(body, "lustre_job_write_bytes_total{") || !strings.Contains(body, "promhttp_metric_handler_requests_total") {
			t.Errorf("Accept %q: body lacks per-job or promhttp metrics", tc.accept)
		}
		if om := strings.HasPrefix(tc.wantType, "application/openmetrics"); om != strings.HasSuffix(body, "# EOF\n") {
			t.Errorf("Accept %q: # EOF present = %v", tc.accept, !om)
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
