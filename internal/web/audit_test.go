package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
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
	// The webhook made is audited as a success; the refused form (bad URL)
	// as failed.
	entries, _, err := env.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: "webhook.create"})
	if err != nil || len(entries) != 2 || entries[0].Outcome != chartctl.OutcomeSuccess || entries[0].Actor.Email != "admin2@example.com" ||
		entries[1].Outcome != chartctl.OutcomeFailed {
		t.Fatalf("audit %v %+v", err, entries)
	}

	env.MustUserWithPassword(t, "dev@example.com", "correct horse battery", false)
	dev := env.NewBrowser(t)
	dev.SignIn(t, "dev@example.com", "correct horse battery")
	if p := dev.Get(t, "/repositories/apps/webhooks"); p.StatusCode != 404 {
		t.Fatalf("a stranger: %d", p.StatusCode)
	}
}

// TestWebhookPagesEveryScope: an organization's owner and a server admin
// manage webhooks on the dashboard like a maintainer does a repository's:
// create (the secret once), ping, the deliveries page, redeliver, delete
// after a confirmation — every change through the application layer, so
// audited as the signed-in user. A member of the organization and a
// non-admin are refused; a form without its CSRF token is refused.
func TestWebhookPagesEveryScope(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{}, func(s *server.Server) { s.Config.AllowPrivateWebhooks = true })
	env.MustUserWithPassword(t, "owner@example.com", "correct horse battery", false)
	env.MustUserWithPassword(t, "member@example.com", "correct horse battery", false)
	env.MustUserWithPassword(t, "root@example.com", "correct horse battery", true)
	owner := env.NewBrowser(t)
	owner.SignIn(t, "owner@example.com", "correct horse battery")
	// The owner creates the organization (and so owns it) and a team with
	// a plain member.
	ownerUser, err := env.Store.UserByEmail(t.Context(), "owner@example.com")
	if err != nil {
		t.Fatal(err)
	}
	key := env.MustKey(t, ownerUser, chartctl.AllScopes...)
	for _, r := range []struct {
		path string
		body any
	}{
		{"/v1/organizations", map[string]string{"name": "acme"}},
		{"/v1/teams", map[string]string{"name": "ops", "organization": "acme"}},
		{"/v1/teams/ops/members", map[string]string{"email": "member@example.com", "role": "member"}},
	} {
		if resp := env.DoJSON(t, "POST", r.path, key, r.body); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", r.path, resp.StatusCode, resp.Body)
		}
	}

	for _, sc := range []struct {
		who     *oauthtest.Browser
		path    string
		email   string
		apiKeys bool
	}{
		{owner, "/organizations/acme/webhooks", "owner@example.com", false},
		{nil, "/admin/webhooks", "root@example.com", true},
	} {
		b := sc.who
		if b == nil {
			b = env.NewBrowser(t)
			b.SignIn(t, sc.email, "correct horse battery")
		}
		page := b.Get(t, sc.path)
		if page.StatusCode != 200 || !strings.Contains(page.Body, "No webhooks yet") || strings.Contains(page.Body, `value="api_key.created"`) != sc.apiKeys {
			t.Fatalf("%s: %d %s", sc.path, page.StatusCode, page.Body)
		}
		if r := b.PostForm(t, sc.path, url.Values{"url": {"http://127.0.0.1:9/hook"}, "events": {"*"}}); r.StatusCode != 403 {
			t.Fatalf("%s without CSRF: %d", sc.path, r.StatusCode)
		}
		r := b.PostForm(t, sc.path, url.Values{"csrf_token": {page.CSRF(t)}, "url": {"http://127.0.0.1:9/hook"}, "events": {"chart.pushed"}})
		if r.StatusCode != 200 || !strings.Contains(r.Body, "whsec_") {
			t.Fatalf("%s create: %d %s", sc.path, r.StatusCode, r.Body)
		}
		ws, err := env.Store.Webhooks(t.Context(), "", map[bool]string{true: "", false: "acme"}[sc.apiKeys])
		if err != nil || len(ws) != 1 {
			t.Fatalf("%s: stored webhooks %v %+v", sc.path, err, ws)
		}
		id := ws[0].ID
		csrf := page.CSRF(t)
		if r := b.PostForm(t, "/webhooks/"+id+"/ping", url.Values{"csrf_token": {csrf}}); r.StatusCode != 303 || r.Header.Get("Location") != "/webhooks/"+id+"?done=ping" {
			t.Fatalf("ping: %d %s", r.StatusCode, r.Header.Get("Location"))
		}
		detail := b.Get(t, "/webhooks/"+id+"?done=ping")
		if detail.StatusCode != 200 || !strings.Contains(detail.Body, `data-event="ping"`) || !strings.Contains(detail.Body, "A ping was queued") {
			t.Fatalf("deliveries page: %d %s", detail.StatusCode, detail.Body)
		}
		ds, err := env.Store.Deliveries(t.Context(), id, 0)
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries %v %+v", err, ds)
		}
		if r := b.PostForm(t, "/webhooks/"+id+"/deliveries/"+ds[0].ID+"/redeliver", url.Values{"csrf_token": {csrf}}); r.StatusCode != 303 {
			t.Fatalf("redeliver: %d %s", r.StatusCode, r.Body)
		}
		if confirm := b.Get(t, "/webhooks/"+id+"/delete"); confirm.StatusCode != 200 || !strings.Contains(confirm.Body, "Delete the webhook to http://127.0.0.1:9/hook?") {
			t.Fatalf("confirm: %d %s", confirm.StatusCode, confirm.Body)
		}
		if r := b.PostForm(t, "/webhooks/"+id+"/delete", url.Values{"csrf_token": {csrf}}); r.StatusCode != 303 || r.Header.Get("Location") != sc.path+"?deleted=1" {
			t.Fatalf("delete: %d %s", r.StatusCode, r.Header.Get("Location"))
		}
		if after := b.Get(t, sc.path+"?deleted=1"); !strings.Contains(after.Body, "The webhook was deleted") || !strings.Contains(after.Body, "No webhooks yet") {
			t.Fatalf("after delete: %s", after.Body)
		}
		var actions []string
		entries, _, err := env.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: "webhook", Actor: sc.email})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Outcome == chartctl.OutcomeSuccess && e.Actor.CredentialKind == chartctl.CredentialSession {
				actions = append(actions, e.Action)
			}
		}
		if strings.Join(actions, " ") != "webhook.delete webhook.redeliver webhook.ping webhook.create" {
			t.Fatalf("%s audit: %v", sc.path, actions)
		}
	}

	// A member of the organization sees it but may not manage its
	// webhooks; a non-admin may not manage the server's.
	member := env.NewBrowser(t)
	member.SignIn(t, "member@example.com", "correct horse battery")
	if p := member.Get(t, "/organizations/acme/webhooks"); p.StatusCode != 403 || !strings.Contains(p.Body, "owner role") {
		t.Fatalf("member: %d %s", p.StatusCode, p.Body)
	}
	if p := member.Get(t, "/organizations/acme"); strings.Contains(p.Body, "/organizations/acme/webhooks") {
		t.Fatal("the organization page links webhooks for a member")
	}
	if p := owner.Get(t, "/organizations/acme"); !strings.Contains(p.Body, `href="/organizations/acme/webhooks"`) {
		t.Fatal("the organization page does not link webhooks for its owner")
	}
	if p := owner.Get(t, "/admin/webhooks"); p.StatusCode != 403 {
		t.Fatalf("non-admin on server webhooks: %d", p.StatusCode)
	}
	if p := owner.Get(t, "/webhooks/wh_nope"); p.StatusCode != 404 {
		t.Fatalf("unknown webhook: %d", p.StatusCode)
	}
}

// Regression (N7, third review): a write refused on the dashboard left no
// audit entry, and none with the organization of the resource, so the
// organization's owners never saw it. A member's refused deletion of the
// organization's repository and role change in its team, sent from the
// dashboard's forms, are in the owner's audit log, denied, with the
// member as actor.
func TestDashboardRefusalsAuditedForOrganization(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	owner := env.MustUserWithPassword(t, "owner@example.com", "owner password!", false)
	ownerKey := env.MustKey(t, owner, chartctl.AllScopes...)
	env.MustUserWithPassword(t, "member@example.com", "member password!", false)
	var memberID string
	for _, r := range []*testkit.Response{
		env.DoJSON(t, "POST", "/v1/organizations", ownerKey, map[string]string{"name": "acme"}),
		env.DoJSON(t, "POST", "/v1/repositories", ownerKey, map[string]string{"name": "acme-apps", "organization": "acme"}),
		env.DoJSON(t, "POST", "/v1/teams", ownerKey, map[string]string{"name": "acme-devs", "organization": "acme"}),
		env.DoJSON(t, "POST", "/v1/teams/acme-devs/members", ownerKey, map[string]string{"email": "member@example.com", "role": "member"}),
	} {
		if r.StatusCode != 200 {
			t.Fatalf("setup: %d %s", r.StatusCode, r.Body)
		}
		var out struct{ Data struct{ ID string } }
		r.JSON(t, &out)
		memberID = out.Data.ID
	}
	b := env.NewBrowser(t)
	b.SignIn(t, "member@example.com", "member password!")
	csrf := b.Get(t, "/repositories/acme-apps").CSRF(t)
	if r := b.PostForm(t, "/repositories/acme-apps/delete", url.Values{"csrf_token": {csrf}, "confirm": {"acme-apps"}}); r.StatusCode != 403 {
		t.Fatalf("member deletes the organization's repository: %d", r.StatusCode)
	}
	if r := b.PostForm(t, "/teams/acme-devs/members/"+memberID+"/role", url.Values{"csrf_token": {csrf}, "role": {"owner"}}); r.StatusCode != 403 {
		t.Fatalf("member makes themself owner: %d", r.StatusCode)
	}
	r := env.Do(t, "GET", "/v1/audit?limit=100", ownerKey, nil)
	if r.StatusCode != 200 {
		t.Fatalf("owner's audit: %d %s", r.StatusCode, r.Body)
	}
	var log struct {
		Data []struct {
			Action, Target, Outcome string
			Actor                   struct{ Email *string }
		}
	}
	r.JSON(t, &log)
	var got []string
	for _, e := range log.Data {
		if e.Outcome == "denied" && e.Actor.Email != nil {
			got = append(got, e.Action+" "+e.Target+" "+*e.Actor.Email)
		}
	}
	want := []string{
		"team.member_role_change /teams/acme-devs/members/" + memberID + "/role member@example.com",
		"repository.delete /repositories/acme-apps/delete member@example.com",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the owner's denied entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
