package oauth_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

const (
	adminEmail    = "root@example.com"
	adminPassword = "admin password 1"
	sixScopes     = "repo:read repo:write team:read team:write org:read org:write"
)

// Regression (admin power through OAuth): an access token an admin
// approved with the six ordinary scopes reached every admin endpoint. Now
// the admin endpoints need the admin scope, and the refusal says how to get
// it.
func TestOAuthTokenWithoutAdminScopeIsNotAdmin(t *testing.T) {
	env, app := setup(t)
	env.MustUserWithPassword(t, adminEmail, adminPassword, true)
	b := env.NewBrowser(t)
	b.SignIn(t, adminEmail, adminPassword)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, sixScopes)
	at := exchange(t, env, app.ClientID, code, appRedirect, verifier).str("access_token")

	r := env.DoJSON(t, http.MethodPost, "/v1/users", at, client.CreateUserRequest{Email: "evil@example.com", Password: "evil password", Admin: true})
	if r.StatusCode != http.StatusForbidden || !strings.Contains(string(r.Body), "chartctl login --scopes") || !strings.Contains(string(r.Body), ",admin") {
		t.Errorf("POST /v1/users with a six-scope admin token: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/users/"+adminEmail+"/api-keys", at, client.CreateAPIKeyRequest{Name: "x", Scopes: []string{"repo:read"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST /v1/users/:email/api-keys with a six-scope admin token: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/oauth-clients", at, client.CreateOAuthClientRequest{Name: "x", RedirectURIs: []string{"https://x.example/cb"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST /v1/oauth-clients with a six-scope admin token: %d %s", r.StatusCode, r.Body)
	}
	// Without keys:write the token cannot mint keys that outlive it.
	if r := env.DoJSON(t, http.MethodPost, "/v1/user/api-keys", at, client.CreateAPIKeyRequest{Name: "x", Scopes: []string{"repo:read"}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST /v1/user/api-keys without keys:write: %d %s", r.StatusCode, r.Body)
	}
}

// The consent page shows admin in plain words; a token the admin approved
// with it reaches the admin endpoints.
func TestOAuthAdminScopeShownAndGranted(t *testing.T) {
	env, app := setup(t)
	env.MustUserWithPassword(t, adminEmail, adminPassword, true)
	b := env.NewBrowser(t)
	b.SignIn(t, adminEmail, adminPassword)
	verifier, challenge := oauthtest.PKCE()
	params := authParams(app.ClientID, appRedirect, challenge, "repo:read admin keys:write")
	page := b.Get(t, "/oauth/authorize?"+params.Encode())
	for _, want := range []string{"admin-warning", "act as a server administrator", "keep working after you revoke the application"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	loc := b.Authorize(t, params, "approve")
	tok := exchange(t, env, app.ClientID, loc.Query().Get("code"), appRedirect, verifier)
	if got := tok.str("scope"); got != "repo:read keys:write admin" {
		t.Errorf("granted scope %q", got)
	}
	r := env.DoJSON(t, http.MethodPost, "/v1/users", tok.str("access_token"), client.CreateUserRequest{Email: "new@example.com"})
	if r.StatusCode != http.StatusOK {
		t.Errorf("POST /v1/users with an admin-scope token: %d %s", r.StatusCode, r.Body)
	}
}

// A user who is not an admin is never shown admin, and the token never
// carries it.
func TestOAuthAdminScopeDroppedForNonAdmins(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	verifier, challenge := oauthtest.PKCE()
	params := authParams(app.ClientID, appRedirect, challenge, "repo:read admin")
	page := b.Get(t, "/oauth/authorize?"+params.Encode())
	if strings.Contains(page.Body, "admin-warning") || strings.Contains(page.Body, "<code>admin</code>") {
		t.Error("consent page shows admin to a non-admin")
	}
	loc := b.Authorize(t, params, "approve")
	tok := exchange(t, env, app.ClientID, loc.Query().Get("code"), appRedirect, verifier)
	if got := tok.str("scope"); got != "repo:read" {
		t.Errorf("granted scope %q, want repo:read", got)
	}
	// Asking for admin alone gives nothing to grant: invalid_scope.
	_, challenge = oauthtest.PKCE()
	r := b.Get(t, "/oauth/authorize?"+authParams(app.ClientID, appRedirect, challenge, "admin").Encode())
	if r.StatusCode != http.StatusFound || !strings.Contains(r.Header.Get("Location"), "error=invalid_scope") {
		t.Errorf("admin alone for a non-admin: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
}
