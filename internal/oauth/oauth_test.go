package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/token"
)

const (
	userEmail    = "dev@example.com"
	userPassword = "correct horse battery"
	appRedirect  = "https://app.example/callback"
)

// setup starts a server with a user who can sign in and a registered
// public client.
func setup(t *testing.T) (*oauthtest.Env, client.OAuthClient) {
	t.Helper()
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, userEmail, userPassword, false)
	app := env.MustClient(t, "Deploy Bot", true, appRedirect)
	return env, app
}

func authParams(clientID, redirect, challenge, scope string) url.Values {
	return url.Values{
		"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {scope}, "state": {"xyz-state"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}
}

// signedIn returns a browser signed in as the test user.
func signedIn(t *testing.T, env *oauthtest.Env) *oauthtest.Browser {
	t.Helper()
	b := env.NewBrowser(t)
	b.SignIn(t, userEmail, userPassword)
	return b
}

// getCode runs the code flow and returns a code with its verifier.
func getCode(t *testing.T, env *oauthtest.Env, b *oauthtest.Browser, clientID, redirect, scope string) (code, verifier string) {
	t.Helper()
	verifier, challenge := oauthtest.PKCE()
	loc := b.Authorize(t, authParams(clientID, redirect, challenge, scope), "approve")
	if got := loc.Query().Get("state"); got != "xyz-state" {
		t.Fatalf("state = %q in %s", got, loc)
	}
	code = loc.Query().Get("code")
	if code == "" {
		t.Fatalf("no code in %s", loc)
	}
	return code, verifier
}

type tokenResult struct {
	status int
	header http.Header
	body   map[string]any
}

func (r tokenResult) str(k string) string { s, _ := r.body[k].(string); return s }

func postForm(t *testing.T, env *oauthtest.Env, path string, form url.Values, basicUser, basicPass string) tokenResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicUser != "" {
		req.SetBasicAuth(url.QueryEscape(basicUser), url.QueryEscape(basicPass))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := tokenResult{status: resp.StatusCode, header: resp.Header, body: map[string]any{}}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out.body); err != nil {
			t.Fatalf("%s answered %d with non-JSON %q", path, resp.StatusCode, b)
		}
	}
	return out
}

func exchange(t *testing.T, env *oauthtest.Env, clientID, code, redirect, verifier string) tokenResult {
	t.Helper()
	return postForm(t, env, "/oauth/token", url.Values{
		"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier},
	}, "", "")
}

func refresh(t *testing.T, env *oauthtest.Env, clientID, rt, scope string) tokenResult {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {rt}}
	if scope != "" {
		form.Set("scope", scope)
	}
	return postForm(t, env, "/oauth/token", form, "", "")
}

func wantOAuthError(t *testing.T, r tokenResult, status int, code string) {
	t.Helper()
	if r.status != status || r.str("error") != code {
		t.Fatalf("got %d %v, want %d error=%s", r.status, r.body, status, code)
	}
	if r.str("error_description") == "" {
		t.Errorf("error %s has no error_description", code)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", r.header.Get("Cache-Control"))
	}
}

// apiStatus calls GET /v1/repositories with tok.
func apiStatus(t *testing.T, env *oauthtest.Env, tok string) int {
	t.Helper()
	return env.Do(t, http.MethodGet, "/v1/repositories", tok, nil).StatusCode
}

func TestMetadata(t *testing.T) {
	env, _ := setup(t)
	r := env.Do(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", nil)
	if r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	var m map[string]any
	r.JSON(t, &m)
	if m["issuer"] != env.URL || m["authorization_endpoint"] != env.URL+"/oauth/authorize" ||
		m["token_endpoint"] != env.URL+"/oauth/token" || m["revocation_endpoint"] != env.URL+"/oauth/revoke" {
		t.Errorf("metadata %v", m)
	}
	if methods, _ := m["code_challenge_methods_supported"].([]any); len(methods) != 1 || methods[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v", m["code_challenge_methods_supported"])
	}
}

func TestMetadataIssuerFromConfig(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{BaseURL: "https://charts.example.com", AuthURL: "https://auth.example.com/"})
	var m map[string]any
	env.Do(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", nil).JSON(t, &m)
	if m["issuer"] != "https://auth.example.com" || m["token_endpoint"] != "https://auth.example.com/oauth/token" {
		t.Errorf("metadata %v", m)
	}
}

func TestAuthorizeUntrustedRequestGetsErrorPage(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	_, challenge := oauthtest.PKCE()
	for name, params := range map[string]url.Values{
		"unknown client":        authParams("nope", appRedirect, challenge, "repo:read"),
		"missing client":        authParams("", appRedirect, challenge, "repo:read"),
		"unregistered redirect": authParams(app.ClientID, "https://evil.example/callback", challenge, "repo:read"),
		"missing redirect":      authParams(app.ClientID, "", challenge, "repo:read"),
		// Even with a bad PKCE method, an untrusted redirect is never used.
		"bad redirect and pkce": func() url.Values {
			v := authParams(app.ClientID, appRedirect+"/x", challenge, "repo:read")
			v.Set("code_challenge_method", "plain")
			return v
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			p := b.Get(t, "/oauth/authorize?"+params.Encode())
			if p.StatusCode != http.StatusBadRequest || p.Header.Get("Location") != "" {
				t.Fatalf("got %d Location=%q, want a 400 page", p.StatusCode, p.Header.Get("Location"))
			}
			if !strings.Contains(p.Header.Get("Content-Type"), "text/html") || !strings.Contains(p.Body, "<h1") {
				t.Errorf("not an HTML error page: %s", p.Body)
			}
		})
	}
}

func TestAuthorizeErrorsRedirect(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	_, challenge := oauthtest.PKCE()
	cases := []struct {
		name   string
		mutate func(url.Values)
		want   string
	}{
		{"missing challenge", func(v url.Values) { v.Del("code_challenge") }, "invalid_request"},
		{"plain method", func(v url.Values) { v.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"missing method", func(v url.Values) { v.Del("code_challenge_method") }, "invalid_request"},
		{"short challenge", func(v url.Values) { v.Set("code_challenge", "abc") }, "invalid_request"},
		{"unknown scope", func(v url.Values) { v.Set("scope", "repo:read admin:all") }, "invalid_scope"},
		{"missing scope", func(v url.Values) { v.Del("scope") }, "invalid_scope"},
		{"token response type", func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			params := authParams(app.ClientID, appRedirect, challenge, "repo:read")
			tc.mutate(params)
			p := b.Get(t, "/oauth/authorize?"+params.Encode())
			if p.StatusCode != http.StatusFound {
				t.Fatalf("status %d, want 302: %s", p.StatusCode, p.Body)
			}
			loc, err := url.Parse(p.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(loc.String(), appRedirect+"?") || loc.Query().Get("error") != tc.want || loc.Query().Get("state") != "xyz-state" {
				t.Errorf("redirect %s, want error=%s with state", loc, tc.want)
			}
		})
	}
}

func TestSignInThenConsent(t *testing.T) {
	env, app := setup(t)
	b := env.NewBrowser(t)
	_, challenge := oauthtest.PKCE()
	authorize := "/oauth/authorize?" + authParams(app.ClientID, appRedirect, challenge, "repo:read team:write").Encode()
	p := b.Get(t, authorize)
	if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/signin?return_to=") {
		t.Fatalf("without a session: %d Location=%q", p.StatusCode, p.Header.Get("Location"))
	}
	signin := b.Get(t, p.Header.Get("Location"))
	if signin.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(signin.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("sign-in page headers %v", signin.Header)
	}
	form := signin.HiddenFields()
	form.Set("email", userEmail)
	form.Set("password", userPassword)
	r := b.PostForm(t, "/signin", form)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != authorize {
		t.Fatalf("sign in: %d Location=%q, want back to %q", r.StatusCode, r.Header.Get("Location"), authorize)
	}
	for _, c := range r.Cookies() {
		if c.Name == "chartctl_session" && (!c.HttpOnly || c.SameSite != http.SameSiteLaxMode) {
			t.Errorf("session cookie %+v is not HttpOnly+SameSite=Lax", c)
		}
	}
	consent := b.Get(t, authorize)
	if consent.StatusCode != 200 {
		t.Fatalf("consent: %d", consent.StatusCode)
	}
	for _, want := range []string{"Deploy Bot", chartctl.ScopeRepoRead.Description(), chartctl.ScopeTeamWrite.Description(), "app.example"} {
		if !strings.Contains(consent.Body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if consent.Header.Get("X-Frame-Options") != "DENY" || consent.Header.Get("X-Content-Type-Options") != "nosniff" || consent.Header.Get("Referrer-Policy") == "" {
		t.Errorf("consent page headers %v", consent.Header)
	}
}

func TestSignInFailureIsGenericAndThrottled(t *testing.T) {
	env, _ := setup(t)
	b := env.NewBrowser(t)
	try := func(email, pw string) *oauthtest.Page {
		page := b.Get(t, "/signin")
		return b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {email}, "password": {pw}})
	}
	unknown := try("nobody@example.com", "whatever1")
	wrong := try(userEmail, "wrong password")
	if unknown.StatusCode != http.StatusUnauthorized || wrong.StatusCode != http.StatusUnauthorized {
		t.Fatalf("statuses %d %d", unknown.StatusCode, wrong.StatusCode)
	}
	if !strings.Contains(unknown.Body, "Incorrect email or password.") || !strings.Contains(wrong.Body, "Incorrect email or password.") {
		t.Error("failure messages differ or are not generic")
	}
	for i := 0; i < 9; i++ {
		try(userEmail, "wrong password")
	}
	if r := try(userEmail, userPassword); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 10 failures the right password got %d, want 429", r.StatusCode)
	}
	// After the window the same browser may try again.
	env.Clock.Advance(16 * time.Minute)
	if r := try(userEmail, userPassword); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the window: %d", r.StatusCode)
	}
}

func TestDeny(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	_, challenge := oauthtest.PKCE()
	loc := b.Authorize(t, authParams(app.ClientID, appRedirect, challenge, "repo:read"), "deny")
	if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "xyz-state" || loc.Query().Get("code") != "" {
		t.Errorf("deny redirected to %s", loc)
	}
}

func TestCodeFlowAndAPI(t *testing.T) {
	env, app := setup(t)
	env.MustRepo(t, "shared", "public")
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	r := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	if r.status != 200 {
		t.Fatalf("exchange: %d %v", r.status, r.body)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q", r.header.Get("Cache-Control"))
	}
	at, rt := r.str("access_token"), r.str("refresh_token")
	if r.str("token_type") != "Bearer" || r.body["expires_in"] != float64(3600) || r.str("scope") != "repo:read" ||
		!token.Valid(token.AccessTokenPrefix, at) || !token.Valid(token.RefreshTokenPrefix, rt) {
		t.Fatalf("token response %v", r.body)
	}
	api := env.Do(t, http.MethodGet, "/v1/repositories", at, nil)
	if api.StatusCode != 200 || !strings.Contains(string(api.Body), `"shared"`) {
		t.Fatalf("API with access token: %d %s", api.StatusCode, api.Body)
	}
	var user struct{ Data client.User }
	env.Do(t, http.MethodGet, "/v1/user", at, nil).JSON(t, &user)
	if user.Data.Email != userEmail || strings.Join(user.Data.Scopes, " ") != "repo:read" {
		t.Errorf("/v1/user = %+v", user.Data)
	}
	// The token carries only the granted scope.
	if r := env.DoJSON(t, http.MethodPost, "/v1/repositories", at, map[string]string{"name": "mine"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("repo:read token created a repository: %d", r.StatusCode)
	}
	// Access tokens expire.
	env.Clock.Advance(time.Hour)
	if s := apiStatus(t, env, at); s != http.StatusUnauthorized {
		t.Errorf("expired access token: %d", s)
	}
}

func TestTokenEndpointRejects(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	// Refusals before the code is looked up (the client is unknown, the
	// code malformed, the grant type wrong) leave it as it was.
	wantOAuthError(t, exchange(t, env, "unknown", code, appRedirect, verifier), 401, "invalid_client")
	wantOAuthError(t, exchange(t, env, app.ClientID, "chartctl_ac_garbage", appRedirect, verifier), 400, "invalid_grant")
	wantOAuthError(t, postForm(t, env, "/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {app.ClientID}}, "", ""), 400, "unsupported_grant_type")
	wantOAuthError(t, postForm(t, env, "/oauth/token", url.Values{"client_id": {app.ClientID}}, "", ""), 400, "invalid_request")
	if r := exchange(t, env, app.ClientID, code, appRedirect, verifier); r.status != 200 {
		t.Fatalf("exchange after refusals that never reached the code: %d %v", r.status, r.body)
	}
}

// Regression (informational finding of the third review): a wrong PKCE
// verifier at /oauth/token left the code usable, so whoever held a stolen
// code could try verifiers until the code expired. A code is single-use
// (RFC 6749 §4.1.2): every refused exchange of it (wrong or missing
// verifier, another redirect URI, another client) consumes it, and the
// right verifier afterwards gets invalid_grant and no tokens.
func TestFailedExchangeConsumesCode(t *testing.T) {
	env, app := setup(t)
	other := env.MustClient(t, "Other", true, appRedirect)
	b := signedIn(t, env)
	wrongVerifier, _ := oauthtest.PKCE()
	attempts := map[string]func(code, verifier string) tokenResult{
		"wrong verifier": func(code, _ string) tokenResult {
			return exchange(t, env, app.ClientID, code, appRedirect, wrongVerifier)
		},
		"missing verifier": func(code, _ string) tokenResult { return exchange(t, env, app.ClientID, code, appRedirect, "") },
		"other redirect URI": func(code, verifier string) tokenResult {
			return exchange(t, env, app.ClientID, code, "https://app.example/other", verifier)
		},
		"other client": func(code, verifier string) tokenResult {
			return exchange(t, env, other.ClientID, code, appRedirect, verifier)
		},
	}
	for name, attempt := range attempts {
		code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
		wantOAuthError(t, attempt(code, verifier), 400, "invalid_grant")
		r := exchange(t, env, app.ClientID, code, appRedirect, verifier)
		if r.status != 400 || r.str("error") != "invalid_grant" || r.str("access_token") != "" {
			t.Errorf("after a refused exchange (%s), the right verifier got %d %v", name, r.status, r.body)
		}
	}
}

func TestReusedCodeRevokesItsTokens(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	first := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	if first.status != 200 {
		t.Fatalf("exchange: %v", first.body)
	}
	if s := apiStatus(t, env, first.str("access_token")); s != 200 {
		t.Fatalf("API: %d", s)
	}
	wantOAuthError(t, exchange(t, env, app.ClientID, code, appRedirect, verifier), 400, "invalid_grant")
	if s := apiStatus(t, env, first.str("access_token")); s != http.StatusUnauthorized {
		t.Errorf("access token of a reused code still works: %d", s)
	}
	wantOAuthError(t, refresh(t, env, app.ClientID, first.str("refresh_token"), ""), 400, "invalid_grant")
}

func TestExpiredCode(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	env.Clock.Advance(oauth.CodeTTL + time.Second)
	wantOAuthError(t, exchange(t, env, app.ClientID, code, appRedirect, verifier), 400, "invalid_grant")
}

func TestVerifierForCodeWithoutChallenge(t *testing.T) {
	env, app := setup(t)
	u, err := env.Store.UserByEmail(context.Background(), userEmail)
	if err != nil {
		t.Fatal(err)
	}
	// Such a code cannot be obtained over HTTP (PKCE is required), so it
	// is planted in the store: a server must still refuse the downgrade.
	value, hash := token.New("chartctl_ac_")
	now := env.Clock.Now()
	if err := env.Store.CreateAuthorizationCode(context.Background(), &chartctl.AuthorizationCode{
		Hash: hash, ClientID: app.ClientID, UserID: u.ID, RedirectURI: appRedirect,
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, GrantID: "grant_plain", CreatedAt: now, ExpiresAt: now.Add(time.Minute),
	}); err != nil {
		t.Fatal(err)
	}
	verifier, _ := oauthtest.PKCE()
	wantOAuthError(t, exchange(t, env, app.ClientID, value, appRedirect, verifier), 400, "invalid_grant")
}

func TestRefreshRotationAndReuse(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:write team:read")
	first := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	rt1 := first.str("refresh_token")

	wantOAuthError(t, refresh(t, env, app.ClientID, rt1, "repo:write org:read"), 400, "invalid_scope")
	second := refresh(t, env, app.ClientID, rt1, "repo:read")
	if second.status != 200 || second.str("scope") != "repo:read" || second.str("refresh_token") == rt1 {
		t.Fatalf("narrowing refresh: %d %v", second.status, second.body)
	}
	if s := apiStatus(t, env, second.str("access_token")); s != 200 {
		t.Fatalf("refreshed access token: %d", s)
	}
	third := refresh(t, env, app.ClientID, second.str("refresh_token"), "")
	if third.status != 200 || third.str("scope") != "repo:read" {
		t.Fatalf("second rotation: %d %v", third.status, third.body)
	}
	// rt1 was rotated: reusing it is refused and revokes the family.
	wantOAuthError(t, refresh(t, env, app.ClientID, rt1, ""), 400, "invalid_grant")
	for _, at := range []string{first.str("access_token"), second.str("access_token"), third.str("access_token")} {
		if s := apiStatus(t, env, at); s != http.StatusUnauthorized {
			t.Errorf("token of a reused family still works: %d", s)
		}
	}
	wantOAuthError(t, refresh(t, env, app.ClientID, third.str("refresh_token"), ""), 400, "invalid_grant")
}

func TestConfidentialClient(t *testing.T) {
	env, _ := setup(t)
	app := env.MustClient(t, "CI Portal", false, appRedirect)
	if app.ClientSecret == "" || app.Public {
		t.Fatalf("confidential client %+v", app)
	}
	stored, err := env.Store.OAuthClient(context.Background(), app.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored.SecretHash), app.ClientSecret) || string(stored.SecretHash) != string(token.Hash(app.ClientSecret)) {
		t.Error("client secret is not stored hashed")
	}
	b := signedIn(t, env)
	form := func(code, verifier string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {appRedirect}, "code_verifier": {verifier}}
	}
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	noSecret := form(code, verifier)
	noSecret.Set("client_id", app.ClientID)
	wantOAuthError(t, postForm(t, env, "/oauth/token", noSecret, "", ""), 401, "invalid_client")
	r := postForm(t, env, "/oauth/token", form(code, verifier), app.ClientID, "wrong")
	wantOAuthError(t, r, 401, "invalid_client")
	if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
	}
	if r := postForm(t, env, "/oauth/token", form(code, verifier), app.ClientID, app.ClientSecret); r.status != 200 {
		t.Fatalf("HTTP Basic: %d %v", r.status, r.body)
	}
	code, verifier = getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	post := form(code, verifier)
	post.Set("client_id", app.ClientID)
	post.Set("client_secret", app.ClientSecret)
	if r := postForm(t, env, "/oauth/token", post, "", ""); r.status != 200 {
		t.Fatalf("client_secret in the form: %d %v", r.status, r.body)
	}
}

func TestRevoke(t *testing.T) {
	env, app := setup(t)
	other := env.MustClient(t, "Other", true, appRedirect)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	tok := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	at, rt := tok.str("access_token"), tok.str("refresh_token")

	// Another client cannot revoke this client's token (and learns nothing).
	if r := postForm(t, env, "/oauth/revoke", url.Values{"client_id": {other.ClientID}, "token": {at}}, "", ""); r.status != 200 {
		t.Fatalf("revoke by another client: %d", r.status)
	}
	if s := apiStatus(t, env, at); s != 200 {
		t.Fatalf("another client revoked the token: %d", s)
	}
	if r := postForm(t, env, "/oauth/revoke", url.Values{"client_id": {app.ClientID}, "token": {at}, "token_type_hint": {"access_token"}}, "", ""); r.status != 200 {
		t.Fatalf("revoke: %d %v", r.status, r.body)
	}
	if s := apiStatus(t, env, at); s != http.StatusUnauthorized {
		t.Errorf("revoked access token: %d, want 401", s)
	}
	// Revoking the refresh token ends the grant.
	if r := postForm(t, env, "/oauth/revoke", url.Values{"client_id": {app.ClientID}, "token": {rt}}, "", ""); r.status != 200 {
		t.Fatalf("revoke refresh: %d", r.status)
	}
	wantOAuthError(t, refresh(t, env, app.ClientID, rt, ""), 400, "invalid_grant")
	// Unknown tokens are fine (RFC 7009 §2.2); a missing one is not.
	if r := postForm(t, env, "/oauth/revoke", url.Values{"client_id": {app.ClientID}, "token": {"whatever"}}, "", ""); r.status != 200 {
		t.Errorf("unknown token: %d", r.status)
	}
	wantOAuthError(t, postForm(t, env, "/oauth/revoke", url.Values{"client_id": {app.ClientID}}, "", ""), 400, "invalid_request")
}

func TestConcurrentRedemption(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = exchange(t, env, app.ClientID, code, appRedirect, verifier).status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 400:
		default:
			t.Errorf("unexpected status %d", s)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of 20 concurrent redemptions succeeded, want exactly 1", ok)
	}
}

func TestRedirectURIMatching(t *testing.T) {
	builtin := &chartctl.OAuthClient{ID: oauth.BuiltinClientID, RedirectURIs: []string{"http://127.0.0.1/callback", "http://[::1]/callback"}}
	registered := &chartctl.OAuthClient{ID: "oac_x", RedirectURIs: []string{"https://app.example/callback", "http://127.0.0.1/callback"}}
	cases := []struct {
		client *chartctl.OAuthClient
		uri    string
		want   bool
	}{
		{builtin, "http://127.0.0.1/callback", true},
		{builtin, "http://127.0.0.1:8123/callback", true},
		{builtin, "http://127.0.0.1:65535/callback", true},
		{builtin, "http://[::1]:49152/callback", true},
		{builtin, "http://127.0.0.1:8123/callback/x", false},
		{builtin, "http://127.0.0.1:8123/callback?a=1", false},
		{builtin, "http://127.0.0.1:8123/Callback", false},
		{builtin, "http://127.0.0.1.evil.example/callback", false},
		{builtin, "http://127.0.0.1.evil.example:80/callback", false},
		{builtin, "http://127.0.0.1:80@evil.example/callback", false},
		{builtin, "https://127.0.0.1:1/callback", false},
		{builtin, "http://localhost:8123/callback", false},
		{builtin, "http://127.0.0.1:0/callback", false},
		{builtin, "http://127.0.0.1:99999/callback", false},
		{builtin, "http://127.0.0.1:+80/callback", false},
		{builtin, "http://127.0.0.1:/callback", false},
		{builtin, "http://[::1]:1234/callback#frag", false},
		{registered, "https://app.example/callback", true},
		{registered, "https://app.example/callback/", false},
		{registered, "https://app.example/callback?a=1", false},
		{registered, "https://APP.example/callback", false},
		{registered, "http://127.0.0.1/callback", true},
		// Only the built-in client gets the loopback port exception.
		{registered, "http://127.0.0.1:8080/callback", false},
	}
	for _, tc := range cases {
		if got := oauth.RedirectURIAllowed(tc.client, tc.uri); got != tc.want {
			t.Errorf("%s: RedirectURIAllowed(%q) = %v, want %v", tc.client.ID, tc.uri, got, tc.want)
		}
	}
}

func TestBuiltinClientFlow(t *testing.T) {
	env, _ := setup(t)
	b := signedIn(t, env)
	redirect := "http://127.0.0.1:53682/callback"
	code, verifier := getCode(t, env, b, oauth.BuiltinClientID, redirect, "repo:read repo:write")
	r := exchange(t, env, oauth.BuiltinClientID, code, redirect, verifier)
	if r.status != 200 || r.str("scope") != "repo:read repo:write" {
		t.Fatalf("exchange: %d %v", r.status, r.body)
	}
	_, challenge := oauthtest.PKCE()
	p := b.Get(t, "/oauth/authorize?"+authParams(oauth.BuiltinClientID, "http://127.0.0.1.evil.example/callback", challenge, "repo:read").Encode())
	if p.StatusCode != http.StatusBadRequest || p.Header.Get("Location") != "" {
		t.Errorf("look-alike host: %d Location=%q", p.StatusCode, p.Header.Get("Location"))
	}
}

func TestCSRFLessPostsRefused(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	_, challenge := oauthtest.PKCE()
	consentForm := authParams(app.ClientID, appRedirect, challenge, "repo:read")
	consentForm.Set("decision", "approve")
	for path, form := range map[string]url.Values{
		"/oauth/authorize":   consentForm,
		"/settings/api-keys": {"name": {"ci"}, "scopes": {"repo:read"}, "expiry": {"30"}},
		"/signout":           {},
		"/signin":            {"email": {userEmail}, "password": {userPassword}},
	} {
		p := b.PostForm(t, path, form)
		if p.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s without a CSRF token: %d, want 403", path, p.StatusCode)
		}
		form.Set("csrf_token", "forged")
		if p := b.PostForm(t, path, form); p.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s with a forged CSRF token: %d, want 403", path, p.StatusCode)
		}
	}
	// Nothing was created and the session survived.
	keys, err := env.Store.APIKeys(context.Background(), mustUserID(t, env))
	if err != nil || len(keys) != 0 {
		t.Errorf("keys after refused posts: %v %v", keys, err)
	}
	if p := b.Get(t, "/settings/api-keys"); p.StatusCode != 200 {
		t.Errorf("session ended by a CSRF-less sign-out: %d", p.StatusCode)
	}
}

func mustUserID(t *testing.T, env *oauthtest.Env) string {
	t.Helper()
	u, err := env.Store.UserByEmail(context.Background(), userEmail)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func TestRegisterClientValidation(t *testing.T) {
	env, _ := setup(t)
	userKey := env.MustKey(t, env.MustUser(t, "plain@example.com", false), chartctl.AllScopes...)
	r := env.DoJSON(t, http.MethodPost, "/v1/oauth-clients", userKey, client.CreateOAuthClientRequest{Name: "x", RedirectURIs: []string{appRedirect}})
	if r.StatusCode != http.StatusForbidden || r.ErrorCode() != "forbidden" {
		t.Errorf("non-admin: %d %s", r.StatusCode, r.Body)
	}
	for _, uri := range []string{"http://app.example/cb", "https://app.example/cb#frag", "javascript:alert(1)", "/relative", "https://user@app.example/cb"} {
		r := env.DoJSON(t, http.MethodPost, "/v1/oauth-clients", env.AdminKey, client.CreateOAuthClientRequest{Name: "x", RedirectURIs: []string{uri}})
		if r.StatusCode != http.StatusBadRequest || r.ErrorCode() != "invalid_parameter" {
			t.Errorf("redirect %q: %d %s", uri, r.StatusCode, r.Body)
		}
	}
	r = env.DoJSON(t, http.MethodPost, "/v1/oauth-clients", env.AdminKey, map[string]any{"name": "x", "redirect_uris": []string{appRedirect}, "secret": "mine"})
	if r.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown field: %d %s", r.StatusCode, r.Body)
	}
	pub := env.MustClient(t, "SPA", true, appRedirect)
	if pub.ClientSecret != "" || !pub.Public || pub.ClientID == "" || pub.CreatedAt.IsZero() {
		t.Errorf("public client %+v", pub)
	}
}

// TestConsentOffersAnotherAccount: a browser already signed in to the
// dashboard as one user reaches the consent page of a login meant for
// another account. The page offers to use another account; that signs the
// first one out and, after signing in as the other, comes back to the
// same consent, which then names the other account and issues its code.
func TestConsentOffersAnotherAccount(t *testing.T) {
	env, app := setup(t)
	const other = "ops@example.com"
	env.MustUserWithPassword(t, other, userPassword, false)
	b := signedIn(t, env)
	_, challenge := oauthtest.PKCE()
	authorize := "/oauth/authorize?" + authParams(app.ClientID, appRedirect, challenge, "repo:read").Encode()
	consent := b.Get(t, authorize)
	if consent.StatusCode != http.StatusOK || !strings.Contains(consent.Body, userEmail) {
		t.Fatalf("consent: %d %s", consent.StatusCode, consent.Body)
	}
	if !strings.Contains(consent.Body, `id="switch-account"`) {
		t.Fatalf("the consent page offers no way to use another account: %s", consent.Body)
	}
	out := b.PostForm(t, "/signout", url.Values{"csrf_token": {consent.CSRF(t)}, "return_to": {authorize}})
	loc := out.Header.Get("Location")
	if out.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin?") {
		t.Fatalf("use another account: %d to %q", out.StatusCode, loc)
	}
	signin := b.Get(t, loc)
	in := b.PostForm(t, "/signin", url.Values{"csrf_token": {signin.CSRF(t)}, "email": {other}, "password": {userPassword}, "return_to": {signin.HiddenFields().Get("return_to")}})
	if in.StatusCode != http.StatusSeeOther || in.Header.Get("Location") != authorize {
		t.Fatalf("sign in as %s: %d to %q, want %q", other, in.StatusCode, in.Header.Get("Location"), authorize)
	}
	again := b.Get(t, authorize)
	if again.StatusCode != http.StatusOK || !strings.Contains(again.Body, other) || strings.Contains(again.Body, userEmail) {
		t.Fatalf("consent after switching: %d %s", again.StatusCode, again.Body)
	}
}
