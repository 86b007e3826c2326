package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
	"github.com/chartctl/chartctl/internal/identity/oidc"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
	"github.com/chartctl/chartctl/internal/web"
)

// lateSSO is the provider of a test server, discovered once the server's
// URL (its redirect URI) is known.
type lateSSO struct{ p *oidc.Provider }

func (l *lateSSO) AuthCodeURL(r oidc.Request) string { return l.p.AuthCodeURL(r) }
func (l *lateSSO) Finish(ctx context.Context, r oidc.Request, code string) (*identity.Claims, error) {
	return l.p.Finish(ctx, r, code)
}

const ssoClient = "chartctl-test"

// ssoEnv is a server whose sign-in page offers the test issuer iss, with
// the local password form as noLocal says.
func ssoEnv(t *testing.T, iss *oidcissuer.Issuer, noLocal bool, policy app.SignInPolicy) *oauthtest.Env {
	t.Helper()
	env, _ := ssoEnvProvider(t, iss, noLocal, policy)
	return env
}

// ssoEnvProvider is ssoEnv that also returns the provider, whose JWKS
// refetch interval runs on the Env's clock.
func ssoEnvProvider(t *testing.T, iss *oidcissuer.Issuer, noLocal bool, policy app.SignInPolicy) (*oauthtest.Env, *oidc.Provider) {
	t.Helper()
	late := &lateSSO{}
	env := oauthtest.Start(t, oauthtest.Config{
		SSO:           web.SSOOptions{Provider: late, Name: "Acme SSO", Key: web.SSOKey("client-secret"), Policy: policy},
		NoLocalSignIn: noLocal,
	})
	iss.SetClock(env.Clock.Now)
	p, err := oidc.New(t.Context(), oidc.Config{Issuer: iss.URL, ClientID: ssoClient, ClientSecret: "client-secret",
		RedirectURL: env.URL + "/signin/oidc/callback", HTTPClient: iss.Client(), Now: env.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	late.p = p
	return env, p
}

// idClaims are the claims of a good ID token for req.
// The verifier checks exp against the wall clock, so the times are the
// wall clock's.
func idClaims(iss *oidcissuer.Issuer, req oidcissuer.AuthRequest, sub, email string) oidcissuer.Claims {
	now := time.Now()
	return oidcissuer.Claims{"iss": iss.URL, "aud": req.ClientID, "sub": sub, "nonce": req.Nonce, "email": email, "email_verified": true,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

// ssoSignIn runs the code flow in b: the sign-in page's button, the
// issuer's redirect back, and the callback. It returns the callback's
// answer.
func ssoSignIn(t *testing.T, env *oauthtest.Env, b *oauthtest.Browser, iss *oidcissuer.Issuer) *oauthtest.Page {
	t.Helper()
	start := b.Get(t, "/signin/oidc?return_to=%2Frepositories")
	if start.StatusCode != http.StatusFound || !strings.HasPrefix(start.Header.Get("Location"), iss.URL+"/authorize?") {
		t.Fatalf("/signin/oidc: %d to %q", start.StatusCode, start.Header.Get("Location"))
	}
	loc, _ := url.Parse(start.Header.Get("Location"))
	q := loc.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" || !strings.Contains(q.Get("scope"), "openid email profile") {
		t.Fatalf("authorization request %v", q)
	}
	resp, err := iss.Client().Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The issuer's client followed nothing of chartctl's: its answer is
	// the redirect back, which the browser follows.
	back := resp.Request.URL
	if resp.Request.URL.Host == loc.Host {
		t.Fatalf("issuer answered %d without redirecting", resp.StatusCode)
	}
	return b.Get(t, back.String())
}

func TestSSOSignInCreatesUserJustInTime(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, false, app.SignInPolicy{AdminGroup: "chartctl-admins"})
	groups := []any{"developers"}
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		c := idClaims(iss, req, "user-1", "Ana@Example.com")
		c["groups"] = groups
		return iss.Token(t, c)
	})
	page := env.NewBrowser(t).Get(t, "/signin")
	if !strings.Contains(page.Body, `href="/signin/oidc"`) || !strings.Contains(page.Body, "Sign in with Acme SSO") || !strings.Contains(page.Body, `id="password"`) {
		t.Fatalf("sign-in page without the SSO button and the form:\n%s", page.Body)
	}

	b := env.NewBrowser(t)
	r := ssoSignIn(t, env, b, iss)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/repositories" {
		t.Fatalf("callback: %d %q %s", r.StatusCode, r.Header.Get("Location"), r.Body)
	}
	u, err := env.Store.UserByIdentity(t.Context(), chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: iss.URL, Subject: "user-1"})
	if err != nil || u.Email != "ana@example.com" || u.PasswordHash != "" || u.Admin {
		t.Fatalf("user created just in time: %+v, %v", u, err)
	}
	if s := b.Get(t, "/settings"); s.StatusCode != http.StatusOK || !strings.Contains(s.Body, "ana@example.com") {
		t.Fatalf("signed-in settings page: %d", s.StatusCode)
	}
	// IdP users have no password features (decision 7).
	if p := b.Get(t, "/settings/password"); strings.Contains(p.Body, `id="password-form"`) {
		t.Fatal("an IdP user is offered a password form")
	}
	// The API shows how each user signs in.
	list := env.Do(t, http.MethodGet, "/v1/users", env.AdminKey, nil)
	if list.StatusCode != http.StatusOK || !strings.Contains(string(list.Body), `"identity":{"provider":"oidc","subject":"user-1"}`) ||
		!strings.Contains(string(list.Body), `"identity":{"provider":"local","subject":""}`) {
		t.Fatalf("GET /v1/users: %d %s", list.StatusCode, list.Body)
	}
	pr := env.DoJSON(t, http.MethodPatch, "/v1/users/"+u.Email, env.AdminKey, map[string]string{"password": "a long enough password"})
	if pr.StatusCode != http.StatusBadRequest || !strings.Contains(string(pr.Body), "identity provider") {
		t.Fatalf("admin setting an IdP user's password: %d %s", pr.StatusCode, pr.Body)
	}

	// A second sign-in (new browser) is the same user, with the email the
	// provider has now and admin from the admin group.
	groups = []any{"developers", "chartctl-admins"}
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		c := idClaims(iss, req, "user-1", "ana.silva@example.com")
		c["groups"] = groups
		return iss.Token(t, c)
	})
	if r := ssoSignIn(t, env, env.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d %s", r.StatusCode, r.Body)
	}
	again, err := env.Store.UserByIdentity(t.Context(), u.Identity)
	if err != nil || again.ID != u.ID || again.Email != "ana.silva@example.com" || !again.Admin {
		t.Fatalf("second sign-in's user: %+v, %v", again, err)
	}
	if n, _ := env.Store.UserCount(t.Context()); n != 2 {
		t.Fatalf("%d users, want the admin and Ana", n)
	}
}

// TestSSOSignInRefusesBadIDTokens: a tampered token (signed by a key the
// issuer never published), a wrong nonce, a wrong audience, an expired
// token, another issuer and an unverified email are each refused, and
// nobody is signed in or created.
func TestSSOSignInRefusesBadIDTokens(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, false, app.SignInPolicy{})
	for _, tc := range []struct {
		name string
		mint func(req oidcissuer.AuthRequest) string
		want string
	}{
		{"tampered", func(req oidcissuer.AuthRequest) string {
			return iss.TokenWithKeyID(t, iss.KeyID(), idClaims(iss, req, "u", "eve@example.com"))
		}, "is not valid"},
		{"wrong nonce", func(req oidcissuer.AuthRequest) string {
			c := idClaims(iss, req, "u", "eve@example.com")
			c["nonce"] = "another-sign-in"
			return iss.Token(t, c)
		}, "nonce does not match"},
		{"wrong audience", func(req oidcissuer.AuthRequest) string {
			c := idClaims(iss, req, "u", "eve@example.com")
			c["aud"] = "another-client"
			return iss.Token(t, c)
		}, "is not valid"},
		{"expired", func(req oidcissuer.AuthRequest) string {
			c := idClaims(iss, req, "u", "eve@example.com")
			past := time.Now().Add(-time.Hour)
			c["iat"], c["exp"] = past.Add(-time.Hour).Unix(), past.Unix()
			return iss.Token(t, c)
		}, "is not valid"},
		{"other issuer", func(req oidcissuer.AuthRequest) string {
			c := idClaims(iss, req, "u", "eve@example.com")
			c["iss"] = "https://evil.example.com"
			return iss.Token(t, c)
		}, "is not valid"},
		{"unverified email", func(req oidcissuer.AuthRequest) string {
			c := idClaims(iss, req, "u", "eve@example.com")
			c["email_verified"] = false
			return iss.Token(t, c)
		}, "has not verified the email"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each refusal counts in the address's sign-in throttle
			// (checked below); a new window keeps the cases apart.
			env.Clock.Advance(time.Hour)
			iss.ServeSignIns(tc.mint)
			b := env.NewBrowser(t)
			r := ssoSignIn(t, env, b, iss)
			if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Body, tc.want) {
				t.Fatalf("callback: %d, want 401 saying %q:\n%s", r.StatusCode, tc.want, r.Body)
			}
			if s := b.Get(t, "/settings"); s.StatusCode != http.StatusSeeOther {
				t.Fatalf("after a refused sign-in /settings answers %d", s.StatusCode)
			}
			if _, err := env.Store.UserByEmail(t.Context(), "eve@example.com"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				t.Fatalf("a refused sign-in created a user: %v", err)
			}
		})
	}

	// A callback with another browser's state (or none) is refused.
	env.Clock.Advance(time.Hour)
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		return iss.Token(t, idClaims(iss, req, "u", "eve@example.com"))
	})
	b := env.NewBrowser(t)
	if r := b.Get(t, "/signin/oidc/callback?code=x&state=y"); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "not started in this browser") {
		t.Fatalf("callback without a started sign-in: %d %s", r.StatusCode, r.Body)
	}
	start := b.Get(t, "/signin/oidc")
	loc, _ := url.Parse(start.Header.Get("Location"))
	q := loc.Query()
	q.Set("state", "forged")
	loc.RawQuery = q.Encode()
	resp, err := iss.Client().Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := b.Get(t, resp.Request.URL.String()); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "state does not match") {
		t.Fatalf("callback with a forged state: %d %s", r.StatusCode, r.Body)
	}

	// Refusals count in the sign-in throttle: past its limit the
	// callback refuses before looking at the answer.
	env.Clock.Advance(time.Hour)
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		c := idClaims(iss, req, "u", "eve@example.com")
		c["aud"] = "another-client"
		return iss.Token(t, c)
	})
	throttled := false
	for range 20 {
		if r := ssoSignIn(t, env, env.NewBrowser(t), iss); r.StatusCode == http.StatusTooManyRequests {
			throttled = true
			break
		}
	}
	if !throttled {
		t.Fatal("20 refused sign-ins from one address were never throttled")
	}
}

// TestSSOLinkingRefusesCollisions (decision 1): a first IdP sign-in whose
// email belongs to a local account, or to an account bound to another
// IdP account, is refused with a page naming the conflict; an unbound
// SCIM-provisioned account with a verified email is linked.
func TestSSOLinkingRefusesCollisions(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, false, app.SignInPolicy{})
	local := env.MustUserWithPassword(t, "bob@example.com", "a long enough password", false)
	other := &chartctl.User{Email: "carol@example.com", Identity: chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: iss.URL, Subject: "carol-old"}}
	scim := &chartctl.User{Email: "dan@example.com", Identity: chartctl.Identity{Provider: chartctl.ProviderSCIM, Subject: "scim-dan"}}
	for _, u := range []*chartctl.User{other, scim} {
		if err := env.Store.CreateUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	signInAs := func(sub, email string) *oauthtest.Page {
		iss.ServeSignIns(func(req oidcissuer.AuthRequest) string { return iss.Token(t, idClaims(iss, req, sub, email)) })
		return ssoSignIn(t, env, env.NewBrowser(t), iss)
	}
	r := signInAs("bob-idp", "bob@example.com")
	if r.StatusCode != http.StatusConflict || !strings.Contains(r.Body, "A local chartctl account already uses the email bob@example.com") {
		t.Fatalf("collision with a local account: %d %s", r.StatusCode, r.Body)
	}
	if u, _ := env.Store.User(t.Context(), local.ID); !u.Identity.Local() {
		t.Fatalf("the local account was bound: %+v", u.Identity)
	}
	r = signInAs("carol-new", "carol@example.com")
	if r.StatusCode != http.StatusConflict || !strings.Contains(r.Body, "bound to another sign-in (oidc)") {
		t.Fatalf("collision with a bound account: %d %s", r.StatusCode, r.Body)
	}
	if r := signInAs("dan-idp", "dan@example.com"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("SCIM-provisioned account: %d %s", r.StatusCode, r.Body)
	}
	if u, err := env.Store.UserByIdentity(t.Context(), chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: iss.URL, Subject: "dan-idp"}); err != nil || u.ID != scim.ID {
		t.Fatalf("SCIM account after sign-in: %+v, %v", u, err)
	}
}

// TestSSOUnverifiedEmailGetsNoMemberships: with
// --oidc-allow-unverified-email, an unverified email signs in, but not
// into memberships recorded for that email (decision 1).
func TestSSOUnverifiedEmailGetsNoMemberships(t *testing.T) {
	iss := oidcissuer.New(t)
	late := &lateSSO{}
	env := oauthtest.Start(t, oauthtest.Config{SSO: web.SSOOptions{Provider: late, Name: "Acme SSO", Key: web.SSOKey("client-secret")}})
	p, err := oidc.New(t.Context(), oidc.Config{Issuer: iss.URL, ClientID: ssoClient, ClientSecret: "client-secret",
		RedirectURL: env.URL + "/signin/oidc/callback", HTTPClient: iss.Client(), AllowUnverifiedEmail: true})
	if err != nil {
		t.Fatal(err)
	}
	late.p = p
	if r := env.DoJSON(t, http.MethodPost, "/v1/organizations", env.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != http.StatusOK {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/teams", env.AdminKey, map[string]string{"name": "platform", "organization": "acme"}); r.StatusCode != http.StatusOK {
		t.Fatalf("create team: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/teams/platform/members", env.AdminKey, map[string]string{"email": "eve@example.com", "role": "owner"}); r.StatusCode != http.StatusOK {
		t.Fatalf("add member: %d %s", r.StatusCode, r.Body)
	}
	signInAs := func(email string) *oauthtest.Page {
		iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
			c := idClaims(iss, req, "sub-"+email, email)
			c["email_verified"] = false
			return iss.Token(t, c)
		})
		return ssoSignIn(t, env, env.NewBrowser(t), iss)
	}
	if r := signInAs("eve@example.com"); r.StatusCode != http.StatusForbidden || !strings.Contains(r.Body, "has not verified that email") {
		t.Fatalf("unverified email with recorded memberships: %d %s", r.StatusCode, r.Body)
	}
	if _, err := env.Store.UserByEmail(t.Context(), "eve@example.com"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("the refused sign-in created a user: %v", err)
	}
	if r := signInAs("frank@example.com"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("unverified email without memberships: %d %s", r.StatusCode, r.Body)
	}
}

// TestLocalSignInOff: --local-signin=false hides the password form for
// everyone and refuses passwords of non-admins; /signin/local (the
// break-glass path) still signs a local admin in.
func TestLocalSignInOff(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, true, app.SignInPolicy{})
	env.MustUserWithPassword(t, "root@example.com", "a long enough password", true)
	env.MustUserWithPassword(t, "bob@example.com", "a long enough password", false)
	b := env.NewBrowser(t)
	page := b.Get(t, "/signin")
	if strings.Contains(page.Body, `id="password"`) || !strings.Contains(page.Body, "Sign in with Acme SSO") {
		t.Fatalf("/signin with local sign-in off:\n%s", page.Body)
	}
	local := b.Get(t, "/signin/local")
	// A password posted to /signin (the form of an older page) is held to
	// the same rule.
	form := url.Values{"csrf_token": {local.CSRF(t)}, "email": {"bob@example.com"}, "password": {"a long enough password"}, "return_to": {"/"}}
	if r := b.PostForm(t, "/signin", form); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a non-admin's password on /signin: %d", r.StatusCode)
	}
	if !strings.Contains(local.Body, `id="password"`) || !strings.Contains(local.Body, `action="/signin/local"`) || !strings.Contains(local.Body, "local administrators only") {
		t.Fatalf("/signin/local:\n%s", local.Body)
	}
	if r := b.PostForm(t, "/signin/local", form); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a non-admin's password on /signin/local: %d", r.StatusCode)
	}
	form.Set("email", "root@example.com")
	if r := b.PostForm(t, "/signin/local", form); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("the local admin on /signin/local: %d %s", r.StatusCode, r.Body)
	}
	if s := b.Get(t, "/settings"); s.StatusCode != http.StatusOK {
		t.Fatalf("the break-glass admin is not signed in: %d", s.StatusCode)
	}
}

// TestSSOKeyRotationAndReplicas: a token signed with the provider's new
// key (rotation) verifies, the JWKS fetched again, but at most once a
// minute (decision 5: unknown key IDs cannot make chartctl hammer the
// provider); and a sign-in started on one replica finishes on another
// that shares the client secret (decision 22), without a shared store for
// the sign-in in progress.
func TestSSOKeyRotationAndReplicas(t *testing.T) {
	iss := oidcissuer.New(t)
	a, provider := ssoEnvProvider(t, iss, false, app.SignInPolicy{})
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		return iss.Token(t, idClaims(iss, req, "user-1", "ana@example.com"))
	})
	if r := ssoSignIn(t, a, a.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("first sign-in: %d %s", r.StatusCode, r.Body)
	}
	if n := provider.KeyFetches(); n != 1 {
		t.Fatalf("%d JWKS fetches for the first sign-in, want 1", n)
	}
	iss.Rotate(t)
	// Within the minute, the new key is unknown and not fetched.
	for range 3 {
		a.Clock.Advance(10 * time.Second)
		if r := ssoSignIn(t, a, a.NewBrowser(t), iss); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("sign-in with a key fetched too early: %d %s", r.StatusCode, r.Body)
		}
	}
	if n := provider.KeyFetches(); n != 1 {
		t.Fatalf("%d JWKS fetches within a minute, want 1", n)
	}
	a.Clock.Advance(time.Minute)
	if r := ssoSignIn(t, a, a.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in with the rotated key: %d %s", r.StatusCode, r.Body)
	}
	if n := provider.KeyFetches(); n != 2 {
		t.Fatalf("%d JWKS fetches after the rotation, want 2", n)
	}

	// Replica b: its own store and process state, the same client (its
	// redirect URI is the shared base URL's, here a's).
	late := &lateSSO{}
	b := oauthtest.Start(t, oauthtest.Config{SSO: web.SSOOptions{Provider: late, Name: "Acme SSO", Key: web.SSOKey("client-secret")}})
	p, err := oidc.New(t.Context(), oidc.Config{Issuer: iss.URL, ClientID: ssoClient, ClientSecret: "client-secret",
		RedirectURL: a.URL + "/signin/oidc/callback", HTTPClient: iss.Client()})
	if err != nil {
		t.Fatal(err)
	}
	late.p = p
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		return iss.Token(t, idClaims(iss, req, "user-2", "bo@example.com"))
	})
	br := a.NewBrowser(t)
	start := br.Get(t, "/signin/oidc")
	resp, err := iss.Client().Get(start.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The load balancer sends the callback to b: same host, so the
	// browser sends b the cookie a set.
	callback := strings.Replace(resp.Request.URL.String(), a.URL, b.URL, 1)
	if r := br.Get(t, callback); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback on the other replica: %d %s", r.StatusCode, r.Body)
	}
	if _, err := b.Store.UserByEmail(t.Context(), "bo@example.com"); err != nil {
		t.Fatalf("the other replica did not sign the user in: %v", err)
	}
}

// TestSSOForOAuthApps: the OAuth authorization server's sign-in (what
// `chartctl login` opens) goes through the identity provider and comes
// back to the consent page.
func TestSSOForOAuthApps(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, true, app.SignInPolicy{})
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		return iss.Token(t, idClaims(iss, req, "user-1", "ana@example.com"))
	})
	_, challenge := oauthtest.PKCE()
	params := url.Values{"response_type": {"code"}, "client_id": {"chartctl"}, "redirect_uri": {"http://127.0.0.1:9999/callback"},
		"scope": {"repo:read"}, "state": {"s"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	b := env.NewBrowser(t)
	r := b.Get(t, "/oauth/authorize?"+params.Encode())
	if r.StatusCode != http.StatusSeeOther && r.StatusCode != http.StatusFound {
		t.Fatalf("authorize when signed out: %d %s", r.StatusCode, r.Body)
	}
	page := b.Get(t, r.Header.Get("Location"))
	m := ssoLink.FindStringSubmatch(page.Body)
	if m == nil {
		t.Fatalf("the sign-in page for the app has no SSO button:\n%s", page.Body)
	}
	start := b.Get(t, html.UnescapeString(m[1]))
	resp, err := iss.Client().Get(start.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb := b.Get(t, resp.Request.URL.String())
	if cb.StatusCode != http.StatusSeeOther || !strings.HasPrefix(cb.Header.Get("Location"), "/oauth/authorize?") {
		t.Fatalf("callback: %d to %q", cb.StatusCode, cb.Header.Get("Location"))
	}
	consent := b.Get(t, cb.Header.Get("Location"))
	if consent.StatusCode != http.StatusOK || !strings.Contains(consent.Body, "chartctl CLI") {
		t.Fatalf("consent page after SSO: %d %s", consent.StatusCode, consent.Body)
	}
}

var ssoLink = regexp.MustCompile(`id="signin-sso" href="([^"]+)"`)
