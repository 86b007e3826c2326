package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"reflect"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// secretHash stands for token.Hash of a secret.
func secretHash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

func mustRobot(tb testing.TB, s Store, org *chartctl.Organization, name, secret string) *chartctl.Robot {
	tb.Helper()
	r := &chartctl.Robot{OrganizationID: org.ID, Name: name, Repositories: []string{"acme-*"},
		Permissions: chartctl.RobotPermissions{chartctl.RobotPull, chartctl.RobotPush}, SecretHash: secretHash(secret)}
	must(tb, s.CreateRobot(ctx, r))
	return r
}

// testGrants checks repository grants: put and replace, the names filled
// on reads, their order, the errors for unknown repositories, teams and
// users, and GrantsFor through the user's own grants and their teams'
// with the strongest role winning.
func testGrants(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	bob := mustUser(t, s, "bob@example.com")
	mustOrg(t, s, "acme", ada.ID)
	repo := mustRepo(t, s, "acme-charts", "acme")
	other := mustRepo(t, s, "acme-other", "acme")
	devs := mustTeam(t, s, "devs", "acme")
	ops := mustTeam(t, s, "ops", "acme")
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "Bob@Example.com"}))

	g, err := s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantUser, SubjectID: bob.ID,
		Role: chartctl.RepoRoleRead, CreatedBy: ada.ID})
	must(t, err)
	if g.ID == "" || g.Repository != "acme-charts" || g.Subject != "bob@example.com" || g.Role != chartctl.RepoRoleRead ||
		g.CreatedBy != ada.ID || g.CreatedAt.IsZero() {
		t.Fatalf("PutGrant = %+v", g)
	}
	// A second grant to the same subject replaces the role.
	g2, err := s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantUser, SubjectID: bob.ID,
		Role: chartctl.RepoRoleWrite})
	must(t, err)
	if g2.ID != g.ID || g2.Role != chartctl.RepoRoleWrite {
		t.Fatalf("replacing grant = %+v, want ID %s role write", g2, g.ID)
	}
	_, err = s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantTeam, SubjectID: ops.ID, Role: chartctl.RepoRoleAdmin})
	must(t, err)
	_, err = s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantTeam, SubjectID: devs.ID, Role: chartctl.RepoRoleMaintain})
	must(t, err)
	_, err = s.PutGrant(ctx, &chartctl.Grant{RepositoryID: other.ID, Kind: chartctl.GrantTeam, SubjectID: devs.ID, Role: chartctl.RepoRoleRead})
	must(t, err)

	list, err := s.Grants(ctx, repo.ID)
	must(t, err)
	var got []string
	for _, g := range list {
		got = append(got, string(g.Kind)+":"+g.Subject+":"+string(g.Role))
	}
	want := []string{"team:devs:maintain", "team:ops:admin", "user:bob@example.com:write"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Grants = %v, want %v", got, want)
	}

	wantCode(t, errOf(s.PutGrant(ctx, &chartctl.Grant{RepositoryID: "repo_nope", Kind: chartctl.GrantUser, SubjectID: bob.ID, Role: chartctl.RepoRoleRead})), chartctl.ENOTFOUND)
	wantCode(t, errOf(s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantTeam, SubjectID: "team_nope", Role: chartctl.RepoRoleRead})), chartctl.ENOTFOUND)
	wantCode(t, errOf(s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantUser, SubjectID: "usr_nope", Role: chartctl.RepoRoleRead})), chartctl.ENOTFOUND)
	// A team's ID is not a user's: the kind decides where it is looked up.
	wantCode(t, errOf(s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantUser, SubjectID: devs.ID, Role: chartctl.RepoRoleRead})), chartctl.ENOTFOUND)
	wantCode(t, errOf(s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantUser, SubjectID: bob.ID, Role: "owner"})), chartctl.EINVALID)

	// Bob's own write and devs' maintain on acme-charts: maintain wins;
	// devs' read on acme-other. The email is matched case-insensitively.
	roles, err := s.GrantsFor(ctx, bob.ID, "BOB@example.com")
	must(t, err)
	if want := map[string]chartctl.RepoRole{repo.ID: chartctl.RepoRoleMaintain, other.ID: chartctl.RepoRoleRead}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("GrantsFor(bob) = %v, want %v", roles, want)
	}
	// Only the user's own grants without the email, only the teams'
	// without the ID; nothing for a stranger.
	if roles, _ := s.GrantsFor(ctx, bob.ID, ""); !reflect.DeepEqual(roles, map[string]chartctl.RepoRole{repo.ID: chartctl.RepoRoleWrite}) {
		t.Fatalf("GrantsFor(bob's ID only) = %v", roles)
	}
	if roles, _ := s.GrantsFor(ctx, "", "bob@example.com"); len(roles) != 2 || roles[repo.ID] != chartctl.RepoRoleMaintain {
		t.Fatalf("GrantsFor(bob's email only) = %v", roles)
	}
	if roles, err := s.GrantsFor(ctx, ada.ID, "ada@example.com"); err != nil || len(roles) != 0 {
		t.Fatalf("GrantsFor(ada) = %v, %v", roles, err)
	}

	must(t, s.DeleteGrant(ctx, repo.ID, chartctl.GrantTeam, ops.ID))
	wantCode(t, s.DeleteGrant(ctx, repo.ID, chartctl.GrantTeam, ops.ID), chartctl.ENOTFOUND)
	wantCode(t, s.DeleteGrant(ctx, repo.ID, chartctl.GrantUser, ops.ID), chartctl.ENOTFOUND)
	if list, _ := s.Grants(ctx, repo.ID); len(list) != 2 {
		t.Fatalf("after DeleteGrant, Grants = %d, want 2", len(list))
	}

	// Leaving the team takes its grants away at once.
	must(t, s.RemoveMember(ctx, "devs", "bob@example.com"))
	if roles, _ := s.GrantsFor(ctx, bob.ID, "bob@example.com"); !reflect.DeepEqual(roles, map[string]chartctl.RepoRole{repo.ID: chartctl.RepoRoleWrite}) {
		t.Fatalf("GrantsFor after leaving devs = %v", roles)
	}
}

// testGrantsGoWithTheirBinding checks decision 2: grants are deleted with
// their repository, their user and their team's organization, so a later
// repository, user or team of the same name starts with none.
func testGrantsGoWithTheirBinding(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	bob := mustUser(t, s, "bob@example.com")
	mustOrg(t, s, "acme", ada.ID)
	mustOrg(t, s, "temp", ada.ID)
	repo := mustRepo(t, s, "charts", "acme")
	kept := mustRepo(t, s, "kept", "acme")
	team := mustTeam(t, s, "temp-team", "temp")
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "temp-team", Email: "ada@example.com"}))
	put := func(repoID string, kind chartctl.GrantKind, subject string) {
		t.Helper()
		_, err := s.PutGrant(ctx, &chartctl.Grant{RepositoryID: repoID, Kind: kind, SubjectID: subject, Role: chartctl.RepoRoleWrite})
		must(t, err)
	}
	put(repo.ID, chartctl.GrantUser, bob.ID)
	put(kept.ID, chartctl.GrantUser, bob.ID)
	put(kept.ID, chartctl.GrantTeam, team.ID)

	_, err := s.DeleteRepository(ctx, "charts")
	must(t, err)
	if list, err := s.Grants(ctx, repo.ID); err != nil || len(list) != 0 {
		t.Fatalf("grants of a deleted repository = %v, %v", list, err)
	}
	again := &chartctl.Repository{Name: "charts", Organization: "acme"}
	must(t, s.CreateRepository(ctx, again))
	if list, _ := s.Grants(ctx, again.ID); len(list) != 0 {
		t.Fatalf("a new repository of the name inherited grants: %v", list)
	}
	if roles, _ := s.GrantsFor(ctx, bob.ID, "bob@example.com"); !reflect.DeepEqual(roles, map[string]chartctl.RepoRole{kept.ID: chartctl.RepoRoleWrite}) {
		t.Fatalf("GrantsFor(bob) after the repository went = %v", roles)
	}

	must(t, s.DeleteUser(ctx, bob.ID))
	if list, _ := s.Grants(ctx, kept.ID); len(list) != 1 || list[0].Kind != chartctl.GrantTeam {
		t.Fatalf("after deleting bob, grants of kept = %v, want only the team's", list)
	}
	bob2 := mustUser(t, s, "bob@example.com")
	if roles, _ := s.GrantsFor(ctx, bob2.ID, "bob@example.com"); len(roles) != 0 {
		t.Fatalf("a new user of the email inherited grants: %v", roles)
	}

	// The team goes with its organization, and its grants with it.
	if roles, _ := s.GrantsFor(ctx, ada.ID, "ada@example.com"); roles[kept.ID] != chartctl.RepoRoleWrite {
		t.Fatalf("GrantsFor(ada) through temp-team = %v", roles)
	}
	must(t, s.DeleteOrganization(ctx, "temp"))
	if list, _ := s.Grants(ctx, kept.ID); len(list) != 0 {
		t.Fatalf("grants of a deleted organization's team remain: %v", list)
	}
	if roles, _ := s.GrantsFor(ctx, ada.ID, "ada@example.com"); len(roles) != 0 {
		t.Fatalf("GrantsFor(ada) after the team's organization went = %v", roles)
	}
}

// testRobots checks robot accounts: create and conflicts, reads by name,
// ID and secret hash, update and disable, rotation with and without a
// grace, touch and delete.
func testRobots(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	acme := mustOrg(t, s, "acme", ada.ID)
	other := mustOrg(t, s, "other", ada.ID)
	exp := time.Now().Add(90 * 24 * time.Hour).UTC().Truncate(time.Second)
	ci := &chartctl.Robot{OrganizationID: acme.ID, Name: "ci", Description: "builds", Repositories: []string{"acme-*", "tools"},
		Permissions: chartctl.RobotPermissions{chartctl.RobotPull, chartctl.RobotPush}, SecretHash: secretHash("s1"),
		ExpiresAt: &exp, CreatedBy: ada.ID}
	must(t, s.CreateRobot(ctx, ci))
	if ci.ID == "" || ci.CreatedAt.IsZero() {
		t.Fatalf("CreateRobot did not fill ID and CreatedAt: %+v", ci)
	}
	mustRobot(t, s, acme, "deploy", "s2")
	// The same name in another organization is another robot.
	mustRobot(t, s, other, "ci", "s3")
	wantCode(t, s.CreateRobot(ctx, &chartctl.Robot{OrganizationID: acme.ID, Name: "ci", SecretHash: secretHash("s4"),
		Permissions: chartctl.RobotPermissions{chartctl.RobotPull}}), chartctl.ECONFLICT)
	wantCode(t, s.CreateRobot(ctx, &chartctl.Robot{OrganizationID: "org_nope", Name: "x", SecretHash: secretHash("s5"),
		Permissions: chartctl.RobotPermissions{chartctl.RobotPull}}), chartctl.ENOTFOUND)

	check := func(r *chartctl.Robot, err error) *chartctl.Robot {
		t.Helper()
		must(t, err)
		if r.ID != ci.ID || r.Organization != "acme" || r.OrganizationID != acme.ID || r.Name != "ci" ||
			r.Description != "builds" || !reflect.DeepEqual(r.Repositories, []string{"acme-*", "tools"}) ||
			!reflect.DeepEqual(r.Permissions, ci.Permissions) || !bytes.Equal(r.SecretHash, secretHash("s1")) ||
			r.ExpiresAt == nil || !r.ExpiresAt.Equal(exp) || r.CreatedBy != ada.ID || !r.CreatedAt.Truncate(time.Microsecond).Equal(ci.CreatedAt.Truncate(time.Microsecond)) ||
			r.UserName() != "robot$acme+ci" {
			t.Fatalf("robot = %+v", r)
		}
		return r
	}
	check(s.Robot(ctx, "acme", "ci"))
	check(s.RobotByID(ctx, ci.ID))
	check(s.RobotBySecretHash(ctx, secretHash("s1")))
	_, err := s.Robot(ctx, "acme", "nope")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Robot(ctx, "nope", "ci")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.RobotByID(ctx, "robot_nope")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.RobotBySecretHash(ctx, secretHash("nope"))
	wantCode(t, err, chartctl.ENOTFOUND)
	list, err := s.Robots(ctx, "acme")
	must(t, err)
	if len(list) != 2 || list[0].Name != "ci" || list[1].Name != "deploy" {
		t.Fatalf("Robots(acme) = %v", list)
	}
	if list, err := s.Robots(ctx, "nope"); err != nil || len(list) != 0 {
		t.Fatalf("Robots(unknown) = %v, %v", list, err)
	}

	// Rotation with a grace keeps the replaced secret findable.
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	r, err := s.RotateRobot(ctx, ci.ID, secretHash("s1b"), &until)
	must(t, err)
	if !bytes.Equal(r.SecretHash, secretHash("s1b")) || !bytes.Equal(r.PreviousSecretHash, secretHash("s1")) ||
		r.PreviousSecretExpiresAt == nil || !r.PreviousSecretExpiresAt.Equal(until) {
		t.Fatalf("rotated robot = %+v", r)
	}
	for _, sec := range []string{"s1", "s1b"} {
		if r, err := s.RobotBySecretHash(ctx, secretHash(sec)); err != nil || r.ID != ci.ID {
			t.Fatalf("RobotBySecretHash(%s) after rotation with grace = %v, %v", sec, r, err)
		}
	}
	// Without a grace, only the new secret is.
	r, err = s.RotateRobot(ctx, ci.ID, secretHash("s1c"), nil)
	must(t, err)
	if r.PreviousSecretHash != nil || r.PreviousSecretExpiresAt != nil {
		t.Fatalf("rotation without grace kept a previous secret: %+v", r)
	}
	for _, sec := range []string{"s1", "s1b"} {
		_, err := s.RobotBySecretHash(ctx, secretHash(sec))
		wantCode(t, err, chartctl.ENOTFOUND)
	}
	if r, err := s.RobotBySecretHash(ctx, secretHash("s1c")); err != nil || r.ID != ci.ID {
		t.Fatalf("RobotBySecretHash(new) = %v, %v", r, err)
	}
	_, err = s.RotateRobot(ctx, "robot_nope", secretHash("x"), nil)
	wantCode(t, err, chartctl.ENOTFOUND)
	// Another robot's secret is not taken over.
	_, err = s.RotateRobot(ctx, ci.ID, secretHash("s2"), nil)
	wantCode(t, err, chartctl.ECONFLICT)
	if r, err := s.RobotBySecretHash(ctx, secretHash("s2")); err != nil || r.Name != "deploy" {
		t.Fatalf("deploy's secret after a refused rotation = %v, %v", r, err)
	}

	desc, yes := "deploys", true
	r, err = s.UpdateRobot(ctx, ci.ID, chartctl.RobotUpdate{Description: &desc, Repositories: []string{"web"},
		Permissions: chartctl.RobotPermissions{chartctl.RobotPull}, ClearExpiry: true})
	must(t, err)
	if r.Description != "deploys" || !reflect.DeepEqual(r.Repositories, []string{"web"}) ||
		!reflect.DeepEqual(r.Permissions, chartctl.RobotPermissions{chartctl.RobotPull}) || r.ExpiresAt != nil || r.Disabled {
		t.Fatalf("updated robot = %+v", r)
	}
	// Nil fields stay.
	r, err = s.UpdateRobot(ctx, ci.ID, chartctl.RobotUpdate{ExpiresAt: &exp})
	must(t, err)
	if r.Description != "deploys" || r.ExpiresAt == nil || !r.ExpiresAt.Equal(exp) || len(r.Permissions) != 1 {
		t.Fatalf("robot after setting only the expiry = %+v", r)
	}
	r, err = s.UpdateRobot(ctx, ci.ID, chartctl.RobotUpdate{Disabled: &yes})
	must(t, err)
	if !r.Disabled {
		t.Fatal("UpdateRobot did not disable")
	}
	_, err = s.UpdateRobot(ctx, "robot_nope", chartctl.RobotUpdate{Disabled: &yes})
	wantCode(t, err, chartctl.ENOTFOUND)

	// Touch: a time never moves back; unknown robots are skipped.
	t1 := time.Now().UTC().Truncate(time.Second)
	must(t, s.TouchRobots(ctx, map[string]time.Time{ci.ID: t1, "robot_gone": t1}))
	must(t, s.TouchRobots(ctx, map[string]time.Time{ci.ID: t1.Add(-time.Hour)}))
	if r, _ := s.RobotByID(ctx, ci.ID); r.LastUsedAt == nil || !r.LastUsedAt.Equal(t1) {
		t.Fatalf("LastUsedAt = %v, want %v", r.LastUsedAt, t1)
	}

	must(t, s.DeleteRobot(ctx, ci.ID))
	wantCode(t, s.DeleteRobot(ctx, ci.ID), chartctl.ENOTFOUND)
	_, err = s.RobotBySecretHash(ctx, secretHash("s1c"))
	wantCode(t, err, chartctl.ENOTFOUND)
	// Its name is free again.
	mustRobot(t, s, acme, "ci", "s6")
}

// testPublishers checks trusted publishers and the credentials exchanged
// for their tokens: by robot and by issuer, deletion, expiry, and the
// cascades from disabling and deleting the robot.
func testPublishers(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	acme := mustOrg(t, s, "acme", ada.ID)
	ci := mustRobot(t, s, acme, "ci", "s1")
	nightly := mustRobot(t, s, acme, "nightly", "s2")
	const gh = "https://token.actions.githubusercontent.com"
	p1 := &chartctl.TrustedPublisher{RobotID: ci.ID, Issuer: gh, Audience: "chartctl",
		Claims: map[string]string{"repository": "acme/charts", "ref": "refs/tags/*"}, CreatedBy: ada.ID}
	must(t, s.AddPublisher(ctx, p1))
	p2 := &chartctl.TrustedPublisher{RobotID: nightly.ID, Issuer: gh, Audience: "chartctl", Claims: map[string]string{"repository": "acme/nightly"}}
	must(t, s.AddPublisher(ctx, p2))
	p3 := &chartctl.TrustedPublisher{RobotID: ci.ID, Issuer: "https://gitlab.example.com", Audience: "chartctl", Claims: map[string]string{"project_path": "acme/*"}}
	must(t, s.AddPublisher(ctx, p3))
	wantCode(t, s.AddPublisher(ctx, &chartctl.TrustedPublisher{RobotID: "robot_nope", Issuer: gh, Audience: "x"}), chartctl.ENOTFOUND)

	ids := func(ps []*chartctl.TrustedPublisher, err error) []string {
		t.Helper()
		must(t, err)
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	if got := ids(s.Publishers(ctx, ci.ID)); !reflect.DeepEqual(got, []string{p1.ID, p3.ID}) {
		t.Fatalf("Publishers(ci) = %v, want %v", got, []string{p1.ID, p3.ID})
	}
	if got := ids(s.PublishersByIssuer(ctx, gh)); !reflect.DeepEqual(got, []string{p1.ID, p2.ID}) {
		t.Fatalf("PublishersByIssuer(gh) = %v", got)
	}
	if got := ids(s.PublishersByIssuer(ctx, gh+"/")); len(got) != 0 {
		t.Fatalf("PublishersByIssuer matches an issuer that is not exact: %v", got)
	}
	got, err := s.Publishers(ctx, ci.ID)
	must(t, err)
	if p := got[0]; p.Issuer != gh || p.Audience != "chartctl" || !reflect.DeepEqual(p.Claims, p1.Claims) ||
		p.CreatedBy != ada.ID || p.RobotID != ci.ID || p.CreatedAt.IsZero() {
		t.Fatalf("publisher = %+v", p)
	}
	wantCode(t, s.DeletePublisher(ctx, nightly.ID, p1.ID), chartctl.ENOTFOUND)
	must(t, s.DeletePublisher(ctx, ci.ID, p3.ID))
	wantCode(t, s.DeletePublisher(ctx, ci.ID, p3.ID), chartctl.ENOTFOUND)
	if got := ids(s.Publishers(ctx, ci.ID)); !reflect.DeepEqual(got, []string{p1.ID}) {
		t.Fatalf("Publishers(ci) after delete = %v", got)
	}

	// Exchanged credentials: found until they expire.
	soon := time.Now().Add(15 * time.Minute).UTC().Truncate(time.Second)
	c := &chartctl.ExchangedCredential{RobotID: ci.ID, PublisherID: p1.ID, Hash: secretHash("x1"), ExpiresAt: soon}
	must(t, s.CreateExchangedCredential(ctx, c))
	if c.ID == "" || c.CreatedAt.IsZero() {
		t.Fatalf("CreateExchangedCredential did not fill ID and CreatedAt: %+v", c)
	}
	found, err := s.ExchangedCredentialByHash(ctx, secretHash("x1"))
	must(t, err)
	if found.ID != c.ID || found.RobotID != ci.ID || found.PublisherID != p1.ID || !found.ExpiresAt.Equal(soon) {
		t.Fatalf("ExchangedCredentialByHash = %+v", found)
	}
	expired := &chartctl.ExchangedCredential{RobotID: ci.ID, PublisherID: p1.ID, Hash: secretHash("x2"), ExpiresAt: time.Now().Add(-time.Minute)}
	must(t, s.CreateExchangedCredential(ctx, expired))
	_, err = s.ExchangedCredentialByHash(ctx, secretHash("x2"))
	wantCode(t, err, chartctl.ENOTFOUND)
	// The next creation drops it; the live one stays.
	must(t, s.CreateExchangedCredential(ctx, &chartctl.ExchangedCredential{RobotID: nightly.ID, PublisherID: p2.ID, Hash: secretHash("x3"), ExpiresAt: soon}))
	_, err = s.ExchangedCredentialByHash(ctx, secretHash("x2"))
	wantCode(t, err, chartctl.ENOTFOUND)
	if _, err := s.ExchangedCredentialByHash(ctx, secretHash("x1")); err != nil {
		t.Fatalf("a live credential was dropped with the expired ones: %v", err)
	}
	wantCode(t, s.CreateExchangedCredential(ctx, &chartctl.ExchangedCredential{RobotID: "robot_nope", Hash: secretHash("x4"), ExpiresAt: soon}), chartctl.ENOTFOUND)

	// Disabling a robot ends what was exchanged for it.
	yes := true
	_, err = s.UpdateRobot(ctx, ci.ID, chartctl.RobotUpdate{Disabled: &yes})
	must(t, err)
	_, err = s.ExchangedCredentialByHash(ctx, secretHash("x1"))
	wantCode(t, err, chartctl.ENOTFOUND)

	// Deleting a robot deletes its publishers and exchanged credentials.
	must(t, s.DeleteRobot(ctx, nightly.ID))
	_, err = s.ExchangedCredentialByHash(ctx, secretHash("x3"))
	wantCode(t, err, chartctl.ENOTFOUND)
	if got := ids(s.Publishers(ctx, nightly.ID)); len(got) != 0 {
		t.Fatalf("publishers of a deleted robot remain: %v", got)
	}
	if got := ids(s.PublishersByIssuer(ctx, gh)); !reflect.DeepEqual(got, []string{p1.ID}) {
		t.Fatalf("PublishersByIssuer after deleting nightly = %v", got)
	}
}

// testTokenIDs checks RememberTokenID: a token ID is fresh once, a replay
// while it is unexpired, and fresh again once its record expired.
func testTokenIDs(t *testing.T, open Open) {
	s := open(t)
	const iss = "https://token.actions.githubusercontent.com"
	later := time.Now().Add(10 * time.Minute)
	remember := func(issuer, jti string, until time.Time) bool {
		t.Helper()
		fresh, err := s.RememberTokenID(ctx, issuer, jti, until)
		must(t, err)
		return fresh
	}
	if !remember(iss, "jti-1", later) {
		t.Fatal("a new token ID was not fresh")
	}
	if remember(iss, "jti-1", later) {
		t.Fatal("a replayed token ID was fresh")
	}
	if !remember("https://gitlab.example.com", "jti-1", later) {
		t.Fatal("the same jti of another issuer was not fresh")
	}
	past := time.Now().Add(-time.Minute)
	if !remember(iss, "jti-2", past) {
		t.Fatal("a new (already expired) token ID was not fresh")
	}
	if !remember(iss, "jti-2", later) {
		t.Fatal("a token ID whose record expired was not fresh again")
	}
	if remember(iss, "jti-2", later) {
		t.Fatal("a token ID remembered again was not a replay")
	}
}

// testDeleteOrganization checks DeleteOrganization: a conflict while it
// owns repositories, the cascade to teams, members, grants, robots,
// publishers, exchanged credentials, webhooks and quota, and the name
// reserved for the name grace period.
func testDeleteOrganization(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	acme := mustOrg(t, s, "acme", ada.ID)
	mustOrg(t, s, "keep", ada.ID)
	mustRepo(t, s, "acme-charts", "acme")
	keepRepo := mustRepo(t, s, "keep-charts", "keep")
	team := mustTeam(t, s, "acme-devs", "acme")
	mustTeam(t, s, "keep-devs", "keep")
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "acme-devs", Email: "bob@example.com", Role: chartctl.RoleMaintainer}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "keep-devs", Email: "bob@example.com"}))
	_, err := s.PutGrant(ctx, &chartctl.Grant{RepositoryID: keepRepo.ID, Kind: chartctl.GrantTeam, SubjectID: team.ID, Role: chartctl.RepoRoleWrite})
	must(t, err)
	robot := mustRobot(t, s, acme, "ci", "s1")
	pub := &chartctl.TrustedPublisher{RobotID: robot.ID, Issuer: "https://ci.example.com", Audience: "chartctl"}
	must(t, s.AddPublisher(ctx, pub))
	must(t, s.CreateExchangedCredential(ctx, &chartctl.ExchangedCredential{RobotID: robot.ID, PublisherID: pub.ID,
		Hash: secretHash("x1"), ExpiresAt: time.Now().Add(time.Hour)}))
	hook := mustWebhook(t, s, &chartctl.Webhook{Organization: "acme", URL: "https://hooks.example.com/acme", Active: true, Secret: []byte("k")})
	keepHook := mustWebhook(t, s, &chartctl.Webhook{Organization: "keep", URL: "https://hooks.example.com/keep", Active: true, Secret: []byte("k")})
	ten := int64(10)
	must(t, s.SetQuota(ctx, chartctl.QuotaOrganization, "acme", chartctl.Quota{MaxVersions: &ten}))

	err = s.DeleteOrganization(ctx, "acme")
	wantCode(t, err, chartctl.ECONFLICT)
	if e, ok := err.(*chartctl.Error); !ok || !bytes.Contains([]byte(e.Message), []byte("delete them or move them")) {
		t.Fatalf("conflict message = %v; it should say what to do", err)
	}
	_, err = s.DeleteRepository(ctx, "acme-charts")
	must(t, err)
	must(t, s.DeleteOrganization(ctx, "acme"))
	wantCode(t, s.DeleteOrganization(ctx, "acme"), chartctl.ENOTFOUND)

	_, err = s.Organization(ctx, "acme")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Team(ctx, "acme-devs")
	wantCode(t, err, chartctl.ENOTFOUND)
	roles, err := s.OrgRoles(ctx, "", "bob@example.com")
	must(t, err)
	if !reflect.DeepEqual(roles, map[string]chartctl.Role{"keep": chartctl.RoleMember}) {
		t.Fatalf("OrgRoles(bob) after the organization went = %v", roles)
	}
	if roles, _ := s.OrgRoles(ctx, ada.ID, ""); !reflect.DeepEqual(roles, map[string]chartctl.Role{"keep": chartctl.RoleOwner}) {
		t.Fatalf("OrgRoles(ada) after the organization went = %v", roles)
	}
	if list, _ := s.Grants(ctx, keepRepo.ID); len(list) != 0 {
		t.Fatalf("grants of the deleted organization's team remain: %v", list)
	}
	_, err = s.RobotByID(ctx, robot.ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.RobotBySecretHash(ctx, secretHash("s1"))
	wantCode(t, err, chartctl.ENOTFOUND)
	if list, _ := s.PublishersByIssuer(ctx, "https://ci.example.com"); len(list) != 0 {
		t.Fatalf("publishers of the deleted organization's robot remain: %v", list)
	}
	_, err = s.ExchangedCredentialByHash(ctx, secretHash("x1"))
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Webhook(ctx, hook.ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	if _, err := s.Webhook(ctx, keepHook.ID); err != nil {
		t.Fatalf("another organization's webhook went too: %v", err)
	}
	_, _, err = s.Quota(ctx, chartctl.QuotaOrganization, "acme")
	wantCode(t, err, chartctl.ENOTFOUND)
	if list, _ := s.Repositories(ctx); len(list) != 1 || list[0].Name != "keep-charts" {
		t.Fatalf("Repositories = %v", list)
	}

	// The name stays reserved for the name grace period, for everyone.
	wantMessage(t, s.CreateOrganization(ctx, &chartctl.Organization{Name: "acme", CreatedBy: ada.ID}),
		chartctl.ECONFLICT, `The name "acme" is not available.`)
	wantCode(t, s.DeleteOrganization(ctx, "nope"), chartctl.ENOTFOUND)
}

// testAccessRecords checks the records issue #29 added to existing ones:
// an API key's repository patterns and the internal visibility.
func testAccessRecords(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	k := &chartctl.APIKey{UserID: ada.ID, Name: "ci", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead},
		Hash: secretHash("key1"), Repositories: []string{"acme-*", "tools"}}
	must(t, s.CreateAPIKey(ctx, k))
	plain := &chartctl.APIKey{UserID: ada.ID, Name: "all", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: secretHash("key2")}
	must(t, s.CreateAPIKey(ctx, plain))
	got, err := s.APIKeyByHash(ctx, secretHash("key1"))
	must(t, err)
	if !reflect.DeepEqual(got.Repositories, []string{"acme-*", "tools"}) {
		t.Fatalf("APIKey.Repositories = %v", got.Repositories)
	}
	got, err = s.APIKeyByHash(ctx, secretHash("key2"))
	must(t, err)
	if got.Repositories != nil {
		t.Fatalf("an unrestricted key reads back restricted: %v", got.Repositories)
	}
	keys, err := s.APIKeys(ctx, ada.ID)
	must(t, err)
	if len(keys) != 2 || !reflect.DeepEqual(keys[0].Repositories, []string{"acme-*", "tools"}) {
		t.Fatalf("APIKeys = %+v", keys)
	}

	r := &chartctl.Repository{Name: "inside", OwnerID: ada.ID, Visibility: chartctl.VisibilityInternal}
	must(t, s.CreateRepository(ctx, r))
	if got, _ := s.Repository(ctx, "inside"); got.Visibility != chartctl.VisibilityInternal {
		t.Fatalf("visibility = %q, want internal", got.Visibility)
	}
	pub := chartctl.VisibilityPublic
	_, err = s.UpdateRepository(ctx, "inside", chartctl.RepositoryUpdate{Description: nil, Visibility: &pub})
	must(t, err)
	internal := chartctl.VisibilityInternal
	up, err := s.UpdateRepository(ctx, "inside", chartctl.RepositoryUpdate{Description: nil, Visibility: &internal})
	must(t, err)
	if up.Visibility != chartctl.VisibilityInternal {
		t.Fatalf("updated visibility = %q", up.Visibility)
	}
	// An audit entry names the robot and publisher its actor acted through.
	must(t, s.AppendAudit(ctx, &chartctl.AuditEntry{Time: time.Now(), Action: "chart.push", Target: "inside/web/1.0.0",
		Outcome: chartctl.OutcomeSuccess, Actor: chartctl.Actor{UserID: "robot_1", Email: "robot$acme+ci", CredentialID: "exc_1",
			CredentialKind: chartctl.CredentialExchanged, Robot: "acme/ci", Publisher: "pub_1"}}))
	entries, _, err := s.AuditLog(ctx, chartctl.AuditFilter{Target: "inside/web/1.0.0", Limit: 10})
	must(t, err)
	if len(entries) != 1 || entries[0].Actor.Robot != "acme/ci" || entries[0].Actor.Publisher != "pub_1" ||
		entries[0].Actor.CredentialKind != chartctl.CredentialExchanged {
		t.Fatalf("audit entries = %+v", entries)
	}

	bad := chartctl.Visibility("secret")
	_, err = s.UpdateRepository(ctx, "inside", chartctl.RepositoryUpdate{Description: nil, Visibility: &bad})
	wantCode(t, err, chartctl.EINVALID)
}

func errOf[T any](_ T, err error) error { return err }

// testAccessChanges checks that every mutating access method writes the
// Change its context carries, in its own transaction: the audit entry is
// there after a success and absent after a failure.
func testAccessChanges(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	acme := mustOrg(t, s, "acme", ada.ID)
	mustOrg(t, s, "gone", ada.ID)
	repo := mustRepo(t, s, "acme-charts", "acme")
	team := mustTeam(t, s, "devs", "acme")
	robot := &chartctl.Robot{OrganizationID: acme.ID, Name: "ci", Permissions: chartctl.RobotPermissions{chartctl.RobotPull}, SecretHash: secretHash("s1")}
	pub := &chartctl.TrustedPublisher{Issuer: "https://ci.example.com", Audience: "chartctl"}
	yes := true
	steps := []struct {
		action string
		run    func(c context.Context) error
	}{
		{"grant.put", func(c context.Context) error {
			_, err := s.PutGrant(c, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantTeam, SubjectID: team.ID, Role: chartctl.RepoRoleRead})
			return err
		}},
		{"grant.delete", func(c context.Context) error { return s.DeleteGrant(c, repo.ID, chartctl.GrantTeam, team.ID) }},
		{"robot.create", func(c context.Context) error { return s.CreateRobot(c, robot) }},
		{"robot.update", func(c context.Context) error {
			_, err := s.UpdateRobot(c, robot.ID, chartctl.RobotUpdate{Disabled: &yes})
			return err
		}},
		{"robot.rotate", func(c context.Context) error {
			_, err := s.RotateRobot(c, robot.ID, secretHash("s2"), nil)
			return err
		}},
		{"publisher.add", func(c context.Context) error { pub.RobotID = robot.ID; return s.AddPublisher(c, pub) }},
		{"publisher.remove", func(c context.Context) error { return s.DeletePublisher(c, robot.ID, pub.ID) }},
		{"robot.delete", func(c context.Context) error { return s.DeleteRobot(c, robot.ID) }},
		{"organization.delete", func(c context.Context) error { return s.DeleteOrganization(c, "gone") }},
	}
	count := func(action string) int {
		t.Helper()
		entries, _, err := s.AuditLog(ctx, chartctl.AuditFilter{Action: action, Limit: 100})
		must(t, err)
		return len(entries)
	}
	for _, st := range steps {
		must(t, st.run(withChange(st.action, "x", "", "", "")))
		if n := count(st.action); n != 1 {
			t.Fatalf("%s wrote %d audit entries, want 1", st.action, n)
		}
	}
	// A failed call writes nothing.
	wantCode(t, s.DeleteOrganization(withChange("organization.delete.failed", "x", "", "", ""), "acme"), chartctl.ECONFLICT)
	wantCode(t, s.DeleteRobot(withChange("robot.delete.failed", "x", "", "", ""), robot.ID), chartctl.ENOTFOUND)
	for _, a := range []string{"organization.delete.failed", "robot.delete.failed"} {
		if n := count(a); n != 0 {
			t.Fatalf("the failed %s wrote %d audit entries", a, n)
		}
	}
}
