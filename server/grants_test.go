package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// grantsFixture is organization acme (its owner own@, a member mem@ in
// team devs), organization other (team ops), an outsider out@, and
// repository acme-charts of acme.
type grantsFixture struct {
	s                  *testkit.Server
	own, mem, out, ro  string
	ownUser, memUser   *chartctl.User
	outUser, otherUser *chartctl.User
}

func setupGrants(t *testing.T) *grantsFixture {
	t.Helper()
	s := testkit.StartServer(t)
	f := &grantsFixture{s: s}
	f.ownUser = s.MustUser(t, "own@example.com", false)
	f.memUser = s.MustUser(t, "mem@example.com", false)
	f.outUser = s.MustUser(t, "out@example.com", false)
	f.otherUser = s.MustUser(t, "other@example.com", false)
	f.own = s.MustKey(t, f.ownUser, chartctl.AllScopes...)
	f.ro = s.MustKey(t, f.ownUser, chartctl.ScopeRepoRead, chartctl.ScopeOrgRead)
	f.mem = s.MustKey(t, f.memUser, chartctl.AllScopes...)
	f.out = s.MustKey(t, f.outUser, chartctl.AllScopes...)
	other := s.MustKey(t, f.otherUser, chartctl.AllScopes...)
	must := func(r *testkit.Response) {
		t.Helper()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("setup: %s %s: %d %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
		}
	}
	must(s.DoJSON(t, "POST", "/v1/organizations", f.own, map[string]string{"name": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams", f.own, map[string]string{"name": "devs", "organization": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams/devs/members", f.own, map[string]string{"email": "mem@example.com"}))
	must(s.DoJSON(t, "POST", "/v1/repositories", f.own, map[string]string{"name": "acme-charts", "organization": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/organizations", other, map[string]string{"name": "other"}))
	must(s.DoJSON(t, "POST", "/v1/teams", other, map[string]string{"name": "ops", "organization": "other"}))
	return f
}

func grantOf(t *testing.T, r *testkit.Response) client.Grant {
	t.Helper()
	var env envelope[client.Grant]
	r.JSON(t, &env)
	return env.Data
}

func grantsOf(t *testing.T, r *testkit.Response) []client.Grant {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("list grants: %d %s", r.StatusCode, r.Body)
	}
	var env envelope[[]client.Grant]
	r.JSON(t, &env)
	return env.Data
}

// TestRepositoryGrants gives, changes, explains and takes away roles on
// one repository through /v1, as the repository's admin, and checks who
// may do so and that a grant takes effect for a credential used (and
// cached) just before it.
func TestRepositoryGrants(t *testing.T) {
	f := setupGrants(t)
	s := f.s
	access := "/v1/repositories/acme-charts/access"

	// Only the repository's admins list its grants; others see 403, or
	// 404 when they may not see the repository at all.
	if got := grantsOf(t, s.Do(t, "GET", access, f.own, nil)); len(got) != 0 {
		t.Fatalf("grants of a new repository: %+v", got)
	}
	r := s.Do(t, "GET", access, f.mem, nil)
	expectError(t, r, http.StatusForbidden, "forbidden", "")
	if !strings.Contains(string(r.Body), "admin role") {
		t.Fatalf("a member's refusal does not name the role needed: %s", r.Body)
	}
	expectError(t, s.Do(t, "GET", access, f.out, nil), http.StatusNotFound, "not_found", "")
	// The outsider's key is now resolved and cached: the grant below must
	// reach it anyway.
	expectError(t, s.Do(t, "GET", "/v1/repositories/acme-charts", f.out, nil), http.StatusNotFound, "not_found", "")

	// A new grant is 201; a second one to the same team replaces its role
	// and is 200, as GitHub's collaborators API answers.
	r = s.DoJSON(t, "POST", access, f.own, client.GrantRequest{Team: "devs", Role: "write"})
	if g := grantOf(t, r); r.StatusCode != http.StatusCreated || g.Kind != "team" || g.Name != "devs" || g.Role != "write" || g.CreatedAt.IsZero() {
		t.Fatalf("grant devs write: %d %s", r.StatusCode, r.Body)
	}
	r = s.DoJSON(t, "POST", access, f.own, client.GrantRequest{Team: "devs", Role: "maintain"})
	if g := grantOf(t, r); r.StatusCode != http.StatusOK || g.Role != "maintain" {
		t.Fatalf("grant devs maintain again: %d %s", r.StatusCode, r.Body)
	}
	if e := lastAudit(t, s); e.Action != "repository.access_granted" || !strings.Contains(e.Target, "acme-charts/team/devs") || e.Outcome != "success" {
		t.Fatalf("audit of a grant: %+v", e)
	}

	// Bad requests say what to do.
	for _, c := range []struct {
		req    client.GrantRequest
		status int
		code   string
		param  string
		says   string
	}{
		{client.GrantRequest{Team: "ops", Role: "read"}, 400, "invalid_parameter", "team", "belongs to organization"},
		{client.GrantRequest{User: "nobody@example.com", Role: "read"}, 404, "not_found", "", "account"},
		{client.GrantRequest{Team: "nope", Role: "read"}, 404, "not_found", "", "nope"},
		{client.GrantRequest{User: "not an email", Role: "read"}, 400, "invalid_parameter", "user", "email"},
		{client.GrantRequest{Team: "devs", Role: "superuser"}, 400, "invalid_parameter", "role", "read, write, maintain or admin"},
		{client.GrantRequest{Team: "devs"}, 400, "invalid_parameter", "role", "read, write, maintain or admin"},
		{client.GrantRequest{Team: "devs", User: "out@example.com", Role: "read"}, 400, "invalid_parameter", "team", "not both"},
		{client.GrantRequest{Role: "read"}, 400, "invalid_parameter", "team", "user"},
	} {
		r := s.DoJSON(t, "POST", access, f.own, c.req)
		expectError(t, r, c.status, c.code, c.param)
		if !strings.Contains(string(r.Body), c.says) {
			t.Fatalf("%+v: the message does not say %q: %s", c.req, c.says, r.Body)
		}
	}
	// Granting needs the admin role and repo:write.
	expectError(t, s.DoJSON(t, "POST", access, f.mem, client.GrantRequest{User: "mem@example.com", Role: "admin"}), http.StatusForbidden, "forbidden", "")
	expectError(t, s.DoJSON(t, "POST", access, f.ro, client.GrantRequest{User: "out@example.com", Role: "read"}), http.StatusForbidden, "forbidden", "")
	expectError(t, s.DoJSON(t, "POST", access, f.out, client.GrantRequest{User: "out@example.com", Role: "admin"}), http.StatusNotFound, "not_found", "")

	// A user grant to someone outside the organization: the outsider's
	// cached credential sees the repository at once.
	if r := s.DoJSON(t, "POST", access, f.own, client.GrantRequest{User: "OUT@example.com", Role: "read"}); r.StatusCode != http.StatusCreated || grantOf(t, r).Name != "out@example.com" {
		t.Fatalf("grant out@ read: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/repositories/acme-charts", f.out, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("the outsider after a read grant: %d %s", r.StatusCode, r.Body)
	}
	// read is not write; the member's team grant (maintain) is.
	chart := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	expectError(t, s.Upload(t, "acme-charts", f.out, chart, ""), http.StatusForbidden, "forbidden", "")
	if r := s.Upload(t, "acme-charts", f.mem, chart, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("a member whose team maintains the repository pushes: %d %s", r.StatusCode, r.Body)
	}

	// Teams first, then by name.
	got := grantsOf(t, s.Do(t, "GET", access, f.own, nil))
	if len(got) != 2 || got[0].Kind != "team" || got[0].Name != "devs" || got[1].Kind != "user" || got[1].Name != "out@example.com" || got[1].Role != "read" {
		t.Fatalf("grants: %+v", got)
	}

	// Explain: every source, and the strongest role.
	explain := func(email string) client.Permission {
		t.Helper()
		r := s.Do(t, "GET", "/v1/repositories/acme-charts/permissions?user="+email, f.own, nil)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("explain %s: %d %s", email, r.StatusCode, r.Body)
		}
		var env envelope[client.Permission]
		r.JSON(t, &env)
		return env.Data
	}
	if p := explain("mem@example.com"); p.Role != "maintain" || !slices.Equal(p.Via, []client.PermissionVia{
		{Kind: "organization", Name: "acme", Role: "read"}, {Kind: "team", Name: "devs", Role: "maintain"}}) {
		t.Fatalf("explain mem@: %+v", p)
	}
	if p := explain("own@example.com"); p.Role != "admin" || !slices.Equal(p.Via, []client.PermissionVia{{Kind: "organization", Name: "acme", Role: "admin"}}) {
		t.Fatalf("explain own@: %+v", p)
	}
	if p := explain("out@example.com"); p.Role != "read" || !slices.Equal(p.Via, []client.PermissionVia{{Kind: "user", Name: "out@example.com", Role: "read"}}) {
		t.Fatalf("explain out@: %+v", p)
	}
	if p := explain("other@example.com"); p.Role != "" || len(p.Via) != 0 {
		t.Fatalf("explain other@: %+v", p)
	}
	if p := explain("admin@example.com"); p.Role != "admin" || len(p.Via) == 0 || p.Via[0].Kind != "admin" {
		t.Fatalf("explain admin@: %+v", p)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/acme-charts/permissions?user=ghost@example.com", f.own, nil), http.StatusNotFound, "not_found", "")
	expectError(t, s.Do(t, "GET", "/v1/repositories/acme-charts/permissions", f.own, nil), http.StatusBadRequest, "invalid_parameter", "user")
	expectError(t, s.Do(t, "GET", "/v1/repositories/acme-charts/permissions?user=mem@example.com", f.mem, nil), http.StatusForbidden, "forbidden", "")

	// Revoking: the outsider loses the repository at once.
	if r := s.Do(t, "DELETE", access+"/user/out@example.com", f.own, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("revoke out@: %d %s", r.StatusCode, r.Body)
	}
	if e := lastAudit(t, s); e.Action != "repository.access_revoked" || e.Target != "acme-charts/user/out@example.com" {
		t.Fatalf("audit of a revocation: %+v", e)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/acme-charts", f.out, nil), http.StatusNotFound, "not_found", "")
	r = s.Do(t, "DELETE", access+"/user/out@example.com", f.own, nil)
	expectError(t, r, http.StatusNotFound, "not_found", "")
	if !strings.Contains(string(r.Body), "chartctl repo access list") {
		t.Fatalf("revoking a missing grant does not say how to list them: %s", r.Body)
	}
	expectError(t, s.Do(t, "DELETE", access+"/robot/ci", f.own, nil), http.StatusNotFound, "not_found", "")
	expectError(t, s.Do(t, "DELETE", access+"/team/devs", f.mem, nil), http.StatusForbidden, "forbidden", "")
	if r := s.Do(t, "DELETE", access+"/team/devs", f.own, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("revoke devs: %d %s", r.StatusCode, r.Body)
	}
	// Back to the organization's base role: read.
	expectError(t, s.Upload(t, "acme-charts", f.mem, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.1"}), ""), http.StatusForbidden, "forbidden", "")
}

// TestPersonalRepositoryGrants: a repository of no organization takes
// user grants from its owner, and no team grants.
func TestPersonalRepositoryGrants(t *testing.T) {
	f := setupGrants(t)
	s := f.s
	if r := s.DoJSON(t, "POST", "/v1/repositories", f.mem, map[string]string{"name": "mine"}); r.StatusCode != http.StatusOK {
		t.Fatalf("create mine: %d %s", r.StatusCode, r.Body)
	}
	r := s.DoJSON(t, "POST", "/v1/repositories/mine/access", f.mem, client.GrantRequest{Team: "devs", Role: "read"})
	expectError(t, r, http.StatusBadRequest, "invalid_parameter", "team")
	if !strings.Contains(string(r.Body), "--user") {
		t.Fatalf("the refusal does not say to grant users: %s", r.Body)
	}
	if r := s.DoJSON(t, "POST", "/v1/repositories/mine/access", f.mem, client.GrantRequest{User: "out@example.com", Role: "write"}); r.StatusCode != http.StatusCreated {
		t.Fatalf("grant out@ write on mine: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Upload(t, "mine", f.out, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""); r.StatusCode != http.StatusOK {
		t.Fatalf("out@ pushes to mine with a write grant: %d %s", r.StatusCode, r.Body)
	}
	// write does not change settings (maintain) nor delete the
	// repository (admin).
	expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/mine/retention", f.out, map[string]any{"keep_latest": 3}), http.StatusForbidden, "forbidden", "")
	expectError(t, s.DoJSON(t, "PATCH", "/v1/repositories/mine", f.out, map[string]any{"description": "theirs"}), http.StatusForbidden, "forbidden", "")
	expectError(t, s.Do(t, "DELETE", "/v1/repositories/mine", f.out, nil), http.StatusForbidden, "forbidden", "")
	if p := func() client.Permission {
		r := s.Do(t, "GET", "/v1/repositories/mine/permissions?user=mem@example.com", f.mem, nil)
		var env envelope[client.Permission]
		r.JSON(t, &env)
		return env.Data
	}(); p.Role != "admin" || !slices.Equal(p.Via, []client.PermissionVia{{Kind: "owner", Name: "mem@example.com", Role: "admin"}}) {
		t.Fatalf("explain the owner: %+v", p)
	}
}

// TestDeleteOrganization: owners and admins delete an organization once it
// owns no repository; its teams go with it and its members' cached
// credentials lose it at once.
func TestDeleteOrganization(t *testing.T) {
	f := setupGrants(t)
	s := f.s
	orgs := func(key string) []string {
		t.Helper()
		r := s.Do(t, "GET", "/v1/organizations", key, nil)
		var env envelope[[]client.Organization]
		r.JSON(t, &env)
		var names []string
		for _, o := range env.Data {
			names = append(names, o.Name)
		}
		return names
	}
	if got := orgs(f.mem); !slices.Equal(got, []string{"acme"}) {
		t.Fatalf("the member's organizations: %v", got)
	}

	expectError(t, s.Do(t, "DELETE", "/v1/organizations/nowhere", f.own, nil), http.StatusNotFound, "not_found", "")
	expectError(t, s.Do(t, "DELETE", "/v1/organizations/acme", f.out, nil), http.StatusNotFound, "not_found", "")
	expectError(t, s.Do(t, "DELETE", "/v1/organizations/acme", f.ro, nil), http.StatusForbidden, "forbidden", "")
	expectError(t, s.Do(t, "DELETE", "/v1/organizations/acme", f.mem, nil), http.StatusForbidden, "forbidden", "")
	if e := lastAudit(t, s); e.Action != "organization.delete" || e.Outcome != "denied" {
		t.Fatalf("audit of a refused deletion: %+v", e)
	}

	r := s.Do(t, "DELETE", "/v1/organizations/acme", f.own, nil)
	expectError(t, r, http.StatusConflict, "conflict", "")
	if msg := string(r.Body); !strings.Contains(msg, "1 repository") || !strings.Contains(msg, "delete them first") || !strings.Contains(msg, "acme-charts") {
		t.Fatalf("the conflict does not say what to do: %s", r.Body)
	}
	if r := s.Do(t, "DELETE", "/v1/repositories/acme-charts", f.own, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("delete acme-charts: %d %s", r.StatusCode, r.Body)
	}
	r = s.Do(t, "DELETE", "/v1/organizations/acme", f.own, nil)
	if r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `"deleted":true`) {
		t.Fatalf("delete acme: %d %s", r.StatusCode, r.Body)
	}
	if e := lastAudit(t, s); e.Action != "organization.delete" || e.Outcome != "success" || e.Target != "acme" {
		t.Fatalf("audit of the deletion: %+v", e)
	}
	if got := orgs(f.mem); len(got) != 0 {
		t.Fatalf("the member still has organizations %v", got)
	}
	expectError(t, s.Do(t, "GET", "/v1/teams/devs", f.own, nil), http.StatusNotFound, "not_found", "")
	// A server admin may delete any organization.
	if r := s.Do(t, "DELETE", "/v1/organizations/other", s.AdminKey, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("an admin deletes other: %d %s", r.StatusCode, r.Body)
	}
}

// TestRepositoryRestrictedKeys: API keys limited to repository patterns,
// shown in the key list; a restricted key cannot make a wider one.
func TestRepositoryRestrictedKeys(t *testing.T) {
	f := setupGrants(t)
	s := f.s
	r := s.DoJSON(t, "POST", "/v1/user/api-keys", f.own, client.CreateAPIKeyRequest{Name: "ci", Scopes: []string{"repo:read", "keys:write"}, Repositories: []string{"acme-*"}})
	var created envelope[client.APIKey]
	r.JSON(t, &created)
	if r.StatusCode != http.StatusOK || !slices.Equal(created.Data.Repositories, []string{"acme-*"}) || created.Data.Key == "" {
		t.Fatalf("create a restricted key: %d %s", r.StatusCode, r.Body)
	}
	restricted := created.Data.Key
	var list envelope[[]client.APIKey]
	s.Do(t, "GET", "/v1/user/api-keys", f.own, nil).JSON(t, &list)
	if i := slices.IndexFunc(list.Data, func(k client.APIKey) bool { return k.ID == created.Data.ID }); i < 0 || !slices.Equal(list.Data[i].Repositories, []string{"acme-*"}) {
		t.Fatalf("the key list does not show the key's repositories: %+v", list.Data)
	}

	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", f.own, client.CreateAPIKeyRequest{Name: "bad", Scopes: []string{"repo:read"}, Repositories: []string{"acme-["}}), http.StatusBadRequest, "invalid_parameter", "repositories")
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", f.own, client.CreateAPIKeyRequest{Name: "bad", Scopes: []string{"repo:read"}, Repositories: []string{" "}}), http.StatusBadRequest, "invalid_parameter", "repositories")

	var me envelope[client.User]
	s.Do(t, "GET", "/v1/user", restricted, nil).JSON(t, &me)
	if !slices.Equal(me.Data.Repositories, []string{"acme-*"}) {
		t.Fatalf("/v1/user for the restricted key: %+v", me.Data)
	}
	var full envelope[client.User]
	s.Do(t, "GET", "/v1/user", f.own, nil).JSON(t, &full)
	if full.Data.Repositories != nil {
		t.Fatalf("/v1/user for an unrestricted key shows repositories: %+v", full.Data)
	}
	// The restricted key reads what it names, as its owner would.
	if r := s.Do(t, "GET", "/v1/repositories/acme-charts", restricted, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("the restricted key reads acme-charts: %d %s", r.StatusCode, r.Body)
	}
	// It makes keys only within its patterns.
	for _, repos := range [][]string{nil, {"*"}, {"other-charts"}, {"acme-[a-z]*"}} {
		r := s.DoJSON(t, "POST", "/v1/user/api-keys", restricted, client.CreateAPIKeyRequest{Name: "wider", Scopes: []string{"repo:read"}, Repositories: repos})
		expectError(t, r, http.StatusForbidden, "forbidden", "")
		if !strings.Contains(string(r.Body), "acme-*") {
			t.Fatalf("the refusal does not name the key's patterns: %s", r.Body)
		}
	}
	for _, repos := range [][]string{{"acme-*"}, {"acme-charts"}} {
		if r := s.DoJSON(t, "POST", "/v1/user/api-keys", restricted, client.CreateAPIKeyRequest{Name: "narrower", Scopes: []string{"repo:read"}, Repositories: repos}); r.StatusCode != http.StatusOK {
			t.Fatalf("a key within %v: %d %s", repos, r.StatusCode, r.Body)
		}
	}
}

// TestInternalVisibility: repositories every signed-in user reads, set on
// create and by PATCH; anonymous Helm clients are asked for credentials,
// as for private ones.
func TestInternalVisibility(t *testing.T) {
	f := setupGrants(t)
	s := f.s
	r := s.DoJSON(t, "POST", "/v1/repositories", f.own, map[string]string{"name": "acme-bad", "organization": "acme", "visibility": "secret"})
	expectError(t, r, http.StatusBadRequest, "invalid_parameter", "visibility")
	if msg := string(r.Body); !strings.Contains(msg, "private") || !strings.Contains(msg, "internal") || !strings.Contains(msg, "public") {
		t.Fatalf("the message does not list the three visibilities: %s", r.Body)
	}
	r = s.DoJSON(t, "POST", "/v1/repositories", f.own, map[string]string{"name": "acme-inside", "organization": "acme", "visibility": "internal"})
	var repo envelope[client.Repository]
	r.JSON(t, &repo)
	if r.StatusCode != http.StatusOK || repo.Data.Visibility != "internal" {
		t.Fatalf("create an internal repository: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Upload(t, "acme-inside", f.own, testkit.MakeChart(t, testkit.Chart{Name: "insider", Version: "1.0.0"}), ""); r.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	// Any signed-in user reads and finds it; nobody outside acme changes it.
	if r := s.Do(t, "GET", "/v1/repositories/acme-inside/charts/insider/1.0.0/archive", f.out, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("an outsider downloads from an internal repository: %d", r.StatusCode)
	}
	if r := s.Do(t, "GET", "/v1/search?q=insider", f.out, nil); r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `"acme-inside"`) {
		t.Fatalf("an outsider searches an internal repository: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "PATCH", "/v1/repositories/acme-inside", f.out, map[string]string{"visibility": "public"}), http.StatusForbidden, "forbidden", "")
	// Anonymous Helm clients are asked to sign in.
	for _, path := range []string{"/helm/acme-inside/index.yaml", "/helm/acme-inside/charts/insider-1.0.0.tgz"} {
		r := s.Do(t, "GET", path, "", nil)
		if r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("anonymous %s: %d (challenge %q), want 401 with a Basic challenge", path, r.StatusCode, r.Header.Get("WWW-Authenticate"))
		}
	}
	// PATCH takes the three, and says so for anything else.
	r = s.DoJSON(t, "PATCH", "/v1/repositories/acme-charts", f.own, map[string]string{"visibility": "everyone"})
	expectError(t, r, http.StatusBadRequest, "invalid_parameter", "visibility")
	if !strings.Contains(string(r.Body), "internal") {
		t.Fatalf("the PATCH message does not list internal: %s", r.Body)
	}
	r = s.DoJSON(t, "PATCH", "/v1/repositories/acme-charts", f.own, map[string]string{"visibility": "internal"})
	r.JSON(t, &repo)
	if r.StatusCode != http.StatusOK || repo.Data.Visibility != "internal" {
		t.Fatalf("PATCH to internal: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/repositories/acme-charts", f.out, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("an outsider reads a repository made internal: %d %s", r.StatusCode, r.Body)
	}
}
