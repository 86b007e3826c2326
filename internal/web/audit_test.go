package web_test

import (
	"net/url"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// TestSignInsAndDashboardKeysAudited: failed and successful sign-ins are
// audit entries, and a key created on the dashboard is audited like one
// created over the API.
func TestSignInsAndDashboardKeysAudited(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	env.MustUserWithPassword(t, "dev@example.com", "correct horse battery", false)
	b := env.NewBrowser(t)
	page := b.Get(t, "/signin")
	if r := b.PostForm(t, "/signin", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"dev@example.com"}, "password": {"wrong password"}, "return_to": {"/"}}); r.StatusCode != 401 {
		t.Fatalf("wrong password: %d", r.StatusCode)
	}
	b.SignIn(t, "dev@example.com", "correct horse battery")
	keys := b.Get(t, "/settings/api-keys/new")
	if r := b.PostForm(t, "/settings/api-keys", url.Values{"csrf_token": {keys.CSRF(t)}, "name": {"laptop"}, "scopes": {"repo:read"}, "expiry": {"30"}}); r.StatusCode != 200 {
		t.Fatalf("create key: %d %s", r.StatusCode, r.Body)
	}
	entries, _, err := env.Store.AuditLog(t.Context(), chartctl.AuditFilter{})
	if err != nil || len(entries) != 3 {
		t.Fatalf("audit %v %+v", err, entries)
	}
	key, ok, failed := entries[0], entries[1], entries[2]
	if failed.Action != "session.signin" || failed.Outcome != chartctl.OutcomeFailed || failed.Target != "dev@example.com" || failed.Actor.ClientIP == "" {
		t.Fatalf("failed sign-in %+v", failed)
	}
	if ok.Action != "session.signin" || ok.Outcome != chartctl.OutcomeSuccess || ok.Actor.Email != "dev@example.com" || ok.Actor.CredentialKind != "session" {
		t.Fatalf("sign-in %+v", ok)
	}
	if key.Action != "api_key.create" || key.Outcome != chartctl.OutcomeSuccess || key.Actor.Email != "dev@example.com" {
		t.Fatalf("key %+v", key)
	}
}
