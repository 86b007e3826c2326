package scim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

// env is a real server on bbolt with a SCIM token and a team bound to a
// group.
type env struct {
	*testkit.Server
	token string
}

func setup(t *testing.T, boundTo string) *env {
	t.Helper()
	s := testkit.StartServer(t)
	r := s.DoJSON(t, http.MethodPost, "/v1/admin/scim-tokens", s.AdminKey, map[string]string{"name": "idp"})
	var tok struct{ Data struct{ ID, Token string } }
	r.JSON(t, &tok)
	if r.StatusCode != http.StatusOK || !strings.HasPrefix(tok.Data.Token, "chartctl_scim_") {
		t.Fatalf("create SCIM token: %d %s", r.StatusCode, r.Body)
	}
	for _, req := range []struct {
		path string
		body any
	}{
		{"/v1/organizations", map[string]any{"name": "acme"}},
		{"/v1/teams", map[string]any{"name": "platform", "organization": "acme", "idp_groups": []string{boundTo}}},
	} {
		if r := s.DoJSON(t, http.MethodPost, req.path, s.AdminKey, req.body); r.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", req.path, r.StatusCode, r.Body)
		}
	}
	return &env{Server: s, token: tok.Data.Token}
}

// scim sends a SCIM request with the fixture file (ids substituted), or
// no body, and returns the status and decoded answer.
func (e *env) scim(t *testing.T, method, path, fixture string, ids map[string]string) (int, map[string]any) {
	t.Helper()
	var body []byte
	switch {
	case strings.HasPrefix(fixture, "{"):
		body = []byte(fixture) // a body of the test's own
	case fixture != "":
		b, err := os.ReadFile(filepath.Join("testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range ids {
			b = bytes.ReplaceAll(b, []byte("{{"+k+"}}"), []byte(v))
		}
		body = b
	}
	req, err := http.NewRequest(method, e.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/scim+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if resp.StatusCode != http.StatusNoContent {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/scim+json") {
			t.Errorf("%s %s: Content-Type %q", method, path, ct)
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %d, body not JSON: %v", method, path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, out
}

func (e *env) members(t *testing.T) []string {
	t.Helper()
	ms, err := e.Store.Members(t.Context(), "platform")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, m.Email)
	}
	return out
}

// liveKey gives the user email an API key and checks it works.
func (e *env) liveKey(t *testing.T, email string) string {
	t.Helper()
	u, err := e.Store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	key := e.MustKey(t, u, chartctl.ScopeRepoRead)
	if r := e.Do(t, http.MethodGet, "/v1/user", key, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("the provisioned user's key before deactivation: %d %s", r.StatusCode, r.Body)
	}
	return key
}

func wantSCIMError(t *testing.T, status int, body map[string]any, want int, scimType string) {
	t.Helper()
	schemas, _ := body["schemas"].([]any)
	if status != want || len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" ||
		body["status"] != http.StatusText(want) && body["status"] != itoa(want) || body["detail"] == "" {
		t.Fatalf("error %d %v, want %d as an RFC 7644 error", status, body, want)
	}
	if scimType != "" && body["scimType"] != scimType {
		t.Fatalf("scimType %v, want %s", body["scimType"], scimType)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func audited(t *testing.T, e *env, action, target string) []*chartctl.AuditEntry {
	t.Helper()
	es, _, err := e.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: action, Target: target, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestSCIMOktaSequence replays what Okta sends: create a user, look it
// up, create a group, add and remove the member, rename the group,
// deactivate the user (a live API key stops working within the request)
// and delete it. The bound team tracks the group's members; the changes
// are audited with credential kind scim.
func TestSCIMOktaSequence(t *testing.T) {
	e := setup(t, "Test SCIMv2")
	st, u := e.scim(t, http.MethodPost, "/scim/v2/Users", "okta/create-user.json", nil)
	if st != http.StatusCreated || u["userName"] != "test.user@okta.local" || u["active"] != true || u["externalId"] != "00ujl29u0le5T6Aj10h7" {
		t.Fatalf("create user: %d %v", st, u)
	}
	ids := map[string]string{"user_id": u["id"].(string)}
	if got, err := e.Store.User(t.Context(), ids["user_id"]); err != nil || got.Identity.Provider != chartctl.ProviderSCIM {
		t.Fatalf("provisioned user: %+v, %v", got, err)
	}
	st, l := e.scim(t, http.MethodGet, "/scim/v2/Users?filter="+url.QueryEscape(`userName eq "test.user@okta.local"`)+"&startIndex=1&count=100", "", nil)
	if st != http.StatusOK || l["totalResults"] != 1.0 || len(l["Resources"].([]any)) != 1 {
		t.Fatalf("filter: %d %v", st, l)
	}
	// Creating it again is a uniqueness error.
	st, body := e.scim(t, http.MethodPost, "/scim/v2/Users", "okta/create-user.json", nil)
	wantSCIMError(t, st, body, http.StatusConflict, "uniqueness")

	st, g := e.scim(t, http.MethodPost, "/scim/v2/Groups", "okta/create-group.json", nil)
	if st != http.StatusCreated || g["displayName"] != "Test SCIMv2" {
		t.Fatalf("create group: %d %v", st, g)
	}
	ids["group_id"] = g["id"].(string)
	if st, g = e.scim(t, http.MethodPatch, "/scim/v2/Groups/"+ids["group_id"], "okta/add-member.json", ids); st != http.StatusOK || len(g["members"].([]any)) != 1 {
		t.Fatalf("add member: %d %v", st, g)
	}
	if got := e.members(t); !slices.Equal(got, []string{"test.user@okta.local"}) {
		t.Fatalf("bound team after the group push: %v", got)
	}
	add := audited(t, e, "team.member_add", "platform/test.user@okta.local")
	if len(add) != 1 || add[0].Actor.CredentialKind != chartctl.CredentialSCIM {
		t.Fatalf("audit of the sync: %+v", add)
	}
	// Adding by hand to the bound team is refused.
	if r := e.DoJSON(t, http.MethodPost, "/v1/teams/platform/members", e.AdminKey, map[string]string{"email": "x@example.com"}); r.StatusCode != http.StatusConflict {
		t.Fatalf("hand add to a bound team: %d %s", r.StatusCode, r.Body)
	}
	if st, _ = e.scim(t, http.MethodPatch, "/scim/v2/Groups/"+ids["group_id"], "okta/remove-member.json", ids); st != http.StatusOK {
		t.Fatalf("remove member: %d", st)
	}
	if got := e.members(t); len(got) != 0 {
		t.Fatalf("bound team after the member's removal: %v", got)
	}
	e.scim(t, http.MethodPatch, "/scim/v2/Groups/"+ids["group_id"], "okta/add-member.json", ids)
	// Renamed: the team was bound to the old name, so the member leaves.
	if st, g = e.scim(t, http.MethodPatch, "/scim/v2/Groups/"+ids["group_id"], "okta/rename-group.json", ids); st != http.StatusOK || g["displayName"] != "Test SCIMv2 renamed" {
		t.Fatalf("rename: %d %v", st, g)
	}
	if got := e.members(t); len(got) != 0 {
		t.Fatalf("team bound to the old name after the rename: %v", got)
	}

	key := e.liveKey(t, "test.user@okta.local")
	st, u = e.scim(t, http.MethodPatch, "/scim/v2/Users/"+ids["user_id"], "okta/deactivate-user.json", ids)
	if st != http.StatusOK || u["active"] != false {
		t.Fatalf("deactivate: %d %v", st, u)
	}
	if r := e.Do(t, http.MethodGet, "/v1/user", key, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the deactivated user's key: %d %s", r.StatusCode, r.Body)
	}
	if st, _ = e.scim(t, http.MethodDelete, "/scim/v2/Users/"+ids["user_id"], "", nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d", st)
	}
	st, body = e.scim(t, http.MethodGet, "/scim/v2/Users/"+ids["user_id"], "", nil)
	wantSCIMError(t, st, body, http.StatusNotFound, "")
}

// TestSCIMEntraSequence replays what Entra ID sends: a userName that is
// not an email (the primary email is used), extension schemas, "Add" and
// "Remove" with a members list, and "Replace" active "False".
func TestSCIMEntraSequence(t *testing.T) {
	e := setup(t, "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159") // bound by the group's externalId
	st, u := e.scim(t, http.MethodPost, "/scim/v2/Users", "entra/create-user.json", nil)
	email := "test_user_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com"
	if st != http.StatusCreated || u["userName"] != email {
		t.Fatalf("create user: %d %v", st, u)
	}
	ids := map[string]string{"user_id": u["id"].(string)}
	st, l := e.scim(t, http.MethodGet, "/scim/v2/Groups?excludedAttributes=members&filter="+url.QueryEscape(`displayName eq "displayName"`), "", nil)
	if st != http.StatusOK || l["totalResults"] != 0.0 {
		t.Fatalf("group lookup before creation: %d %v", st, l)
	}
	st, g := e.scim(t, http.MethodPost, "/scim/v2/Groups", "entra/create-group.json", nil)
	if st != http.StatusCreated || g["externalId"] != "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159" {
		t.Fatalf("create group: %d %v", st, g)
	}
	ids["group_id"] = g["id"].(string)
	if st, _ = e.scim(t, http.MethodPatch, "/scim/v2/Groups/"+ids["group_id"], "entra/add-member.json", ids); st != http.StatusOK {
		t.Fatalf("add member: %d", st)
	}
	if got := e.members(t); !slices.Equal(got, []string{email}) {
		t.Fatalf("bound team after Add: %v", got)
	}
	if st, _ = e.scim(t, http.MethodPatch, "/scim/v2/Groups/"+ids["group_id"], "entra/remove-member.json", ids); st != http.StatusOK {
		t.Fatalf("remove member: %d", st)
	}
	if got := e.members(t); len(got) != 0 {
		t.Fatalf("bound team after Remove: %v", got)
	}
	key := e.liveKey(t, email)
	st, u = e.scim(t, http.MethodPatch, "/scim/v2/Users/"+ids["user_id"], "entra/disable-user.json", ids)
	if st != http.StatusOK || u["active"] != false {
		t.Fatalf("disable: %d %v", st, u)
	}
	if r := e.Do(t, http.MethodGet, "/v1/user", key, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the disabled user's key: %d %s", r.StatusCode, r.Body)
	}
}

// TestSCIMPaginationFilterAndTokens: startIndex/count pages, filters,
// local accounts out of SCIM's reach, RFC 7644 errors, token list and
// revocation (the next request is 401).
func TestSCIMPaginationFilterAndTokens(t *testing.T) {
	e := setup(t, "ops")
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		body := map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "userName": name + "@example.com", "active": true}
		b, _ := json.Marshal(body)
		if st, u := e.scim(t, http.MethodPost, "/scim/v2/Users", string(b), nil); st != http.StatusCreated {
			t.Fatalf("create %s: %d %v", name, st, u)
		}
	}
	st, l := e.scim(t, http.MethodGet, "/scim/v2/Users?startIndex=2&count=2", "", nil)
	res, _ := l["Resources"].([]any)
	if st != http.StatusOK || l["totalResults"] != 5.0 || l["startIndex"] != 2.0 || l["itemsPerPage"] != 2.0 || len(res) != 2 ||
		res[0].(map[string]any)["userName"] != "b@example.com" || res[1].(map[string]any)["userName"] != "c@example.com" {
		t.Fatalf("page 2 of 2: %d %v", st, l)
	}
	if st, l = e.scim(t, http.MethodGet, "/scim/v2/Users?startIndex=6", "", nil); st != http.StatusOK || len(l["Resources"].([]any)) != 0 {
		t.Fatalf("past the end: %d %v", st, l)
	}
	// The local admin is not SCIM's to see.
	if st, l = e.scim(t, http.MethodGet, "/scim/v2/Users?filter="+url.QueryEscape(`userName eq "admin@example.com"`), "", nil); st != http.StatusOK || l["totalResults"] != 0.0 {
		t.Fatalf("local admin through SCIM: %d %v", st, l)
	}
	st, body := e.scim(t, http.MethodGet, "/scim/v2/Users/"+e.Admin.ID, "", nil)
	wantSCIMError(t, st, body, http.StatusNotFound, "")
	st, body = e.scim(t, http.MethodGet, "/scim/v2/Users?filter="+url.QueryEscape(`name.familyName co "x"`), "", nil)
	wantSCIMError(t, st, body, http.StatusBadRequest, "invalidFilter")
	if st, l = e.scim(t, http.MethodGet, "/scim/v2/ServiceProviderConfig", "", nil); st != http.StatusOK || l["patch"].(map[string]any)["supported"] != true {
		t.Fatalf("ServiceProviderConfig: %d %v", st, l)
	}

	// Tokens: listed without values, revoked → 401.
	r := e.Do(t, http.MethodGet, "/v1/admin/scim-tokens", e.AdminKey, nil)
	var tokens struct{ Data []map[string]any }
	r.JSON(t, &tokens)
	if r.StatusCode != http.StatusOK || len(tokens.Data) != 1 || tokens.Data[0]["token"] != nil || tokens.Data[0]["last_used_at"] == nil {
		t.Fatalf("token list: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do(t, http.MethodDelete, "/v1/admin/scim-tokens/"+tokens.Data[0]["id"].(string), e.AdminKey, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.StatusCode, r.Body)
	}
	st, body = e.scim(t, http.MethodGet, "/scim/v2/Users", "", nil)
	wantSCIMError(t, st, body, http.StatusUnauthorized, "")
	// Only admins manage SCIM tokens.
	u := e.MustUser(t, "dev@example.com", false)
	if r := e.DoJSON(t, http.MethodPost, "/v1/admin/scim-tokens", e.MustKey(t, u, chartctl.AllScopes...), map[string]string{}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("a non-admin creating a SCIM token: %d %s", r.StatusCode, r.Body)
	}
}
