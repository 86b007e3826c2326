package web_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
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
