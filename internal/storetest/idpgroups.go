package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testIDPGroups: teams bound to identity provider groups, the groups of a
// user's last sign-in, SCIM tokens found by hash and SCIM groups with
// unique display names.
func testIDPGroups(t *testing.T, open Open) {
	s := open(t)
	ctx := t.Context()
	if err := s.CreateOrganization(ctx, &chartctl.Organization{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	// Groups are trimmed, deduplicated and sorted.
	tm := &chartctl.Team{Name: "platform", Organization: "acme", IDPGroups: []string{" ops ", "admins", "ops", ""}}
	if err := s.CreateTeam(ctx, tm); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Team(ctx, "platform"); err != nil || !reflect.DeepEqual(got.IDPGroups, []string{"admins", "ops"}) || !got.Bound() {
		t.Fatalf("Team = %+v, %v", got, err)
	}
	got, err := s.SetTeamIDPGroups(ctx, "platform", nil)
	if err != nil || got.Bound() || got.Name != "platform" {
		t.Fatalf("unbind = %+v, %v", got, err)
	}
	if got, _ := s.Teams(ctx, "acme"); len(got) != 1 || got[0].Bound() {
		t.Fatalf("Teams after unbind = %+v", got)
	}
	if got, err := s.SetTeamIDPGroups(ctx, "platform", []string{"00gabc"}); err != nil || !reflect.DeepEqual(got.IDPGroups, []string{"00gabc"}) {
		t.Fatalf("rebind = %+v, %v", got, err)
	}
	if _, err := s.SetTeamIDPGroups(ctx, "nope", []string{"x"}); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("unknown team: %v", err)
	}
	if _, err := s.SetTeamIDPGroups(ctx, "platform", []string{"a\x00b"}); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Fatalf("NUL group: %v", err)
	}

	// The groups of a user's last sign-in.
	u := &chartctl.User{Email: "ana@example.com", IDPGroups: []string{"ops"}}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	groups := []string{"admins", "ops"}
	if got, err := s.UpdateUser(ctx, u.ID, chartctl.UserUpdate{IDPGroups: &groups}); err != nil || !reflect.DeepEqual(got.IDPGroups, groups) {
		t.Fatalf("UpdateUser groups = %+v, %v", got, err)
	}
	none := []string{}
	if _, err := s.UpdateUser(ctx, u.ID, chartctl.UserUpdate{IDPGroups: &none}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.User(ctx, u.ID); len(got.IDPGroups) != 0 {
		t.Fatalf("groups after clearing = %v", got.IDPGroups)
	}

	// SCIM tokens.
	tok := &chartctl.SCIMToken{Name: "okta", Hash: []byte("h1")}
	if err := s.CreateSCIMToken(ctx, tok); err != nil || tok.ID == "" || tok.CreatedAt.IsZero() {
		t.Fatalf("CreateSCIMToken: %+v, %v", tok, err)
	}
	if err := s.CreateSCIMToken(ctx, &chartctl.SCIMToken{Name: "dup", Hash: []byte("h1")}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("same hash: %v", err)
	}
	if got, err := s.SCIMTokenByHash(ctx, []byte("h1")); err != nil || got.ID != tok.ID || got.Name != "okta" {
		t.Fatalf("SCIMTokenByHash = %+v, %v", got, err)
	}
	used := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	if err := s.TouchSCIMToken(ctx, tok.ID, used); err != nil {
		t.Fatal(err)
	}
	if list, err := s.SCIMTokens(ctx); err != nil || len(list) != 1 || list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(used) {
		t.Fatalf("SCIMTokens = %+v, %v", list, err)
	}
	if err := s.DeleteSCIMToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SCIMTokenByHash(ctx, []byte("h1")); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("revoked token found: %v", err)
	}
	if err := s.DeleteSCIMToken(ctx, tok.ID); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("second delete: %v", err)
	}

	// SCIM groups: created, replaced (rename, members), names unique.
	g := &chartctl.SCIMGroup{DisplayName: "ops", ExternalID: "ext-1", Members: []string{"usr_b", "usr_a", "usr_b"}}
	if err := s.PutSCIMGroup(ctx, g); err != nil || g.ID == "" {
		t.Fatalf("PutSCIMGroup: %+v, %v", g, err)
	}
	if got, err := s.SCIMGroup(ctx, g.ID); err != nil || !reflect.DeepEqual(got.Members, []string{"usr_a", "usr_b"}) || got.ExternalID != "ext-1" {
		t.Fatalf("SCIMGroup = %+v, %v", got, err)
	}
	if err := s.PutSCIMGroup(ctx, &chartctl.SCIMGroup{DisplayName: "ops"}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("duplicate display name: %v", err)
	}
	g.DisplayName, g.Members = "operations", nil
	if err := s.PutSCIMGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSCIMGroup(ctx, &chartctl.SCIMGroup{DisplayName: "ops"}); err != nil {
		t.Fatalf("the old name is free again: %v", err)
	}
	list, err := s.SCIMGroups(ctx)
	if err != nil || len(list) != 2 || list[0].DisplayName != "operations" || list[1].DisplayName != "ops" || len(list[0].Members) != 0 {
		t.Fatalf("SCIMGroups = %+v, %v", list, err)
	}
	if err := s.DeleteSCIMGroup(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SCIMGroup(ctx, g.ID); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("deleted group: %v", err)
	}
}
