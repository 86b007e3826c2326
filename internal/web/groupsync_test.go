package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
)

// teamEmails returns the emails of team's members, read over /v1.
func teamEmails(t *testing.T, env *oauthtest.Env, team string) []string {
	t.Helper()
	r := env.Do(t, http.MethodGet, "/v1/teams/"+team+"/members", env.AdminKey, nil)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("members of %s: %d %s", team, r.StatusCode, r.Body)
	}
	var body struct {
		Data []struct{ Email, Role string }
	}
	r.JSON(t, &body)
	var out []string
	for _, m := range body.Data {
		if m.Role != "member" {
			t.Errorf("%s is a %s of %s; synced members join as member", m.Email, m.Role, team)
		}
		out = append(out, m.Email)
	}
	return out
}

// audited reports whether the audit log has action on target.
func audited(t *testing.T, env *oauthtest.Env, action, target string) int {
	t.Helper()
	es, _, err := env.Store.AuditLog(t.Context(), chartctl.AuditFilter{Action: action, Target: target, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestSSOGroupSyncSetsBoundTeams: a team bound to an IdP group tracks the
// groups claim of each sign-in (by group name or id): added to the group,
// the user becomes a member; removed from it, or with no groups claim at
// all, no longer; each change is audited. Binding a team removes the
// members added by hand, and adding one by hand is a 409 that says the
// IdP owns the team. The refresh of an OAuth grant applies the last
// sign-in's groups again.
func TestSSOGroupSyncSetsBoundTeams(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, false, app.SignInPolicy{})
	var groups any
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		c := idClaims(iss, req, "user-1", "ana@example.com")
		if groups != nil {
			c["groups"] = groups
		}
		return iss.Token(t, c)
	})
	if r := env.DoJSON(t, http.MethodPost, "/v1/organizations", env.AdminKey, map[string]any{"name": "acme"}); r.StatusCode != http.StatusOK {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/teams", env.AdminKey, map[string]any{"name": "platform", "organization": "acme"}); r.StatusCode != http.StatusOK {
		t.Fatalf("create team: %d %s", r.StatusCode, r.Body)
	}
	// A team created bound, to a group's id.
	r := env.DoJSON(t, http.MethodPost, "/v1/teams", env.AdminKey, map[string]any{"name": "ops", "organization": "acme", "idp_groups": []string{"00g-ops-id"}})
	if r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `"idp_groups":["00g-ops-id"]`) {
		t.Fatalf("create bound team: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/teams/platform/members", env.AdminKey, map[string]any{"email": "hand@example.com"}); r.StatusCode != http.StatusOK {
		t.Fatalf("add by hand to an unbound team: %d %s", r.StatusCode, r.Body)
	}

	// Binding removes the member added by hand.
	r = env.DoJSON(t, http.MethodPatch, "/v1/teams/platform", env.AdminKey, map[string]any{"idp_groups": []string{"platform-admins"}})
	if r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `"idp_groups":["platform-admins"]`) || !strings.Contains(string(r.Body), `"member_count":0`) {
		t.Fatalf("bind: %d %s", r.StatusCode, r.Body)
	}
	if audited(t, env, "team.member_remove", "platform/hand@example.com") != 1 {
		t.Fatal("the hand-added member's removal at binding is not audited")
	}
	// Adding by hand to a bound team is refused, saying who owns it.
	r = env.DoJSON(t, http.MethodPost, "/v1/teams/platform/members", env.AdminKey, map[string]any{"email": "hand@example.com"})
	if r.StatusCode != http.StatusConflict || r.ErrorCode() != "conflict" || !strings.Contains(string(r.Body), "identity provider owns") {
		t.Fatalf("add by hand to a bound team: %d %s", r.StatusCode, r.Body)
	}

	// The team's page says who owns it and offers no form to add members.
	env.MustUserWithPassword(t, "owner@example.com", "a long enough password", true)
	ob := env.NewBrowser(t)
	ob.SignIn(t, "owner@example.com", "a long enough password")
	page := ob.Get(t, "/teams/platform")
	if page.StatusCode != http.StatusOK || !strings.Contains(page.Body, `id="idp-groups"`) ||
		!strings.Contains(page.Body, "<code>platform-admins</code>") || strings.Contains(page.Body, `id="add-member"`) {
		t.Fatalf("bound team's page: %d %s", page.StatusCode, page.Body)
	}
	// A form posted anyway is refused by the application layer.
	if r := ob.PostForm(t, "/teams/platform/members", url.Values{"csrf_token": {page.CSRF(t)}, "email": {"hand@example.com"}, "role": {"member"}}); !strings.Contains(r.Body, "identity provider owns") {
		t.Fatalf("web add to a bound team: %d %s", r.StatusCode, r.Body)
	}

	// Sign-in in the group (by name) and in ops (by id): member of both.
	groups = []any{"developers", "platform-admins", "00g-ops-id"}
	if r := ssoSignIn(t, env, env.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", r.StatusCode, r.Body)
	}
	if got := teamEmails(t, env, "platform"); !slices.Equal(got, []string{"ana@example.com"}) {
		t.Fatalf("platform after a sign-in in its group: %v", got)
	}
	if got := teamEmails(t, env, "ops"); !slices.Equal(got, []string{"ana@example.com"}) {
		t.Fatalf("ops after a sign-in in its group id: %v", got)
	}
	if audited(t, env, "team.member_add", "platform/ana@example.com") != 1 || audited(t, env, "team.member_add", "ops/ana@example.com") != 1 {
		t.Fatal("the sync's additions are not audited")
	}
	// The same groups again change nothing.
	if r := ssoSignIn(t, env, env.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", r.StatusCode)
	}
	if audited(t, env, "team.member_add", "platform/ana@example.com") != 1 {
		t.Fatal("an unchanged sign-in added the member again")
	}

	// Removed from platform-admins at the IdP: no longer a member.
	groups = []any{"developers", "00g-ops-id"}
	b := env.NewBrowser(t)
	if r := ssoSignIn(t, env, b, iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", r.StatusCode)
	}
	if got := teamEmails(t, env, "platform"); len(got) != 0 {
		t.Fatalf("platform after leaving its group: %v", got)
	}
	if audited(t, env, "team.member_remove", "platform/ana@example.com") != 1 {
		t.Fatal("the sync's removal is not audited")
	}
	if got := teamEmails(t, env, "ops"); !slices.Equal(got, []string{"ana@example.com"}) {
		t.Fatalf("ops, still in its group: %v", got)
	}

	// The refresh of an OAuth grant applies the last sign-in's groups
	// again: a membership removed by hand in between comes back.
	verifier, challenge := oauthtest.PKCE()
	loc := b.Authorize(t, url.Values{"response_type": {"code"}, "client_id": {"chartctl"}, "redirect_uri": {"http://127.0.0.1:9999/callback"},
		"scope": {"repo:read"}, "state": {"s"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}, "approve")
	tok := tokenRequest(t, env, url.Values{"grant_type": {"authorization_code"}, "client_id": {"chartctl"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {"http://127.0.0.1:9999/callback"}, "code_verifier": {verifier}})
	if r := env.Do(t, http.MethodDelete, "/v1/teams/ops/members/ana@example.com", env.AdminKey, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("remove by hand: %d %s", r.StatusCode, r.Body)
	}
	tokenRequest(t, env, url.Values{"grant_type": {"refresh_token"}, "client_id": {"chartctl"}, "refresh_token": {tok["refresh_token"]}})
	if got := teamEmails(t, env, "ops"); !slices.Equal(got, []string{"ana@example.com"}) {
		t.Fatalf("ops after a refresh: %v", got)
	}

	// No groups claim at all: every bound-team membership goes.
	groups = nil
	if r := ssoSignIn(t, env, env.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", r.StatusCode)
	}
	if got := teamEmails(t, env, "ops"); len(got) != 0 {
		t.Fatalf("ops after a sign-in without groups: %v", got)
	}

	// Unbinding keeps the members and takes hand edits again.
	r = env.DoJSON(t, http.MethodPatch, "/v1/teams/platform", env.AdminKey, map[string]any{"idp_groups": []string{}})
	if r.StatusCode != http.StatusOK || !strings.Contains(string(r.Body), `"idp_groups":[]`) {
		t.Fatalf("unbind: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPost, "/v1/teams/platform/members", env.AdminKey, map[string]any{"email": "hand@example.com"}); r.StatusCode != http.StatusOK {
		t.Fatalf("add by hand after unbinding: %d %s", r.StatusCode, r.Body)
	}
	// Nothing to change, and a bad group, are 400s naming the field.
	if r := env.DoJSON(t, http.MethodPatch, "/v1/teams/platform", env.AdminKey, map[string]any{}); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("empty PATCH: %d %s", r.StatusCode, r.Body)
	}
	if r := env.DoJSON(t, http.MethodPatch, "/v1/teams/platform", env.AdminKey, map[string]any{"idp_groups": []string{strings.Repeat("g", 300)}}); r.StatusCode != http.StatusBadRequest ||
		!strings.Contains(string(r.Body), `"parameter":"idp_groups"`) {
		t.Fatalf("over-long group: %d %s", r.StatusCode, r.Body)
	}
}

// tokenRequest posts form to /oauth/token and returns the token answer.
func tokenRequest(t *testing.T, env *oauthtest.Env, form url.Values) map[string]string {
	t.Helper()
	resp, err := http.PostForm(env.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token request %s: %d %v", form.Get("grant_type"), resp.StatusCode, out)
	}
	s := map[string]string{}
	for k, v := range out {
		if str, ok := v.(string); ok {
			s[k] = str
		}
	}
	return s
}

// TestSSOGroupSyncDefersToSCIM: once a SCIM client pushes groups, SCIM
// alone sets bound-team membership and the groups claim of a sign-in is
// ignored (decision 7).
func TestSSOGroupSyncDefersToSCIM(t *testing.T) {
	iss := oidcissuer.New(t)
	env := ssoEnv(t, iss, false, app.SignInPolicy{})
	iss.ServeSignIns(func(req oidcissuer.AuthRequest) string {
		c := idClaims(iss, req, "user-1", "ana@example.com")
		c["groups"] = []any{"platform-admins"}
		return iss.Token(t, c)
	})
	env.DoJSON(t, http.MethodPost, "/v1/organizations", env.AdminKey, map[string]any{"name": "acme"})
	if r := env.DoJSON(t, http.MethodPost, "/v1/teams", env.AdminKey, map[string]any{"name": "platform", "organization": "acme", "idp_groups": []string{"platform-admins"}}); r.StatusCode != http.StatusOK {
		t.Fatalf("create team: %d %s", r.StatusCode, r.Body)
	}
	// The directory pushed the group, without Ana in it.
	if err := env.Store.PutSCIMGroup(t.Context(), &chartctl.SCIMGroup{DisplayName: "platform-admins"}); err != nil {
		t.Fatal(err)
	}
	if r := ssoSignIn(t, env, env.NewBrowser(t), iss); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", r.StatusCode, r.Body)
	}
	if got := teamEmails(t, env, "platform"); len(got) != 0 {
		t.Fatalf("the claim added a member although SCIM pushes groups: %v", got)
	}
}
