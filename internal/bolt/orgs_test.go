package bolt_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func TestOrganizations(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)

	if list, err := db.Organizations(ctx); err != nil || len(list) != 0 {
		t.Fatalf("Organizations on empty store = %v, %v", list, err)
	}
	o := &chartctl.Organization{Name: "zeta", Description: "Z", CreatedBy: "usr_1"}
	if err := db.CreateOrganization(ctx, o); err != nil {
		t.Fatal(err)
	}
	if o.ID == "" || !o.CreatedAt.Equal(testTime) {
		t.Fatalf("not filled: %+v", o)
	}
	mustOrg(t, db, "alpha", "")

	got, err := db.Organization(ctx, "zeta")
	if err != nil || *got != *o {
		t.Fatalf("Organization = %+v, %v; want %+v", got, err, o)
	}
	_, err = db.Organization(ctx, "nope")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Organization "nope" not found.`)

	err = db.CreateOrganization(ctx, &chartctl.Organization{Name: "zeta"})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, `The name "zeta" is not available.`)
	err = db.CreateOrganization(ctx, &chartctl.Organization{Name: "Bad Name"})
	wantCode(t, err, chartctl.EINVALID)

	list, err := db.Organizations(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "zeta" {
		t.Fatalf("Organizations = %v, %v", list, err)
	}
}

func TestRepositories(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustOrg(t, db, "acme", "")

	r := &chartctl.Repository{Name: "stable", Description: "d", Organization: "acme", OwnerID: "usr_1", Visibility: chartctl.VisibilityPublic}
	if err := db.CreateRepository(ctx, r); err != nil {
		t.Fatal(err)
	}
	personal := &chartctl.Repository{Name: "mine", OwnerID: "usr_1"}
	if err := db.CreateRepository(ctx, personal); err != nil {
		t.Fatal(err)
	}
	if personal.Visibility != chartctl.VisibilityPrivate {
		t.Fatalf("default visibility = %q", personal.Visibility)
	}

	got, err := db.Repository(ctx, "stable")
	if err != nil || *got != *r {
		t.Fatalf("Repository = %+v, %v; want %+v", got, err, r)
	}
	_, err = db.Repository(ctx, "x")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Repository "x" not found.`)

	err = db.CreateRepository(ctx, &chartctl.Repository{Name: "stable"})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, `The name "stable" is not available.`)
	err = db.CreateRepository(ctx, &chartctl.Repository{Name: "orphan", Organization: "ghost"})
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Organization "ghost" not found.`)
	err = db.CreateRepository(ctx, &chartctl.Repository{Name: "-bad"})
	wantCode(t, err, chartctl.EINVALID)
	err = db.CreateRepository(ctx, &chartctl.Repository{Name: "vis", Visibility: "secret"})
	wantCode(t, err, chartctl.EINVALID)

	list, err := db.Repositories(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "mine" || list[1].Name != "stable" {
		t.Fatalf("Repositories = %v, %v", list, err)
	}

	// Delete, then the name is free and the new repository starts empty.
	mustPut(t, db, chart("stable", "web", "1.0.0", "a"))
	if _, err := db.DeleteRepository(ctx, "stable"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Repository(ctx, "stable")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.ChartVersions(ctx, "stable", chartctl.ChartFilter{})
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.DeleteRepository(ctx, "stable")
	wantCode(t, err, chartctl.ENOTFOUND)
	// The same organization may re-create it at once (another owner waits
	// out the name grace period: TestRepositoryNameGrace).
	mustRepo(t, db, "stable", "acme")
	if cvs, err := db.ChartVersions(ctx, "stable", chartctl.ChartFilter{}); err != nil || len(cvs) != 0 {
		t.Fatalf("recreated repository has versions %v, %v", cvs, err)
	}
}

func TestConcurrentCreateRepositorySameName(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.CreateRepository(ctx, &chartctl.Repository{Name: "contested", OwnerID: fmt.Sprintf("usr_%d", i)})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch chartctl.ErrorCode(err) {
		case "":
			ok++
		case chartctl.ECONFLICT:
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d creations succeeded, want exactly 1", ok)
	}
	if list, _ := db.Repositories(ctx); len(list) != 1 {
		t.Fatalf("%d repositories stored", len(list))
	}
}

func TestTeamsAndMembers(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustOrg(t, db, "acme", "")
	mustOrg(t, db, "beta", "")

	tm := &chartctl.Team{Name: "devs", Organization: "acme", Description: "Developers", MemberCount: 7}
	if err := db.CreateTeam(ctx, tm); err != nil {
		t.Fatal(err)
	}
	if tm.ID == "" || tm.MemberCount != 0 {
		t.Fatalf("CreateTeam filled %+v", tm)
	}
	mustTeam(t, db, "ops", "acme")
	mustTeam(t, db, "beta-core", "beta")

	err := db.CreateTeam(ctx, &chartctl.Team{Name: "devs", Organization: "beta"})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, `The name "devs" is not available.`)
	err = db.CreateTeam(ctx, &chartctl.Team{Name: "new", Organization: "ghost"})
	wantCode(t, err, chartctl.ENOTFOUND)
	err = db.CreateTeam(ctx, &chartctl.Team{Name: "new"})
	wantCode(t, err, chartctl.ENOTFOUND)
	err = db.CreateTeam(ctx, &chartctl.Team{Name: "NEW", Organization: "acme"})
	wantCode(t, err, chartctl.EINVALID)

	teamNames := func(org string) string {
		t.Helper()
		list, err := db.Teams(ctx, org)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, t := range list {
			names = append(names, t.Name)
		}
		return strings.Join(names, ",")
	}
	if got := teamNames(""); got != "beta-core,devs,ops" {
		t.Fatalf("Teams(all) = %s", got)
	}
	if got := teamNames("acme"); got != "devs,ops" {
		t.Fatalf("Teams(acme) = %s", got)
	}
	if got := teamNames("ghost"); got != "" {
		t.Fatalf("Teams(ghost) = %s", got)
	}

	// Members.
	m := &chartctl.Member{Team: "devs", Email: "Carol@Example.com"}
	if err := db.AddMember(ctx, m); err != nil {
		t.Fatal(err)
	}
	if m.ID == "" || m.Role != chartctl.RoleMember || !m.AddedAt.Equal(testTime) {
		t.Fatalf("AddMember filled %+v", m)
	}
	mustMember(t, db, "devs", "alice@example.com", chartctl.RoleOwner)
	mustMember(t, db, "ops", "carol@example.com", chartctl.RoleMaintainer)

	err = db.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "CAROL@example.com"})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, `CAROL@example.com is already a member of team "devs".`)
	err = db.AddMember(ctx, &chartctl.Member{Team: "ghost", Email: "x@example.com"})
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Team "ghost" not found.`)
	err = db.AddMember(ctx, &chartctl.Member{Team: "devs", Email: ""})
	wantCode(t, err, chartctl.EINVALID)
	err = db.AddMember(ctx, &chartctl.Member{Team: "devs", Email: "d@example.com", Role: "admin"})
	wantCode(t, err, chartctl.EINVALID)

	if got, err := db.Team(ctx, "devs"); err != nil || got.MemberCount != 2 || got.Description != "Developers" {
		t.Fatalf("Team(devs) = %+v, %v", got, err)
	}
	_, err = db.Team(ctx, "ghost")
	wantCode(t, err, chartctl.ENOTFOUND)
	if list, _ := db.Teams(ctx, "acme"); list[0].MemberCount != 2 || list[1].MemberCount != 1 {
		t.Fatalf("Teams member counts = %d, %d", list[0].MemberCount, list[1].MemberCount)
	}

	members, err := db.Members(ctx, "devs")
	if err != nil || len(members) != 2 || members[0].Email != "alice@example.com" || members[1].Email != "Carol@Example.com" {
		t.Fatalf("Members = %+v, %v", members, err)
	}
	if members[1].Team != "devs" || members[1].ID != m.ID {
		t.Fatalf("member record %+v", members[1])
	}
	_, err = db.Members(ctx, "ghost")
	wantCode(t, err, chartctl.ENOTFOUND)

	// Member by ID or by email, only within its team.
	for _, q := range []string{m.ID, "carol@example.com", "CAROL@EXAMPLE.COM"} {
		got, err := db.Member(ctx, "devs", q)
		if err != nil || got.ID != m.ID {
			t.Fatalf("Member(devs, %s) = %+v, %v", q, got, err)
		}
	}
	_, err = db.Member(ctx, "ops", m.ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, fmt.Sprintf("Member %q not found in team \"ops\".", m.ID))
	_, err = db.Member(ctx, "devs", "")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.Member(ctx, "ghost", m.ID)
	wantCode(t, err, chartctl.ENOTFOUND)

	// Role changes.
	got, err := db.UpdateMemberRole(ctx, "devs", m.ID, chartctl.RoleMaintainer)
	if err != nil || got.Role != chartctl.RoleMaintainer || got.ID != m.ID {
		t.Fatalf("UpdateMemberRole = %+v, %v", got, err)
	}
	if got, _ := db.Member(ctx, "devs", "carol@example.com"); got.Role != chartctl.RoleMaintainer {
		t.Fatalf("role not stored: %+v", got)
	}
	_, err = db.UpdateMemberRole(ctx, "devs", m.ID, "root")
	wantCode(t, err, chartctl.EINVALID)
	_, err = db.UpdateMemberRole(ctx, "devs", "nobody@example.com", chartctl.RoleOwner)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.UpdateMemberRole(ctx, "ghost", m.ID, chartctl.RoleOwner)
	wantCode(t, err, chartctl.ENOTFOUND)

	// Removal.
	if err := db.RemoveMember(ctx, "devs", "CAROL@example.com"); err != nil {
		t.Fatal(err)
	}
	err = db.RemoveMember(ctx, "devs", m.ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	err = db.RemoveMember(ctx, "ghost", "x")
	wantCode(t, err, chartctl.ENOTFOUND)
	if got, _ := db.Team(ctx, "devs"); got.MemberCount != 1 {
		t.Fatalf("MemberCount after removal = %d", got.MemberCount)
	}
	// Carol is still in ops.
	if got, err := db.Member(ctx, "ops", "carol@example.com"); err != nil || got.Role != chartctl.RoleMaintainer {
		t.Fatalf("Member(ops, carol) = %+v, %v", got, err)
	}
	// She may be added again, with a new ID.
	again := mustMember(t, db, "devs", "carol@example.com", "")
	if again.ID == m.ID {
		t.Fatal("re-added member kept the old ID")
	}
}

func TestOrgRoles(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	founder := mustUser(t, db, "founder@example.com")
	carol := mustUser(t, db, "carol@example.com")

	mustOrg(t, db, "acme", founder.ID)
	mustOrg(t, db, "beta", "")
	mustOrg(t, db, "gamma", founder.ID)
	mustOrg(t, db, "delta", "")
	mustTeam(t, db, "acme-readers", "acme")
	mustTeam(t, db, "acme-writers", "acme")
	mustTeam(t, db, "beta-readers", "beta")
	mustTeam(t, db, "beta-admins", "beta")
	mustTeam(t, db, "delta-all", "delta")

	mustMember(t, db, "acme-readers", "Carol@Example.com", chartctl.RoleMember)
	mustMember(t, db, "acme-writers", "carol@example.com", chartctl.RoleMaintainer)
	mustMember(t, db, "beta-readers", "carol@example.com", chartctl.RoleMember)
	mustMember(t, db, "beta-admins", "carol@example.com", chartctl.RoleOwner)
	mustMember(t, db, "delta-all", "someone-else@example.com", chartctl.RoleOwner)
	// An email sharing carol's as a prefix must not leak into hers.
	mustMember(t, db, "delta-all", "carol@example.co", chartctl.RoleOwner)
	// The founder is also a plain member of a team in their own org.
	mustMember(t, db, "acme-readers", "founder@example.com", chartctl.RoleMember)

	roles := func(userID, email string) string {
		t.Helper()
		m, err := db.OrgRoles(ctx, userID, email)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, org := range []string{"acme", "beta", "delta", "gamma"} {
			if r, ok := m[org]; ok {
				parts = append(parts, org+"="+string(r))
			}
		}
		if len(parts) != len(m) {
			t.Fatalf("unexpected organizations in %v", m)
		}
		return strings.Join(parts, " ")
	}

	if got := roles(carol.ID, "CAROL@example.com"); got != "acme=maintainer beta=owner" {
		t.Fatalf("carol: %s", got)
	}
	if got := roles(founder.ID, founder.Email); got != "acme=owner gamma=owner" {
		t.Fatalf("founder: %s", got)
	}
	// A membership recorded before the account exists counts by email.
	if got := roles("", "someone-else@example.com"); got != "delta=owner" {
		t.Fatalf("someone-else: %s", got)
	}
	if got := roles("usr_none", "none@example.com"); got != "" {
		t.Fatalf("stranger: %s", got)
	}

	// Role changes and removals are reflected at once.
	if _, err := db.UpdateMemberRole(ctx, "beta-admins", "carol@example.com", chartctl.RoleMember); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveMember(ctx, "acme-writers", "carol@example.com"); err != nil {
		t.Fatal(err)
	}
	if got := roles(carol.ID, carol.Email); got != "acme=member beta=member" {
		t.Fatalf("carol after changes: %s", got)
	}
	if err := db.RemoveMember(ctx, "acme-readers", "carol@example.com"); err != nil {
		t.Fatal(err)
	}
	if got := roles(carol.ID, carol.Email); got != "beta=member" {
		t.Fatalf("carol after removal: %s", got)
	}
}
