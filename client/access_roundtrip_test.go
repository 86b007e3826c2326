package client_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestAccessRoundTripAgainstRealServer drives the access, robot and
// organization endpoints through the real SDK against the real server:
// grants and their explanation, a robot's life (its secret pushes, is
// refused outside its patterns, rotated, disabled, deleted), a
// repository-restricted key, and deleting an organization.
func TestAccessRoundTripAgainstRealServer(t *testing.T) {
	s := testkit.StartServer(t)
	ctx := context.Background()
	c, err := client.New(s.URL, client.WithToken(s.AdminKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	as := func(secret string) *client.Client {
		t.Helper()
		rc, err := client.New(s.URL, client.WithToken(secret), client.WithMaxRetries(0))
		check("client", err)
		return rc
	}

	_, _, err = c.Organizations.Create(ctx, &client.CreateOrganizationRequest{Name: "acme"})
	check("orgs.create", err)
	_, _, err = c.Teams.Create(ctx, &client.CreateTeamRequest{Name: "web", Organization: "acme"})
	check("teams.create", err)
	_, _, err = c.Teams.AddMember(ctx, "web", &client.AddMemberRequest{Email: "bob@acme.test", Role: "member"})
	check("teams.addmember", err)
	s.MustUser(t, "bob@acme.test", false)
	for _, name := range []string{"acme-charts", "other"} {
		_, _, err = c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: name, Organization: "acme"})
		check("repos.create "+name, err)
	}

	// Grants, listed and explained.
	g, _, err := c.Repositories.Grant(ctx, "acme-charts", &client.GrantRequest{Team: "web", Role: client.RepoRoleWrite})
	check("repos.grant", err)
	if g.Kind != client.GrantKindTeam || g.Name != "web" || g.Role != client.RepoRoleWrite {
		t.Fatalf("grant = %+v", g)
	}
	grants, err := client.Collect(c.Repositories.AllAccess(ctx, "acme-charts"))
	check("repos.access", err)
	if len(grants) != 1 || grants[0].Name != "web" {
		t.Fatalf("grants = %+v", grants)
	}
	perm, _, err := c.Repositories.Permissions(ctx, "acme-charts", "bob@acme.test")
	check("repos.permissions", err)
	if perm.Role != client.RepoRoleWrite || !slices.ContainsFunc(perm.Via, func(v client.PermissionVia) bool {
		return v.Kind == client.ViaTeam && v.Name == "web" && v.Role == client.RepoRoleWrite
	}) {
		t.Fatalf("permissions = %+v", perm)
	}
	_, err = c.Repositories.Revoke(ctx, "acme-charts", client.GrantKindTeam, "web")
	check("repos.revoke", err)
	if grants, err = client.Collect(c.Repositories.AllAccess(ctx, "acme-charts")); err != nil || len(grants) != 0 {
		t.Fatalf("after revoke: %+v %v", grants, err)
	}

	// A robot pushes where its pattern reaches, and only there.
	exp := time.Now().Add(90 * 24 * time.Hour).UTC().Truncate(time.Second)
	robot, _, err := c.Robots.Create(ctx, "acme", &client.CreateRobotRequest{Name: "ci-push", Repositories: []string{"acme-*"},
		Permissions: []string{client.RobotPull, client.RobotPush}, ExpiresAt: &exp})
	check("robots.create", err)
	if robot.Secret == "" || robot.UserName != "robot$acme+ci-push" || robot.ExpiresAt == nil || !robot.ExpiresAt.Equal(exp) {
		t.Fatalf("robot = %+v", robot)
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "hello", Version: "0.1.0"})
	_, _, err = as(robot.Secret).Charts.Upload(ctx, "acme-charts", bytes.NewReader(archive), nil)
	check("robot push", err)
	if _, _, err = as(robot.Secret).Charts.Upload(ctx, "other", bytes.NewReader(archive), nil); !client.IsNotFound(err) {
		t.Fatalf("robot push outside its pattern: %v", err)
	}
	me, _, err := as(robot.Secret).Users.Me(ctx)
	check("robot users.me", err)
	if me.Robot != "acme/ci-push" || !slices.Equal(me.Repositories, []string{"acme-*"}) {
		t.Fatalf("robot me = %+v", me)
	}
	got, _, err := c.Robots.Get(ctx, "acme", "ci-push")
	check("robots.get", err)
	if got.Secret != "" || got.CreatedBy != "admin@example.com" {
		t.Fatalf("get = %+v", got)
	}
	robots, err := client.Collect(c.Robots.All(ctx, "acme"))
	check("robots.all", err)
	if len(robots) != 1 || robots[0].Name != "ci-push" {
		t.Fatalf("robots = %+v", robots)
	}

	rotated, _, err := c.Robots.Rotate(ctx, "acme", "ci-push", nil)
	check("robots.rotate", err)
	if _, _, err := as(robot.Secret).Users.Me(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("old secret after rotation: %v", err)
	}
	check("new secret", func() error { _, _, err := as(rotated.Secret).Users.Me(ctx); return err }())

	disabled := true
	r, _, err := c.Robots.Update(ctx, "acme", "ci-push", &client.UpdateRobotRequest{Disabled: &disabled})
	check("robots.update", err)
	if !r.Disabled {
		t.Fatalf("update = %+v", r)
	}
	if _, _, err := as(rotated.Secret).Users.Me(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("disabled robot: %v", err)
	}
	_, err = c.Robots.Delete(ctx, "acme", "ci-push")
	check("robots.delete", err)
	if _, _, err := c.Robots.Get(ctx, "acme", "ci-push"); !client.IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}

	// A key limited to repositories says so.
	key, _, err := c.APIKeys.Create(ctx, &client.CreateAPIKeyRequest{Name: "deploy", Scopes: []string{"repo:read"}, Repositories: []string{"acme-*"}})
	check("apikeys.create", err)
	if !slices.Equal(key.Repositories, []string{"acme-*"}) {
		t.Fatalf("key = %+v", key)
	}
	if _, _, err := as(key.Key).Repositories.Get(ctx, "other"); !client.IsNotFound(err) {
		t.Fatalf("restricted key on other: %v", err)
	}

	// An organization goes only once it owns no repositories.
	if _, err := c.Organizations.Delete(ctx, "acme"); !client.IsConflict(err) {
		t.Fatalf("delete with repositories: %v", err)
	}
	for _, name := range []string{"acme-charts", "other"} {
		_, err = c.Repositories.Delete(ctx, name)
		check("repos.delete "+name, err)
	}
	_, err = c.Organizations.Delete(ctx, "acme")
	check("orgs.delete", err)
	if orgs, err := client.Collect(c.Organizations.All(ctx)); err != nil || len(orgs) != 0 {
		t.Fatalf("orgs after delete = %+v %v", orgs, err)
	}
}
