package app_test

import (
	"testing"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// The Access tab is linked for those Grants or Robots show something to:
// admins of the repository (by organization role, grant, ownership or
// server admin) and maintainers and owners of its organization; not for
// members, a weaker grant, robots, anonymous visitors, a credential
// without the scope, or one whose patterns do not name the repository.
func TestMaySeeRepoAccess(t *testing.T) {
	org := &chartctl.Repository{ID: "repo_1", Name: "acme-charts", Organization: "acme", Visibility: chartctl.VisibilityPrivate}
	personal := &chartctl.Repository{ID: "repo_2", Name: "mine", OwnerID: "u_1", Visibility: chartctl.VisibilityPublic}
	user := func(role chartctl.Role, grant chartctl.RepoRole) *chartctl.Principal {
		p := &chartctl.Principal{User: &chartctl.User{ID: "u_1", Email: "ada@example.com"}, Scopes: chartctl.AllScopes,
			OrgRoles: map[string]chartctl.Role{}, Grants: map[string]chartctl.RepoRole{}}
		if role != "" {
			p.OrgRoles["acme"] = role
		}
		if grant != "" {
			p.Grants[org.ID] = grant
		}
		return p
	}
	admin := user("", "")
	admin.User.Admin = true
	narrow := user(chartctl.RoleOwner, "")
	narrow.Scopes = chartctl.Scopes{chartctl.ScopeRepoRead}
	restricted := user(chartctl.RoleOwner, "")
	restricted.Repositories = []string{"web-*"}
	robot := user("", "")
	robot.Robot = &chartctl.Robot{Name: "ci", Organization: "acme", Repositories: []string{"acme-*"}, Permissions: chartctl.RobotPermissions{chartctl.RobotPush}}
	robot.Repositories = robot.Robot.Repositories
	for _, c := range []struct {
		name string
		p    *chartctl.Principal
		r    *chartctl.Repository
		want bool
	}{
		{"anonymous", nil, org, false},
		{"outsider", user("", ""), org, false},
		{"member", user(chartctl.RoleMember, ""), org, false},
		{"maintainer", user(chartctl.RoleMaintainer, ""), org, true},
		{"owner", user(chartctl.RoleOwner, ""), org, true},
		{"server admin", admin, org, true},
		{"maintain grant", user("", chartctl.RepoRoleMaintain), org, false},
		{"admin grant", user("", chartctl.RepoRoleAdmin), org, true},
		{"owner with repo:read only", narrow, org, true},
		{"owner through a key for other repositories", restricted, org, false},
		{"robot", robot, org, false},
		{"personal repository's owner", user("", ""), personal, true},
		{"someone else on a personal repository", user(chartctl.RoleOwner, ""), &chartctl.Repository{ID: "repo_3", Name: "theirs", OwnerID: "u_2", Visibility: chartctl.VisibilityPublic}, false},
	} {
		if got := app.MaySeeRepoAccess(c.p, c.r); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
