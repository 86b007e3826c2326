package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func TestPagesNeedSignIn(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	b := env.NewBrowser(t)
	for _, path := range []string{"/settings", "/settings/api-keys", "/settings/api-keys/new", "/repositories/x/settings"} {
		p := b.Get(t, path)
		if p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") != "/signin?"+(url.Values{"return_to": {path}}).Encode() {
			t.Errorf("GET %s signed out: %d Location=%q", path, p.StatusCode, p.Header.Get("Location"))
		}
	}
	// The browsing pages are open to anonymous visitors (public
	// repositories only).
	for _, path := range []string{"/", "/repositories", "/search?q=x"} {
		if p := b.Get(t, path); p.StatusCode != http.StatusOK {
			t.Errorf("GET %s signed out: %d, want 200", path, p.StatusCode)
		}
	}
}

func TestSecurityHeadersAndCookies(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	b := env.NewBrowser(t)
	p := b.Get(t, "/signin")
	h := p.Header
	csp := h.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", h)
	}
	// No inline script or style anywhere: the CSP would block it.
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|style="|<style`).MatchString(p.Body) {
		t.Error("sign-in page has inline script or style")
	}
	var csrf *http.Cookie
	for _, c := range p.Cookies() {
		if c.Name == "chartctl_csrf" {
			csrf = c
		}
	}
	if csrf == nil || !csrf.HttpOnly || csrf.SameSite != http.SameSiteLaxMode || csrf.Secure {
		t.Errorf("CSRF cookie %+v (plain HTTP: not Secure)", csrf)
	}
	css := b.Get(t, "/static/style.css")
	if css.StatusCode != 200 || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Errorf("style.css: %d %s", css.StatusCode, css.Header.Get("Content-Type"))
	}
}

func TestSecureCookiesBehindHTTPS(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{BaseURL: "https://charts.example.com"})
	env.MustUserWithPassword(t, "a@example.com", "password123", false)
	b := env.NewBrowser(t)
	page := b.Get(t, "/signin")
	r := b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"a@example.com"}, "password": {"password123"}})
	found := false
	for _, c := range r.Cookies() {
		if c.Name == "chartctl_session" && c.Value != "" {
			found = true
			if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
				t.Errorf("session cookie %+v", c)
			}
		}
	}
	if !found {
		t.Fatalf("no session cookie: %d", r.StatusCode)
	}
}

func TestSignInReturnToIsLocal(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "password123", false)
	for _, target := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example", "javascript:alert(1)"} {
		b := env.NewBrowser(t)
		page := b.Get(t, "/signin")
		r := b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"a@example.com"}, "password": {"password123"}, "return_to": {target}})
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
			t.Errorf("return_to %q: %d Location=%q", target, r.StatusCode, r.Header.Get("Location"))
		}
	}
}

func TestKeysAndReposOverHTTP(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "password123", false)
	env.MustRepo(t, "public-charts", "public")
	env.MustRepo(t, "admin-only", "private")
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "password123")

	repos := b.Get(t, "/repositories")
	if !strings.Contains(repos.Body, "public-charts") || strings.Contains(repos.Body, "admin-only") {
		t.Errorf("repositories page shows the wrong repositories")
	}
	if p := b.Get(t, "/repositories/admin-only"); p.StatusCode != http.StatusNotFound {
		t.Errorf("a private repository of another user: %d, want 404", p.StatusCode)
	}
	if p := b.Get(t, "/repositories/public-charts"); p.StatusCode != 200 || !strings.Contains(p.Body, "/helm/public-charts") {
		t.Errorf("repository page: %d", p.StatusCode)
	}

	form := b.Get(t, "/settings/api-keys/new")
	csrf := form.CSRF(t)
	bad := b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {csrf}, "name": {"ci"}, "expiry": {"30"}})
	if bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.Body, "at least one permission") {
		t.Errorf("no scopes: %d", bad.StatusCode)
	}
	// A too-long name is called too long (the API's rule, in characters).
	bad = b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {csrf}, "name": {strings.Repeat("k", 101)}, "scopes": {"repo:read"}, "expiry": {"30"}})
	if bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.Body, "That name is too long (101 characters): give the key a name of at most 100 characters.") {
		t.Errorf("a 101-character name: %d", bad.StatusCode)
	}
	bad = b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {csrf}, "name": {"ci"}, "scopes": {"repo:read", "root"}, "expiry": {"30"}})
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown scope: %d", bad.StatusCode)
	}
	created := b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {csrf}, "name": {"ci"}, "scopes": {"repo:read", "team:read"}, "expiry": {"never"}})
	m := regexp.MustCompile(`id="new-key" type="text" readonly value="([^"]+)"`).FindStringSubmatch(created.Body)
	if created.StatusCode != 200 || m == nil {
		t.Fatalf("create key: %d", created.StatusCode)
	}
	if created.Header.Get("Cache-Control") != "no-store" {
		t.Error("the page showing a key value may be cached")
	}
	key := m[1]
	if r := env.Do(t, http.MethodGet, "/v1/repositories", key, nil); r.StatusCode != 200 {
		t.Fatalf("new key: %d", r.StatusCode)
	}
	list := b.Get(t, "/settings/api-keys")
	if strings.Contains(list.Body, key) || !strings.Contains(list.Body, "team:read") {
		t.Error("the key list shows the value, or not the scopes")
	}
	id := regexp.MustCompile(`data-key-id="([^"]+)"`).FindStringSubmatch(list.Body)
	if id == nil {
		t.Fatal("no key row")
	}
	r := b.PostForm(t, "/settings/api-keys/"+id[1]+"/revoke", url.Values{"csrf_token": {csrf}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", r.StatusCode)
	}
	if r := env.Do(t, http.MethodGet, "/v1/repositories", key, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d", r.StatusCode)
	}
	// Another user's key cannot be revoked from this session.
	adminKeys, err := env.Store.APIKeys(t.Context(), env.Admin.ID)
	if err != nil || len(adminKeys) == 0 {
		t.Fatal(err)
	}
	if r := b.PostForm(t, "/settings/api-keys/"+adminKeys[0].ID+"/revoke", url.Values{"csrf_token": {csrf}}); r.StatusCode != http.StatusNotFound {
		t.Errorf("revoking another user's key: %d", r.StatusCode)
	}
}
