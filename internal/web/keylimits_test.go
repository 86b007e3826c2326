package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/server"
)

// postKeyForm submits the dashboard's Generate New Key form.
func postKeyForm(t *testing.T, b *oauthtest.Browser, csrf, name string) *oauthtest.Page {
	t.Helper()
	return b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {csrf}, "name": {name}, "scopes": {"repo:read"}, "expiry": {"30"}})
}

// The dashboard's key form makes keys through the application layer, so
// the per-user cap holds there as on /v1 (a user once reached 111 keys
// through the form), and the page says what to do.
func TestKeyFormEnforcesTheKeyCap(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, func(srv *server.Server) { srv.Config.MaxKeysPerUser = 3 })
	env.MustUserWithPassword(t, "a@example.com", "password123", false)
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "password123")
	csrf := b.Get(t, "/settings/api-keys/new").CSRF(t)
	for i := range 3 {
		if r := postKeyForm(t, b, csrf, fmt.Sprint("k", i)); r.StatusCode != http.StatusOK {
			t.Fatalf("key %d: %d", i, r.StatusCode)
		}
	}
	r := postKeyForm(t, b, csrf, "one-too-many")
	if r.StatusCode != http.StatusForbidden || !strings.Contains(r.Body, `id="form-error"`) || !strings.Contains(r.Body, "revoke one first") {
		t.Fatalf("fourth key from the form: %d, want 403 with the form saying to revoke one:\n%s", r.StatusCode, r.Body)
	}
	keys, err := env.Store.APIKeys(t.Context(), mustUserID(t, env, "a@example.com"))
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys stored: %d (%v), want 3", len(keys), err)
	}
	// /v1 and the form count the same keys.
	v1 := env.DoJSON(t, http.MethodPost, "/v1/users/a@example.com/api-keys", env.AdminKey, map[string]any{"name": "by-admin", "scopes": []string{"repo:read"}})
	if v1.StatusCode != http.StatusForbidden {
		t.Fatalf("a fourth key through /v1: %d %s, want 403", v1.StatusCode, v1.Body)
	}
}

// The form spends the "keys" rate-limit bucket that /v1 spends: keys made
// through either count, and the refusal is a message on the form with
// Retry-After.
func TestKeyFormIsRateLimited(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, func(srv *server.Server) { srv.Config.KeyCreateLimit = ratelimit.Limit{N: 2, Window: time.Hour} })
	u := env.MustUserWithPassword(t, "a@example.com", "password123", false)
	b := env.NewBrowser(t)
	b.SignIn(t, "a@example.com", "password123")
	csrf := b.Get(t, "/settings/api-keys/new").CSRF(t)
	if r := postKeyForm(t, b, csrf, "from-the-form"); r.StatusCode != http.StatusOK {
		t.Fatalf("first key: %d", r.StatusCode)
	}
	key := env.MustKey(t, u, "keys:write", "repo:read")
	if r := env.DoJSON(t, http.MethodPost, "/v1/user/api-keys", key, map[string]any{"name": "from-v1", "scopes": []string{"repo:read"}}); r.StatusCode != http.StatusOK {
		t.Fatalf("second key through /v1: %d %s", r.StatusCode, r.Body)
	}
	r := postKeyForm(t, b, csrf, "third")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" || !strings.Contains(r.Body, `id="form-error"`) || !strings.Contains(r.Body, "Too many API keys created recently") {
		t.Fatalf("third key in the window from the form: %d (Retry-After %q), want 429 with a message on the form:\n%s", r.StatusCode, r.Header.Get("Retry-After"), r.Body)
	}
	if strings.Contains(r.Body, "chartctl_") && strings.Contains(r.Body, `id="new-key"`) {
		t.Fatal("a key was shown although the form was refused")
	}
}

func mustUserID(t *testing.T, env *oauthtest.Env, email string) string {
	t.Helper()
	u, err := env.Store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
