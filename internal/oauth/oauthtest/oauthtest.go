// Package oauthtest starts a full chartctl server with the dashboard and the
// authorization server mounted, and drives the OAuth flows over real HTTP
// like a browser would (cookies, forms, CSRF tokens). Only tests import it.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/oauth"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// Clock is a settable clock for the dashboard and authorization server.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Env is a running server with OAuth and the dashboard.
type Env struct {
	*testkit.Server
	Provider *oauth.Provider
	// Clock drives code, token and session expiry.
	Clock *Clock
}

// Config changes what Start mounts (Now is always the Env's Clock).
type Config = oauth.Config

// Start starts a server with the dashboard and the authorization server;
// it stops when the test ends. cfg may set token lifetimes and URLs; opts
// change the server as testkit options do.
func Start(tb testing.TB, cfg Config, opts ...testkit.Option) *Env {
	tb.Helper()
	env := &Env{Clock: &Clock{t: time.Now().UTC()}}
	cfg.Now = env.Clock.Now
	mount := func(srv *server.Server) {
		prev := srv.Extra // an option's own mount (the OCI registry, say) stays
		srv.Extra = func(e *echo.Echo) {
			if prev != nil {
				prev(e)
			}
			store, ok := srv.Store.(oauth.Store)
			if !ok {
				tb.Fatalf("the test server's store %T does not keep OAuth records", srv.Store)
			}
			c := cfg
			c.Logger, c.TrustedProxies = srv.Logger, srv.Config.TrustedProxies
			env.Provider = oauth.Mount(e, srv, store, c)
		}
	}
	env.Server = testkit.StartServer(tb, append(opts, mount)...)
	return env
}

// PKCE returns a new code verifier and its S256 challenge.
func PKCE() (verifier, challenge string) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	verifier = base64.RawURLEncoding.EncodeToString(b[:])
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// MustClient registers an OAuth client as the admin and returns it, with
// the secret of a confidential client.
func (e *Env) MustClient(tb testing.TB, name string, public bool, redirectURIs ...string) client.OAuthClient {
	tb.Helper()
	r := e.DoJSON(tb, http.MethodPost, "/v1/oauth-clients", e.AdminKey, client.CreateOAuthClientRequest{Name: name, RedirectURIs: redirectURIs, Public: public})
	if r.StatusCode != http.StatusOK {
		tb.Fatalf("register client: %d %s", r.StatusCode, r.Body)
	}
	var out struct{ Data client.OAuthClient }
	r.JSON(tb, &out)
	return out.Data
}

// Browser is an HTTP client with a cookie jar that does not follow
// redirects, so tests see each step.
type Browser struct {
	*http.Client
	base string
}

// NewBrowser returns a browser for the server.
func (e *Env) NewBrowser(tb testing.TB) *Browser {
	tb.Helper()
	return NewBrowserAt(tb, e.URL)
}

// NewClock returns a clock set to now, for servers a test starts itself.
func NewClock() *Clock { return &Clock{t: time.Now().UTC()} }

// NewBrowserAt returns a browser for the server at base (another replica,
// say).
func NewBrowserAt(tb testing.TB, base string) *Browser {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &Browser{
		Client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		base:   base,
	}
}

// Page is a fetched response with its body read.
type Page struct {
	*http.Response
	Body string
}

// Get fetches path (relative to the server, or an absolute URL).
func (b *Browser) Get(tb testing.TB, path string) *Page {
	tb.Helper()
	return b.do(tb, http.MethodGet, path, nil)
}

// PostForm posts form to path.
func (b *Browser) PostForm(tb testing.TB, path string, form url.Values) *Page {
	tb.Helper()
	return b.do(tb, http.MethodPost, path, form)
}

func (b *Browser) do(tb testing.TB, method, path string, form url.Values) *Page {
	tb.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = b.base + path
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		tb.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return &Page{Response: resp, Body: string(data)}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// CSRF returns the CSRF token of the page's forms.
func (p *Page) CSRF(tb testing.TB) string {
	tb.Helper()
	m := csrfRE.FindStringSubmatch(p.Body)
	if m == nil {
		tb.Fatalf("no CSRF token on the page (status %d): %s", p.StatusCode, p.Body)
	}
	return html.UnescapeString(m[1])
}

// HiddenFields returns the hidden inputs of the page's forms.
func (p *Page) HiddenFields() url.Values {
	out := url.Values{}
	re := regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	for _, m := range re.FindAllStringSubmatch(p.Body, -1) {
		out.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return out
}

// SignIn signs the browser in with email and password and fails the test
// unless that works.
func (b *Browser) SignIn(tb testing.TB, email, password string) {
	tb.Helper()
	page := b.Get(tb, "/signin")
	r := b.PostForm(tb, "/signin", url.Values{"csrf_token": {page.CSRF(tb)}, "email": {email}, "password": {password}, "return_to": {"/"}})
	if r.StatusCode != http.StatusSeeOther {
		tb.Fatalf("sign in: %d %s", r.StatusCode, r.Body)
	}
}

// Authorize runs the authorization request params as a signed-in browser
// and answers the consent page with decision ("approve" or "deny"). It
// returns the redirect the server answered with.
func (b *Browser) Authorize(tb testing.TB, params url.Values, decision string) *url.URL {
	tb.Helper()
	consent := b.Get(tb, "/oauth/authorize?"+params.Encode())
	if consent.StatusCode != http.StatusOK {
		tb.Fatalf("authorize: %d (Location %q) %s", consent.StatusCode, consent.Header.Get("Location"), consent.Body)
	}
	form := consent.HiddenFields()
	form.Set("decision", decision)
	r := b.PostForm(tb, "/oauth/authorize", form)
	if r.StatusCode != http.StatusFound {
		tb.Fatalf("consent: %d %s", r.StatusCode, r.Body)
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

// AnswerDevice enters userCode on the device page as a signed-in browser
// and answers its consent page with decision ("approve" or "deny"). It
// returns the page the answer led to.
func (b *Browser) AnswerDevice(tb testing.TB, userCode, decision string) *Page {
	tb.Helper()
	consent := b.Get(tb, "/device?"+url.Values{"user_code": {userCode}}.Encode())
	if consent.StatusCode != http.StatusOK {
		tb.Fatalf("device page: %d (Location %q) %s", consent.StatusCode, consent.Header.Get("Location"), consent.Body)
	}
	form := consent.HiddenFields()
	form.Set("decision", decision)
	return b.PostForm(tb, "/device", form)
}

// FollowRealTime makes the clock move on with real time until the test
// ends, for flows whose client waits real seconds between requests (the
// device grant's polls, which the server would otherwise see as all at
// one instant and answer slow_down).
func (c *Clock) FollowRealTime(tb testing.TB) {
	stop := make(chan struct{})
	done := make(chan struct{})
	tb.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		last := time.Now()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				c.Advance(now.Sub(last))
				last = now
			}
		}
	}()
}
