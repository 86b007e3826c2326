// Package oauth is chartctl's OAuth 2.0 authorization server: the
// authorization code grant with PKCE (S256 only), refresh token rotation
// with reuse detection, token revocation (RFC 7009) and server metadata
// (RFC 8414), on the same echo server as the API. Its access tokens are
// accepted by every /v1 endpoint exactly like API keys (Provider implements
// httpx.AccessTokenVerifier).
//
// Sign-in and consent pages come from the dashboard (internal/web), so one
// browser session serves both. See docs/oauth.md for the decisions.
package oauth

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartpage"
	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/web"
)

// Lifetimes of what the server issues.
const (
	// DefaultAccessTokenTTL is how long an access token is valid.
	DefaultAccessTokenTTL = time.Hour
	// DefaultRefreshTokenTTL is how long a refresh token is valid; each
	// rotation issues a new one with a fresh lifetime.
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	// CodeTTL is how long an authorization code is valid (at most 60 s).
	CodeTTL = 60 * time.Second
)

// BuiltinClientID is the public client `chartctl login` uses. It is always
// present and accepts loopback redirect URIs on any port (RFC 8252).
const BuiltinClientID = "chartctl"

// BuiltinRedirectURIs are the built-in client's redirect URIs; the port of
// these loopback addresses may be any.
var builtinRedirectURIs = []string{"http://127.0.0.1/callback", "http://[::1]/callback"}

// Prefixes of the secret values this package makes.
const (
	codePrefix   = "chartctl_ac_"
	secretPrefix = "chartctl_cs_"
)

// Options are the authorization server's dependencies.
type Options struct {
	// Store holds users; OAuth holds clients, codes, tokens and sessions.
	Store chartctl.Store
	OAuth chartctl.OAuthStore
	// Dashboard renders the sign-in, consent and error pages and owns the
	// browser session.
	Dashboard *web.Dashboard
	// App records audit entries (registering a client); nil records none.
	App *app.App
	// Issuer is the authorization server's URL (the configured auth URL,
	// else the base URL); "" derives it from each request.
	Issuer string
	// AccessTokenTTL and RefreshTokenTTL default to the Default* values.
	AccessTokenTTL, RefreshTokenTTL time.Duration
	// Logger receives errors; Now is the clock (tests inject one).
	Logger *slog.Logger
	Now    func() time.Time
}

// Provider is the authorization server. Create it with New.
type Provider struct {
	opts Options
}

// Ensure Provider verifies access tokens for the API.
var _ httpx.AccessTokenVerifier = (*Provider)(nil)

// New returns a Provider over opts.
func New(opts Options) *Provider {
	if opts.AccessTokenTTL <= 0 {
		opts.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if opts.RefreshTokenTTL <= 0 {
		opts.RefreshTokenTTL = DefaultRefreshTokenTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Provider{opts: opts}
}

// Register adds the authorization server's routes to e, and
// POST /v1/oauth-clients to api (the server's authenticated /v1 group).
func (p *Provider) Register(e *echo.Echo, api *echo.Group) {
	pages := e.Group("", web.SecurityHeaders)
	pages.GET("/oauth/authorize", p.handleAuthorize)
	pages.POST("/oauth/authorize", p.handleAuthorizeDecision, web.LimitForm)
	pages.GET("/device", p.handleDevice)
	pages.POST("/device", p.handleDeviceDecision, web.LimitForm)
	e.POST("/oauth/device_authorization", p.handleDeviceAuthorization, web.LimitForm)
	e.POST("/oauth/token", p.handleToken, web.LimitForm)
	e.POST("/oauth/revoke", p.handleRevoke, web.LimitForm)
	e.GET("/.well-known/oauth-authorization-server", p.handleMetadata)
	if api != nil {
		api.POST("/oauth-clients", p.handleCreateClient)
	}
}

// Store is what Mount keeps its records in; *bolt.DB is one.
type Store interface {
	chartctl.Store
	chartctl.OAuthStore
}

// Config configures Mount.
type Config struct {
	// BaseURL and AuthURL are the external URLs of the server and of the
	// authorization server ("" derives them from each request).
	BaseURL, AuthURL string
	// AccessTokenTTL and RefreshTokenTTL default to the Default* values.
	AccessTokenTTL, RefreshTokenTTL time.Duration
	// Logger receives errors; Now is the clock.
	Logger *slog.Logger
	Now    func() time.Time
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies clientip.Resolver
	// RateLimits makes the dashboard's sign-in throttles (nil: in memory).
	RateLimits ratelimit.Backend
	// Pages holds rendered chart pages; nil uses the host App's, which
	// the upload path renders into.
	Pages *chartpage.Store
	// OCI shows oci:// install lines on the chart pages.
	OCI bool
	// SSO offers sign-in through an identity provider; NoLocalSignIn
	// hides the password form (--local-signin=false).
	SSO           web.SSOOptions
	NoLocalSignIn bool
	// LDAP checks directory logins on the password form.
	LDAP web.LDAPOptions
}

// Host is the API server the dashboard and the authorization server attach
// to; *server.Server is one.
type Host interface {
	// API returns the authenticated, rate-limited /v1 route group.
	API() *echo.Group
	// PrincipalFor and InvalidateCredentials serve the dashboard's
	// sessions and key forms.
	web.Principals
	// AcceptAccessTokens makes the API accept the tokens v verifies.
	AcceptAccessTokens(v httpx.AccessTokenVerifier)
	// ServeNotFoundPage makes h answer browsers asking for an unknown
	// address: the dashboard's 404 page.
	ServeNotFoundPage(h echo.HandlerFunc)
	// App is the application layer the dashboard's pages read through and
	// their writes go through, so they are audited and emit events like the
	// API's.
	App() *app.App
}

// Mount adds the dashboard and the authorization server to the router e
// and makes host accept the access tokens it issues. Call it after the /v1
// routes exist (from the server's Extra hook).
func Mount(e *echo.Echo, host Host, store Store, cfg Config) *Provider {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	issuer := cfg.AuthURL
	if issuer == "" {
		issuer = cfg.BaseURL
	}
	trusted := cfg.TrustedProxies
	dash := web.New(web.Options{
		Store: store, Sessions: store, Principals: host, BaseURL: cfg.BaseURL, App: host.App(), Pages: cfg.Pages, OCI: cfg.OCI,
		ClientIP: func(r *http.Request) string { return clientip.BucketKey(trusted.ClientIP(r)) },
		Logger:   logger, Now: now, RateLimits: cfg.RateLimits, SSO: cfg.SSO, NoLocalSignIn: cfg.NoLocalSignIn, LDAP: cfg.LDAP,
	}, app.CheckPassword, app.HashPassword)
	dash.Register(e)
	host.ServeNotFoundPage(dash.NotFoundPage)
	p := New(Options{
		Store: store, OAuth: store, Dashboard: dash, App: host.App(), Issuer: strings.TrimRight(issuer, "/"),
		AccessTokenTTL: cfg.AccessTokenTTL, RefreshTokenTTL: cfg.RefreshTokenTTL,
		Logger: logger, Now: now,
	})
	p.Register(e, host.API())
	host.AcceptAccessTokens(p)
	return p
}

// issuer is the configured issuer or the request's origin.
func (p *Provider) issuer(c echo.Context) string {
	if p.opts.Issuer != "" {
		return p.opts.Issuer
	}
	return c.Scheme() + "://" + c.Request().Host
}

// client returns the registered client id, or the built-in one.
func (p *Provider) client(ctx context.Context, id string) (*chartctl.OAuthClient, error) {
	if id == BuiltinClientID {
		return &chartctl.OAuthClient{ID: BuiltinClientID, Name: "chartctl CLI", RedirectURIs: builtinRedirectURIs, Public: true}, nil
	}
	if id == "" {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "OAuth client not found.")
	}
	return p.opts.OAuth.OAuthClient(ctx, id)
}

// RedirectURIAllowed reports whether uri is one of client's registered
// redirect URIs. They compare as exact strings, except that for the
// built-in client the port of a loopback IP literal may be any (RFC 8252
// §7.3); everything else, path and query included, must still match.
func RedirectURIAllowed(client *chartctl.OAuthClient, uri string) bool {
	for _, r := range client.RedirectURIs {
		if uri == r {
			return true
		}
		if client.ID == BuiltinClientID && loopbackMatch(r, uri) {
			return true
		}
	}
	return false
}

// loopbackMatch compares uri with registered ignoring a port after the
// loopback host. It works on the strings, so no URL normalization can make
// a different URI look equal.
func loopbackMatch(registered, uri string) bool {
	for _, host := range []string{"http://127.0.0.1", "http://[::1]"} {
		if !strings.HasPrefix(registered, host+"/") || !strings.HasPrefix(uri, host) {
			continue
		}
		rest := uri[len(host):]
		if strings.HasPrefix(rest, ":") {
			end := strings.IndexByte(rest, '/')
			if end < 0 {
				return false
			}
			port, err := strconv.Atoi(rest[1:end])
			if err != nil || port < 1 || port > 65535 || rest[1] == '+' || rest[1] == '-' {
				return false
			}
			rest = rest[end:]
		}
		return rest == registered[len(host):]
	}
	return false
}
