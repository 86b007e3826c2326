package bolt_test

import (
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func ptr[T any](v T) *T { return &v }

// TestDisableEndsCredentials: disabling a user deletes their keys, ends
// their dashboard sessions and revokes their OAuth tokens in one step.
func TestDisableEndsCredentials(t *testing.T) {
	db, _ := setup(t)
	ctx := t.Context()
	admin := &chartctl.User{Email: "root@example.com", Admin: true}
	if err := db.CreateUser(ctx, admin); err != nil {
		t.Fatal(err)
	}
	u := mustUser(t, db, "ada@example.com")
	other := mustUser(t, db, "bob@example.com")
	for _, owner := range []*chartctl.User{u, other} {
		if err := db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: owner.ID, Name: "k", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: []byte("h-" + owner.Email)}); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte("s-" + owner.Email), UserID: owner.ID, ExpiresAt: testTime.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	code := &chartctl.AuthorizationCode{Hash: []byte("code"), UserID: u.ID, ClientID: "app", GrantID: "grant_1", ExpiresAt: testTime.Add(time.Minute)}
	if err := db.CreateAuthorizationCode(ctx, code); err != nil {
		t.Fatal(err)
	}
	err := db.RedeemAuthorizationCode(ctx, []byte("code"), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return []*chartctl.OAuthToken{
			{Hash: []byte("at"), Kind: chartctl.AccessToken, GrantID: "grant_1", UserID: u.ID, ExpiresAt: testTime.Add(time.Hour)},
			{Hash: []byte("rt"), Kind: chartctl.RefreshToken, GrantID: "grant_1", UserID: u.ID, ExpiresAt: testTime.Add(time.Hour)},
		}, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	got, err := db.UpdateUser(ctx, u.ID, chartctl.UserUpdate{Disabled: ptr(true)})
	if err != nil || !got.Disabled {
		t.Fatalf("UpdateUser = %+v, %v", got, err)
	}
	if keys, _ := db.APIKeys(ctx, u.ID); len(keys) != 0 {
		t.Errorf("disabled user keeps %d keys", len(keys))
	}
	if _, err := db.APIKeyByHash(ctx, []byte("h-ada@example.com")); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("disabled user's key still found: %v", err)
	}
	if _, err := db.WebSession(ctx, []byte("s-ada@example.com"), testTime); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("disabled user's session still valid: %v", err)
	}
	for _, h := range []string{"at", "rt"} {
		tok, err := db.OAuthToken(ctx, []byte(h))
		if err != nil || !tok.Revoked {
			t.Errorf("token %s after disabling: %+v, %v", h, tok, err)
		}
	}
	// Another user's credentials are untouched.
	if keys, _ := db.APIKeys(ctx, other.ID); len(keys) != 1 {
		t.Errorf("other user's keys = %d", len(keys))
	}
	if _, err := db.WebSession(ctx, []byte("s-bob@example.com"), testTime); err != nil {
		t.Errorf("other user's session ended: %v", err)
	}
	// Re-enabling does not bring credentials back.
	if got, err := db.UpdateUser(ctx, u.ID, chartctl.UserUpdate{Disabled: ptr(false)}); err != nil || got.Disabled {
		t.Fatalf("enable = %+v, %v", got, err)
	}
	if keys, _ := db.APIKeys(ctx, u.ID); len(keys) != 0 {
		t.Errorf("re-enabled user has %d keys", len(keys))
	}
}

// TestLastEnabledAdminKept: the last enabled admin cannot be disabled,
// demoted or deleted.
func TestLastEnabledAdminKept(t *testing.T) {
	db, _ := setup(t)
	ctx := t.Context()
	a := &chartctl.User{Email: "root@example.com", Admin: true}
	if err := db.CreateUser(ctx, a); err != nil {
		t.Fatal(err)
	}
	_, err := db.UpdateUser(ctx, a.ID, chartctl.UserUpdate{Disabled: ptr(true)})
	wantCode(t, err, chartctl.ECONFLICT)
	_, err = db.UpdateUser(ctx, a.ID, chartctl.UserUpdate{Admin: ptr(false)})
	wantCode(t, err, chartctl.ECONFLICT)
	wantCode(t, db.DeleteUser(ctx, a.ID), chartctl.ECONFLICT)

	b := &chartctl.User{Email: "ops@example.com", Admin: true}
	if err := db.CreateUser(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateUser(ctx, a.ID, chartctl.UserUpdate{Admin: ptr(false)}); err != nil {
		t.Fatalf("demote with another admin: %v", err)
	}
	wantCode(t, db.DeleteUser(ctx, b.ID), chartctl.ECONFLICT)
}

// TestDeleteUser removes the user, their memberships and keys; their
// repositories and organizations stay.
func TestDeleteUser(t *testing.T) {
	db, _ := setup(t)
	ctx := t.Context()
	admin := &chartctl.User{Email: "root@example.com", Admin: true}
	if err := db.CreateUser(ctx, admin); err != nil {
		t.Fatal(err)
	}
	u := mustUser(t, db, "ada@example.com")
	mustOrg(t, db, "acme", u.ID)
	mustTeam(t, db, "platform", "acme")
	mustTeam(t, db, "web", "acme")
	mustMember(t, db, "platform", "Ada@example.com", chartctl.RoleOwner)
	mustMember(t, db, "web", "ada@example.com", chartctl.RoleMember)
	mustMember(t, db, "web", "bob@example.com", chartctl.RoleMember)
	r := &chartctl.Repository{Name: "ada-charts", OwnerID: u.ID, Visibility: chartctl.VisibilityPrivate}
	if err := db.CreateRepository(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: u.ID, Name: "k", Hash: []byte("h")}); err != nil {
		t.Fatal(err)
	}

	if err := db.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserByEmail(ctx, "ada@example.com"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("deleted user still found: %v", err)
	}
	if _, err := db.APIKeyByHash(ctx, []byte("h")); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("deleted user's key still found: %v", err)
	}
	if ms, _ := db.Members(ctx, "web"); len(ms) != 1 || ms[0].Email != "bob@example.com" {
		t.Errorf("web members = %v", ms)
	}
	if tm, _ := db.Team(ctx, "platform"); tm.MemberCount != 0 {
		t.Errorf("platform member count = %d", tm.MemberCount)
	}
	// A new account with the same email gets no role from the old one.
	again := mustUser(t, db, "ada@example.com")
	if roles, _ := db.OrgRoles(ctx, again.ID, again.Email); len(roles) != 0 {
		t.Errorf("re-created account has roles %v", roles)
	}
	if _, err := db.Repository(ctx, "ada-charts"); err != nil {
		t.Errorf("personal repository gone: %v", err)
	}
	if _, err := db.Organization(ctx, "acme"); err != nil {
		t.Errorf("organization gone: %v", err)
	}
	users, err := db.Users(ctx)
	if err != nil || len(users) != 2 || users[0].Email != "ada@example.com" || users[1].Email != "root@example.com" {
		t.Errorf("Users = %v, %v", users, err)
	}
	wantCode(t, db.DeleteUser(ctx, u.ID), chartctl.ENOTFOUND)
}
