package server

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// metrics are the server's Prometheus metrics, on a registry of its own.
// Route labels are route patterns, never raw paths, so cardinality stays
// bounded.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	uploads   *prometheus.CounterVec
	limited   *prometheus.CounterVec
	renders   prometheus.Histogram
	diskUsage *diskUsage

	seriesMu sync.RWMutex
	series   map[seriesKey]series
}

// memoProvider is implemented by stores whose memos depend on the other
// replicas (PostgreSQL).
type memoProvider interface{ Memoizing() bool }

// pathProvider is implemented by stores that live in one file.
type pathProvider interface{ Path() string }

// rootProvider is implemented by blob stores that live in one directory.
type rootProvider interface{ Root() string }

func (s *Server) newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chartctl_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "chartctl_http_request_duration_seconds", Help: "HTTP request latency by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chartctl_chart_uploads_total", Help: "Chart uploads by result (accepted, rejected) and reason (an error code, or created/unchanged).",
		}, []string{"result", "reason"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chartctl_rate_limit_rejections_total", Help: "Requests refused by a rate-limit bucket.",
		}, []string{"bucket"}),
		renders: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "chartctl_index_render_seconds", Help: "Time to assemble a repository's index.yaml after a change.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}),
		diskUsage: &diskUsage{},
		series:    map[seriesKey]series{},
	}
	m.reg.MustRegister(m.requests, m.latency, m.uploads, m.limited, m.renders,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "chartctl_images_pending", Help: "Chart versions this replica's images job has still to go through (queued after a push, or left of a backfill).",
		}, func() float64 { return float64(s.app.ImagesPending()) }))
	if mp, ok := s.Store.(memoProvider); ok {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "chartctl_registry_memos", Help: "1 while this replica answers the registry's hottest reads (a manifest by tag, a blob link, a page of tags) from memory: alone on its database, or acknowledged by every other replica; 0 otherwise.",
		}, func() float64 {
			if mp.Memoizing() {
				return 1
			}
			return 0
		}))
	}
	if pp, ok := s.Store.(pathProvider); ok {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "chartctl_store_bytes", Help: "Size of the metadata store file.",
		}, func() float64 {
			st, err := os.Stat(pp.Path())
			if err != nil {
				return 0
			}
			return float64(st.Size())
		}))
	}
	if rp, ok := s.Blobs.(rootProvider); ok {
		m.diskUsage.root = rp.Root()
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "chartctl_blob_bytes", Help: "Total size of stored blobs (refreshed at most every 30 s).",
		}, func() float64 { b, _ := m.diskUsage.get(s.Now()); return float64(b) }))
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "chartctl_blobs", Help: "Number of stored blobs (refreshed at most every 30 s).",
		}, func() float64 { _, n := m.diskUsage.get(s.Now()); return float64(n) }))
	}
	return m
}

// series are the request counter and latency histogram of one route,
// method and status. Looking them up by label values hashes the values
// on every request; the few combinations a server sees are kept instead.
type series struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

type seriesKey struct {
	route, method string
	status        int
}

// observe counts one request. route and method must be bounded labels
// (routeLabel, methodLabel); statuses are the handlers' own.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	k := seriesKey{route, method, status}
	m.seriesMu.RLock()
	sr, ok := m.series[k]
	m.seriesMu.RUnlock()
	if !ok {
		sr = series{
			count:   m.requests.WithLabelValues(route, method, strconv.Itoa(status)),
			latency: m.latency.WithLabelValues(route, method),
		}
		m.seriesMu.Lock()
		m.series[k] = sr
		m.seriesMu.Unlock()
	}
	sr.count.Inc()
	sr.latency.Observe(d.Seconds())
}

// methodLabel bounds the method label: any method string a client sends
// would otherwise become a new time series, held for good.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// routeLabel bounds the route label to the registered route patterns;
// anything else (the not-found catch-alls included) is "unmatched".
func (s *Server) routeLabel(path string) string {
	s.routeOnce.Do(func() {
		s.routeSet = map[string]bool{}
		for _, r := range s.echo.Routes() {
			if r.Method != echo.RouteNotFound {
				s.routeSet[r.Path] = true
			}
		}
	})
	if s.routeSet[path] {
		return path
	}
	return "unmatched"
}

func (s *Server) handleMetrics(c echo.Context) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}

// diskUsage walks the blob directory at most every 30 seconds.
type diskUsage struct {
	root  string
	mu    sync.Mutex
	at    time.Time
	bytes int64
	count int64
}

func (d *diskUsage) get(now time.Time) (int64, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.at) < 30*time.Second && !d.at.IsZero() {
		return d.bytes, d.count
	}
	var b, n int64
	_ = filepath.WalkDir(filepath.Join(d.root, "sha256"), func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if info, err := e.Info(); err == nil {
			b += info.Size()
			n++
		}
		return nil
	})
	d.at, d.bytes, d.count = now, b, n
	return b, n
}

// countUpload records an upload's outcome in the metrics.
func (s *Server) countUpload(created bool, err error) {
	switch {
	case err != nil:
		s.metrics.uploads.WithLabelValues("rejected", chartctl.ErrorCode(err)).Inc()
	case created:
		s.metrics.uploads.WithLabelValues("accepted", "created").Inc()
	default:
		s.metrics.uploads.WithLabelValues("accepted", "unchanged").Inc()
	}
}

// RegisterMetrics adds collectors (a proxy cache's, say) to the server's
// /metrics.
func (s *Server) RegisterMetrics(cs ...prometheus.Collector) {
	s.init()
	s.metrics.reg.MustRegister(cs...)
}
