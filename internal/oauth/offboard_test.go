package oauth_test

import (
	"net/http"
	"net/url"
	"testing"
)

// Disabling a user ends their dashboard session, OAuth access and refresh
// tokens at once, and they cannot sign in again until enabled.
func TestDisableEndsSessionsAndTokens(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	tok := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	at, rt := tok.str("access_token"), tok.str("refresh_token")
	if s := apiStatus(t, env, at); s != http.StatusOK {
		t.Fatalf("access token before: %d", s)
	}
	if p := b.Get(t, "/settings"); p.StatusCode != http.StatusOK {
		t.Fatalf("dashboard before: %d", p.StatusCode)
	}

	r := env.DoJSON(t, http.MethodPatch, "/v1/users/"+userEmail, env.AdminKey, map[string]any{"disabled": true})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("disable: %d %s", r.StatusCode, r.Body)
	}
	if s := apiStatus(t, env, at); s != http.StatusUnauthorized {
		t.Errorf("access token after disabling: %d", s)
	}
	wantOAuthError(t, refresh(t, env, app.ClientID, rt, ""), http.StatusBadRequest, "invalid_grant")
	if p := b.Get(t, "/settings"); p.StatusCode == http.StatusOK {
		t.Error("dashboard session survived disabling")
	}
	b2 := env.NewBrowser(t)
	page := b2.Get(t, "/signin")
	if p := b2.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {userEmail}, "password": {userPassword}}); p.StatusCode != http.StatusUnauthorized {
		t.Errorf("a disabled user signing in got %d, want 401", p.StatusCode)
	}
	u, err := env.Store.UserByEmail(t.Context(), userEmail)
	if err != nil || !u.Disabled {
		t.Fatalf("user = %+v, %v", u, err)
	}
}
