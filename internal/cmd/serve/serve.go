// Package serve implements `chartctl serve`, the composition root: it opens
// the concrete store and blob store and hands them to the HTTP server.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/identity/ldap"
	"github.com/chartctl/chartctl/internal/identity/oidc"
	"github.com/chartctl/chartctl/internal/mirror"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/proxy"
	"github.com/chartctl/chartctl/internal/replication"
	"github.com/chartctl/chartctl/internal/sandbox"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/serveconfig"
	"github.com/chartctl/chartctl/internal/tlsconfig"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// Options configure one run of the server.
type Options struct {
	Config Config
	// Storage chooses the storage engines (storage.go).
	Storage StorageConfig
	// Stderr receives the logs.
	Stderr io.Writer
	// Getenv reads the environment (CHARTCTL_* variables).
	Getenv func(string) string
	// ReadFile reads the configuration file (os.ReadFile when nil).
	ReadFile func(string) ([]byte, error)
	// ConfigFile is the configuration file that was read, "" when none.
	ConfigFile string
	// Ready, if set, receives the server's URL once it listens (tests).
	Ready func(url string)
	// Routes, if set, adds routes to the server (OAuth, dashboard, metrics),
	// with the running server and its store at hand.
	Routes func(e *echo.Echo, env *Env)
}

// Env is what Routes hooks receive: the running server and the concrete
// store it was given.
type Env struct {
	Server *server.Server
	Store  Database
	Config *Config
	Logger *slog.Logger
	// OIDC is the discovered OpenID Connect provider people sign in
	// through, nil without --oidc-issuer; OIDCClientSecret is its client
	// secret (it keys the sign-in state every replica must open).
	OIDC             *oidc.Provider
	OIDCClientSecret string
	// LDAP is the directory people sign in with, nil without --ldap-url.
	LDAP *ldap.Provider
}

// NewCmdServe returns the `serve` command. runF replaces the run function
// in tests.
func NewCmdServe(stderr io.Writer, routes func(e *echo.Echo, env *Env), runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Config: DefaultConfig(), Stderr: stderr, Getenv: os.Getenv, Routes: routes}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the chart repository server",
		Long: `Run the chart repository server: the /v1 API, the Helm repository protocol
under /helm/REPO, the OAuth authorization server and the web dashboard.

Every flag can also be set with a CHARTCTL_* environment variable, e.g.
--max-chart-size with CHARTCTL_MAX_CHART_SIZE, and as a key of the YAML
configuration file (--config, default /etc/chartctl/config.yaml when it
exists), e.g. "max-chart-size: 20MiB". A flag wins over the environment,
which wins over the file. On first start with an empty
data directory the admin user is created and its credentials are written to
DATA/initial-admin.json.`,
		Example: `  chartctl serve
  chartctl serve --addr 0.0.0.0:8080 --data /var/lib/chartctl --base-url https://charts.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			loaded, err := serveconfig.Load(cmd.LocalFlags(), opts.Getenv, opts.ReadFile)
			if err != nil {
				return err
			}
			if err := opts.Config.Validate(); err != nil {
				return err
			}
			if print, _ := cmd.Flags().GetBool(serveconfig.FlagPrintConfig); print {
				return serveconfig.Print(cmd.OutOrStdout(), cmd.LocalFlags())
			}
			opts.ConfigFile = loaded.File
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Run(ctx, opts)
		},
	}
	opts.Config.AddFlags(cmd.Flags())
	opts.Storage.AddFlags(cmd.Flags())
	serveconfig.AddFlags(cmd.Flags())
	return cmd
}

// discoverOIDC reads the client secret and discovers the provider of
// --oidc-issuer (nil without one). The issuer is the operator's setting,
// reached without the private-address guard (CONTRACT §18 decision 5),
// through HTTPS_PROXY when set; its failure stops the start, saying what
// to check.
// hc is the client to reach it with (nil: http.DefaultClient, which
// trusts SSL_CERT_FILE).
func discoverOIDC(ctx context.Context, cfg *Config, hc *http.Client) (*oidc.Provider, string, error) {
	if cfg.OIDCIssuer == "" {
		return nil, "", nil
	}
	b, err := os.ReadFile(cfg.OIDCClientSecretFile)
	if err != nil {
		return nil, "", fmt.Errorf("read --oidc-client-secret-file: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return nil, "", fmt.Errorf("--oidc-client-secret-file %s is empty: put the client secret from the provider in it", cfg.OIDCClientSecretFile)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := oidc.New(dctx, oidc.Config{
		Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: secret,
		RedirectURL: strings.TrimRight(cfg.BaseURL, "/") + "/signin/oidc/callback",
		Scopes:      cfg.OIDCScopes, GroupsClaim: cfg.OIDCGroupsClaim, AllowUnverifiedEmail: cfg.OIDCAllowUnverifiedEmail,
		HTTPClient: hc,
	})
	if err != nil {
		return nil, "", err
	}
	return p, secret, nil
}

// openLDAP reads the service account's password and returns the
// directory of --ldap-url (nil without one). It does not dial: a
// directory that is down at start gives the sign-in page's 503 until it
// is back, and stops nothing else.
func openLDAP(cfg *Config) (*ldap.Provider, error) {
	if cfg.LDAPURL == "" {
		return nil, nil
	}
	var pw string
	if cfg.LDAPBindPasswordFile != "" {
		b, err := os.ReadFile(cfg.LDAPBindPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("read --ldap-bind-password-file: %w", err)
		}
		pw = strings.TrimRight(string(b), "\r\n")
		if pw == "" {
			return nil, fmt.Errorf("--ldap-bind-password-file %s is empty: put the password of --ldap-bind-dn in it", cfg.LDAPBindPasswordFile)
		}
	}
	return ldap.New(cfg.ldapConfig(pw))
}

// Run serves until ctx is done, then drains in-flight requests and closes
// the store cleanly.
func Run(ctx context.Context, opts *Options) error {
	cfg := &opts.Config
	logger := newLogger(opts.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	// The identity provider is discovered before anything is written, so
	// a wrong issuer stops the start on a fresh data dir too.
	provider, clientSecret, err := discoverOIDC(ctx, cfg, nil)
	if err != nil {
		return err
	}
	directory, err := openLDAP(cfg)
	if err != nil {
		return err
	}
	trustedRoot, err := LoadTrustedRoot(cfg.SigstoreTrustedRoot)
	if err != nil {
		return err
	}
	opts.Storage.RepoNameGrace = cfg.RepoNameGrace
	st, err := OpenStorage(ctx, cfg.Data, &opts.Storage, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	db, blobs := st.Store, st.Blobs
	if err := bootstrapAdmin(ctx, db, cfg, opts.Getenv, logger); err != nil {
		return err
	}

	_, onPostgres := db.(*postgres.DB)
	keyFile, generate := cfg.SecretsKeyFile, false
	if keyFile == "" {
		keyFile, generate = filepath.Join(cfg.Data, "secrets.key"), true
		if onPostgres {
			logger.Warn("--secrets-key-file is not set: this replica seals webhook secrets and mirror passwords with its own key in --data, which other replicas cannot open, and stores every OCI upload session when it starts; give every replica the same --secrets-key-file")
		}
	}
	box, err := secrets.Load(keyFile, generate)
	if err != nil {
		return err
	}
	dispatcher := webhook.New(db, box, webhook.Options{BaseURL: cfg.BaseURL, RetryBase: cfg.WebhookRetryBase,
		Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.AllowPrivateWebhooks, Logger: logger})

	srv := server.New(db, blobs)
	// Committed events wake the webhook dispatcher and the replicator
	// (made below, once the application layer exists).
	var replicator *replication.Replicator
	srv.Secrets, srv.OnEvents = box, func() {
		dispatcher.Notify()
		if replicator != nil {
			replicator.Wake()
		}
	}
	// Charts are linted by chartctl-lint in a child process, killed past
	// the time bound and limited in memory (decision 9); Helm's lint
	// pulls Kubernetes libraries this binary stays free of. Without it,
	// policies with lint refuse charts saying so.
	// The same child renders charts with their default values (its render
	// mode): the images of charts without the artifacthub.io/images
	// annotation and the rendered manifests of diffs. Without it those
	// versions stay pending.
	// The children are warm workers (chartctl-lint serve) kept in two
	// pools, started on first use: starting one costs more than linting
	// a small chart. Renderings (images, diffs) have their own pool so a
	// slow one never delays an upload's lint. Deferred here, the pools
	// close after the requests and background jobs using them ended.
	if lintBin := findLinter(); lintBin != "" {
		lintPool := sandbox.New(sandbox.Config{Args: []string{lintBin, "serve"}, Workers: lintWorkers(),
			Timeout: admission.DefaultLintTimeout, Memory: admission.DefaultLintMemory, Env: []string{"GOMAXPROCS=1"}})
		defer lintPool.Close()
		renderPool := sandbox.New(sandbox.Config{Args: []string{lintBin, "serve"}, Workers: 2,
			Timeout: chartdiff.DefaultRenderTimeout, Memory: chartdiff.DefaultRenderMemory,
			MaxAnswer: chartdiff.MaxRenderedBytes + 1<<20, Env: []string{"GOMAXPROCS=1"}})
		defer renderPool.Close()
		srv.Lint = admission.Pooled(lintPool)
		srv.Render = chartdiff.Subprocess(renderPool)
	} else {
		logger.Warn("chartctl-lint is not installed next to chartctl or on PATH: lint policies refuse charts, the images of charts without the artifacthub.io/images annotation stay pending and diffs show no rendered manifests")
	}
	srv.Config.AllowPrivateWebhooks = cfg.AllowPrivateWebhooks
	srv.Config.AllowPrivateUpstreams = cfg.AllowPrivateUpstreams.All
	srv.Config.PrivateUpstreams = netguard.Allowance(cfg.AllowPrivateUpstreams)
	srv.Config.PlainHTTPUpstreams = cfg.PlainHTTPUpstreams
	srv.Config.OIDCTrustInsecureIssuers = cfg.OIDCTrustInsecureIssuers
	srv.Config.OIDCTokenLimit = cfg.RateLimitOIDCToken
	srv.Config.DefaultRepositoryQuota = int64(cfg.DefaultRepoQuota)
	srv.Config.DefaultIndexFormat = chartctl.IndexFormat(cfg.IndexFormat)
	// Each process has its own data directory, so replicas never share it.
	srv.Config.IndexCacheDir = filepath.Join(cfg.Data, "index-cache")
	srv.Config.BackfillDelay = startupBackfillDelay
	srv.Config.BlobCacheSize = int64(cfg.BlobCacheSize)
	srv.Logger = logger
	srv.Config.BaseURL = cfg.BaseURL
	srv.Config.MaxChartSize = int64(cfg.MaxChartSize)
	srv.Config.AllowOverwrite = cfg.AllowOverwrite
	srv.Config.GlobalLimit = cfg.RateLimitGlobal
	srv.Config.UploadLimit = cfg.RateLimitUpload
	srv.Config.SearchLimit = cfg.RateLimitSearch
	srv.Config.KeyCreateLimit = cfg.RateLimitKeys
	srv.Config.MaxKeysPerUser = cfg.MaxAPIKeys
	srv.Config.MaxConnsPerIP = cfg.MaxConnsPerIP
	srv.Config.UploadMinRate = cfg.UploadMinRate
	srv.Config.MaxConcurrentUploads = cfg.MaxConcurrentUploads
	srv.Config.BlobGrace = cfg.GCGrace
	if cfg.GCGrace == 0 {
		srv.Config.BlobGrace = -1 // --gc-grace 0: no grace
	}
	trusted, _ := clientip.ParseTrusted(cfg.TrustedProxies)
	srv.Config.TrustedProxies = clientip.Resolver{Trusted: trusted}
	if pg, ok := db.(*postgres.DB); ok {
		// Replicas count against the same windows.
		srv.RateLimits = pg.RateLimits(nil)
	}
	for _, o := range cfg.CORSOrigins {
		srv.Config.CORSOrigins = append(srv.Config.CORSOrigins, strings.TrimSuffix(o, "/"))
	}
	if opts.Routes != nil {
		env := &Env{Server: srv, Store: db, Config: cfg, Logger: logger, OIDC: provider, OIDCClientSecret: clientSecret, LDAP: directory}
		srv.Extra = func(e *echo.Echo) { opts.Routes(e, env) }
	}
	reg := mountRegistry(srv, db, blobs, cfg, logger)
	// Only now: App() builds the application layer from the server's
	// configuration and routes, the registry's included.
	srv.App().Trust = signatureTrust(cfg, trustedRoot)
	if !onPostgres || !generate {
		// Upload sessions known by their IDs (a push's POST stores
		// nothing): every replica must derive the same key, so not from a
		// key file a PostgreSQL replica generated for itself.
		reg.SessionKey = box.Derive("oci upload sessions")
	}
	// Mirror repositories follow their upstreams: each every interval, at
	// once when asked; with PostgreSQL one replica at a time per mirror.
	syncer := mirror.New(srv.App(), box, mirror.Options{Allow: netguard.Allowance(cfg.AllowPrivateUpstreams), MaxIndexSize: int64(cfg.UpstreamIndexMaxSize), Logger: logger})
	srv.App().WakeMirror = syncer.Request
	// Proxy repositories fetch from their upstreams on demand; with
	// PostgreSQL one replica fetches each missing version.
	proxies := proxy.New(srv.App(), box, proxy.Options{Allow: netguard.Allowance(cfg.AllowPrivateUpstreams), Timeout: cfg.UpstreamTimeout,
		MaxIndexSize: int64(cfg.UpstreamIndexMaxSize), Logger: logger})
	srv.App().Proxies = proxies
	srv.RegisterMetrics(proxies.Collector())
	// Replications push what their source repositories receive to their
	// targets, from the events outbox; with PostgreSQL each task on one
	// replica.
	replicator = replication.New(srv.App(), box, reg, replication.Options{Allow: netguard.Allowance(cfg.AllowPrivateUpstreams),
		PlainHTTP: cfg.PlainHTTPUpstreams, Logger: logger})
	srv.App().WakeReplication = replicator.Wake
	if pg, ok := db.(*postgres.DB); ok {
		// Other replicas change charts too: keep this one's in-memory
		// Helm indexes current with them.
		watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
		watched := pg.WatchIndex(watchCtx, replicaEvents{srv.App(), srv}, 0)
		defer func() {
			stopWatch()
			<-watched
		}()
	}

	tlsOpts := cfg.TLS(logger)
	if pg, ok := db.(*postgres.DB); ok {
		// Replicas share the ACME account, certificates and HTTP-01
		// tokens, and order a certificate once.
		tlsOpts.Cache = &tlsconfig.SharedCache{Store: pg, Box: box, Holder: srv.App().Replica}
	}
	tlsSetup, err := tlsconfig.New(*tlsOpts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		var opErr *net.OpError
		if errors.As(err, &opErr) {
			err = opErr.Err // "bind: address already in use": the address is said once
		}
		return fmt.Errorf("listen on %s: %w (is another server running there? choose another --addr)", cfg.Addr, err)
	}
	url := "http://" + ln.Addr().String()
	if tlsSetup != nil {
		stopChallenges, err := tlsSetup.ServeChallenges()
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stopChallenges()
		// The server puts TLS over its connection cap (server.Server.TLS).
		srv.TLS = tlsSetup.Config
		url = "https://" + ln.Addr().String()
	}
	if err := srv.Open(ln); err != nil {
		return err
	}
	if cfg.DebugAddr != "" {
		stopDebug, err := serveDebug(cfg.DebugAddr, logger)
		if err != nil {
			_ = srv.Close()
			return err
		}
		defer stopDebug()
	}
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var bgDone sync.WaitGroup
	bgDone.Add(4)
	go func() { defer bgDone.Done(); replicator.Run(bg) }()
	go func() { defer bgDone.Done(); dispatcher.Run(bg) }()
	go func() { defer bgDone.Done(); syncer.Run(bg) }()
	go func() { defer bgDone.Done(); pruneAudit(bg, db, cfg.AuditRetention.Duration(), logger) }()
	if directory != nil {
		// Directory users with API keys are looked up every hour, so
		// that keys of people removed from the directory end even if
		// they never try to sign in again (one replica per hour).
		bgDone.Add(1)
		go func() {
			defer bgDone.Done()
			srv.App().WatchDirectory(bg, chartctl.ProviderLDAP, directory, app.DirectoryCheckInterval, srv.InvalidateCredentials)
		}()
	}
	defer func() { stopBG(); bgDone.Wait() }()
	logger.Info("chartctl serving", "url", url, "data", cfg.Data, "config", opts.ConfigFile)
	if warn := baseURLWarning(cfg.BaseURL, ln.Addr()); warn != "" {
		logger.Warn(warn)
	}
	stopGC := make(chan struct{})
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		reg.Run(stopGC)
	}()
	defer func() {
		close(stopGC)
		<-gcDone
	}()
	if opts.Ready != nil {
		opts.Ready(url)
	}
	<-ctx.Done()
	logger.Info("shutting down: finishing in-flight requests")
	if err := srv.Close(); err != nil {
		logger.Warn("shutdown", "err", err)
	}
	return nil
}

func newLogger(w io.Writer, format, level string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	ho := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// serveDebug serves pprof on a separate loopback listener.
func serveDebug(addr string, logger *slog.Logger) (func(), error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on --debug-addr %s: %w", addr, err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	logger.Info("pprof serving", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { _ = hs.Close() }, nil
}

// baseURLWarning says why running without --base-url on an address other
// hosts can reach is unsafe: the Host header of each request then decides
// the OAuth issuer and the install lines the dashboard shows.
func baseURLWarning(baseURL string, addr net.Addr) string {
	if baseURL != "" {
		return ""
	}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return ""
	}
	return "--base-url is not set: the OAuth issuer and the dashboard's install lines follow each request's Host header, which a client chooses; set --base-url to the server's external URL (e.g. https://charts.example.com)"
}

// replicaEvents is what another replica's changes touch in this one: the
// Helm indexes (the application layer) and the credentials the server
// caches.
type replicaEvents struct {
	*app.App
	srv *server.Server
}

// InvalidateCredentials drops the server's cached credentials: another
// replica revoked one.
func (e replicaEvents) InvalidateCredentials() { e.srv.InvalidateCredentials() }

// pruneAudit deletes audit entries older than retention at start and then
// hourly.
func pruneAudit(ctx context.Context, store chartctl.Store, retention time.Duration, logger *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		for {
			n, err := store.PruneAudit(ctx, time.Now().Add(-retention))
			if err != nil {
				if ctx.Err() == nil {
					logger.Error("prune audit log", "err", err)
				}
				break
			}
			if n > 0 {
				logger.Info("pruned audit log", "entries", n)
			}
			if n < 10000 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// startupBackfillDelay is how long serve's start-up jobs wait (the
// backfills of the images of versions stored before and of the JSON
// entries of the index, the sweep of orphan blobs): a
// restarted server first answers the requests that were waiting for it,
// its first index.yaml among them, with both CPUs.
const startupBackfillDelay = 10 * time.Second

// lintWorkers is how many lint workers serve keeps warm: one per CPU,
// between 2 and 4 (uploads are linted one per worker at a time).
func lintWorkers() int {
	return min(max(runtime.NumCPU(), 2), 4)
}

// findLinter returns chartctl-lint next to this binary, else on PATH, ""
// when neither has it.
func findLinter() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "chartctl-lint")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, _ := exec.LookPath("chartctl-lint")
	return p
}
