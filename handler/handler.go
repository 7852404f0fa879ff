// Package handler serves /metrics: the gathered families of the
// exporter's own registry and of one scrape of the collectors, then the
// families the collectors stream (per-job series), in the Prometheus text
// or OpenMetrics format, gzipped when the scraper accepts it.
package handler

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/exposition"
)

// Options configure the handler.
type Options struct {
	// MaxRequests bounds concurrent scrapes; 0 means no bound.
	MaxRequests int
	// Instrument adds promhttp_metric_handler_requests_total and
	// _in_flight to the exporter's own metrics.
	Instrument bool
	Logger     *slog.Logger
}

type metricsHandler struct {
	registry        *collector.Registry
	exporterMetrics prometheus.Gatherer
	inflight        chan struct{}
	logger          *slog.Logger
}

// New returns the /metrics handler. exporterMetrics holds the exporter's
// own metrics (build info, Go, process); the handler adds promhttp's
// request counters to it.
func New(registry *collector.Registry, exporterMetrics *prometheus.Registry, opts Options) http.Handler {
	h := &metricsHandler{registry: registry, exporterMetrics: exporterMetrics, logger: opts.Logger}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxRequests > 0 {
		h.inflight = make(chan struct{}, opts.MaxRequests)
	}
	if !opts.Instrument {
		return h
	}
	return promhttp.InstrumentMetricHandler(exporterMetrics, h)
}

// scrapeTimeout reads Prometheus' X-Prometheus-Scrape-Timeout-Seconds.
func scrapeTimeout(r *http.Request) (time.Duration, bool) {
	v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs <= 0 {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	timeout, hasTimeout := scrapeTimeout(r)
	if hasTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	// collect[] names the collectors to run, as node_exporter's does (none:
	// every one); checked first, so that a wrong name costs no scrape slot.
	only := r.URL.Query()["collect[]"]
	scrape, err := h.registry.NewFilteredScrape(ctx, only)
	if err != nil {
		h.logger.Debug("bad collect[] parameter", "collect", only, "err", err)
		http.Error(w, "collect[]: "+err.Error(), http.StatusBadRequest)
		return
	}
	// After the response is written (deferred calls run last in, first
	// out: after the gzip stream is closed).
	defer scrape.Close()

	if h.inflight != nil {
		select {
		case h.inflight <- struct{}{}:
			defer func() { <-h.inflight }()
		default:
			http.Error(w, "too many concurrent scrapes", http.StatusServiceUnavailable)
			return
		}
	}

	perScrape := prometheus.NewRegistry()
	perScrape.MustRegister(scrape)
	// The exporter's own metrics (build info, Go, process, promhttp) come
	// with every response, collect[] or not, as node_exporter's do.
	families, err := prometheus.Gatherers{h.exporterMetrics, perScrape}.Gather()
	if err != nil {
		// As promhttp's ContinueOnError: serve what could be gathered.
		h.logger.Error("error gathering metrics", "err", err)
		if len(families) == 0 {
			http.Error(w, "error gathering metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}

	// Streamed families are written by hand in the text formats only; a
	// client that asked for protobuf gets the text format, which every
	// Prometheus accepts.
	format := expfmt.NegotiateAccept(r.Header, expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtText)

	header := w.Header()
	header.Set("Content-Type", string(format))
	var out io.Writer = w
	if acceptsGzip(r) {
		// klauspost/compress: at the same level, the same ratio as
		// compress/gzip in half the time on job series.
		header.Set("Content-Encoding", "gzip")
		gz := gzipWriters.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() {
			gz.Close()
			gzipWriters.Put(gz)
		}()
		out = gz
	}
	if err := exposition.WriteResponse(out, format, families, scrape.Streams()); err != nil {
		h.logger.Error("error writing metrics", "err", err)
	}
}

// gzipWriters keeps compressors between scrapes: each holds a window and
// tables worth reusing.
var gzipWriters = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return gz
}}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc := strings.TrimSpace(part)
		if i := strings.IndexByte(enc, ';'); i >= 0 {
			if strings.TrimSpace(enc[i+1:]) == "q=0" {
				continue
			}
			enc = strings.TrimSpace(enc[:i])
		}
		if enc == "gzip" {
			return true
		}
	}
	return false
}
