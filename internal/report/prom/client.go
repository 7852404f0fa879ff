// Package prom fills the servers' view of a job report from Prometheus:
// the job's read and write rates, its bytes, RPCs and share per OST, its
// MDT operations, the alerts that fired for it, and the job_stats coverage
// of its targets, over a window. It queries Prometheus' HTTP API through
// client_golang's API client (package api), with the TLS, basic auth and
// bearer token of a prometheus/common HTTP client configuration file,
// the style of Prometheus' own scrape configuration.
//
// The queries use deploy/'s recording rules where they exist
// (deploy/prometheus/rules/hpcio-recording.rules.yml) and the raw series
// otherwise, so that a Prometheus without those rules still gives a
// report.
package prom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Client queries one Prometheus.
type Client struct {
	api api.Client
	// URL is the server's address without credentials, for messages.
	URL string
}

// maxResponse bounds what one answer may hold: a job's series over a day
// are far smaller; a larger one is a wrong query or a wrong server.
const maxResponse = 64 << 20

// New returns a client of the Prometheus at rawURL. configFile, when not
// empty, is a prometheus/common HTTP client configuration (YAML:
// basic_auth, authorization or bearer_token_file, tls_config, proxy_url,
// …), its relative paths taken from the file's directory, as Prometheus
// reads the same block of a scrape configuration.
func New(rawURL, configFile string) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus.url=%q: not an http:// or https:// URL", rawURL)
	}
	cfg := config.DefaultHTTPClientConfig
	if configFile != "" {
		c, _, err := config.LoadHTTPConfigFile(configFile)
		if err != nil {
			return nil, fmt.Errorf("--prometheus.config: %w", err)
		}
		cfg = *c
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("--prometheus.config: %w", err)
	}
	hc, err := config.NewClientFromConfig(cfg, "hpcio_exporter_report")
	if err != nil {
		return nil, fmt.Errorf("--prometheus.config: %w", err)
	}
	// Credentials in the URL go with the requests (the api client keeps
	// the URL), not into messages.
	c, err := api.NewClient(api.Config{Address: rawURL, Client: hc})
	if err != nil {
		return nil, err
	}
	return &Client{api: c, URL: u.Redacted()}, nil
}

// apiResponse is the envelope of Prometheus' HTTP API.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

type queryData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// do posts a query form to an endpoint and returns its data.
func (c *Client) do(ctx context.Context, endpoint string, form url.Values) (*queryData, error) {
	u := c.api.URL(endpoint, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body, err := c.api.Do(ctx, req)
	if err != nil {
		return nil, c.reachErr(err)
	}
	if len(body) > maxResponse {
		return nil, fmt.Errorf("prometheus %s: an answer of %d bytes, more than the %d a job's report reads", c.URL, len(body), maxResponse)
	}
	var r apiResponse
	if jerr := json.Unmarshal(body, &r); jerr != nil || r.Status == "" {
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("prometheus %s: HTTP %s%s", c.URL, resp.Status, authHint(resp.StatusCode))
		}
		return nil, fmt.Errorf("prometheus %s: the answer is not Prometheus' HTTP API (is the URL a Prometheus?)", c.URL)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus %s: %s: %s%s", c.URL, r.ErrorType, r.Error, authHint(resp.StatusCode))
	}
	var d queryData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("prometheus %s: %v", c.URL, err)
	}
	return &d, nil
}

func authHint(code int) string {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		return " (credentials: --prometheus.config)"
	}
	return ""
}

// UnreachableError is an error of a server that could not be reached or
// did not answer in time: the one line the command prints.
type UnreachableError struct {
	msg string
	err error
}

func (e *UnreachableError) Error() string { return e.msg }
func (e *UnreachableError) Unwrap() error { return e.err }

// reachErr says, in one line, that the server could not be reached.
func (c *Client) reachErr(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return &UnreachableError{fmt.Sprintf("prometheus %s: no answer in time (--prometheus.timeout)", c.URL), err}
	case errors.Is(err, context.Canceled):
		return err
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	return &UnreachableError{fmt.Sprintf("prometheus %s: cannot reach it: %v", c.URL, inner), err}
}

// Query evaluates an instant query at t.
func (c *Client) Query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	d, err := c.do(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {ts(t)}})
	if err != nil {
		return nil, err
	}
	switch d.ResultType {
	case "vector":
		var v model.Vector
		err := json.Unmarshal(d.Result, &v)
		return v, wrapDecode(c, err)
	case "scalar":
		var s model.Scalar
		if err := json.Unmarshal(d.Result, &s); err != nil {
			return nil, wrapDecode(c, err)
		}
		return model.Vector{{Value: s.Value, Timestamp: s.Timestamp, Metric: model.Metric{}}}, nil
	}
	return nil, fmt.Errorf("prometheus %s: a %s where a vector was expected", c.URL, d.ResultType)
}

// QueryRange evaluates a range query.
func (c *Client) QueryRange(ctx context.Context, q string, from, to time.Time, step time.Duration) (model.Matrix, error) {
	d, err := c.do(ctx, "/api/v1/query_range", url.Values{"query": {q}, "start": {ts(from)}, "end": {ts(to)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}})
	if err != nil {
		return nil, err
	}
	if d.ResultType != "matrix" {
		return nil, fmt.Errorf("prometheus %s: a %s where a matrix was expected", c.URL, d.ResultType)
	}
	var m model.Matrix
	return m, wrapDecode(c, json.Unmarshal(d.Result, &m))
}

func wrapDecode(c *Client, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("prometheus %s: undecodable answer: %v", c.URL, err)
}

func ts(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// Ping checks that the server answers queries, so that an unreachable or
// wrong server is one clear error before anything else.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Query(ctx, "1", time.Now())
	return err
}
