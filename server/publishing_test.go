package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
)

// The audience the tests' publishers expect.
const testAudience = "https://charts.example.com"

// publishingFixture is a server with organization acme (owned by the
// admin), its repository acme-charts, robot acme/ci-push (push on
// acme-*) and a test issuer the server trusts.
type publishingFixture struct {
	s     *testkit.Server
	iss   *oidcissuer.Issuer
	clk   *testClock
	admin *client.Client
	robot *chartctl.Robot
}

// setupPublishing starts the fixture with a test issuer that the server
// trusts as the operator's --oidc-trust-insecure-issuers does (it listens
// on 127.0.0.1).
func setupPublishing(t *testing.T, opts ...testkit.Option) *publishingFixture {
	t.Helper()
	iss := oidcissuer.New(t)
	trust := func(srv *server.Server) {
		srv.Config.OIDCRootCAs = iss.Pool
		srv.Config.OIDCTrustInsecureIssuers = []string{iss.URL}
	}
	return setupPublishingWith(t, iss, append([]testkit.Option{trust}, opts...)...)
}

// setupPublishingWith starts the fixture with issuer iss, trusted only as
// opts say.
func setupPublishingWith(t *testing.T, iss *oidcissuer.Issuer, opts ...testkit.Option) *publishingFixture {
	t.Helper()
	f := &publishingFixture{iss: iss, clk: &testClock{t: time.Now().UTC()}}
	f.iss.SetClock(f.clk.Now)
	opts = append([]testkit.Option{func(srv *server.Server) { srv.Now = f.clk.Now }}, opts...)
	f.s = testkit.StartServer(t, opts...)
	mustOK(t, f.s.DoJSON(t, "POST", "/v1/organizations", f.s.AdminKey, map[string]string{"name": "acme"}))
	mustOK(t, f.s.DoJSON(t, "POST", "/v1/repositories", f.s.AdminKey, map[string]string{"name": "acme-charts", "organization": "acme"}))
	mustOK(t, f.s.DoJSON(t, "POST", "/v1/repositories", f.s.AdminKey, map[string]string{"name": "other-charts", "organization": "acme"}))
	f.robot = f.mustRobot(t, "ci-push", []string{"acme-*"})
	var err error
	f.admin, err = client.New(f.s.URL, client.WithToken(f.s.AdminKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustOK(t *testing.T, r *testkit.Response) {
	t.Helper()
	if r.StatusCode != 200 {
		t.Fatalf("status %d: %s", r.StatusCode, r.Body)
	}
}

// mustRobot creates a robot of acme with push on patterns.
func (f *publishingFixture) mustRobot(t *testing.T, name string, patterns []string) *chartctl.Robot {
	t.Helper()
	ctx := context.Background()
	org, err := f.s.Store.Organization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, h := token.New(token.RobotSecretPrefix)
	r := &chartctl.Robot{OrganizationID: org.ID, Organization: "acme", Name: name, Repositories: patterns,
		Permissions: chartctl.RobotPermissions{chartctl.RobotPush}, SecretHash: h, CreatedBy: f.s.Admin.ID}
	if err := f.s.Store.CreateRobot(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Organization = "acme"
	return r
}

// mustPublisher adds a publisher of the test issuer to robot name.
func (f *publishingFixture) mustPublisher(t *testing.T, name string, claims map[string]string) *client.Publisher {
	t.Helper()
	p, _, err := f.admin.Robots.AddPublisher(context.Background(), "acme", name, &client.PublisherRequest{Issuer: f.iss.URL, Audience: testAudience, Claims: claims})
	if err != nil {
		t.Fatalf("add publisher: %v", err)
	}
	return p
}

func (f *publishingFixture) exchange(t *testing.T, subject, robot string) (*client.ExchangedToken, error) {
	t.Helper()
	return client.ExchangeOIDCToken(context.Background(), nil, f.s.URL, subject, robot)
}

// expectRefusal asserts an exchange refused with code and a description
// saying says.
func expectRefusal(t *testing.T, what string, tok *client.ExchangedToken, err error, code, says string) {
	t.Helper()
	var te *client.TokenExchangeError
	if !errors.As(err, &te) {
		t.Fatalf("%s: exchanged (%v, %v), want a refusal saying %q", what, tok, err, says)
	}
	if te.StatusCode != 400 || te.Code != code || !strings.Contains(te.Description, says) {
		t.Errorf("%s: refusal %d %s %q, want 400 %s saying %q", what, te.StatusCode, te.Code, te.Description, code, says)
	}
}

// exchangeAudit returns the oidc.exchange audit entries, oldest first.
func exchangeAudit(t *testing.T, s *testkit.Server) []*chartctl.AuditEntry {
	t.Helper()
	entries, _, err := s.Store.AuditLog(context.Background(), chartctl.AuditFilter{Action: "oidc.exchange", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*chartctl.AuditEntry, len(entries))
	for n, e := range entries {
		out[len(entries)-1-n] = e
	}
	if len(out) > 1 && out[0].Time.After(out[len(out)-1].Time) {
		// The log lists newest first; keep oldest first whatever it does.
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// A token whose claims match is exchanged for a credential of the robot:
// 15 minutes, no-store, audited with the matched claims.
func TestTokenExchangeIssuesRobotCredential(t *testing.T) {
	f := setupPublishing(t)
	f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts", "ref": "refs/heads/*"})

	form := url.Values{"grant_type": {client.TokenExchangeGrantType}, "subject_token_type": {client.TokenTypeIDToken},
		"subject_token": {f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience))}}
	r := f.s.Do(t, "POST", "/v1/oidc/token", "", strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded")
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("exchange: %d %q %s", r.StatusCode, r.Header.Get("Cache-Control"), r.Body)
	}
	var tok client.ExchangedToken
	if err := json.Unmarshal(r.Body, &tok); err != nil {
		t.Fatal(err)
	}
	if !token.Valid(token.ExchangedPrefix, tok.AccessToken) || tok.TokenType != "Bearer" || tok.ExpiresIn != 900 ||
		tok.IssuedTokenType != client.TokenTypeAccessToken {
		t.Fatalf("token %+v", tok)
	}
	cred, err := f.s.Store.ExchangedCredentialByHash(context.Background(), token.Hash(tok.AccessToken))
	if err != nil {
		t.Fatal(err)
	}
	if d := cred.ExpiresAt.Sub(f.clk.Now()); cred.RobotID != f.robot.ID || d > 15*time.Minute || d < 15*time.Minute-time.Second {
		t.Fatalf("stored credential %+v", cred)
	}

	audit := exchangeAudit(t, f.s)
	if len(audit) != 1 {
		t.Fatalf("audit entries: %d", len(audit))
	}
	e := audit[0]
	if e.Outcome != chartctl.OutcomeSuccess || e.Organization != "acme" || e.Actor.CredentialID != cred.ID ||
		e.Actor.CredentialKind != chartctl.CredentialExchanged || !strings.HasPrefix(e.Target, "acme/ci-push via "+cred.PublisherID+" matched") ||
		!strings.Contains(e.Target, "repository=acme/charts") || !strings.Contains(e.Target, "ref=refs/heads/main") {
		t.Fatalf("audit entry %+v, actor %+v", e, e.Actor)
	}
}

// Each refusal of the issue, and the request errors, with the reason in
// the error_description.
func TestTokenExchangeRefusals(t *testing.T) {
	f := setupPublishing(t)
	f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts"})
	gh := func(mod func(oidcissuer.Claims)) oidcissuer.Claims {
		c := f.iss.GitHub("acme/charts", testAudience)
		if mod != nil {
			mod(c)
		}
		return c
	}
	stranger := oidcissuer.New(t)

	cases := []struct {
		name, subject, code, says string
	}{
		{"wrong claim", f.iss.Token(t, gh(func(c oidcissuer.Claims) { c["repository"] = "evil/charts" })), "invalid_request", `repository claim "evil/charts" does not match`},
		{"missing claim", f.iss.Token(t, gh(func(c oidcissuer.Claims) { delete(c, "repository") })), "invalid_request", "no repository claim"},
		{"wrong audience", f.iss.Token(t, gh(func(c oidcissuer.Claims) { c["aud"] = "https://elsewhere.example.com" })), "invalid_request", "audience"},
		{"unknown issuer", stranger.Token(t, stranger.GitHub("acme/charts", testAudience)), "invalid_request", "No trusted publisher accepts tokens of issuer"},
		{"expired", f.iss.Token(t, gh(func(c oidcissuer.Claims) {
			c["iat"], c["nbf"], c["exp"] = f.clk.Now().Add(-10*time.Minute).Unix(), f.clk.Now().Add(-10*time.Minute).Unix(), f.clk.Now().Add(-5*time.Minute).Unix()
		})), "invalid_request", "expired"},
		{"key not in the JWKS", f.iss.TokenUnpublished(t, gh(nil)), "invalid_request", "does not publish in its JWKS"},
		{"bad signature", f.iss.TokenWithKeyID(t, f.iss.KeyID(), gh(nil)), "invalid_request", "signature does not verify"},
		{"no jti", f.iss.Token(t, gh(func(c oidcissuer.Claims) { delete(c, "jti") })), "invalid_request", "no jti claim"},
		{"not a JWT", "eyJhbGciOiJub25lIn0.e30.", "invalid_request", "not a signed JWT"},
		{"unknown robot", f.iss.Token(t, gh(nil)), "invalid_target", "acme/nobody"},
	}
	for _, tc := range cases {
		robot := ""
		if tc.name == "unknown robot" {
			robot = "acme/nobody"
		}
		tok, err := f.exchange(t, tc.subject, robot)
		expectRefusal(t, tc.name, tok, err, tc.code, tc.says)
	}
	if n := stranger.JWKSFetches(); n != 0 {
		t.Errorf("an issuer no publisher names was fetched %d times", n)
	}

	// A replayed jti: the first exchange works, the second is refused.
	subject := f.iss.Token(t, gh(nil))
	if _, err := f.exchange(t, subject, ""); err != nil {
		t.Fatal(err)
	}
	tok, err := f.exchange(t, subject, "")
	expectRefusal(t, "replayed jti", tok, err, "invalid_request", "already exchanged")

	// Request errors.
	post := func(form url.Values, ctype string) (int, string, string) {
		r := f.s.Do(t, "POST", "/v1/oidc/token", "", strings.NewReader(form.Encode()), "Content-Type", ctype)
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(r.Body, &oe)
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("refusal without Cache-Control: no-store")
		}
		return r.StatusCode, oe.Error, oe.Description
	}
	ok := url.Values{"grant_type": {client.TokenExchangeGrantType}, "subject_token_type": {client.TokenTypeIDToken}, "subject_token": {f.iss.Token(t, gh(nil))}}
	if st, code, desc := post(ok, "application/json"); st != 400 || code != "invalid_request" || !strings.Contains(desc, "form-encoded") {
		t.Errorf("JSON body: %d %s %s", st, code, desc)
	}
	if e := exchangeAudit(t, f.s); e[len(e)-1].Outcome != chartctl.OutcomeDenied || !strings.Contains(e[len(e)-1].Target, "refused (request)") {
		t.Errorf("a body that is not a form left %+v", e[len(e)-1])
	}
	bad := url.Values{"grant_type": {"client_credentials"}, "subject_token": ok["subject_token"], "subject_token_type": ok["subject_token_type"]}
	if st, code, _ := post(bad, "application/x-www-form-urlencoded"); st != 400 || code != "unsupported_grant_type" {
		t.Errorf("grant_type: %d %s", st, code)
	}
	bad = url.Values{"grant_type": ok["grant_type"], "subject_token": ok["subject_token"], "subject_token_type": {"urn:ietf:params:oauth:token-type:saml2"}}
	if st, code, desc := post(bad, "application/x-www-form-urlencoded"); st != 400 || code != "invalid_request" || !strings.Contains(desc, "subject_token_type") {
		t.Errorf("subject_token_type: %d %s %s", st, code, desc)
	}

	// Every refusal is audited as denied, naming the failed check.
	var denied []string
	for _, e := range exchangeAudit(t, f.s) {
		if e.Outcome == chartctl.OutcomeDenied {
			denied = append(denied, e.Target)
		}
	}
	all := strings.Join(denied, "\n")
	for _, check := range []string{"(claim)", "(audience)", "(unknown_issuer)", "(expired)", "(unknown_key)", "(signature)", "(jti)", "(replayed)", "(request)"} {
		if !strings.Contains(all, check) {
			t.Errorf("no denied audit entry names %s:\n%s", check, all)
		}
	}
	if !regexp.MustCompile(`acme/ci-push via pub_\w+ refused \(claim\) sub=repo:acme/charts:ref:refs/heads/main`).MatchString(all) {
		t.Errorf("the wrong-claim refusal does not name the robot and the token's subject:\n%s", all)
	}
}

// A disabled or expired robot gets no credential.
func TestTokenExchangeRefusesDisabledAndExpiredRobots(t *testing.T) {
	f := setupPublishing(t)
	f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts"})
	ctx := context.Background()
	yes := true
	if _, err := f.s.Store.UpdateRobot(ctx, f.robot.ID, chartctl.RobotUpdate{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	tok, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	expectRefusal(t, "disabled", tok, err, "invalid_request", "disabled")

	no, soon := false, f.clk.Now().Add(5*time.Minute)
	if _, err := f.s.Store.UpdateRobot(ctx, f.robot.ID, chartctl.RobotUpdate{Disabled: &no, ExpiresAt: &soon}); err != nil {
		t.Fatal(err)
	}
	// Before its expiry the credential lives only until it.
	got, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	if err != nil || got.ExpiresIn != 300 {
		t.Fatalf("robot expiring in 5m: %+v, %v", got, err)
	}
	f.clk.Add(6 * time.Minute)
	tok, err = f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	expectRefusal(t, "expired robot", tok, err, "invalid_request", "expired at")
}

// An issuer that resolves to a private address is fetched only when the
// operator allows it; an attacker's iss is never fetched.
func TestTokenExchangePrivateIssuer(t *testing.T) {
	// Named localhost: the server resolves the name, and the guard judges
	// the address it resolves to.
	iss := oidcissuer.NewNamed(t, "localhost")
	withCA := func(srv *server.Server) { srv.Config.OIDCRootCAs = iss.Pool }
	for _, tc := range []struct {
		name  string
		opt   testkit.Option
		allow bool
	}{
		{"guarded", func(*server.Server) {}, false},
		{"--allow-private-upstreams", func(srv *server.Server) { srv.Config.AllowPrivateUpstreams = true }, true},
		{"--oidc-trust-insecure-issuers", func(srv *server.Server) { srv.Config.OIDCTrustInsecureIssuers = []string{iss.URL} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setupPublishingWith(t, iss, withCA, tc.opt)
			f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts"})
			tok, err := f.exchange(t, iss.Token(t, iss.GitHub("acme/charts", testAudience)), "")
			if tc.allow {
				if err != nil {
					t.Fatalf("allowed issuer: %v", err)
				}
				return
			}
			expectRefusal(t, "private issuer", tok, err, "invalid_request", "resolves to a private address")
		})
	}

	// A plain-http issuer: refused as a publisher unless listed.
	plain := oidcissuer.NewHTTP(t)
	s := testkit.StartServer(t)
	mustOK(t, s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme"}))
	f := &publishingFixture{s: s}
	f.mustRobot(t, "ci-push", []string{"acme-*"})
	r := s.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci-push/publishers", s.AdminKey,
		client.PublisherRequest{Issuer: plain.URL, Audience: testAudience, Claims: map[string]string{"project_path": "acme/charts"}})
	expectError(t, r, 400, "invalid_parameter", "issuer")
	if !strings.Contains(string(r.Body), "--oidc-trust-insecure-issuers") {
		t.Errorf("the refusal does not say how to allow it: %s", r.Body)
	}
}

// A key rotation is followed: a token signed with the new key is accepted
// once the JWKS is re-fetched, at most once a minute.
func TestTokenExchangeFollowsKeyRotation(t *testing.T) {
	f := setupPublishing(t)
	f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts"})
	if _, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), ""); err != nil {
		t.Fatal(err)
	}
	old := f.iss.KeyID()
	f.iss.Rotate(t)
	f.clk.Add(10 * time.Second)
	tok, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	expectRefusal(t, "new key within the minute", tok, err, "invalid_request", "does not publish")
	f.clk.Add(time.Minute)
	if _, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), ""); err != nil {
		t.Fatalf("rotated key after a minute: %v", err)
	}
	if n := f.iss.JWKSFetches(); n != 2 {
		t.Errorf("JWKS fetches: %d, want 2", n)
	}
	f.iss.Retire(old)
	f.clk.Add(time.Minute)
	// An unknown kid makes the server read the JWKS again: the retired
	// key is gone from it.
	_, _ = f.exchange(t, f.iss.TokenUnpublished(t, f.iss.GitHub("acme/charts", testAudience)), "")
	tok, err = f.exchange(t, f.iss.TokenWithKeyID(t, old, f.iss.GitHub("acme/charts", testAudience)), "")
	expectRefusal(t, "retired key", tok, err, "invalid_request", "does not publish")
}

// Publishers of several robots match: the caller picks one with robot.
func TestTokenExchangeSeveralRobots(t *testing.T) {
	f := setupPublishing(t)
	f.mustRobot(t, "ci-other", []string{"other-*"})
	f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts"})
	f.mustPublisher(t, "ci-other", map[string]string{"repository_owner": "acme"})
	tok, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	expectRefusal(t, "ambiguous", tok, err, "invalid_request", "pass robot=ORG/NAME")
	got, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "acme/ci-other")
	if err != nil {
		t.Fatal(err)
	}
	cred, err := f.s.Store.ExchangedCredentialByHash(context.Background(), token.Hash(got.AccessToken))
	if err != nil || cred.RobotID == f.robot.ID {
		t.Fatalf("credential %+v, %v: want one of acme/ci-other", cred, err)
	}
}

// The exchange endpoint has its own per-address bucket.
func TestTokenExchangeRateLimit(t *testing.T) {
	f := setupPublishing(t, func(srv *server.Server) {
		srv.Config.OIDCTokenLimit = ratelimit.Limit{N: 2, Window: time.Hour}
	})
	for range 2 {
		tok, err := f.exchange(t, "not.a.token", "")
		expectRefusal(t, "counted refusal", tok, err, "invalid_request", "JWT")
	}
	_, err := f.exchange(t, "not.a.token", "")
	var te *client.TokenExchangeError
	if !errors.As(err, &te) || te.StatusCode != 429 || te.Code != "rate_limit_exceeded" || te.RetryAfter <= 0 {
		t.Fatalf("third exchange: %v (%+v)", err, te)
	}
	// The API's own buckets are untouched.
	mustOK(t, f.s.Do(t, "GET", "/v1/user", f.s.AdminKey, nil))
}

// Owners add, list and remove publishers; others cannot; events and audit
// record it; a removed publisher exchanges nothing more.
func TestPublishersCRUD(t *testing.T) {
	f := setupPublishing(t)
	ctx := context.Background()
	s := f.s
	hook := s.DoJSON(t, "POST", "/v1/organizations/acme/webhooks", s.AdminKey, map[string]any{"url": "https://hooks.example.com/in", "events": []string{"publisher.added", "publisher.removed"}})
	mustOK(t, hook)
	var hk struct{ Data client.Webhook }
	hook.JSON(t, &hk)

	// Validation.
	path := "/v1/organizations/acme/robots/ci-push/publishers"
	for _, tc := range []struct {
		body  client.PublisherRequest
		param string
	}{
		{client.PublisherRequest{Issuer: "https://token.actions.githubusercontent.com", Audience: testAudience, Claims: map[string]string{"ref": "refs/heads/main"}}, "claims"},
		{client.PublisherRequest{Issuer: f.iss.URL, Audience: testAudience, Claims: map[string]string{}}, "claims"},
		{client.PublisherRequest{Issuer: f.iss.URL, Audience: "", Claims: map[string]string{"repository": "acme/charts"}}, "audience"},
		{client.PublisherRequest{Issuer: "ftp://issuer.example.com", Audience: testAudience, Claims: map[string]string{"repository": "acme/charts"}}, "issuer"},
	} {
		expectError(t, s.DoJSON(t, "POST", path, s.AdminKey, tc.body), 400, "invalid_parameter", tc.param)
	}
	gh := s.DoJSON(t, "POST", path, s.AdminKey, client.PublisherRequest{Issuer: "https://token.actions.githubusercontent.com", Audience: testAudience, Claims: map[string]string{"ref": "refs/heads/main"}})
	if !strings.Contains(string(gh.Body), "repository, repository_owner or sub") {
		t.Errorf("the GitHub rule is not explained: %s", gh.Body)
	}
	expectError(t, s.DoJSON(t, "POST", "/v1/organizations/acme/robots/nobody/publishers", s.AdminKey,
		client.PublisherRequest{Issuer: f.iss.URL, Audience: testAudience, Claims: map[string]string{"repository": "acme/charts"}}), 404, "not_found", "")

	p := f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts", "environment": "release"})
	if !strings.HasPrefix(p.ID, "pub_") || p.Issuer != f.iss.URL || p.Audience != testAudience || p.Claims["environment"] != "release" ||
		p.CreatedBy != "admin@example.com" || p.CreatedAt.IsZero() {
		t.Fatalf("publisher %+v", p)
	}
	if pubs, _, err := f.admin.Robots.ListPublishers(ctx, "acme", "ci-push", nil); err != nil || len(pubs) != 1 || pubs[0].ID != p.ID || pubs[0].CreatedBy != "admin@example.com" {
		t.Fatalf("SDK list: %+v, %v", pubs, err)
	}
	list := s.Do(t, "GET", path, s.AdminKey, nil)
	var listed struct {
		Data []client.Publisher
		Meta client.Meta
	}
	list.JSON(t, &listed)
	if len(listed.Data) != 1 || listed.Data[0].ID != p.ID || listed.Meta.Total != 1 {
		t.Fatalf("list: %s", list.Body)
	}

	// A member of the organization who is not an owner, and a stranger.
	member := s.MustUser(t, "member@example.com", false)
	memberKey := s.MustKey(t, member, chartctl.AllScopes...)
	mustOK(t, s.DoJSON(t, "POST", "/v1/teams", s.AdminKey, map[string]string{"name": "acme-devs", "organization": "acme"}))
	mustOK(t, s.DoJSON(t, "POST", "/v1/teams/acme-devs/members", s.AdminKey, map[string]string{"email": "member@example.com", "role": "maintainer"}))
	strangerKey := s.MustKey(t, s.MustUser(t, "stranger@example.com", false), chartctl.AllScopes...)
	expectError(t, s.Do(t, "GET", path, memberKey, nil), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "POST", path, memberKey, client.PublisherRequest{Issuer: f.iss.URL, Audience: testAudience, Claims: map[string]string{"repository": "x/y"}}), 403, "forbidden", "")
	expectError(t, s.Do(t, "GET", path, strangerKey, nil), 404, "not_found", "")
	expectError(t, s.Do(t, "DELETE", path+"/"+p.ID, strangerKey, nil), 404, "not_found", "")
	readOnly := s.MustKey(t, s.Admin, chartctl.ScopeOrgRead)
	expectError(t, s.Do(t, "DELETE", path+"/"+p.ID, readOnly, nil), 403, "forbidden", "")

	if _, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), ""); err != nil {
		t.Fatalf("exchange through the publisher: %v", err)
	}
	if _, err := f.admin.Robots.RemovePublisher(ctx, "acme", "ci-push", p.ID); err != nil {
		t.Fatal(err)
	}
	expectError(t, s.Do(t, "DELETE", path+"/"+p.ID, s.AdminKey, nil), 404, "not_found", "")
	tok, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	expectRefusal(t, "removed publisher", tok, err, "invalid_request", "No trusted publisher")

	// Events for the organization's webhooks, and the audit log.
	deliveries, err := s.Store.Deliveries(ctx, hk.Data.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, d := range deliveries {
		types[string(d.Event.Type)] = true
	}
	if !types["publisher.added"] || !types["publisher.removed"] {
		t.Errorf("webhook deliveries: %v", types)
	}
	for _, action := range []string{"publisher.add", "publisher.remove"} {
		entries, _, err := s.Store.AuditLog(ctx, chartctl.AuditFilter{Action: action, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ok bool
		for _, e := range entries {
			if e.Outcome == chartctl.OutcomeSuccess && e.Target == "acme/ci-push/"+p.ID && e.Organization == "acme" {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no successful %s audit entry for %s", action, p.ID)
		}
	}
}

// The exchanged credential acts as its robot (it pushes where the robot
// may, nowhere else) and stops after 15 minutes.
func TestExchangedCredentialPushesAndExpires(t *testing.T) {
	f := setupPublishing(t)
	f.mustPublisher(t, "ci-push", map[string]string{"repository": "acme/charts", "ref": "refs/heads/main"})
	tok, err := f.exchange(t, f.iss.Token(t, f.iss.GitHub("acme/charts", testAudience)), "")
	if err != nil {
		t.Fatal(err)
	}
	chart := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	if r := f.s.Upload(t, "acme-charts", tok.AccessToken, chart, ""); r.StatusCode != 200 {
		t.Fatalf("push with the exchanged credential: %d %s", r.StatusCode, r.Body)
	}
	// other-charts is not among the robot's patterns.
	expectError(t, f.s.Upload(t, "other-charts", tok.AccessToken, chart, ""), 404, "not_found", "")
	// helm cm-push with the robot's user name and the credential as its
	// password, and a Helm index read with it.
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "api", Version: "1.0.0"})})
	if r := f.s.Do(t, "POST", "/helm/api/acme-charts/charts", "", bytes.NewReader(body), "Content-Type", ctype,
		"Authorization", basic("robot$acme+ci-push", tok.AccessToken)); r.StatusCode != 201 {
		t.Fatalf("ChartMuseum push with the exchanged credential: %d %s", r.StatusCode, r.Body)
	}
	if r := f.s.Do(t, "GET", "/helm/acme-charts/index.yaml", "", nil, "Authorization", basic("robot$acme+ci-push", tok.AccessToken)); r.StatusCode != 200 ||
		!strings.Contains(string(r.Body), "api") {
		t.Fatalf("Helm index with the exchanged credential: %d %s", r.StatusCode, r.Body)
	}

	f.clk.Add(15*time.Minute - time.Second)
	mustOK(t, f.s.Do(t, "GET", "/v1/repositories/acme-charts/charts/web", tok.AccessToken, nil))
	f.clk.Add(2 * time.Second)
	r := f.s.Upload(t, "acme-charts", tok.AccessToken, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.1.0"}), "")
	expectError(t, r, 401, "unauthorized", "")
	expectError(t, f.s.Do(t, "GET", "/v1/repositories/acme-charts/charts/web", tok.AccessToken, nil), 401, "unauthorized", "")
}
