package oauth_test

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// Regression: an admin's repo:read credential creates a new admin with a password,
// signs in to the dashboard, and gets an all-scope key.
func TestNarrowAdminKeyCannotCreateAdmins(t *testing.T) {
	env, _ := setup(t)
	readKey := env.MustKey(t, env.Admin, chartctl.ScopeRepoRead)
	r := env.DoJSON(t, http.MethodPost, "/v1/users", readKey, client.CreateUserRequest{Email: "evil@example.com", Password: "evil password", Admin: true})
	if r.StatusCode == http.StatusOK {
		b := env.NewBrowser(t)
		b.SignIn(t, "evil@example.com", "evil password")
		page := b.Get(t, "/settings/api-keys/new")
		created := b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {page.CSRF(t)}, "name": {"x"}, "scopes": {"repo:read", "repo:write", "team:read", "team:write", "org:read", "org:write"}, "expiry": {"never"}})
		t.Errorf("repo:read admin key created an admin (200); the new admin then made an all-scope key: %d", created.StatusCode)
	}
}

// Regression: a third-party app's repo:read access token mints a non-expiring API
// key that survives revoking the grant.
func TestAccessTokenCannotManageAPIKeys(t *testing.T) {
	env, app := setup(t)
	b := signedIn(t, env)
	code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
	tok := exchange(t, env, app.ClientID, code, appRedirect, verifier)
	at, rt := tok.str("access_token"), tok.str("refresh_token")
	r := env.DoJSON(t, http.MethodPost, "/v1/user/api-keys", at, client.CreateAPIKeyRequest{Name: "persist", Scopes: []string{"repo:read"}})
	if r.StatusCode != http.StatusOK {
		return
	}
	var out struct{ Data client.APIKey }
	r.JSON(t, &out)
	postForm(t, env, "/oauth/revoke", url.Values{"client_id": {app.ClientID}, "token": {rt}}, "", "")
	if apiStatus(t, env, at) != http.StatusUnauthorized {
		t.Fatal("grant not revoked")
	}
	if s := apiStatus(t, env, out.Data.Key); s == http.StatusOK {
		t.Errorf("an OAuth app minted an API key with its access token; the key still works after the user revoked the grant")
	}
	// S2b: the same read-only token revokes the user's other keys.
	other := env.MustKey(t, mustUser(t, env), chartctl.AllScopes...)
	_ = other
	keys, _ := env.Store.APIKeys(t.Context(), mustUserID(t, env))
	for _, k := range keys {
		if k.Name == "test key" {
			code, verifier := getCode(t, env, b, app.ClientID, appRedirect, "repo:read")
			at2 := exchange(t, env, app.ClientID, code, appRedirect, verifier).str("access_token")
			if r := env.Do(t, http.MethodDelete, "/v1/user/api-keys/"+k.ID, at2, nil); r.StatusCode == http.StatusOK {
				t.Errorf("a repo:read access token revoked the user's all-scope key")
			}
		}
	}
}

func mustUser(t *testing.T, env *oauthtest.Env) *chartctl.User {
	u, err := env.Store.UserByEmail(t.Context(), userEmail)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Regression: uploads through the ChartMuseum API skip the upload and global buckets.
func TestHelmAPIWritesAreRateLimited(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, testkit.Option(func(s *server.Server) {
		s.Config.UploadLimit = ratelimit.Limit{N: 2, Window: time.Hour}
		s.Config.GlobalLimit = ratelimit.Limit{N: 5, Window: time.Hour}
	}))
	env.MustRepo(t, "r", "private")
	ok := 0
	for i := range 10 {
		arc := testkit.MakeChart(t, testkit.Chart{Name: "c", Version: "1.0." + string(rune('0'+i))})
		req, _ := http.NewRequest(http.MethodPost, env.URL+"/helm/api/r/charts", bytes.NewReader(arc))
		req.SetBasicAuth("x", env.AdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			ok++
		}
	}
	if ok > 2 {
		t.Errorf("%d uploads through /helm/api stored with upload limit 2/h and global 5/h (1 used by MustRepo)", ok)
	}
}
