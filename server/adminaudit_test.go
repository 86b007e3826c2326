package server_test

import (
	"bytes"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
)

// adminRoute is one server-admin endpoint: the request to send, and the
// audit action it must leave.
type adminRoute struct {
	route  string // "METHOD pattern", as the route table has it
	path   func() string
	body   string
	action string
}

// isAdminPath tells the server-admin endpoints apart in the route table.
func isAdminPath(p string) bool {
	return strings.HasPrefix(p, "/v1/admin/") || p == "/v1/users" || strings.HasPrefix(p, "/v1/users/") || p == "/v1/oauth-clients"
}

// Regression (N7, third review): registering an OAuth client and
// downloading a full backup left no audit entry, succeeded or refused.
// Every server-admin endpoint of the full server (the authorization
// server mounted) is listed here; each is sent as a non-admin with every
// scope (refused: a denied entry naming the caller) and as the admin (a
// success entry). A new admin endpoint missing here fails the test.
func TestEveryAdminActionIsAudited(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	dev := env.MustUser(t, "dev@example.com", false)
	devKey := env.MustKey(t, dev, chartctl.AllScopes...)
	var userKeyID, scimTokenID string
	fixed := func(p string) func() string { return func() string { return p } }
	routes := []adminRoute{
		{"POST /v1/users", fixed("/v1/users"), `{"email":"u2@example.com"}`, "user.create"},
		{"PATCH /v1/users/:email", fixed("/v1/users/u2@example.com"), `{"admin":false}`, "user.update"},
		{"POST /v1/users/:email/api-keys", fixed("/v1/users/u2@example.com/api-keys"), `{"name":"ci","scopes":["repo:read"]}`, "api_key.create"},
		{"DELETE /v1/users/:email/api-keys/:id", func() string { return "/v1/users/u2@example.com/api-keys/" + userKeyID }, "", "api_key.revoke"},
		{"POST /v1/admin/webhooks", fixed("/v1/admin/webhooks"), `{"url":"https://hooks.example/h","events":["*"],"active":false}`, "webhook.create"},
		{"POST /v1/oauth-clients", fixed("/v1/oauth-clients"), `{"name":"Deploy Bot","redirect_uris":["https://app.example/cb"]}`, "oauth_client.create"},
		{"GET /v1/admin/backup", fixed("/v1/admin/backup"), "", "backup.download"},
		{"POST /v1/admin/verify", fixed("/v1/admin/verify"), "", "backup.verify"},
		{"POST /v1/admin/scim-tokens", fixed("/v1/admin/scim-tokens"), `{"name":"okta"}`, "scim_token.create"},
		{"DELETE /v1/admin/scim-tokens/:id", func() string { return "/v1/admin/scim-tokens/" + scimTokenID }, "", "scim_token.revoke"},
		{"DELETE /v1/users/:email", fixed("/v1/users/u2@example.com"), "", "user.delete"},
	}
	// Admin reads that are not actions: lists, which change and export
	// nothing. (The backup, which exports everything, is audited.)
	reads := map[string]bool{"GET /v1/users": true, "GET /v1/users/:email/api-keys": true, "GET /v1/admin/webhooks": true, "GET /v1/admin/scim-tokens": true}

	var table, listed []string
	for _, r := range env.Routes() {
		key := r.Method + " " + r.Path
		if isAdminPath(r.Path) && r.Method != http.MethodHead && r.Method != "echo_route_not_found" && !reads[key] {
			table = append(table, key)
		}
	}
	for _, r := range routes {
		listed = append(listed, r.route)
	}
	sort.Strings(table)
	sort.Strings(listed)
	if strings.Join(table, "\n") != strings.Join(listed, "\n") {
		t.Fatalf("admin routes and the audited list differ:\nroute table:\n%s\n\nlisted here:\n%s", strings.Join(table, "\n"), strings.Join(listed, "\n"))
	}

	for _, a := range routes {
		method, _, _ := strings.Cut(a.route, " ")
		send := func(tok string) *testkit.Response {
			if a.body == "" {
				return env.Do(t, method, a.path(), tok, nil)
			}
			return env.Do(t, method, a.path(), tok, bytes.NewReader([]byte(a.body)), "Content-Type", "application/json")
		}
		// A non-admin with every scope: refused and audited as denied,
		// with who tried.
		r := send(devKey)
		if r.StatusCode != http.StatusForbidden {
			t.Fatalf("%s as a non-admin: %d %s", a.route, r.StatusCode, r.Body)
		}
		e := lastAudit(t, env.Server)
		if e.Action != a.action || e.Outcome != "denied" || e.Actor.Email == nil || *e.Actor.Email != "dev@example.com" {
			t.Fatalf("%s refused left %+v (actor %v)", a.route, e, e.Actor)
		}
		// The admin: done, and audited as a success.
		r = send(env.AdminKey)
		if r.StatusCode/100 != 2 {
			t.Fatalf("%s as the admin: %d %s", a.route, r.StatusCode, r.Body)
		}
		e = lastAudit(t, env.Server)
		if e.Action != a.action || e.Outcome != "success" || e.Actor.Email == nil || *e.Actor.Email != "admin@example.com" ||
			e.RequestID != r.Header.Get("X-Request-Id") || e.Target == "" {
			t.Fatalf("%s left %+v (actor %v)", a.route, e, e.Actor)
		}
		if a.route == "POST /v1/users/:email/api-keys" {
			var out envelope[client.APIKey]
			r.JSON(t, &out)
			userKeyID = out.Data.ID
		}
		if a.route == "POST /v1/admin/scim-tokens" {
			var out envelope[client.SCIMToken]
			r.JSON(t, &out)
			scimTokenID = out.Data.ID
		}
	}
}

// Regression (N7, third review): a refused write against an
// organization's resource recorded no organization, so the entry was
// invisible to the organization's owners. A member's refused writes to the
// organization's repository, team, quota and webhooks, and an outsider's
// attempt on a repository it cannot see, are all in the owner's
// /v1/audit, as denied (or failed, for the 404) with the caller.
func TestRefusalsInOrganizationVisibleToOwners(t *testing.T) {
	s := testkit.StartServer(t)
	owner := s.MustUser(t, "owner@example.com", false)
	ownerKey := s.MustKey(t, owner, chartctl.AllScopes...)
	member := s.MustUser(t, "member@example.com", false)
	memberKey := s.MustKey(t, member, chartctl.AllScopes...)
	outsider := s.MustUser(t, "outsider@example.com", false)
	outsiderKey := s.MustKey(t, outsider, chartctl.AllScopes...)
	for _, r := range []*testkit.Response{
		s.DoJSON(t, "POST", "/v1/organizations", ownerKey, map[string]string{"name": "acme"}),
		s.DoJSON(t, "POST", "/v1/repositories", ownerKey, map[string]string{"name": "acme-apps", "organization": "acme"}),
		s.DoJSON(t, "POST", "/v1/teams", ownerKey, map[string]string{"name": "acme-devs", "organization": "acme"}),
		s.DoJSON(t, "POST", "/v1/teams/acme-devs/members", ownerKey, map[string]string{"email": "member@example.com", "role": "member"}),
	} {
		if r.StatusCode != 200 {
			t.Fatalf("setup: %d %s", r.StatusCode, r.Body)
		}
	}
	chart := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	refusals := []struct {
		name, action, target string
		do                   func() *testkit.Response
		status               int
	}{
		{"delete repository", "repository.delete", "/v1/repositories/acme-apps", func() *testkit.Response {
			return s.Do(t, "DELETE", "/v1/repositories/acme-apps", memberKey, nil)
		}, 403},
		{"push chart", "chart.push", "/v1/repositories/acme-apps/charts", func() *testkit.Response { return s.Upload(t, "acme-apps", memberKey, chart, "") }, 403},
		{"create repository in the organization", "repository.create", "/v1/repositories", func() *testkit.Response {
			return s.DoJSON(t, "POST", "/v1/repositories", memberKey, map[string]string{"name": "sneaky", "organization": "acme"})
		}, 403},
		{"create team in the organization", "team.create", "/v1/teams", func() *testkit.Response {
			return s.DoJSON(t, "POST", "/v1/teams", memberKey, map[string]string{"name": "sneaky", "organization": "acme"})
		}, 403},
		{"add team member", "team.member_add", "/v1/teams/acme-devs/members", func() *testkit.Response {
			return s.DoJSON(t, "POST", "/v1/teams/acme-devs/members", memberKey, map[string]string{"email": "friend@example.com", "role": "owner"})
		}, 403},
		{"set organization quota", "quota.set", "/v1/organizations/acme/quota", func() *testkit.Response {
			return s.DoJSON(t, "PUT", "/v1/organizations/acme/quota", memberKey, map[string]int{"max_versions": 1})
		}, 403},
		{"add organization webhook", "webhook.create", "/v1/organizations/acme/webhooks", func() *testkit.Response {
			return s.DoJSON(t, "POST", "/v1/organizations/acme/webhooks", memberKey, map[string]any{"url": "https://hooks.example/h", "events": []string{"*"}})
		}, 403},
		{"outsider deletes a repository it cannot see", "repository.delete", "/v1/repositories/acme-apps", func() *testkit.Response {
			return s.Do(t, "DELETE", "/v1/repositories/acme-apps", outsiderKey, nil)
		}, 404},
	}
	for _, rf := range refusals {
		if r := rf.do(); r.StatusCode != rf.status {
			t.Fatalf("%s: %d %s, want %d", rf.name, r.StatusCode, r.Body, rf.status)
		}
	}
	r := s.Do(t, "GET", "/v1/audit?limit=100", ownerKey, nil)
	var env envelope[[]client.AuditEntry]
	r.JSON(t, &env)
	if r.StatusCode != 200 {
		t.Fatalf("owner's audit: %d %s", r.StatusCode, r.Body)
	}
	seen := map[string]bool{}
	for _, e := range env.Data {
		if e.Outcome != "success" && e.Actor.Email != nil {
			seen[e.Action+" "+e.Target+" "+e.Outcome+" "+*e.Actor.Email] = true
		}
	}
	for _, rf := range refusals {
		who, outcome := "member@example.com", "denied"
		if rf.status == 404 {
			who, outcome = "outsider@example.com", "failed"
		}
		if key := rf.action + " " + rf.target + " " + outcome + " " + who; !seen[key] {
			t.Errorf("%s: the owner's audit log lacks %q; it has %v", rf.name, key, seen)
		}
	}
}
