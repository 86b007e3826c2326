// Package web is chartctl's dashboard: server-rendered pages (html/template
// with embedded assets, no CDN) for signing in, managing API keys and
// browsing repositories. Its sign-in and consent pages are shared with the
// OAuth authorization server (internal/oauth), so one browser session
// serves both.
//
// Every form carries a CSRF token; posts without a valid one are refused.
// Pages send a strict Content-Security-Policy (no inline script: the one
// script, for the copy button, is an embedded file) and refuse framing.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartpage"
	"github.com/chartctl/chartctl/internal/chartrender"
	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/text"
	"github.com/chartctl/chartctl/internal/token"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Cookie and form field names.
const (
	// SessionCookie holds the session value; only its hash is stored.
	SessionCookie = "chartctl_session"
	// CSRFCookie holds the CSRF token of a browser that is not signed in
	// yet (the sign-in form); signed-in forms use the session's token.
	CSRFCookie = "chartctl_csrf"
	// CSRFField is the form field every form sends its CSRF token in.
	CSRFField = "csrf_token"

	sessionPrefix = "chartctl_ses_"
)

// DefaultSessionTTL is how long a dashboard session lasts.
const DefaultSessionTTL = 12 * time.Hour

// DefaultSignInDelay is how long every sign-in attempt on an account under
// a distributed guess waits (see Options.SignInAccountLimit): long enough
// to slow a guesser, short enough that the owner barely notices.
const DefaultSignInDelay = time.Second

// Principals resolves a signed-in user into the principal the API would
// see; *server.Server implements it.
type Principals interface {
	// PrincipalFor returns the principal of userID acting through credID
	// with scopes.
	PrincipalFor(ctx context.Context, userID, credID string, scopes chartctl.Scopes) (*chartctl.Principal, error)
	// InvalidateCredentials drops cached credentials after a key changes.
	InvalidateCredentials()
}

// Options are the dashboard's dependencies.
type Options struct {
	// Store holds users, API keys, repositories and charts.
	Store chartctl.Store
	// Sessions holds browser sessions.
	Sessions chartctl.OAuthStore
	// Principals resolves users into principals and drops cached
	// credentials after a key is revoked (the *server.Server).
	Principals Principals
	// BaseURL is the server's external URL ("" derives it from requests);
	// an https URL also marks cookies Secure.
	BaseURL string
	// ClientIP returns the caller's address for sign-in throttling; nil
	// uses the connection's address.
	ClientIP func(*http.Request) string
	// SessionTTL is how long a session lasts (DefaultSessionTTL if 0).
	SessionTTL time.Duration
	// SignInLimit bounds failed sign-ins per client address (over every
	// account), and per account from one address (10 per 15 minutes if
	// zero); an address past either is refused until its window ends.
	SignInLimit ratelimit.Limit
	// SignInAccountLimit is how many failed sign-ins on one account from
	// every address together (100 per 15 minutes if zero) mark it as
	// under a distributed guess. It never refuses anyone, so guesses from
	// elsewhere cannot lock the owner out: until the window ends, every
	// attempt on the account waits SignInDelay first.
	SignInAccountLimit ratelimit.Limit
	// SignInDelay is that wait (DefaultSignInDelay if zero).
	SignInDelay time.Duration
	// App is the application layer: the pages read and change
	// repositories, charts, teams and API keys through it, as the API
	// does, so their writes are audited and emit events; sign-ins are
	// recorded in its audit log.
	App *app.App
	// Pages holds the rendered chart pages; nil uses App.Pages, which the
	// upload path renders into.
	Pages *chartpage.Store
	// OCI shows oci:// install lines (the server has an OCI registry).
	OCI bool
	// Logger receives errors; Now is the clock.
	Logger *slog.Logger
	Now    func() time.Time
	// SSO offers sign-in through an identity provider (none when its
	// Provider is nil).
	SSO SSOOptions
	// NoLocalSignIn hides the password form (--local-signin=false); the
	// break-glass form at /signin/local still signs local admins in.
	// With LDAP the form stays, for directory accounts only.
	NoLocalSignIn bool
	// LDAP signs people in with their directory login and password
	// through the password form (none when its Provider is nil).
	LDAP LDAPOptions
	// RateLimits makes the sign-in throttles; nil keeps them in memory.
	// Replicas share one backend so that a guesser cannot multiply the
	// attempts by the number of replicas.
	RateLimits ratelimit.Backend
}

// Dashboard serves the web pages. Create it with New.
type Dashboard struct {
	opts  Options
	pages map[string]*template.Template
	// byIP counts failures per address and byAccountIP per (account,
	// address): both refuse. byAccount counts failures per account from
	// anywhere, with a far higher ceiling: it only slows (SignInDelay).
	byIP        ratelimit.Failures
	byAccountIP ratelimit.Failures
	byAccount   ratelimit.Failures
	attempts    keyedLocks
	// deviceByIP and deviceByUser count wrong device user codes per
	// address and per signed-in user (see DeviceCodeAttempt).
	deviceByIP, deviceByUser ratelimit.Failures
	dummyOnce                sync.Once
	dummyHash                string
	checkPass                func(hash, pw string) bool
	hashSecret               func(pw string) (string, error)

	sweepMu   sync.Mutex
	lastSweep time.Time
}

// New returns a dashboard over opts. checkPassword and hashPassword are
// the server's password functions (server.CheckPassword and
// server.HashPassword), so the dashboard and the API agree on the hash.
func New(opts Options, checkPassword func(hash, pw string) bool, hashPassword func(pw string) (string, error)) *Dashboard {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RateLimits == nil {
		opts.RateLimits = ratelimit.Memory{Now: opts.Now}
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.SignInLimit.Disabled() {
		opts.SignInLimit = ratelimit.Limit{N: 10, Window: 15 * time.Minute}
	}
	if opts.SignInAccountLimit.Disabled() {
		opts.SignInAccountLimit = ratelimit.Limit{N: 100, Window: 15 * time.Minute}
	}
	if opts.SignInDelay <= 0 {
		opts.SignInDelay = DefaultSignInDelay
	}
	if opts.Pages == nil && opts.App != nil {
		opts.Pages = opts.App.Pages
	}
	if opts.ClientIP == nil {
		var r clientip.Resolver
		opts.ClientIP = func(req *http.Request) string { return clientip.BucketKey(r.ClientIP(req)) }
	}
	return &Dashboard{
		opts:         opts,
		pages:        parsePages(),
		byIP:         opts.RateLimits.NewThrottle("signin-ip", opts.SignInLimit),
		byAccountIP:  opts.RateLimits.NewThrottle("signin-account-ip", opts.SignInLimit),
		byAccount:    opts.RateLimits.NewThrottle("signin-account", opts.SignInAccountLimit),
		deviceByIP:   opts.RateLimits.NewThrottle("device-ip", opts.SignInLimit),
		deviceByUser: opts.RateLimits.NewThrottle("device-user", opts.SignInLimit),
		checkPass:    checkPassword,
		hashSecret:   hashPassword,
	}
}

var pageNames = []string{"signin", "consent", "error", "profile", "password", "apps", "apikeys", "apikey_new", "apikey_created", "apikey_revoke",
	"home", "search", "repos", "repo", "repo_settings", "chart", "org", "team", "webhooks", "webhook", "webhook_delete",
	"robot", "robot_secret", "robot_delete", "repo_access", "device", "diff"}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"date": func(t time.Time) string { return t.UTC().Format("Jan 2, 2006") },
		"datetime": func(t time.Time) string {
			return t.UTC().Format("Jan 2, 2006 15:04 UTC")
		},
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"join": strings.Join,
		"size": text.HumanBytes,
		"add":  func(a, b int) int { return a + b },
		// searchImage is the search for the charts that deploy an image.
		"searchImage": func(image string) string { return "/search?" + url.Values{"image": {image}}.Encode() },
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/artifacthub.html", "templates/"+name+".html"))
	}
	return out
}

// Register adds the dashboard's routes to e: the pages, sign-in and
// sign-out, and the embedded assets under /static/.
func (d *Dashboard) Register(e *echo.Echo) {
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		// The directory is embedded at build time; its absence is a build
		// defect, not a runtime condition.
		panic(fmt.Errorf("embedded static assets: %w", err))
	}
	// Pages and assets answer HEAD as they answer GET (RFC 9110 §9.3.2;
	// net/http leaves the body out): uptime monitors and link checkers ask
	// with HEAD.
	getHead := []string{http.MethodGet, http.MethodHead}
	e.Match(getHead, "/static/*", echo.WrapHandler(http.StripPrefix("/static/", cacheStatic(http.FileServer(http.FS(static))))))

	// Path parameters are decoded, so every spelling of a segment names
	// the same page ("1.0.0%2Bbuild.1" is "1.0.0+build.1").
	g := e.Group("", SecurityHeaders, httpx.UnescapePathParams)
	page := func(path string, h echo.HandlerFunc) { g.Match(getHead, path, h) }
	e.Match(getHead, "/static/highlight.css", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		return c.Blob(http.StatusOK, "text/css; charset=utf-8", highlightCSS)
	})

	page("/", d.handleHome)
	page("/search", d.handleSearch)
	page("/signin", d.handleSignInPage)
	g.POST("/signin", d.handleSignIn, LimitForm)
	page("/signin/local", d.handleLocalSignInPage)
	g.POST("/signin/local", d.handleSignIn, LimitForm)
	page("/signin/oidc", d.handleOIDCStart)
	page("/signin/oidc/callback", d.handleOIDCCallback)
	g.POST("/signout", d.handleSignOut, LimitForm)
	page("/settings", d.signedIn(d.handleProfile))
	page("/settings/password", d.signedIn(d.handlePasswordPage))
	g.POST("/settings/password", d.signedIn(d.handleChangePassword), LimitForm)
	page("/settings/apps", d.signedIn(d.handleApps))
	g.POST("/settings/apps/:id/revoke", d.signedIn(d.handleRevokeApp), LimitForm)
	page("/settings/api-keys", d.signedIn(d.handleAPIKeys))
	page("/settings/api-keys/new", d.signedIn(d.handleNewAPIKey))
	g.POST("/settings/api-keys", d.signedIn(d.handleCreateAPIKey), LimitForm)
	page("/settings/api-keys/:id/revoke", d.signedIn(d.handleRevokeAPIKeyPage))
	g.POST("/settings/api-keys/:id/revoke", d.signedIn(d.handleRevokeAPIKey), LimitForm)
	page("/repositories", d.handleRepos)
	page("/repositories/:repo", d.handleRepo)
	page("/repositories/:repo/settings", d.signedIn(d.handleRepoSettings))
	g.POST("/repositories/:repo/settings", d.signedIn(d.handleUpdateRepo), LimitForm)
	g.POST("/repositories/:repo/delete", d.signedIn(d.handleDeleteRepo), LimitForm)
	g.POST("/repositories/:repo/sync", d.signedIn(d.handleSyncRepo), LimitForm)
	page("/repositories/:repo/access", d.signedIn(d.handleAccess))
	g.POST("/repositories/:repo/access", d.signedIn(d.handleGrant), LimitForm)
	g.POST("/repositories/:repo/access/:kind/:name/revoke", d.signedIn(d.handleRevoke), LimitForm)
	page("/repositories/:repo/charts/:name", d.handleChart)
	page("/repositories/:repo/charts/:name/diff", d.handleDiff)
	page("/repositories/:repo/charts/:name/:version", d.handleChart)
	g.GET("/repositories/:repo/charts/:name/:version/:file", d.handleDownload)
	page("/repositories/:repo/charts/:name/:version/files/*", d.handleChartFile)
	page("/organizations/:org", d.handleOrg)
	page("/teams/:team", d.handleTeam)
	page("/organizations/:org/robots/:name", d.signedIn(d.handleRobot))
	g.POST("/organizations/:org/robots/:name/disable", d.signedIn(d.handleSetRobotDisabled(true)), LimitForm)
	g.POST("/organizations/:org/robots/:name/enable", d.signedIn(d.handleSetRobotDisabled(false)), LimitForm)
	g.POST("/organizations/:org/robots/:name/rotate", d.signedIn(d.handleRotateRobot), LimitForm)
	page("/organizations/:org/robots/:name/delete", d.signedIn(d.handleDeleteRobotPage))
	g.POST("/organizations/:org/robots/:name/delete", d.signedIn(d.handleDeleteRobot), LimitForm)
	g.POST("/teams/:team/members", d.signedIn(d.handleAddMember), LimitForm)
	g.POST("/teams/:team/members/:member/role", d.signedIn(d.handleChangeRole), LimitForm)
	g.POST("/teams/:team/members/:member/remove", d.signedIn(d.handleRemoveMember), LimitForm)
	page("/repositories/:repo/webhooks", d.signedIn(d.handleWebhooks))
	g.POST("/repositories/:repo/webhooks", d.signedIn(d.handleCreateWebhook), LimitForm)
	page("/organizations/:org/webhooks", d.signedIn(d.handleWebhooks))
	g.POST("/organizations/:org/webhooks", d.signedIn(d.handleCreateWebhook), LimitForm)
	page("/admin/webhooks", d.signedIn(d.handleWebhooks))
	g.POST("/admin/webhooks", d.signedIn(d.handleCreateWebhook), LimitForm)
	page("/webhooks/:id", d.signedIn(d.handleWebhook))
	g.POST("/webhooks/:id/ping", d.signedIn(d.handlePingWebhook), LimitForm)
	page("/webhooks/:id/delete", d.signedIn(d.handleDeleteWebhookPage))
	g.POST("/webhooks/:id/delete", d.signedIn(d.handleDeleteWebhook), LimitForm)
	g.POST("/webhooks/:id/deliveries/:delivery/redeliver", d.signedIn(d.handleRedeliver), LimitForm)
}

// highlightCSS styles highlighted code (chartrender's classes), light and
// dark.
var highlightCSS = []byte(chartrender.HighlightCSS())

func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// ContentSecurityPolicy is sent with every page: only this origin's
// scripts, styles and images, no plugins, no framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"

// SecurityHeaders sets the headers every page carries: CSP, no framing
// (clickjacking of the sign-in and consent pages), no MIME sniffing, no
// referrer (URLs may carry OAuth parameters), and no caching of pages
// that may show secrets.
func SecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		return next(c)
	}
}

// Page is what every template receives.
type Page struct {
	Title string
	// User is the signed-in user, nil on the sign-in page.
	User *chartctl.User
	// CSRF is the token the page's forms send.
	CSRF string
	// Nav names the active navigation entry.
	Nav string
	// Tab names the active Account Settings tab.
	Tab string
	// Flash is a one-line notice shown above the content.
	Flash string
	// Bare hides the navigation bar (sign-in and consent pages).
	Bare bool
	// Public shows the navigation bar to anonymous visitors too (the
	// browsing pages).
	Public bool
	// Canonical is the page's canonical URL, "" for none.
	Canonical string
	// SignIn is the top bar's sign-in link for an anonymous visitor: back
	// to this page once signed in. "" links to the plain sign-in page.
	SignIn string
	// Data is the page's own content.
	Data any
}

// render writes the named page with status.
func (d *Dashboard) render(c echo.Context, status int, name string, p Page) error {
	t, ok := d.pages[name]
	if !ok {
		return fmt.Errorf("render: no page %q", name)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	return c.HTML(status, b.String())
}

// renderFragment writes one template of the named page without the
// layout (search results for search as you type).
func (d *Dashboard) renderFragment(c echo.Context, status int, name, block string, p Page) error {
	t, ok := d.pages[name]
	if !ok {
		return fmt.Errorf("render: no page %q", name)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, block, p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	return c.HTML(status, b.String())
}

// ErrorPage describes a page-level error.
type ErrorPage struct {
	Heading string
	Message string
	// Back is a link to offer, "" for none.
	Back string
	// SignIn is a sign-in link back to the page, offered to anonymous
	// visitors of a page that may be private; "" for none.
	SignIn string
}

// RenderError writes an error page with status; it never redirects.
func (d *Dashboard) RenderError(c echo.Context, status int, heading, message string) error {
	u, s := d.Session(c)
	return d.renderError(c, status, u, s, ErrorPage{Heading: heading, Message: message, Back: "/"})
}

// renderError renders e as the error page of the visitor signed in as u
// with session s (nil, nil for an anonymous one).
func (d *Dashboard) renderError(c echo.Context, status int, u *chartctl.User, s *chartctl.WebSession, e ErrorPage) error {
	p := Page{Title: e.Heading, User: u, Data: e}
	if s != nil {
		p.CSRF = s.CSRFToken
	}
	return d.render(c, status, "error", p)
}

// ConsentPage is the content of the OAuth consent page.
type ConsentPage struct {
	// ClientName is the application asking for access.
	ClientName string
	// RedirectHost is where the browser goes next, shown so the user can
	// tell the application apart from look-alikes.
	RedirectHost string
	// Scopes lists what the application asks for.
	Scopes []ScopeItem
	// Admin is set when the scopes include admin: the page then warns, in
	// plain words, that the application could administer the server.
	Admin bool
	// KeysOutlive is set when the scopes include keys:write: the page then
	// says that keys the application creates outlive its access.
	KeysOutlive bool
	// Action is the form's target; Params are its hidden fields.
	Action string
	Params []Param
	// ReturnTo is this consent page's own local address: "use another
	// account" signs out and, after signing in again, comes back to it.
	ReturnTo string
	// UserCode is set for a device authorization (RFC 8628): nothing is
	// redirected, and the page asks the user to compare the code with
	// the one their device shows.
	UserCode string
}

// ScopeItem is a scope with its description in words.
type ScopeItem struct {
	Name        string
	Description string
	Checked     bool
}

// Param is a hidden form field.
type Param struct{ Name, Value string }

// ScopeItems describes scopes in words.
func ScopeItems(scopes chartctl.Scopes) []ScopeItem {
	out := make([]ScopeItem, len(scopes))
	for i, s := range scopes {
		out[i] = ScopeItem{Name: string(s), Description: s.Description()}
	}
	return out
}

// RenderConsent writes the consent page for the signed-in user u.
func (d *Dashboard) RenderConsent(c echo.Context, u *chartctl.User, s *chartctl.WebSession, cp ConsentPage) error {
	return d.render(c, http.StatusOK, "consent", Page{Title: "Authorize " + cp.ClientName, User: u, CSRF: s.CSRFToken, Bare: true, Data: cp})
}

// Session returns the signed-in user and the session, or nils.
func (d *Dashboard) Session(c echo.Context) (*chartctl.User, *chartctl.WebSession) {
	if v, ok := c.Get("web.session").(*chartctl.WebSession); ok {
		u, _ := c.Get("web.user").(*chartctl.User)
		return u, v
	}
	ck, err := c.Cookie(SessionCookie)
	if err != nil || !token.Valid(sessionPrefix, ck.Value) {
		return nil, nil
	}
	ctx := c.Request().Context()
	s, err := d.opts.Sessions.WebSession(ctx, token.Hash(ck.Value), d.opts.Now())
	if err != nil {
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			d.opts.Logger.Error("load session", "err", err)
		}
		return nil, nil
	}
	u, err := d.opts.Store.User(ctx, s.UserID)
	if err != nil || u.Disabled {
		return nil, nil
	}
	c.Set("web.session", s)
	c.Set("web.user", u)
	return u, s
}

// signedIn runs next for a signed-in user and sends anyone else to the
// sign-in page, coming back here afterwards.
func (d *Dashboard) signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, _ := d.Session(c)
		if u == nil {
			return c.Redirect(http.StatusSeeOther, SignInURL(c.Request().URL.RequestURI()))
		}
		// Writes from the dashboard are audited as the signed-in user.
		act := chartctl.ActorFrom(c.Request().Context())
		act.UserID, act.Email, act.CredentialKind = u.ID, u.Email, chartctl.CredentialSession
		c.SetRequest(c.Request().WithContext(chartctl.WithActor(c.Request().Context(), &act)))
		return next(c)
	}
}

// signInBack is the sign-in link that comes back to the requested page,
// for an anonymous visitor's GET; "" otherwise.
func signInBack(c echo.Context, u *chartctl.User) string {
	if u != nil || (c.Request().Method != http.MethodGet && c.Request().Method != http.MethodHead) {
		return ""
	}
	return SignInURL(safeReturnTo(c.Request().URL.RequestURI()))
}

// SignInURL is the sign-in page that returns to returnTo (a local path)
// after signing in.
func SignInURL(returnTo string) string {
	if returnTo == "" || returnTo == "/" {
		return "/signin"
	}
	return "/signin?" + url.Values{"return_to": {returnTo}}.Encode()
}

// safeReturnTo accepts only local absolute paths, so sign-in cannot be used
// as an open redirect.
func safeReturnTo(s string) string {
	if s == "" || s[0] != '/' || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return s
}

// CSRFToken returns the token the current page's forms must send: the
// session's when signed in, otherwise a browser-bound one kept in a cookie
// (set here if missing).
func (d *Dashboard) CSRFToken(c echo.Context) string {
	if _, s := d.Session(c); s != nil {
		return s.CSRFToken
	}
	if ck, err := c.Cookie(CSRFCookie); err == nil && len(ck.Value) == 64 {
		return ck.Value
	}
	v := randomHex(32)
	d.setCookie(c, CSRFCookie, v, 0)
	return v
}

// CheckCSRF refuses a form post whose csrf_token does not match the
// session's (or, before sign-in, the browser's CSRF cookie).
func (d *Dashboard) CheckCSRF(c echo.Context) error {
	sent := c.FormValue(CSRFField)
	want := ""
	if _, s := d.Session(c); s != nil {
		want = s.CSRFToken
	} else if ck, err := c.Cookie(CSRFCookie); err == nil {
		want = ck.Value
	}
	if sent == "" || want == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(want)) != 1 {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "This form has expired or was not sent from this site. Reload the page and try again.")
	}
	return nil
}

// refuseCSRF answers a post that failed CheckCSRF.
func (d *Dashboard) refuseCSRF(c echo.Context, err error) error {
	return d.RenderError(c, http.StatusForbidden, "Request refused", chartctl.ErrorMessage(err))
}

// secure reports whether cookies must be Secure: served over TLS, or
// behind a proxy that terminates TLS for an https base URL.
func (d *Dashboard) secure(c echo.Context) bool {
	return c.Request().TLS != nil || strings.HasPrefix(d.opts.BaseURL, "https://")
}

func (d *Dashboard) setCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: d.secure(c),
	})
}

// BaseURL is the server's external URL: configured, or from the request.
func (d *Dashboard) BaseURL(c echo.Context) string {
	if d.opts.BaseURL != "" {
		return strings.TrimRight(d.opts.BaseURL, "/")
	}
	return c.Scheme() + "://" + c.Request().Host
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
