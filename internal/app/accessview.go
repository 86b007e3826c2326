package app

import (
	"context"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// MayManageRobots says whether p may create, change, rotate and delete
// the robot accounts of organization org: nil for its owners and server
// admins (with org:write), else the refusal CreateRobot would give
// (ENOTFOUND for an organization p may not see, EFORBIDDEN naming the
// missing role or scope). Pages use it to decide which buttons to show
// and to refuse a confirmation page; every change still goes through
// UpdateRobot, RotateRobot or DeleteRobot, which decide again.
func (a *App) MayManageRobots(ctx context.Context, p *chartctl.Principal, org string) error {
	_, err := a.robotOrg(ctx, p, org, true)
	return err
}

// MaySeeRepoAccess reports whether a repository's Access tab has
// anything for p: the repository's grants (its admins, as Grants
// decides) or the robot accounts of its organization (that
// organization's maintainers and owners, as Robots decides). Pages use it
// to decide whether to link the tab; the tab itself asks Grants and
// Robots.
func MaySeeRepoAccess(p *chartctl.Principal, r *chartctl.Repository) bool {
	if !p.IsHuman() || !p.CanSeeRepo(r) {
		return false
	}
	if p.Scopes.Allows(chartctl.ScopeRepoRead) && p.RepoRole(r).AtLeast(GrantAdminRole) {
		return true
	}
	return r.Organization != "" && p.Scopes.Allows(chartctl.ScopeOrgRead) && p.OrgRole(r.Organization).AtLeast(chartctl.RoleMaintainer)
}
