package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

func changePassword(t *testing.T, b *oauthtest.Browser, csrf, current, next, confirm string) *oauthtest.Page {
	t.Helper()
	return b.PostForm(t, "/settings/password", url.Values{"csrf_token": {csrf}, "current_password": {current}, "new_password": {next}, "confirm_password": {confirm}})
}

// A local user changes their password on /settings/password: a wrong
// current password is refused with a message on the form, the change signs
// out the user's other browsers but not this one, and only the new
// password signs in afterwards.
func TestChangePassword(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "old password 1", false)
	other := env.NewBrowser(t)
	other.SignIn(t, "a@example.com", "old password 1")
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "old password 1")

	settings := b.Get(t, "/settings")
	if !strings.Contains(settings.Body, `href="/settings/password"`) || !strings.Contains(settings.Body, `href="/settings/apps"`) {
		t.Fatal("the settings navigation does not link the Password and Authorized apps tabs")
	}
	form := b.Get(t, "/settings/password")
	if form.StatusCode != http.StatusOK || !strings.Contains(form.Body, `id="current-password"`) {
		t.Fatalf("password page: %d", form.StatusCode)
	}
	csrf := form.CSRF(t)

	if r := b.PostForm(t, "/settings/password", url.Values{"current_password": {"old password 1"}, "new_password": {"new password 2"}, "confirm_password": {"new password 2"}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("without a CSRF token: %d, want 403", r.StatusCode)
	}
	r := changePassword(t, b, csrf, "not my password", "new password 2", "new password 2")
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "current password is not correct") || !strings.Contains(r.Body, `aria-invalid="true"`) {
		t.Fatalf("wrong current password: %d\n%s", r.StatusCode, r.Body)
	}
	if r := changePassword(t, b, csrf, "old password 1", "short", "short"); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "8 to 72 characters") {
		t.Fatalf("short new password: %d", r.StatusCode)
	}
	if r := changePassword(t, b, csrf, "old password 1", "new password 2", "new password 3"); r.StatusCode != http.StatusBadRequest || !strings.Contains(r.Body, "differ") {
		t.Fatalf("mismatched confirmation: %d", r.StatusCode)
	}
	r = changePassword(t, b, csrf, "old password 1", "new password 2", "new password 2")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/settings/password?changed=1" {
		t.Fatalf("change: %d %q\n%s", r.StatusCode, r.Header.Get("Location"), r.Body)
	}
	if p := b.Get(t, "/settings/password?changed=1"); p.StatusCode != http.StatusOK || !strings.Contains(p.Body, "password was changed") {
		t.Fatalf("this browser after the change: %d (it should stay signed in)", p.StatusCode)
	}
	if p := other.Get(t, "/settings"); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("the other browser after the change: %d, want signed out (303)", p.StatusCode)
	}
	fresh := env.NewBrowser(t)
	page := fresh.Get(t, "/signin")
	if r := fresh.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"a@example.com"}, "password": {"old password 1"}}); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("sign-in with the old password: %d, want 401", r.StatusCode)
	}
	fresh.SignIn(t, "a@example.com", "new password 2")
}

// Guessing the current password on the form is throttled like sign-in,
// and the failures count against the account's sign-in throttle.
func TestChangePasswordIsRateLimited(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "old password 1", false)
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "old password 1")
	csrf := b.Get(t, "/settings/password").CSRF(t)
	for i := range 10 {
		if r := changePassword(t, b, csrf, "guess", "new password 2", "new password 2"); r.StatusCode != http.StatusBadRequest {
			t.Fatalf("guess %d: %d, want 400", i, r.StatusCode)
		}
	}
	r := changePassword(t, b, csrf, "old password 1", "new password 2", "new password 2")
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(r.Body, "Too many failed attempts") {
		t.Fatalf("after ten wrong guesses, the right password: %d, want 429 with a message\n%s", r.StatusCode, r.Body)
	}
	fresh := env.NewBrowser(t)
	page := fresh.Get(t, "/signin")
	if r := fresh.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"a@example.com"}, "password": {"old password 1"}}); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("sign-in after the guesses: %d, want 429 (the same throttle)", r.StatusCode)
	}
}

// An account without a password (a service account) has nothing to
// change, and the page says so.
func TestChangePasswordWithoutPassword(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "old password 1", false)
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "old password 1")
	u, err := env.Store.UserByEmail(t.Context(), "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	if _, err := env.Store.UpdateUser(t.Context(), u.ID, chartctl.UserUpdate{PasswordHash: &empty}); err != nil {
		t.Fatal(err)
	}
	p := b.Get(t, "/settings/password")
	if p.StatusCode != http.StatusOK || !strings.Contains(p.Body, `id="no-password"`) || strings.Contains(p.Body, `id="current-password"`) {
		t.Fatalf("password page of an account without one: %d", p.StatusCode)
	}
	if r := changePassword(t, b, p.CSRF(t), "", "new password 2", "new password 2"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("posting anyway: %d, want 403", r.StatusCode)
	}
}

// authorizeApp runs the authorization code flow for the signed-in browser
// b and returns the access and refresh tokens.
func authorizeApp(t *testing.T, env *oauthtest.Env, b *oauthtest.Browser, clientID, redirect string) (access, refresh string) {
	t.Helper()
	verifier, challenge := oauthtest.PKCE()
	loc := b.Authorize(t, url.Values{"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope": {"repo:read"}, "state": {"s"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}, "approve")
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}
	resp, err := http.PostForm(env.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.RefreshToken == "" {
		t.Fatalf("token exchange: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken, tok.RefreshToken
}

// /settings/apps lists the OAuth applications the user authorized; Revoke
// ends the grant: its access token is refused at once and its refresh
// token no longer refreshes. Another user's grant cannot be revoked.
func TestAuthorizedAppsRevoke(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "a@example.com", "password123", false)
	env.MustUserWithPassword(t, "b@example.com", "password123", false)
	redirect := "http://127.0.0.1:9/callback"
	cl := env.MustClient(t, "Deploy Bot", true, redirect)
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "password123")
	if p := b.Get(t, "/settings/apps"); p.StatusCode != http.StatusOK || !strings.Contains(p.Body, `id="no-apps"`) {
		t.Fatalf("apps page before any authorization: %d", p.StatusCode)
	}
	access, refresh := authorizeApp(t, env, b, cl.ClientID, redirect)
	if r := env.Do(t, http.MethodGet, "/v1/user", access, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("access token before the revocation: %d", r.StatusCode)
	}

	other := env.NewBrowser(t)
	other.SignIn(t, "b@example.com", "password123")
	otherAccess, _ := authorizeApp(t, env, other, cl.ClientID, redirect)
	otherGrant := regexp.MustCompile(`data-grant-id="([^"]+)"`).FindStringSubmatch(other.Get(t, "/settings/apps").Body)
	if otherGrant == nil {
		t.Fatal("the other user's apps page lists no grant")
	}

	list := b.Get(t, "/settings/apps")
	if !strings.Contains(list.Body, "Deploy Bot") || !strings.Contains(list.Body, "repo:read") {
		t.Fatalf("apps page does not list the app:\n%s", list.Body)
	}
	grant := regexp.MustCompile(`data-grant-id="([^"]+)"`).FindAllStringSubmatch(list.Body, -1)
	if len(grant) != 1 || grant[0][1] == otherGrant[1] {
		t.Fatalf("apps page lists %d grants (%v), want this user's one", len(grant), grant)
	}
	csrf := list.CSRF(t)
	if r := b.PostForm(t, "/settings/apps/"+otherGrant[1]+"/revoke", url.Values{"csrf_token": {csrf}}); r.StatusCode != http.StatusNotFound {
		t.Fatalf("revoking another user's grant: %d, want 404", r.StatusCode)
	}
	if r := env.Do(t, http.MethodGet, "/v1/user", otherAccess, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("the other user's token after the refused revocation: %d", r.StatusCode)
	}
	if r := b.PostForm(t, "/settings/apps/"+grant[0][1]+"/revoke", url.Values{}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("revoke without a CSRF token: %d, want 403", r.StatusCode)
	}
	r := b.PostForm(t, "/settings/apps/"+grant[0][1]+"/revoke", url.Values{"csrf_token": {csrf}})
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", r.StatusCode)
	}
	if r := env.Do(t, http.MethodGet, "/v1/user", access, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("access token after the revocation: %d, want 401", r.StatusCode)
	}
	resp, err := http.PostForm(env.URL+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {cl.ClientID}, "refresh_token": {refresh}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("refresh after the revocation: %d, want 400 invalid_grant", resp.StatusCode)
	}
	after := b.Get(t, "/settings/apps?revoked=1")
	if strings.Contains(after.Body, "Deploy Bot") || !strings.Contains(after.Body, "Access was revoked") {
		t.Fatalf("apps page after the revocation still lists the app or has no notice")
	}
}
