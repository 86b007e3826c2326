package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/server"
)

// signInFrom posts the sign-in form as if from addr (the test server
// trusts X-Forwarded-For from loopback) and returns the status.
func signInFrom(t *testing.T, b *oauthtest.Browser, env *oauthtest.Env, addr, email, password string) int {
	t.Helper()
	csrf := b.Get(t, "/signin").CSRF(t)
	form := url.Values{"csrf_token": {csrf}, "email": {email}, "password": {password}}
	req, err := http.NewRequest(http.MethodPost, env.URL+"/signin", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Regression (sign-in lockout from anywhere): ten failures from one
// address locked the account for everyone. Now they block that address
// (for that account), and the user signs in from elsewhere.
func TestFailuresElsewhereDoNotLockUserOut(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, testkit.Option(func(s *server.Server) {
		s.Config.TrustedProxies = clientip.Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	}))
	env.MustUserWithPassword(t, "victim@example.com", "correct horse battery", false)
	attacker := env.NewBrowser(t)
	for range 10 {
		if s := signInFrom(t, attacker, env, "203.0.113.7", "victim@example.com", "guess"); s != http.StatusUnauthorized {
			t.Fatalf("wrong password from the attacker: %d", s)
		}
	}
	if s := signInFrom(t, attacker, env, "203.0.113.7", "victim@example.com", "correct horse battery"); s != http.StatusTooManyRequests {
		t.Errorf("the attacker's address after 10 failures: %d, want 429", s)
	}
	user := env.NewBrowser(t)
	if s := signInFrom(t, user, env, "198.51.100.20", "victim@example.com", "correct horse battery"); s != http.StatusSeeOther {
		t.Errorf("the user from another address after 10 failures elsewhere: %d, want 303", s)
	}
}

// trustLoopbackProxy makes the test server believe X-Forwarded-For from
// loopback, so a test can sign in "from" many addresses.
func trustLoopbackProxy(s *server.Server) {
	s.Config.TrustedProxies = clientip.Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

// Regression (N10, third review): 100 failures spread over 10 addresses
// still locked the account everywhere for 15 minutes. Now only an
// (account, address) pair and an address over every account are refused;
// an account many addresses fail on is slowed (a short delay), never
// refused, so its owner signs in from an address with no failures.
func TestDistributedFailuresDoNotLockAccount(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, testkit.Option(trustLoopbackProxy))
	env.MustUserWithPassword(t, "victim@example.com", "correct horse battery", false)
	env.MustUserWithPassword(t, "bystander@example.com", "another good password", false)
	attacker := env.NewBrowser(t)
	for a := range 10 {
		addr := fmt.Sprintf("203.0.113.%d", a+1)
		for range 10 {
			if s := signInFrom(t, attacker, env, addr, "victim@example.com", "guess"); s != http.StatusUnauthorized {
				t.Fatalf("wrong password from %s: %d", addr, s)
			}
		}
	}
	// Each guessing address is refused: for this account, and (the
	// per-address throttle over every account) for any other.
	if s := signInFrom(t, attacker, env, "203.0.113.1", "victim@example.com", "correct horse battery"); s != http.StatusTooManyRequests {
		t.Errorf("a guessing address with the right password: %d, want 429", s)
	}
	if s := signInFrom(t, attacker, env, "203.0.113.2", "bystander@example.com", "another good password"); s != http.StatusTooManyRequests {
		t.Errorf("a guessing address on another account: %d, want 429", s)
	}
	// The owner, from an eleventh address, signs in (after the delay).
	user := env.NewBrowser(t)
	if s := signInFrom(t, user, env, "198.51.100.20", "victim@example.com", "correct horse battery"); s != http.StatusSeeOther {
		t.Errorf("the owner from a fresh address after 100 failures from 10 others: %d, want 303", s)
	}
	// A wrong password from a fresh address is still only a failure.
	if s := signInFrom(t, env.NewBrowser(t), env, "198.51.100.21", "victim@example.com", "guess"); s != http.StatusUnauthorized {
		t.Errorf("a fresh address's wrong password: %d, want 401", s)
	}
}

// The sign-in throttles hold on every replica: two servers sharing one
// PostgreSQL rate-limit backend (as `serve --database-url` wires it) count
// one address's failures together, and the account stays open to other
// addresses on both.
func TestSignInThrottleSharedByReplicas(t *testing.T) {
	dbURL := pgtest.Shared(t).NewDatabase(t)
	db, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var replicas []*oauthtest.Env
	for range 2 {
		env := oauthtest.Start(t, oauthtest.Config{RateLimits: db.RateLimits(nil)}, testkit.Option(trustLoopbackProxy))
		env.MustUserWithPassword(t, "victim@example.com", "correct horse battery", false)
		replicas = append(replicas, env)
	}
	a, b := replicas[0], replicas[1]
	for i := range 10 {
		// Alternating replicas: neither sees all ten on its own.
		env := replicas[i%2]
		if s := signInFrom(t, env.NewBrowser(t), env, "203.0.113.7", "victim@example.com", "guess"); s != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, s)
		}
	}
	for _, env := range []*oauthtest.Env{a, b} {
		if s := signInFrom(t, env.NewBrowser(t), env, "203.0.113.7", "victim@example.com", "correct horse battery"); s != http.StatusTooManyRequests {
			t.Errorf("the guessing address after 10 failures over two replicas: %d, want 429", s)
		}
		if s := signInFrom(t, env.NewBrowser(t), env, "198.51.100.20", "victim@example.com", "correct horse battery"); s != http.StatusSeeOther {
			t.Errorf("the owner from another address: %d, want 303", s)
		}
	}
}
