package oauth_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// Regression (N5, third review): every approval started a new grant, and
// each grant had a fresh global budget, so approving in a loop (30 in a
// fifth of a second) multiplied the rate limit without end. Now a user
// holds at most chartctl.MaxOAuthGrants grants per client, the oldest
// revoked first with its tokens, and every access token a user's grants to
// one client carry charges one global bucket.
func TestGrantsPerClientBoundedAndShareOneBudget(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, testkit.Option(func(s *server.Server) {
		s.Config.GlobalLimit = ratelimit.Limit{N: 50, Window: time.Hour}
	}))
	env.MustUserWithPassword(t, userEmail, userPassword, false)
	app := env.MustClient(t, "Deploy Bot", true, appRedirect)
	other := env.MustClient(t, "Other App", true, appRedirect)
	b := signedIn(t, env)

	grant := func(clientID string) tokenResult {
		t.Helper()
		code, verifier := getCode(t, env, b, clientID, appRedirect, "repo:read")
		r := exchange(t, env, clientID, code, appRedirect, verifier)
		if r.status != http.StatusOK {
			t.Fatalf("exchange: %d %v", r.status, r.body)
		}
		// Each grant is a moment later than the last, as approvals are.
		env.Clock.Advance(time.Second)
		return r
	}
	otherGrant := grant(other.ClientID)
	var grants []tokenResult
	for range chartctl.MaxOAuthGrants + 2 {
		grants = append(grants, grant(app.ClientID))
	}

	// The two oldest grants are revoked, access and refresh token alike;
	// the newest ten and the other client's grant still work.
	for i, g := range grants {
		status := apiStatus(t, env, g.str("access_token"))
		if i < 2 {
			if status != http.StatusUnauthorized {
				t.Errorf("grant %d of %d: API %d, want 401 (revoked as the oldest)", i+1, len(grants), status)
			}
			wantOAuthError(t, refresh(t, env, app.ClientID, g.str("refresh_token"), ""), 400, "invalid_grant")
			continue
		}
		if status != http.StatusOK {
			t.Errorf("grant %d of %d: API %d, want 200", i+1, len(grants), status)
		}
	}
	if s := apiStatus(t, env, otherGrant.str("access_token")); s != http.StatusOK {
		t.Errorf("the other client's grant: API %d, want 200", s)
	}

	// The live grants of one client draw on one budget: what one token
	// used, the next one's headers count.
	used := func(tok string) int {
		t.Helper()
		r := env.Do(t, http.MethodGet, "/v1/repositories", tok, nil)
		n, err := strconv.Atoi(r.Header.Get("X-RateLimit-Used"))
		if r.StatusCode != http.StatusOK || err != nil || r.Header.Get("X-RateLimit-Resource") != "global" {
			t.Fatalf("API: %d, X-RateLimit-Used %q", r.StatusCode, r.Header.Get("X-RateLimit-Used"))
		}
		return n
	}
	last := used(grants[2].str("access_token"))
	for _, g := range grants[3:] {
		n := used(g.str("access_token"))
		if n != last+1 {
			t.Fatalf("a grant of the same client started at %d used (the previous request left %d): a budget of its own", n, last)
		}
		last = n
	}
	// A refresh keeps the budget too, and the other client's grant has
	// its own.
	fresh := refresh(t, env, app.ClientID, grants[len(grants)-1].str("refresh_token"), "")
	if n := used(fresh.str("access_token")); n != last+1 {
		t.Errorf("refreshed token: used %d, want %d", n, last+1)
	}
	if n := used(otherGrant.str("access_token")); n > 3 {
		t.Errorf("the other client's grant shares the budget: used %d", n)
	}
	// Exhausted, every grant of the client is refused with 429.
	for range 60 {
		env.Do(t, http.MethodGet, "/v1/repositories", grants[4].str("access_token"), nil)
	}
	for _, g := range grants[2:] {
		if r := env.Do(t, http.MethodGet, "/v1/repositories", g.str("access_token"), nil); r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a grant after its client's budget ran out: %d", r.StatusCode)
		}
	}
}
