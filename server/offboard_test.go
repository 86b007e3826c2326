package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// Regression (offboarding): an admin could not list users, disable one,
// revoke another user's keys or reset a password, so nobody could be
// offboarded. This walks the whole offboarding over HTTP.
func TestOffboarding(t *testing.T) {
	s := testkit.StartServer(t)
	ada := s.MustUser(t, "ada@example.com", false)
	adaKey := s.MustKey(t, ada, chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite, chartctl.ScopeKeysWrite)
	s.MustUser(t, "bob@example.com", false)
	if r := s.DoJSON(t, "POST", "/v1/repositories", adaKey, map[string]string{"name": "ada-charts"}); r.StatusCode != 200 {
		t.Fatalf("create repo: %d %s", r.StatusCode, r.Body)
	}
	for path, body := range map[string]map[string]string{
		"/v1/organizations": {"name": "acme"},
	} {
		if r := s.DoJSON(t, "POST", path, s.AdminKey, body); r.StatusCode != 200 {
			t.Fatalf("POST %s: %d %s", path, r.StatusCode, r.Body)
		}
	}
	if r := s.DoJSON(t, "POST", "/v1/teams", s.AdminKey, map[string]string{"name": "platform", "organization": "acme"}); r.StatusCode != 200 {
		t.Fatalf("create team: %d %s", r.StatusCode, r.Body)
	}
	if r := s.DoJSON(t, "POST", "/v1/teams/platform/members", s.AdminKey, map[string]string{"email": "ada@example.com"}); r.StatusCode != 200 {
		t.Fatalf("add member: %d %s", r.StatusCode, r.Body)
	}

	// List every user, paginated.
	var page envelope[[]client.Account]
	s.Do(t, "GET", "/v1/users?limit=2", s.AdminKey, nil).JSON(t, &page)
	if page.Meta.Total != 3 || len(page.Data) != 2 || page.Data[0].Email != "ada@example.com" || page.Data[0].LastSeenAt == nil {
		t.Fatalf("GET /v1/users = %+v", page)
	}
	// Another user's keys: list, and revoke one.
	var keys envelope[[]client.APIKey]
	s.Do(t, "GET", "/v1/users/ada@example.com/api-keys", s.AdminKey, nil).JSON(t, &keys)
	if len(keys.Data) != 1 {
		t.Fatalf("ada's keys = %+v", keys.Data)
	}
	second := s.MustKey(t, ada, chartctl.ScopeRepoRead)
	keys = envelope[[]client.APIKey]{}
	s.Do(t, "GET", "/v1/users/ada@example.com/api-keys", s.AdminKey, nil).JSON(t, &keys)
	if r := s.Do(t, "DELETE", "/v1/users/ada@example.com/api-keys/"+keys.Data[1].ID, s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("revoke ada's key: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/user", second, nil); r.StatusCode != 401 {
		t.Errorf("revoked key: %d", r.StatusCode)
	}

	// Disable: every credential of ada's is refused at once.
	r := s.DoJSON(t, "PATCH", "/v1/users/ada@example.com", s.AdminKey, map[string]any{"disabled": true})
	var acct envelope[client.Account]
	r.JSON(t, &acct)
	if r.StatusCode != 200 || !acct.Data.Disabled {
		t.Fatalf("disable: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/user", adaKey, nil); r.StatusCode != 401 {
		t.Errorf("disabled user's key: %d %s", r.StatusCode, r.Body)
	}
	// Enabling does not bring the keys back; a password reset works.
	if r := s.DoJSON(t, "PATCH", "/v1/users/ada@example.com", s.AdminKey, map[string]any{"disabled": false, "password": "new password 1"}); r.StatusCode != 200 {
		t.Fatalf("enable: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/user", adaKey, nil); r.StatusCode != 401 {
		t.Errorf("key after re-enabling: %d", r.StatusCode)
	}
	if u, _ := s.Store.UserByEmail(t.Context(), "ada@example.com"); !app.CheckPassword(u.PasswordHash, "new password 1") {
		t.Error("password not reset")
	}

	// Delete: memberships go; the personal repository stays, readable by
	// admins.
	if r := s.Do(t, "DELETE", "/v1/users/ada@example.com", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/repositories/ada-charts", s.AdminKey, nil); r.StatusCode != 200 {
		t.Errorf("personal repository after delete: %d", r.StatusCode)
	}
	var members envelope[[]client.Member]
	s.Do(t, "GET", "/v1/teams/platform/members", s.AdminKey, nil).JSON(t, &members)
	for _, m := range members.Data {
		if m.Email == "ada@example.com" {
			t.Error("deleted user is still a member")
		}
	}
	expectError(t, s.Do(t, "DELETE", "/v1/users/ada@example.com", s.AdminKey, nil), 404, "not_found", "")
}

// Admins cannot disable, demote or delete themselves, nor leave the server
// without an enabled admin; non-admins and narrow admin credentials are
// refused.
func TestOffboardingGuards(t *testing.T) {
	s := testkit.StartServer(t)
	expectError(t, s.DoJSON(t, "PATCH", "/v1/users/admin@example.com", s.AdminKey, map[string]any{"disabled": true}), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "PATCH", "/v1/users/admin@example.com", s.AdminKey, map[string]any{"admin": false}), 403, "forbidden", "")
	expectError(t, s.Do(t, "DELETE", "/v1/users/admin@example.com", s.AdminKey, nil), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "PATCH", "/v1/users/admin@example.com", s.AdminKey, map[string]any{}), 400, "invalid_parameter", "body")
	expectError(t, s.DoJSON(t, "PATCH", "/v1/users/admin@example.com", s.AdminKey, map[string]any{"password": "short"}), 400, "invalid_parameter", "password")

	ops := s.MustUser(t, "ops@example.com", true)
	opsKey := s.MustKey(t, ops, chartctl.AllScopes...)
	// ops may disable the first admin, whose key is then refused; ops,
	// now the last enabled admin, cannot disable themselves (the store
	// also refuses to leave no enabled admin).
	if r := s.DoJSON(t, "PATCH", "/v1/users/admin@example.com", opsKey, map[string]any{"disabled": true}); r.StatusCode != 200 {
		t.Fatalf("disable the other admin: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Do(t, "GET", "/v1/users", s.AdminKey, nil); r.StatusCode != 401 {
		t.Errorf("disabled admin's key: %d", r.StatusCode)
	}
	ops2 := s.MustUser(t, "ops2@example.com", true)
	ops2Key := s.MustKey(t, ops2, chartctl.AllScopes...)
	if r := s.DoJSON(t, "PATCH", "/v1/users/ops2@example.com", opsKey, map[string]any{"disabled": true}); r.StatusCode != 200 {
		t.Fatalf("disable ops2: %d %s", r.StatusCode, r.Body)
	}
	_ = ops2Key
	r := s.DoJSON(t, "PATCH", "/v1/users/ops@example.com", opsKey, map[string]any{"disabled": true})
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("self-disable: %d", r.StatusCode)
	}

	ada := s.MustUser(t, "ada@example.com", false)
	adaKey := s.MustKey(t, ada, chartctl.AllScopes...)
	expectError(t, s.Do(t, "GET", "/v1/users", adaKey, nil), 403, "forbidden", "")
	narrow := s.MustKey(t, ops, chartctl.OriginalScopes...)
	r = s.Do(t, "GET", "/v1/users", narrow, nil)
	if r.StatusCode != 403 || !strings.Contains(string(r.Body), "--scopes") {
		t.Errorf("admin key without the admin scope: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "GET", "/v1/users/nobody@example.com/api-keys", opsKey, nil), 404, "not_found", "")
}
