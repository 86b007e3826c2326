package cmdutil

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/config"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/keyring"
)

func newTestFactory(t *testing.T, env map[string]string) (*Factory, string) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	dir := t.TempDir()
	f := New(ios, func(k string) string { return env[k] })
	f.ConfigDir = func() (string, error) { return dir, nil }
	f.KeyringBackend = nil
	return f, dir
}

func TestServerPrecedence(t *testing.T) {
	f, dir := newTestFactory(t, map[string]string{})
	if s, _ := f.Server(); s != DefaultServer {
		t.Errorf("nothing set: %q", s)
	}
	c, _ := config.Load(dir)
	c.CurrentServer = "https://logged-in.example.com/"
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	f, _ = newTestFactory(t, map[string]string{})
	f.ConfigDir = func() (string, error) { return dir, nil }
	if s, _ := f.Server(); s != "https://logged-in.example.com" {
		t.Errorf("config: %q", s)
	}
	f, _ = newTestFactory(t, map[string]string{EnvServer: "http://env.example.com"})
	f.ConfigDir = func() (string, error) { return dir, nil }
	if s, _ := f.Server(); s != "http://env.example.com" {
		t.Errorf("env: %q", s)
	}
	f.Flags.Server = "flag.example.com"
	if s, _ := f.Server(); s != "https://flag.example.com" {
		t.Errorf("flag: %q", s)
	}
	f.Flags.Server = "ftp://x"
	var fe *FlagError
	if _, err := f.Server(); !errors.As(err, &fe) {
		t.Errorf("ftp server: %v", err)
	}
}

func TestTokenPrecedence(t *testing.T) {
	f, _ := newTestFactory(t, map[string]string{EnvToken: "from-env"})
	kr, _ := f.Keyring()
	if _, err := kr.Set("http://s", &keyring.Credential{APIKey: "from-keyring"}); err != nil {
		t.Fatal(err)
	}
	tok := func() (string, string) {
		ts, src, err := f.Token(t.Context(), "http://s")
		if err != nil {
			t.Fatal(err)
		}
		if ts == nil {
			return "", src
		}
		tk, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		return tk.AccessToken, src
	}
	if v, src := tok(); v != "from-env" || src != EnvToken {
		t.Errorf("env should win over the keyring: %q from %q", v, src)
	}
	f.Flags.Token = "from-flag"
	if v, src := tok(); v != "from-flag" || src != "--token" {
		t.Errorf("flag should win: %q from %q", v, src)
	}
	f.Flags.Token = ""
	f.Getenv = func(string) string { return "" }
	if v, src := tok(); v != "from-keyring" || src != "keyring" {
		t.Errorf("keyring: %q from %q", v, src)
	}
	if ts, _, err := f.Token(t.Context(), "http://other"); ts != nil || err != nil {
		t.Errorf("no credential: %v, %v", ts, err)
	}
}

func TestWantsJSON(t *testing.T) {
	f, _ := newTestFactory(t, nil)
	if !f.WantsJSON() {
		t.Error("pipe without -o: want JSON")
	}
	f.IOStreams.SetStdoutTTY(true)
	if f.WantsJSON() {
		t.Error("tty without -o: want a table")
	}
	f.Flags.Output = OutputJSON
	if !f.WantsJSON() {
		t.Error("-o json on a tty: want JSON")
	}
	f.IOStreams.SetStdoutTTY(false)
	f.Flags.Output = OutputTable
	if f.WantsJSON() {
		t.Error("-o table in a pipe: want a table")
	}
}

// TestStoredTokenSourceRefreshes checks that an expired access token is
// refreshed at the token endpoint and the rotated pair is stored.
func TestStoredTokenSourceRefreshes(t *testing.T) {
	var refreshes atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("client_id") != OAuthClientID {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request"})
			return
		}
		if r.PostForm.Get("refresh_token") != "rt-1" {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		refreshes.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at-2", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"})
	}))
	defer ts.Close()

	f, _ := newTestFactory(t, nil)
	kr, _ := f.Keyring()
	server := "http://chart.example"
	if _, err := kr.Set(server, &keyring.Credential{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: time.Now().Add(-time.Hour), TokenURL: ts.URL}); err != nil {
		t.Fatal(err)
	}
	src, _, err := f.Token(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "at-2" {
		t.Errorf("token %q, want the refreshed at-2", tok.AccessToken)
	}
	if _, err := src.Token(); err != nil || refreshes.Load() != 1 {
		t.Errorf("second Token: %v, %d refreshes", err, refreshes.Load())
	}
	cred, err := kr.Get(server)
	if err != nil || cred.AccessToken != "at-2" || cred.RefreshToken != "rt-2" || !cred.Expiry.After(time.Now()) {
		t.Errorf("stored %+v, %v; want the rotated pair", cred, err)
	}

	// The rotated-away refresh token no longer works: an AuthError.
	if _, err := kr.Set(server, &keyring.Credential{AccessToken: "at-1", RefreshToken: "rt-old", Expiry: time.Now().Add(-time.Hour), TokenURL: ts.URL}); err != nil {
		t.Fatal(err)
	}
	src, _, _ = f.Token(t.Context(), server)
	_, err = src.Token()
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Errorf("refused refresh: err = %v, want an AuthError", err)
	}
}

func TestDiscoverAuthServer(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{
			"issuer":                 "https://auth.example.com",
			"authorization_endpoint": "https://auth.example.com/oauth/authorize",
			"token_endpoint":         "https://auth.example.com/oauth/token",
		})
	}))
	defer ts.Close()
	as := DiscoverAuthServer(t.Context(), ts.Client(), ts.URL)
	if as.AuthorizationEndpoint != "https://auth.example.com/oauth/authorize" || as.TokenEndpoint != "https://auth.example.com/oauth/token" {
		t.Errorf("discovered %+v", as)
	}
	if as.RevocationEndpoint != ts.URL+"/oauth/revoke" {
		t.Errorf("revocation endpoint %q", as.RevocationEndpoint)
	}
	missing := DiscoverAuthServer(t.Context(), ts.Client(), ts.URL+"/nothing")
	if missing.TokenEndpoint != ts.URL+"/nothing/oauth/token" {
		t.Errorf("fallback %+v", missing)
	}
}

func TestFuzzyAgo(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := map[time.Duration]string{
		10 * time.Second:     "just now",
		time.Minute:          "1 minute ago",
		5 * time.Hour:        "5 hours ago",
		3 * 24 * time.Hour:   "3 days ago",
		-30 * time.Minute:    "in 30 minutes",
		400 * 24 * time.Hour: "1 year ago",
	}
	for d, want := range tests {
		if got := FuzzyAgo(now, now.Add(-d)); got != want {
			t.Errorf("FuzzyAgo(-%s) = %q, want %q", d, got, want)
		}
	}
	// Beyond what a Duration holds (about 292 years; the server takes
	// an API key expiring 9999-12-31): counted in years, not
	// "in -9223372036 years".
	for when, want := range map[time.Time]string{
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC): "in 7973 years",
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC):      "2025 years ago",
	} {
		if got := FuzzyAgo(now, when); got != want {
			t.Errorf("FuzzyAgo(%s) = %q, want %q", when.Format(time.RFC3339), got, want)
		}
	}
}
