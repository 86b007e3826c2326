package storetest

import (
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testUserIdentities: users bound to an identity provider's account are
// found by (provider, issuer, subject), one user per account; the binding
// and the email can change, and both go with a deleted user.
func testUserIdentities(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	dex := chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: "https://dex.example.com", Subject: "CiQwOGE4Njg0Yi1kYjg4"}
	u := &chartctl.User{Email: "ana@example.com", Identity: dex}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	got, err := s.UserByIdentity(ctx, dex)
	if err != nil || got.ID != u.ID || got.Identity != dex || got.PasswordHash != "" {
		t.Fatalf("UserByIdentity = %+v, %v", got, err)
	}
	if got, err := s.User(ctx, u.ID); err != nil || got.Identity != dex {
		t.Fatalf("User = %+v, %v", got, err)
	}
	// The same subject at another issuer is another account.
	other := dex
	other.Issuer = "https://login.example.org"
	if _, err := s.UserByIdentity(ctx, other); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("other issuer: %v", err)
	}
	if _, err := s.UserByIdentity(ctx, chartctl.Identity{}); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("local identity: %v", err)
	}
	// One user per account.
	if err := s.CreateUser(ctx, &chartctl.User{Email: "ana2@example.com", Identity: dex}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("second user of one account: %v", err)
	}
	if err := s.CreateUser(ctx, &chartctl.User{Email: "bad@example.com", Identity: chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: "https://x"}}); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Fatalf("identity without subject: %v", err)
	}
	local := &chartctl.User{Email: "local@example.com", PasswordHash: "x"}
	if err := s.CreateUser(ctx, local); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.User(ctx, local.ID); !got.Identity.Local() || got.Identity.ProviderName() != chartctl.ProviderLocal {
		t.Fatalf("local user's identity = %+v", got.Identity)
	}

	// The email follows the provider, and the team memberships recorded
	// for it follow the user; another user's email is refused.
	org := &chartctl.Organization{Name: "acme"}
	if err := s.CreateOrganization(ctx, org); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTeam(ctx, &chartctl.Team{Name: "platform", Organization: "acme"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddMember(ctx, &chartctl.Member{Team: "platform", Email: "ana@example.com", Role: chartctl.RoleMaintainer}); err != nil {
		t.Fatal(err)
	}
	newEmail := "ana.silva@example.com"
	if got, err := s.UpdateUser(ctx, u.ID, chartctl.UserUpdate{Email: &newEmail}); err != nil || got.Email != newEmail {
		t.Fatalf("change email = %+v, %v", got, err)
	}
	if got, err := s.UserByEmail(ctx, newEmail); err != nil || got.ID != u.ID {
		t.Fatalf("by new email = %+v, %v", got, err)
	}
	if _, err := s.UserByEmail(ctx, "ana@example.com"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("old email still finds the user: %v", err)
	}
	if roles, err := s.OrgRoles(ctx, u.ID, newEmail); err != nil || roles["acme"] != chartctl.RoleMaintainer {
		t.Fatalf("org roles after the email changed: %v, %v", roles, err)
	}
	if roles, err := s.OrgRoles(ctx, "", "ana@example.com"); err != nil || len(roles) != 0 {
		t.Fatalf("the old email keeps roles: %v, %v", roles, err)
	}
	taken := "local@example.com"
	if _, err := s.UpdateUser(ctx, u.ID, chartctl.UserUpdate{Email: &taken}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("taken email: %v", err)
	}
	// Binding: the local user cannot take ana's account, but may be bound
	// to one of its own.
	if _, err := s.UpdateUser(ctx, local.ID, chartctl.UserUpdate{Identity: &dex}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("binding a taken account: %v", err)
	}
	if got, err := s.UpdateUser(ctx, local.ID, chartctl.UserUpdate{Identity: &other}); err != nil || got.Identity != other {
		t.Fatalf("bind = %+v, %v", got, err)
	}
	if got, err := s.UserByIdentity(ctx, other); err != nil || got.ID != local.ID {
		t.Fatalf("bound user = %+v, %v", got, err)
	}

	// The dump carries the binding.
	exp, ok := s.(chartctl.Exporter)
	if !ok {
		t.Fatalf("%T does not export", s)
	}
	found := false
	err = exp.Export(ctx, nil, func(r chartctl.DumpRecord) error {
		if r.User != nil && r.User.ID == u.ID {
			found = r.User.Identity == dex
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("dump of a bound user: found %v, %v", found, err)
	}

	// A deleted user frees the account for a new user.
	if err := s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByIdentity(ctx, dex); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("deleted user's account: %v", err)
	}
	if err := s.CreateUser(ctx, &chartctl.User{Email: "ana@example.com", Identity: dex}); err != nil {
		t.Fatalf("account after its user was deleted: %v", err)
	}
}
