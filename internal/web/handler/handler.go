// Package handler serves /metrics: the gathered families of the
// exporter's own registry and of one scrape of the collectors, then the
// families the collectors stream (per-job series), in the Prometheus text,
// OpenMetrics or delimited protobuf format, gzipped when the scraper
// accepts it.
//
// A scrape cannot hold the server: only GET and HEAD scrape, and each
// scrape has a deadline (X-Prometheus-Scrape-Timeout-Seconds, else
// DefaultTimeout) past which its response is no longer written
// (deadline.go), so that a client that stops reading frees its
// --web.max-requests slot and its connection.
package handler

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/hpcio/hpcio_exporter/collector"
	"github.com/hpcio/hpcio_exporter/internal/web/exposition"
)

// Options configure the handler.
type Options struct {
	// MaxRequests bounds concurrent scrapes; 0 means no bound.
	MaxRequests int
	// Instrument adds promhttp_metric_handler_requests_total and
	// _in_flight to the exporter's own metrics.
	Instrument bool
	Logger     *slog.Logger
	// Timeout is the deadline of a scrape that sends no valid
	// X-Prometheus-Scrape-Timeout-Seconds; 0 is DefaultTimeout.
	Timeout time.Duration
	// Scrapes, when set, tracks the scrapes in flight and their
	// deadlines (for a shutdown that waits for them); one may be shared
	// by several handlers.
	Scrapes *Scrapes
	// OnCut, when set, is called with the request of a scrape whose
	// response was cut at its write deadline (the client did not read
	// it in time): its connection is closed.
	OnCut func(*http.Request)
	// CreatedSamples writes OpenMetrics _created lines
	// (--web.openmetrics-created-samples); off, as client_golang's, since
	// each is a series of its own. The protobuf format carries the same
	// times as fields, which cost no series.
	CreatedSamples bool
}

type metricsHandler struct {
	registry        *collector.Registry
	exporterMetrics prometheus.Gatherer
	inflight        chan struct{}
	logger          *slog.Logger
	timeout         time.Duration
	scrapes         *Scrapes
	onCut           func(*http.Request)
	writeOptions    []exposition.Option
}

// New returns the /metrics handler. exporterMetrics holds the exporter's
// own metrics (build info, Go, process); the handler adds promhttp's
// request counters to it.
func New(registry *collector.Registry, exporterMetrics *prometheus.Registry, opts Options) http.Handler {
	h := &metricsHandler{registry: registry, exporterMetrics: exporterMetrics, logger: opts.Logger,
		timeout: opts.Timeout, scrapes: opts.Scrapes, onCut: opts.OnCut}
	// In protobuf, the rate densities are gauge histograms; only the
	// collectors know which families are snapshots.
	h.writeOptions = append(h.writeOptions, exposition.WithGaugeHistograms(collector.GaugeHistograms()))
	if opts.CreatedSamples {
		h.writeOptions = append(h.writeOptions, exposition.WithCreatedSamples())
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	if opts.MaxRequests > 0 {
		h.inflight = make(chan struct{}, opts.MaxRequests)
	}
	if !opts.Instrument {
		return h
	}
	return promhttp.InstrumentMetricHandler(exporterMetrics, h)
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Any other method would run a whole scrape (and lctl) for a request
	// that is no scrape: POST, PUT, OPTIONS, TRACE… get 405.
	if !ScrapeMethod(w, r) {
		return
	}
	// The scrape's deadline bounds the collectors (through ctx) and the
	// writing of the response (through the connection's deadlines).
	start := time.Now()
	timeout, ok := scrapeTimeout(r)
	if !ok {
		if v := r.Header.Get(timeoutHeader); v != "" {
			h.logger.Debug("ignored an invalid "+timeoutHeader+" header", "value", clip(v, 32), "timeout", h.timeout)
		}
		timeout = h.timeout
	}
	deadline := start.Add(timeout)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	out := newDeadlineWriter(w, deadline.Add(WriteGrace))
	if h.scrapes != nil {
		defer h.scrapes.begin(deadline.Add(WriteGrace))()
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
	// After the response is written, the gzip stream closed.
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

	// The scraper's order decides (Prometheus 3 puts protobuf first when
	// scrape_protocols does); without a match, the text format.
	format := expfmt.NegotiateAccept(r.Header, expfmt.FmtProtoDelim, expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtText)

	header := w.Header()
	header.Set("Content-Type", string(format))
	var body io.Writer = out
	var gz *exposition.Gzip
	if acceptsGzip(r) {
		// exposition's gzip stream compresses the large parts of the
		// per-job families on the cores that encode them.
		header.Set("Content-Encoding", "gzip")
		gz = gzipWriters.Get().(*exposition.Gzip)
		gz.Reset(out)
		defer func() {
			gz.Reset(nil)
			gzipWriters.Put(gz)
		}()
		body = gz
	}
	err = exposition.WriteResponse(body, format, families, scrape.Streams(), h.writeOptions...)
	if gz != nil && err == nil {
		err = gz.Close()
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The client did not read in time: net/http closes the
		// connection, whose write failed. Routine under a client that
		// stops reading, so counted (OnCut) rather than logged each time.
		h.logger.Debug("scrape response cut at its write deadline", "remote", r.RemoteAddr, "deadline", deadline.Add(WriteGrace), "stalled", out.stalled)
		if h.onCut != nil {
			h.onCut(r)
		}
	default:
		h.logger.Error("error writing metrics", "err", err)
	}
}

// gzipWriters keeps compressors between scrapes: each holds a window and
// tables worth reusing.
var gzipWriters = sync.Pool{New: func() any { return exposition.NewGzip(nil) }}

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
