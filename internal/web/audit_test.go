package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/server"
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

// TestWebhooksPage: a maintainer adds a webhook on the dashboard, sees its
// secret once and the webhook listed; the repository page links to it and
// shows usage and downloads; a member may not open it.
func TestWebhooksPage(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, func(s *server.Server) { s.Config.AllowPrivateWebhooks = true })
	env.MustUserWithPassword(t, "admin2@example.com", "correct horse battery", true)
	env.MustRepo(t, "apps", "")
	b := env.NewBrowser(t)
	b.SignIn(t, "admin2@example.com", "correct horse battery")
	repo := b.Get(t, "/repositories/apps")
	if repo.StatusCode != 200 || !strings.Contains(repo.Body, "Usage: 0 B, 0 versions") || !strings.Contains(repo.Body, `href="/repositories/apps/webhooks"`) {
		t.Fatalf("repository page: %d %s", repo.StatusCode, repo.Body)
	}
	page := b.Get(t, "/repositories/apps/webhooks")
	if page.StatusCode != 200 || !strings.Contains(page.Body, "No webhooks yet") {
		t.Fatalf("webhooks page: %d %s", page.StatusCode, page.Body)
	}
	bad := b.PostForm(t, "/repositories/apps/webhooks", url.Values{"csrf_token": {page.CSRF(t)}, "url": {"ftp://x"}, "events": {"chart.pushed"}})
	if bad.StatusCode != 400 || !strings.Contains(bad.Body, "absolute http or https URL") {
		t.Fatalf("bad url: %d %s", bad.StatusCode, bad.Body)
	}
	r := b.PostForm(t, "/repositories/apps/webhooks", url.Values{"csrf_token": {page.CSRF(t)}, "url": {"http://127.0.0.1:9/hook"}, "events": {"chart.pushed", "chart.deleted"}})
	if r.StatusCode != 200 || !strings.Contains(r.Body, "whsec_") || !strings.Contains(r.Body, "chart.pushed, chart.deleted") {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	again := b.Get(t, "/repositories/apps/webhooks")
	if strings.Contains(again.Body, "whsec_") || !strings.Contains(again.Body, "http://127.0.0.1:9/hook") {
		t.Fatalf("the secret shows once: %s", again.Body)
	}
	entries, _, err := env.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: "webhook.create"})
	if err != nil || len(entries) != 1 || entries[0].Actor.Email != "admin2@example.com" {
		t.Fatalf("audit %v %+v", err, entries)
	}

	env.MustUserWithPassword(t, "dev@example.com", "correct horse battery", false)
	dev := env.NewBrowser(t)
	dev.SignIn(t, "dev@example.com", "correct horse battery")
	if p := dev.Get(t, "/repositories/apps/webhooks"); p.StatusCode != 404 {
		t.Fatalf("a stranger: %d", p.StatusCode)
	}
}
