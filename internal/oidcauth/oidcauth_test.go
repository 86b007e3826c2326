package oidcauth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oidcauth"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
)

// setup starts a server trusting a test issuer, with robot acme/ci-push
// and a publisher for acme/charts' tokens of audience the server's URL.
func setup(t *testing.T) (*testkit.Server, *oidcissuer.Issuer) {
	t.Helper()
	iss := oidcissuer.New(t)
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Config.OIDCRootCAs = iss.Pool
		srv.Config.OIDCTrustInsecureIssuers = []string{iss.URL}
	})
	ctx := context.Background()
	if r := s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("create organization: %d %s", r.StatusCode, r.Body)
	}
	org, err := s.Store.Organization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, h := token.New(token.RobotSecretPrefix)
	if err := s.Store.CreateRobot(ctx, &chartctl.Robot{OrganizationID: org.ID, Name: "ci-push", Repositories: []string{"acme-*"},
		Permissions: chartctl.RobotPermissions{chartctl.RobotPush}, SecretHash: h, CreatedBy: s.Admin.ID}); err != nil {
		t.Fatal(err)
	}
	r := s.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci-push/publishers", s.AdminKey,
		client.PublisherRequest{Issuer: iss.URL, Audience: s.URL, Claims: map[string]string{"repository": "acme/charts"}})
	if r.StatusCode != 200 {
		t.Fatalf("add publisher: %d %s", r.StatusCode, r.Body)
	}
	return s, iss
}

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// A credential is kept for its lifetime, per subject token: the commands
// of one job exchange once, and a new token is a new exchange.
func TestExchangeKeepsTheCredentialForItsLifetime(t *testing.T) {
	s, iss := setup(t)
	ctx := context.Background()
	now := time.Now()
	cache := &oidcauth.Cache{Dir: t.TempDir(), Now: func() time.Time { return now }}
	first := iss.Token(t, iss.GitHub("acme/charts", s.URL))
	src := oidcauth.Source{Getenv: env(map[string]string{oidcauth.EnvToken: first + "\n"})}

	a, err := oidcauth.Exchange(ctx, nil, s.URL, "", src, cache)
	if err != nil || a.Cached || !token.Valid(token.ExchangedPrefix, a.Token) {
		t.Fatalf("first exchange: %+v, %v", a, err)
	}
	fi, err := os.Stat(filepath.Join(cache.Dir, oidcauth.CacheFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v, %v", fi, err)
	}
	b, err := oidcauth.Exchange(ctx, nil, s.URL, "", src, cache)
	if err != nil || !b.Cached || b.Token != a.Token {
		t.Fatalf("second command of the job: %+v, %v", b, err)
	}

	// A file holding another token of the job: exchanged anew.
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(iss.Token(t, iss.GitHub("acme/charts", s.URL))), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := oidcauth.Exchange(ctx, nil, s.URL, "", oidcauth.Source{File: file, Getenv: env(nil)}, cache)
	if err != nil || c.Cached || c.Token == a.Token {
		t.Fatalf("another token: %+v, %v", c, err)
	}

	// Within a minute of its expiry the credential is not reused; the same
	// token then cannot be exchanged again (its jti is remembered).
	now = now.Add(14*time.Minute + 30*time.Second)
	_, err = oidcauth.Exchange(ctx, nil, s.URL, "", src, cache)
	var te *client.TokenExchangeError
	if !errors.As(err, &te) || te.Code != "invalid_request" {
		t.Fatalf("re-exchange of a used token: %v", err)
	}
}

// In a GitHub Actions job chartctl asks for the token itself, with the
// server's URL as audience, and asks again only once the credential it
// keeps runs out.
func TestExchangeAsksGitHubActions(t *testing.T) {
	s, iss := setup(t)
	iss.ServeActionsTokens(iss.GitHub("acme/charts", ""))
	vars := map[string]string{oidcauth.EnvActionsURL: iss.ActionsRequestURL(), oidcauth.EnvActionsToken: iss.ActionsRequestToken}
	src := oidcauth.Source{Getenv: env(vars), HTTPClient: iss.Client()}
	if !src.Available() || src.Describe() != "GitHub Actions' ID token" {
		t.Fatalf("source: %v %q", src.Available(), src.Describe())
	}
	now := time.Now()
	cache := &oidcauth.Cache{Dir: t.TempDir(), Now: func() time.Time { return now }}
	a, err := oidcauth.Exchange(context.Background(), nil, s.URL, "", src, cache)
	if err != nil || a.Cached {
		t.Fatalf("exchange: %+v, %v", a, err)
	}
	if b, err := oidcauth.Exchange(context.Background(), nil, s.URL, "", src, cache); err != nil || !b.Cached {
		t.Fatalf("second: %+v, %v", b, err)
	}
	now = now.Add(15 * time.Minute)
	c, err := oidcauth.Exchange(context.Background(), nil, s.URL, "", src, cache)
	if err != nil || c.Cached || c.Token == a.Token {
		t.Fatalf("after expiry, a fresh token from GitHub: %+v, %v", c, err)
	}

	// A wrong request token: GitHub refuses, and the message says why.
	vars[oidcauth.EnvActionsToken] = "wrong"
	now = now.Add(time.Hour)
	if _, err := oidcauth.Exchange(context.Background(), nil, s.URL, "", src, cache); err == nil ||
		!strings.Contains(err.Error(), "id-token: write") {
		t.Fatalf("refused request: %v", err)
	}
}
