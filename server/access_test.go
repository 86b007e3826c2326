package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/token"
)

// accessFixture is one organization with an owner, a maintainer, a member,
// an outsider, a key lacking every repo/team scope, a private and a public
// repository, and a team.
type accessFixture struct {
	s     *testkit.Server
	keys  map[string]string
	count atomic.Int64
}

const (
	asNone       = "no credential"
	asWrongScope = "wrong scope"
	asMember     = "member"
	asMaintainer = "maintainer"
	asOwner      = "owner"
	asOutsider   = "outsider"
	asAdmin      = "admin"
)

var callers = []string{asNone, asWrongScope, asMember, asMaintainer, asOwner, asOutsider, asAdmin}

func setupAccess(t *testing.T) *accessFixture {
	t.Helper()
	s := testkit.StartServer(t)
	f := &accessFixture{s: s, keys: map[string]string{asAdmin: s.AdminKey}}
	all := chartctl.AllScopes
	owner := s.MustUser(t, "owner@acme.test", false)
	f.keys[asOwner] = s.MustKey(t, owner, all...)
	f.keys[asWrongScope] = s.MustKey(t, owner, chartctl.ScopeOrgRead)
	f.keys[asMaintainer] = s.MustKey(t, s.MustUser(t, "maint@acme.test", false), all...)
	f.keys[asMember] = s.MustKey(t, s.MustUser(t, "member@acme.test", false), all...)
	f.keys[asOutsider] = s.MustKey(t, s.MustUser(t, "out@other.test", false), all...)

	must := func(r *testkit.Response) {
		t.Helper()
		if r.StatusCode != 200 {
			t.Fatalf("setup: %d %s", r.StatusCode, r.Body)
		}
	}
	must(s.DoJSON(t, "POST", "/v1/organizations", f.keys[asOwner], map[string]string{"name": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams", f.keys[asOwner], map[string]string{"name": "devs", "organization": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/teams/devs/members", f.keys[asOwner], map[string]string{"email": "maint@acme.test", "role": "maintainer"}))
	must(s.DoJSON(t, "POST", "/v1/teams/devs/members", f.keys[asOwner], map[string]string{"email": "member@acme.test"}))
	must(s.DoJSON(t, "POST", "/v1/repositories", f.keys[asOwner], map[string]string{"name": "private", "organization": "acme"}))
	must(s.DoJSON(t, "POST", "/v1/repositories", f.keys[asOwner], map[string]string{"name": "public", "organization": "acme", "visibility": "public"}))
	for _, repo := range []string{"private", "public"} {
		must(s.Upload(t, repo, f.keys[asOwner], testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""))
	}
	return f
}

// uniq returns a fresh suffix for requests that create things.
func (f *accessFixture) uniq() string { return fmt.Sprint(f.count.Add(1)) }

func TestAccessMatrix(t *testing.T) {
	f := setupAccess(t)
	s := f.s
	type row struct {
		name string
		do   func(t *testing.T, key string) *testkit.Response
		want map[string]int
	}
	get := func(path string) func(*testing.T, string) *testkit.Response {
		return func(t *testing.T, key string) *testkit.Response { return s.Do(t, "GET", path, key, nil) }
	}
	upload := func(repo string) func(*testing.T, string) *testkit.Response {
		return func(t *testing.T, key string) *testkit.Response {
			return s.Upload(t, repo, key, testkit.MakeChart(t, testkit.Chart{Name: "up", Version: "1.0." + f.uniq()}), "")
		}
	}
	// The owner makes a fresh repository for each destructive request.
	deleteRepo := func(t *testing.T, key string) *testkit.Response {
		name := "doomed-" + f.uniq()
		s.DoJSON(t, "POST", "/v1/repositories", f.keys[asOwner], map[string]string{"name": name, "organization": "acme"})
		return s.Do(t, "DELETE", "/v1/repositories/"+name, key, nil)
	}
	deleteChart := func(t *testing.T, key string) *testkit.Response {
		v := "2.0." + f.uniq()
		s.Upload(t, "private", f.keys[asOwner], testkit.MakeChart(t, testkit.Chart{Name: "del", Version: v}), "")
		return s.Do(t, "DELETE", "/v1/repositories/private/charts/del/"+v, key, nil)
	}
	addMember := func(t *testing.T, key string) *testkit.Response {
		return s.DoJSON(t, "POST", "/v1/teams/devs/members", key, map[string]string{"email": "new" + f.uniq() + "@acme.test"})
	}
	createTeam := func(t *testing.T, key string) *testkit.Response {
		return s.DoJSON(t, "POST", "/v1/teams", key, map[string]string{"name": "team-" + f.uniq(), "organization": "acme"})
	}
	createOrgRepo := func(t *testing.T, key string) *testkit.Response {
		return s.DoJSON(t, "POST", "/v1/repositories", key, map[string]string{"name": "orgrepo-" + f.uniq(), "organization": "acme"})
	}
	createUser := func(t *testing.T, key string) *testkit.Response {
		return s.DoJSON(t, "POST", "/v1/users", key, map[string]string{"email": "u" + f.uniq() + "@acme.test"})
	}
	m := func(none, wrong, member, maint, owner, out, admin int) map[string]int {
		return map[string]int{asNone: none, asWrongScope: wrong, asMember: member, asMaintainer: maint, asOwner: owner, asOutsider: out, asAdmin: admin}
	}
	rows := []row{
		{"GET private repo", get("/v1/repositories/private"), m(401, 403, 200, 200, 200, 404, 200)},
		{"GET public repo", get("/v1/repositories/public"), m(401, 403, 200, 200, 200, 200, 200)},
		{"GET private charts", get("/v1/repositories/private/charts"), m(401, 403, 200, 200, 200, 404, 200)},
		{"GET public charts", get("/v1/repositories/public/charts"), m(401, 403, 200, 200, 200, 200, 200)},
		{"GET private archive", get("/v1/repositories/private/charts/app/1.0.0/archive"), m(401, 403, 200, 200, 200, 404, 200)},
		{"GET public archive", get("/v1/repositories/public/charts/app/1.0.0/archive"), m(401, 403, 200, 200, 200, 200, 200)},
		{"POST upload private", upload("private"), m(401, 403, 403, 200, 200, 404, 200)},
		{"POST upload public", upload("public"), m(401, 403, 403, 200, 200, 403, 200)},
		{"DELETE chart version", deleteChart, m(401, 403, 403, 200, 200, 404, 200)},
		{"DELETE repository", deleteRepo, m(401, 403, 403, 403, 200, 404, 200)},
		{"POST org repository", createOrgRepo, m(401, 403, 403, 200, 200, 404, 200)},
		{"GET search in private", get("/v1/search?q=app&repository=private"), m(401, 403, 200, 200, 200, 404, 200)},
		{"GET teams", get("/v1/teams"), m(401, 403, 200, 200, 200, 200, 200)},
		{"GET teams of acme", get("/v1/teams?organization=acme"), m(401, 403, 200, 200, 200, 404, 200)},
		{"GET team", get("/v1/teams/devs"), m(401, 403, 200, 200, 200, 404, 200)},
		{"GET members", get("/v1/teams/devs/members"), m(401, 403, 200, 200, 200, 404, 200)},
		{"POST member", addMember, m(401, 403, 403, 403, 200, 404, 200)},
		{"POST team", createTeam, m(401, 403, 403, 403, 200, 404, 200)},
		{"GET organizations", get("/v1/organizations"), m(401, 200, 200, 200, 200, 200, 200)},
		{"POST users", createUser, m(401, 403, 403, 403, 403, 403, 200)},
		{"GET user", get("/v1/user"), m(401, 200, 200, 200, 200, 200, 200)},
		{"GET rate-limit", get("/v1/rate-limit"), m(401, 200, 200, 200, 200, 200, 200)},
	}
	for _, r := range rows {
		for _, who := range callers {
			t.Run(r.name+"/"+who, func(t *testing.T) {
				resp := r.do(t, f.keys[who])
				if resp.StatusCode != r.want[who] {
					t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, r.want[who], resp.Body)
				}
				if resp.StatusCode == http.StatusForbidden && who == asWrongScope && r.name != "POST users" {
					if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) {
						t.Fatalf("WWW-Authenticate = %q", h)
					}
				}
			})
		}
	}
}

func TestListsShowOnlyVisible(t *testing.T) {
	f := setupAccess(t)
	s := f.s
	names := func(key, path string) string {
		var env struct {
			Data []struct{ Name string } `json:"data"`
		}
		s.Do(t, "GET", path, key, nil).JSON(t, &env)
		var out []string
		for _, d := range env.Data {
			out = append(out, d.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(f.keys[asOutsider], "/v1/repositories"); got != "public" {
		t.Fatalf("outsider repos = %q", got)
	}
	if got := names(f.keys[asMember], "/v1/repositories"); got != "private,public" {
		t.Fatalf("member repos = %q", got)
	}
	if got := names(f.keys[asOutsider], "/v1/teams"); got != "" {
		t.Fatalf("outsider teams = %q", got)
	}
	if got := names(f.keys[asOutsider], "/v1/organizations"); got != "" {
		t.Fatalf("outsider orgs = %q", got)
	}
	if got := names(f.keys[asMember], "/v1/organizations"); got != "acme" {
		t.Fatalf("member orgs = %q", got)
	}
	// A membership recorded by email takes effect when the account appears.
	s.DoJSON(t, "POST", "/v1/teams/devs/members", f.keys[asOwner], map[string]string{"email": "later@acme.test"})
	later := s.MustKey(t, s.MustUser(t, "later@acme.test", false), chartctl.AllScopes...)
	if got := names(later, "/v1/repositories"); got != "private,public" {
		t.Fatalf("late joiner repos = %q", got)
	}
	// Removing a member takes effect at once, despite credential caching.
	if r := s.Do(t, "DELETE", "/v1/teams/devs/members/later@acme.test", f.keys[asOwner], nil); r.StatusCode != 200 {
		t.Fatalf("remove: %d %s", r.StatusCode, r.Body)
	}
	if got := names(later, "/v1/repositories"); got != "public" {
		t.Fatalf("removed member repos = %q", got)
	}
}

func TestAPIKeyLifecycle(t *testing.T) {
	s := testkit.StartServer(t)
	u := s.MustUser(t, "ci@example.com", false)
	// Own keys are managed with keys:write (CONTRACT §13).
	noKeys := s.MustKey(t, s.MustUser(t, "other@example.com", false), chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite)
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", noKeys, map[string]any{"name": "deploy", "scopes": []string{"repo:read"}}), 403, "forbidden", "")
	key := s.MustKey(t, u, chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite, chartctl.ScopeKeysWrite)
	r := s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "deploy", "scopes": []string{"repo:read"}})
	var created envelope[struct {
		ID, Key string
		Scopes  []string
	}]
	r.JSON(t, &created)
	if r.StatusCode != 200 || !strings.HasPrefix(created.Data.Key, "chartctl_") || len(created.Data.Scopes) != 1 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	// A new key never exceeds the caller's scopes.
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "x", "scopes": []string{"team:write"}}), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "x", "scopes": []string{"repo:admin"}}), 400, "invalid_parameter", "scopes")
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "", "scopes": []string{"repo:read"}}), 400, "invalid_parameter", "name")
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "x", "scopes": []string{"repo:read"}, "expires_at": "2001-01-01T00:00:00Z"}), 400, "invalid_parameter", "expires_at")
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "x", "scopes": []string{"repo:read"}, "expires_at": "next week"}), 400, "invalid_parameter", "expires_at")
	expectError(t, s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": "x", "scopes": []string{"repo:read"}, "expires_at": 5}), 400, "invalid_parameter", "expires_at")

	// Use it: it works and read-only stays read-only.
	if r := s.Do(t, "GET", "/v1/repositories", created.Data.Key, nil); r.StatusCode != 200 {
		t.Fatalf("use: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "POST", "/v1/repositories", created.Data.Key, map[string]string{"name": "nope"}), 403, "forbidden", "")

	// Listed without its value, with last_used_at recorded.
	r = s.Do(t, "GET", "/v1/user/api-keys", key, nil)
	if strings.Contains(string(r.Body), created.Data.Key) || strings.Contains(string(r.Body), `"key"`) {
		t.Fatalf("list leaks key: %s", r.Body)
	}
	var keys envelope[[]struct {
		ID         string
		LastUsedAt *string `json:"last_used_at"`
	}]
	r.JSON(t, &keys)
	if len(keys.Data) != 2 {
		t.Fatalf("keys = %s", r.Body)
	}
	for _, k := range keys.Data {
		if k.ID == created.Data.ID && k.LastUsedAt == nil {
			t.Fatalf("last_used_at not recorded: %s", r.Body)
		}
	}
	// Revoke → 401.
	if r := s.Do(t, "DELETE", "/v1/user/api-keys/"+created.Data.ID, key, nil); r.StatusCode != 200 {
		t.Fatalf("revoke: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories", created.Data.Key, nil), 401, "unauthorized", "")
	expectError(t, s.Do(t, "DELETE", "/v1/user/api-keys/"+created.Data.ID, key, nil), 404, "not_found", "")

	// An expired key is refused.
	past := time.Now().Add(-time.Minute)
	v, h := token.New(token.APIKeyPrefix)
	if err := s.Store.CreateAPIKey(context.Background(), &chartctl.APIKey{UserID: u.ID, Name: "old", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: h, ExpiresAt: &past}); err != nil {
		t.Fatal(err)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories", v, nil), 401, "unauthorized", "")

	// Admin provisions a CI key for a user.
	r = s.DoJSON(t, "POST", "/v1/users/ci@example.com/api-keys", s.AdminKey, map[string]any{"name": "ci", "scopes": []string{"repo:read"}})
	if r.StatusCode != 200 {
		t.Fatalf("admin key: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "POST", "/v1/users/ci@example.com/api-keys", key, map[string]any{"name": "ci", "scopes": []string{"repo:read"}}), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "POST", "/v1/users/ghost@example.com/api-keys", s.AdminKey, map[string]any{"name": "ci", "scopes": []string{"repo:read"}}), 404, "not_found", "")
}
