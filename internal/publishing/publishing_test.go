package publishing_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/publishing"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
)

// clock is a settable clock for the verifier and the issuer alike.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func setup(t *testing.T, cfg publishing.Config) (*oidcissuer.Issuer, *publishing.Verifier, *clock) {
	t.Helper()
	iss := oidcissuer.New(t)
	clk := &clock{t: time.Now()}
	iss.SetClock(clk.Now)
	cfg.Now = clk.Now
	if cfg.RootCAs == nil {
		cfg.RootCAs = iss.Pool
	}
	if cfg.InsecureIssuers == nil && !cfg.AllowPrivate {
		// The issuer listens on 127.0.0.1: the operator's list lets it in.
		cfg.InsecureIssuers = []string{iss.URL}
	}
	return iss, publishing.New(cfg), clk
}

func refusal(t *testing.T, err error) *publishing.Refusal {
	t.Helper()
	var r *publishing.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("error %v is not a refusal", err)
	}
	return r
}

func TestVerifyGitHubAndGitLabTokens(t *testing.T) {
	iss, v, _ := setup(t, publishing.Config{})
	for name, claims := range map[string]oidcissuer.Claims{
		"github": iss.GitHub("acme/charts", "https://charts.example.com"),
		"gitlab": iss.GitLab("acme/charts", "https://charts.example.com"),
	} {
		raw := iss.Token(t, claims)
		got, err := publishing.Issuer(raw)
		if err != nil || got != iss.URL {
			t.Fatalf("%s: Issuer = %q, %v", name, got, err)
		}
		tok, err := v.Verify(context.Background(), raw, iss.URL)
		if err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		if tok.JTI != claims["jti"] || tok.Subject != claims["sub"] || tok.Claims["ref_protected"] != "true" {
			t.Errorf("%s: token %+v", name, tok)
		}
	}
}

func TestVerifyRefusals(t *testing.T) {
	iss, v, clk := setup(t, publishing.Config{})
	aud := "https://charts.example.com"
	noJTI := iss.GitHub("acme/charts", aud)
	delete(noJTI, "jti")
	future := iss.GitHub("acme/charts", aud)
	future["nbf"] = clk.Now().Add(time.Hour).Unix()
	future["iat"] = clk.Now().Add(time.Hour).Unix()
	future["exp"] = clk.Now().Add(2 * time.Hour).Unix()
	otherIss := iss.GitHub("acme/charts", aud)
	otherIss["iss"] = "https://token.actions.githubusercontent.com"

	expired := iss.Token(t, iss.GitHub("acme/charts", aud))
	cases := []struct {
		name, raw, check, says string
		before                 func()
	}{
		{name: "unpublished key", raw: iss.TokenUnpublished(t, iss.GitHub("acme/charts", aud)), check: publishing.CheckKey, says: "does not publish"},
		{name: "forged with a published kid", raw: iss.TokenWithKeyID(t, iss.KeyID(), iss.GitHub("acme/charts", aud)), check: publishing.CheckSignature, says: "does not verify"},
		{name: "no jti", raw: iss.Token(t, noJTI), check: publishing.CheckJTI, says: "jti"},
		{name: "not yet valid", raw: iss.Token(t, future), check: publishing.CheckNotYet, says: "not valid yet"},
		{name: "another iss", raw: iss.Token(t, otherIss), check: publishing.CheckIssuer, says: "iss"},
		{name: "not a JWT", raw: "not.a.jwt", check: publishing.CheckMalformed, says: "JWT"},
		{name: "expired", raw: expired, check: publishing.CheckExpired, says: "expired", before: func() { clk.Add(6 * time.Minute) }},
	}
	for _, tc := range cases {
		if tc.before != nil {
			tc.before()
		}
		_, err := v.Verify(context.Background(), tc.raw, iss.URL)
		r := refusal(t, err)
		if r.Check != tc.check || r.Code != "invalid_request" || !strings.Contains(r.Description, tc.says) {
			t.Errorf("%s: refusal %+v, want check %s saying %q", tc.name, r, tc.check, tc.says)
		}
	}
}

// An issuer whose address is private is not fetched unless the operator
// allows it: --oidc-trust-insecure-issuers or --allow-private-upstreams.
func TestPrivateIssuerRefusedUnlessAllowed(t *testing.T) {
	iss := oidcissuer.New(t)
	raw := iss.Token(t, iss.GitHub("acme/charts", "aud"))

	guarded := publishing.New(publishing.Config{RootCAs: iss.Pool})
	_, err := guarded.Verify(context.Background(), raw, iss.URL)
	r := refusal(t, err)
	if r.Check != publishing.CheckPrivate || !strings.Contains(r.Description, "private address") ||
		!strings.Contains(r.Description, "--oidc-trust-insecure-issuers") {
		t.Fatalf("refusal %+v", r)
	}
	if iss.JWKSFetches() != 0 {
		t.Fatal("the JWKS was fetched from a private address")
	}
	for name, cfg := range map[string]publishing.Config{
		"listed":        {RootCAs: iss.Pool, InsecureIssuers: []string{iss.URL + "/"}},
		"allow private": {RootCAs: iss.Pool, AllowPrivate: true},
	} {
		if _, err := publishing.New(cfg).Verify(context.Background(), raw, iss.URL); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// A plain-http issuer is fetched only when listed.
	plain := oidcissuer.NewHTTP(t)
	raw = plain.Token(t, plain.GitHub("acme/charts", "aud"))
	_, err = publishing.New(publishing.Config{AllowPrivate: true}).Verify(context.Background(), raw, plain.URL)
	if r := refusal(t, err); r.Check != publishing.CheckPrivate || !strings.Contains(r.Description, "not https") {
		t.Fatalf("plain http: refusal %+v", r)
	}
	if _, err := publishing.New(publishing.Config{InsecureIssuers: []string{plain.URL}}).Verify(context.Background(), raw, plain.URL); err != nil {
		t.Fatalf("listed plain-http issuer: %v", err)
	}
}

// A rotated key is picked up on the next re-fetch, which an unknown kid
// triggers at most once per interval; a retired key stops verifying once
// the JWKS is read again.
func TestJWKSRotationIsFollowed(t *testing.T) {
	iss, v, clk := setup(t, publishing.Config{})
	ctx := context.Background()
	first := iss.KeyID()
	if _, err := v.Verify(ctx, iss.Token(t, iss.GitHub("acme/charts", "aud")), iss.URL); err != nil {
		t.Fatal(err)
	}
	if n := iss.JWKSFetches(); n != 1 {
		t.Fatalf("fetches after the first token: %d", n)
	}
	// Cached: a second token fetches nothing.
	if _, err := v.Verify(ctx, iss.Token(t, iss.GitHub("acme/charts", "aud")), iss.URL); err != nil || iss.JWKSFetches() != 1 {
		t.Fatalf("second token: %v, %d fetches", err, iss.JWKSFetches())
	}

	iss.Rotate(t)
	clk.Add(30 * time.Second)
	rotated := iss.Token(t, iss.GitHub("acme/charts", "aud"))
	_, err := v.Verify(ctx, rotated, iss.URL)
	if r := refusal(t, err); r.Check != publishing.CheckKey {
		t.Fatalf("new key within the minute: %+v", r)
	}
	if n := iss.JWKSFetches(); n != 1 {
		t.Fatalf("the JWKS was re-fetched within a minute of the last fetch (%d fetches)", n)
	}
	// A storm of unknown key IDs fetches nothing either.
	for range 5 {
		_, _ = v.Verify(ctx, iss.TokenUnpublished(t, iss.GitHub("acme/charts", "aud")), iss.URL)
	}
	if n := iss.JWKSFetches(); n != 1 {
		t.Fatalf("unknown kids drove %d fetches", n)
	}
	clk.Add(31 * time.Second)
	tok := iss.GitHub("acme/charts", "aud") // times from the advanced clock
	if _, err := v.Verify(ctx, iss.Token(t, tok), iss.URL); err != nil {
		t.Fatalf("after a minute the rotated key verifies: %v", err)
	}
	if n := iss.JWKSFetches(); n != 2 {
		t.Fatalf("fetches: %d, want 2", n)
	}

	// Retire the first key; a token it signed is refused after the next
	// re-fetch.
	iss.Retire(first)
	clk.Add(time.Minute)
	_, _ = v.Verify(ctx, iss.TokenUnpublished(t, iss.GitHub("acme/charts", "aud")), iss.URL) // unknown kid: re-fetch
	old := iss.TokenWithKeyID(t, first, iss.GitHub("acme/charts", "aud"))
	_, err = v.Verify(ctx, old, iss.URL)
	if r := refusal(t, err); r.Check != publishing.CheckKey {
		t.Fatalf("retired key: %+v", r)
	}
}

func TestMatch(t *testing.T) {
	iss := oidcissuer.New(t)
	v := publishing.New(publishing.Config{RootCAs: iss.Pool, InsecureIssuers: []string{iss.URL}})
	claims := iss.GitHub("acme/charts", "https://charts.example.com")
	claims["run_attempt"] = 1
	claims["groups"] = []string{"a", "b"}
	tok, err := v.Verify(context.Background(), iss.Token(t, claims), iss.URL)
	if err != nil {
		t.Fatal(err)
	}
	pub := func(aud string, c map[string]string) *chartctl.TrustedPublisher {
		return &chartctl.TrustedPublisher{Issuer: iss.URL, Audience: aud, Claims: c}
	}
	aud := "https://charts.example.com"
	for _, tc := range []struct {
		name  string
		p     *chartctl.TrustedPublisher
		check string
	}{
		{"exact", pub(aud, map[string]string{"repository": "acme/charts"}), ""},
		{"glob", pub(aud, map[string]string{"repository": "acme/*", "ref": "refs/heads/*", "environment": "release"}), ""},
		{"sub", pub(aud, map[string]string{"sub": "repo:acme/charts:ref:refs/heads/main"}), ""},
		{"number as JSON", pub(aud, map[string]string{"run_attempt": "1"}), ""},
		{"list as JSON", pub(aud, map[string]string{"groups": `["a","b"]`}), ""},
		{"wrong audience", pub("https://other.example.com", map[string]string{"repository": "acme/charts"}), publishing.CheckAudience},
		{"wrong repository", pub(aud, map[string]string{"repository": "evil/charts"}), publishing.CheckClaim},
		{"glob does not cross /", pub(aud, map[string]string{"job_workflow_ref": "acme/*"}), publishing.CheckClaim},
		{"missing claim", pub(aud, map[string]string{"repository": "acme/charts", "project_path": "acme/charts"}), publishing.CheckClaim},
	} {
		matched, r := publishing.Match(tok, tc.p)
		switch {
		case tc.check == "" && r != nil:
			t.Errorf("%s: refused: %v", tc.name, r)
		case tc.check == "" && len(matched) != len(tc.p.Claims):
			t.Errorf("%s: matched %v", tc.name, matched)
		case tc.check != "" && (r == nil || r.Check != tc.check):
			t.Errorf("%s: got %+v, want check %s", tc.name, r, tc.check)
		}
	}
	_, r := publishing.Match(tok, pub(aud, map[string]string{"repository": "evil/charts"}))
	if !strings.Contains(r.Description, "repository") || !strings.Contains(r.Description, "acme/charts") {
		t.Errorf("the refusal does not name the claim: %s", r.Description)
	}
}

func TestValidatePublisher(t *testing.T) {
	v := publishing.New(publishing.Config{InsecureIssuers: []string{"http://issuer.test"}})
	for _, tc := range []struct {
		issuer string
		claims map[string]string
		says   string
	}{
		{publishing.GitHubIssuer, map[string]string{"ref": "refs/heads/main"}, "repository, repository_owner or sub"},
		{publishing.GitHubIssuer, nil, "at least one claim"},
		{"https://gitlab.com", map[string]string{"project_path": "*"}, "matches every value"},
		{"https://gitlab.com", map[string]string{"project_path": "[a"}, "not a valid glob"},
		{"https://gitlab.com", map[string]string{"aud": "x"}, "checked by the server"},
		{"http://gitlab.com", map[string]string{"project_path": "a/b"}, "https"},
		{"ftp://gitlab.com", map[string]string{"project_path": "a/b"}, "issuer"},
	} {
		err := v.ValidateIssuer(tc.issuer)
		if err == nil {
			err = publishing.ValidateClaims(tc.issuer, tc.claims)
		}
		if err == nil || chartctl.ErrorCode(err) != chartctl.EINVALID || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s %v: %v, want EINVALID saying %q", tc.issuer, tc.claims, err, tc.says)
		}
	}
	if err := v.ValidateIssuer("http://issuer.test"); err != nil {
		t.Errorf("listed http issuer: %v", err)
	}
	if err := publishing.ValidateClaims(publishing.GitHubIssuer, map[string]string{"repository_owner": "acme", "ref": "refs/heads/*"}); err != nil {
		t.Errorf("valid GitHub publisher: %v", err)
	}
}
