// Package server composes chartctl's HTTP surface on echo v4: middleware
// (request ids, logging, metrics, authentication, rate limits), the /v1
// JSON API and the health endpoints, and it mounts the protocol packages
// (internal/helmrepo) on the application layer (internal/app).
//
// A Server holds service interfaces of the domain (internal/chartctl) and
// never a concrete store; the serve command wires the concrete types in.
// Every route is listed in routes.go.
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/coalesce"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ratelimit"
)

// Config holds the server's tunables. The zero value is not usable; start
// from DefaultConfig.
type Config struct {
	// BaseURL is the externally visible URL of the server ("" derives it
	// from each request).
	BaseURL string
	// MaxChartSize is the largest chart archive accepted, in bytes.
	MaxChartSize int64
	// AllowOverwrite lets `?force=true` replace a stored chart version.
	AllowOverwrite bool
	// GlobalLimit, UploadLimit and SearchLimit are the rate limits of §7.
	GlobalLimit, UploadLimit, SearchLimit ratelimit.Limit
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies clientip.Resolver
	// ChartLimits bound what an archive may decompress to.
	ChartLimits chart.Limits
	// ShutdownTimeout bounds how long Close waits for in-flight requests.
	ShutdownTimeout time.Duration
	// MaxKeysPerUser caps the API keys one user may hold (0: no cap).
	MaxKeysPerUser int
	// KeyCreateLimit bounds API key creation per user (the "keys"
	// bucket), so minting keys cannot multiply the per-key global limit.
	KeyCreateLimit ratelimit.Limit
	// BodyTimeout bounds how long a request body may take to arrive on
	// every route but the uploads, which keep UploadTimeout.
	BodyTimeout time.Duration
	// UploadTimeout bounds an upload's whole request when UploadMinRate
	// is off; with it on, the rate bounds upload bodies instead.
	UploadTimeout time.Duration
	// UploadMinRate is the rate upload bodies (chart uploads on /v1 and
	// the ChartMuseum API, blob uploads and manifests on /v2) must keep,
	// or be cut with 408 (--upload-min-rate; zero: off).
	UploadMinRate httpx.MinRate
	// MaxConcurrentUploads caps the uploads one credential runs at once
	// (--max-concurrent-uploads; 0: no cap); the extra one is 429.
	MaxConcurrentUploads int
	// CORSOrigins are the browser origins allowed to call /v1 (an OpenAPI
	// tool, a portal); none by default. "*" allows any origin.
	CORSOrigins []string
	// MaxConnsPerIP caps concurrent connections from one client address
	// (0: no cap; behind a load balancer every client shares one address).
	MaxConnsPerIP int
	// BlobGrace spares orphan blobs younger than this from the startup
	// sweep (0: app.DefaultBlobGrace), as another replica may be about to
	// refer to one.
	BlobGrace time.Duration
	// AllowPrivateWebhooks lets webhook URLs name private and loopback
	// addresses (--allow-private-webhooks).
	AllowPrivateWebhooks bool
	// DefaultRepositoryQuota, if positive, is the max_bytes quota of new
	// repositories (--default-repository-quota).
	DefaultRepositoryQuota int64
	// DefaultIndexFormat is the index format of new repositories that do
	// not choose one ("" means json).
	DefaultIndexFormat chartctl.IndexFormat
	// IndexCacheDir, if set, is a directory of this process's own where
	// the gzip forms of large indexes are kept as files and sent with
	// sendfile (serve: DATA/index-cache), with the snapshots a restart
	// serves them from.
	IndexCacheDir string
	// BackfillDelay is how long the start-up backfills and the orphan
	// blob sweep wait after the start (app.Config.BackfillDelay); 0 (the
	// default) starts them at once.
	BackfillDelay time.Duration
	// BlobCacheSize is the memory, in bytes, kept for the small blobs
	// (chart archives, provenance files, OCI blobs up to 256 KiB) that
	// downloads are served from (--blob-cache-size); 0 keeps none.
	BlobCacheSize int64
	// AllowPrivateUpstreams lets mirror URLs name private and loopback
	// addresses (--allow-private-upstreams).
	AllowPrivateUpstreams bool
	// PrivateUpstreams are the private addresses proxy repositories may
	// name (--allow-private-upstreams as a CIDR list); AllowPrivateUpstreams
	// allows them all.
	PrivateUpstreams netguard.Allowance
	// PlainHTTPUpstreams are the HOST:PORTs proxy repositories and
	// replication targets may be reached at over plain http
	// (--plain-http-upstreams).
	PlainHTTPUpstreams []string
	// OIDCTrustInsecureIssuers are issuers of trusted publishers the
	// operator vouches for (--oidc-trust-insecure-issuers): they may be
	// plain http and on private addresses.
	OIDCTrustInsecureIssuers []string
	// OIDCRootCAs verifies trusted publishers' issuers' certificates (nil:
	// the system's roots; tests set a test CA).
	OIDCRootCAs *x509.CertPool
	// OIDCTokenLimit bounds token exchanges (POST /v1/oidc/token) per
	// client address (the "oidc_token" bucket).
	OIDCTokenLimit ratelimit.Limit
}

// DefaultBlobCacheSize is the default of Config.BlobCacheSize.
const DefaultBlobCacheSize = 64 << 20

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxChartSize:         10 << 20,
		GlobalLimit:          ratelimit.Limit{N: 1000, Window: time.Hour},
		UploadLimit:          ratelimit.Limit{N: 100, Window: time.Hour},
		SearchLimit:          ratelimit.Limit{N: 300, Window: time.Hour},
		ChartLimits:          chart.DefaultLimits(),
		ShutdownTimeout:      15 * time.Second,
		MaxKeysPerUser:       100,
		KeyCreateLimit:       ratelimit.Limit{N: 50, Window: time.Hour},
		OIDCTokenLimit:       ratelimit.Limit{N: 300, Window: time.Hour},
		BodyTimeout:          30 * time.Second,
		UploadTimeout:        5 * time.Minute,
		UploadMinRate:        httpx.DefaultUploadMinRate,
		MaxConcurrentUploads: 8,
		BlobCacheSize:        DefaultBlobCacheSize,
	}
}

// Server is the HTTP server. Set the exported fields, then call Open.
type Server struct {
	// Store keeps metadata; Blobs keeps chart archives.
	Store chartctl.Store
	Blobs chartctl.BlobStore
	// Config holds the tunables.
	Config Config
	// TLS, if set, makes Open serve HTTPS with it, over the connection
	// cap, so that net/http sees each connection as TLS (HTTP/2 by ALPN,
	// the request's TLS state, https URLs).
	TLS *tls.Config
	// Logger receives request and error logs.
	Logger *slog.Logger
	// AccessTokens verifies OAuth access tokens; nil accepts API keys only.
	AccessTokens httpx.AccessTokenVerifier
	// NotFoundPage, if set, answers a browser's GET or HEAD of an address
	// no route has (outside /v1, /v2 and /helm) with a page instead of the
	// API's JSON error: the dashboard's 404 page.
	NotFoundPage echo.HandlerFunc
	// Now is the clock; tests inject one.
	Now func() time.Time
	// RateLimits makes the rate limiters and the authentication throttle;
	// nil keeps them in this process's memory (one node). Replicas share
	// one backend (internal/postgres), so that limits hold over all of
	// them.
	RateLimits ratelimit.Backend
	// BackupSnapshotHook, if set, is called inside each backup's read
	// transaction once its snapshot is fixed (tests use it to capture the
	// source at the snapshot point).
	BackupSnapshotHook func()
	// Extra, if set, is called with the router after the /v1 and Helm routes
	// are registered, so other transports (OAuth, dashboard, metrics) can
	// add theirs to the same server.
	Extra func(e *echo.Echo)
	// Secrets seals webhook secrets; without it webhooks cannot be
	// created.
	Secrets app.Sealer
	// OnEvents, if set, is called after a change with events committed
	// (the webhook dispatcher's Notify).
	OnEvents func()
	// Lint lints charts for admission policies that ask for it. The serve
	// command sets a child process bounded in time and memory (decision
	// 9); nil refuses charts under a lint policy, saying no linter is
	// installed.
	Lint admission.Linter
	// Render renders charts with their default values, for the images of
	// charts without the artifacthub.io/images annotation and the
	// rendered manifests of diffs. The serve command sets the same
	// bounded child process (decision 9); nil leaves those versions
	// pending and diffs without rendered manifests.
	Render chartdiff.Renderer

	echo     *echo.Echo
	api      *echo.Group
	http     *http.Server
	ln       net.Listener
	app      *app.App
	limits   ratelimit.Limiter
	uploads  *httpx.UploadSlots
	throttle ratelimit.Failures
	touch    *touchBatcher
	creds    *credentialCache
	repoJSON repoListJSON
	metrics  *metrics
	// routeSet holds the registered route patterns, the only route labels
	// the metrics use; built on first use, after every route exists.
	routeSet  map[string]bool
	routeOnce sync.Once
	ready     atomic.Bool
	// readyChecks are /readyz's dependency checks, each with a flag set
	// while a check of it is still running.
	readyChecks []*readyCheck
	wg          sync.WaitGroup
	stop        chan struct{}
	stopOnce    sync.Once
}

// New returns a Server over store and blobs with DefaultConfig.
func New(store chartctl.Store, blobs chartctl.BlobStore) *Server {
	return &Server{Store: store, Blobs: blobs, Config: DefaultConfig()}
}

// Handler builds the router. Open calls it; tests may call it to serve the
// API without a listener.
func (s *Server) Handler() http.Handler {
	s.init()
	return s.echo
}

func (s *Server) init() {
	if s.echo != nil {
		return
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	s.stop = make(chan struct{})
	s.metrics = s.newMetrics()
	s.app = app.New(s.Store, s.Blobs, app.Options{
		Config: app.Config{MaxChartSize: s.Config.MaxChartSize, AllowOverwrite: s.Config.AllowOverwrite, ChartLimits: s.Config.ChartLimits, BlobGrace: s.Config.BlobGrace,
			AllowPrivateWebhooks: s.Config.AllowPrivateWebhooks, DefaultRepositoryQuota: s.Config.DefaultRepositoryQuota,
			DefaultIndexFormat: s.Config.DefaultIndexFormat, IndexCacheDir: s.Config.IndexCacheDir, BackfillDelay: s.Config.BackfillDelay,
			BlobCacheSize: blobCacheBudget(s.Config.BlobCacheSize), AllowPrivateUpstreams: s.Config.AllowPrivateUpstreams,
			PrivateUpstreams: s.Config.PrivateUpstreams, PlainHTTPUpstreams: s.Config.PlainHTTPUpstreams,
			MaxKeysPerUser: s.Config.MaxKeysPerUser, OIDCTrustInsecureIssuers: s.Config.OIDCTrustInsecureIssuers, OIDCRootCAs: s.Config.OIDCRootCAs},
		Logger: s.Logger, Now: s.Now,
		ObserveRender: func(d time.Duration) { s.metrics.renders.Observe(d.Seconds()) },
		ObserveUpload: s.countUpload,
	})
	s.app.Secrets, s.app.OnEvents = s.Secrets, s.OnEvents
	// A closure: s.creds is made below.
	s.app.OnMemberships = func() { s.creds.invalidate() }
	s.app.Lint = s.Lint
	s.app.Render = s.Render
	if s.RateLimits == nil {
		s.RateLimits = ratelimit.Memory{Now: s.Now}
	}
	s.limits = s.RateLimits.NewLimiter(map[string]ratelimit.Limit{
		bucketGlobal: s.Config.GlobalLimit,
		bucketUpload: s.Config.UploadLimit,
		bucketSearch: s.Config.SearchLimit,
		bucketKeys:   s.Config.KeyCreateLimit,
		// Per client address: see handleOIDCToken.
		bucketOIDCToken: s.Config.OIDCTokenLimit,
	})
	// Key creation is charged by the application layer, so the dashboard's
	// form and /v1 spend the same budget.
	s.app.Limits = s.limits
	s.uploads = httpx.NewUploadSlots(s.Config.MaxConcurrentUploads)
	s.readyChecks = s.dependencyChecks()
	s.throttle = s.RateLimits.NewThrottle("api-auth", ratelimit.Limit{N: 20, Window: time.Minute})
	s.touch = newTouchBatcher(s.Store, s.Logger)
	s.creds = newCredentialCache()
	s.echo = echo.New()
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = httpx.ErrorHandler(s.Logger)
	s.routes(s.echo)
	if s.Extra != nil {
		s.Extra(s.echo)
	}
	// Group middleware makes echo register catch-all routes that answer 404
	// even for a known path with another method; these answer 405 there.
	s.echo.RouteNotFound("/*", s.handleNoRoute)
	s.echo.RouteNotFound("/v1/*", s.handleNoRoute)
	s.ready.Store(true)
}

// blobCacheBudget is app.Config.BlobCacheSize for Config.BlobCacheSize,
// where 0 means no cache.
func blobCacheBudget(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
}

// App returns the application layer the server's transports stand on, so
// the composition root can hand it to other transports.
func (s *Server) App() *app.App {
	s.init()
	return s.app
}

// ServeNotFoundPage makes h answer browsers that ask for an unknown
// address (see NotFoundPage).
func (s *Server) ServeNotFoundPage(h echo.HandlerFunc) { s.NotFoundPage = h }

// AcceptAccessTokens makes the API accept the OAuth access tokens v
// verifies.
func (s *Server) AcceptAccessTokens(v httpx.AccessTokenVerifier) { s.AccessTokens = v }

// API returns the authenticated, rate-limited /v1 route group, so Extra
// hooks can add /v1 endpoints that behave like the built-in ones. Handlers
// there find the caller with PrincipalOf.
func (s *Server) API() *echo.Group { return s.api }

// Open starts serving on ln and returns at once. It also starts the
// background work: flushing last-used times and sweeping orphan blobs.
func (s *Server) Open(ln net.Listener) error {
	s.init()
	if s.TLS == nil {
		// Large bodies from memory leave with their headers in one
		// system call (internal/coalesce).
		ln = coalesce.Listener(ln)
	}
	if s.Config.MaxConnsPerIP > 0 {
		ln = newConnLimitListener(ln, s.Config.MaxConnsPerIP)
	}
	if s.TLS != nil {
		// Outermost, so that net/http finds a *tls.Conn.
		ln = tls.NewListener(ln, s.TLS)
	}
	s.ln = ln
	s.http = &http.Server{
		Handler:           s.echo,
		ConnContext:       coalesce.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		// Uploads of the largest chart over a slow link must fit, so the
		// connection's bound is the upload's; every other route gets a
		// short body deadline (bodyDeadline). Idle keep-alives are reaped.
		ReadTimeout:    s.Config.UploadTimeout,
		WriteTimeout:   s.Config.UploadTimeout,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
	}
	s.wg.Add(11)
	go func() {
		defer s.wg.Done()
		// The web pages of uploaded versions, after their uploads are
		// answered.
		s.app.Pages.Run(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		// Large repositories' index snapshots, current once their
		// changes pause and when the server stops.
		s.app.RunIndexKeeper(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		// The JSON index entries of versions stored before they were
		// kept (issue #32), one replica at a time; until then their
		// index converts the YAML entries at load, as before.
		s.app.RunIndexJSONBackfill(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		// Proxy caches drop what nobody used for their retention
		// (decision 16), one replica per sweep.
		s.app.RunProxyRetention(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		// The images of pushed versions, and the backfill of those
		// stored before (decision 11), in the background.
		s.app.RunImages(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		s.app.RunRetentionScheduler(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		s.app.RunHoldSweeper(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		// Blob claims released after the answers of uploads.
		s.app.RunClaimReleases(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		s.touch.run(s.stop)
	}()
	go func() {
		defer s.wg.Done()
		s.app.RunDownloadFlusher(s.stop, 5*time.Second)
	}()
	go func() {
		defer s.wg.Done()
		// A start-up job like the backfills: it waits as they do.
		if s.app.WaitStartDelay(s.stop) {
			s.app.SweepOrphanBlobs(context.Background(), s.stop)
		}
	}()
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("serve", "err", err)
		}
	}()
	return nil
}

// URL returns the base URL of the listener, e.g. "http://127.0.0.1:1234"
// ("https://…" with TLS).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	if s.TLS != nil {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops accepting requests, waits (bounded by ShutdownTimeout) for
// in-flight ones, and flushes pending writes. It does not close the store.
func (s *Server) Close() error {
	s.ready.Store(false)
	var err error
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.Config.ShutdownTimeout)
		defer cancel()
		if e := s.http.Shutdown(ctx); e != nil {
			// Requests still running after the drain timeout are cut off
			// rather than left to meet a closed store.
			_ = s.http.Close()
			err = fmt.Errorf("shutdown: %w", e)
		}
	}
	s.stopOnce.Do(func() {
		if s.stop != nil {
			close(s.stop)
		}
	})
	s.wg.Wait()
	if s.app != nil {
		// The index snapshots the next start is answered from.
		s.app.Index.Flush()
	}
	return err
}

// Routes returns the registered routes; tests walk them to check that
// every mutating route is audited.
func (s *Server) Routes() []*echo.Route {
	s.init()
	return s.echo.Routes()
}
