package app

import (
	"context"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the decisions of §6 for organizations and teams: a
// caller sees an organization, its teams and their members with any role
// in it; managing a team's members needs the team:write scope and the
// owner role there. Invisible and unknown ones alike are ENOTFOUND.

// VisibleOrg loads the organization named name if p may see it.
func (a *App) VisibleOrg(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Organization, error) {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", name)
	if chartctl.ValidateName("organization", name) != nil {
		return nil, notFound
	}
	o, err := a.Store.Organization(ctx, name)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if !p.CanSeeOrg(o.Name) {
		return nil, notFound
	}
	return o, nil
}

// VisibleTeam loads the team named name if p may see it (a role in its
// organization).
func (a *App) VisibleTeam(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Team, error) {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "Team %q not found.", name)
	if chartctl.ValidateName("team", name) != nil {
		return nil, notFound
	}
	t, err := a.Store.Team(ctx, name)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if !p.CanSeeOrg(t.Organization) {
		return nil, notFound
	}
	return t, nil
}

// CanManageTeam reports whether p may change t's members (the owner role
// in its organization; scopes aside).
func CanManageTeam(p *chartctl.Principal, t *chartctl.Team) bool {
	return p != nil && p.OrgRole(t.Organization).AtLeast(chartctl.RoleOwner)
}

// ManageableTeam loads the team named name if p may manage its members:
// the team:write scope, visibility, then the owner role.
func (a *App) ManageableTeam(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Team, error) {
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	if !p.Scopes.Allows(chartctl.ScopeTeamWrite) {
		return nil, chartctl.ScopeRequired(chartctl.ScopeTeamWrite)
	}
	t, err := a.VisibleTeam(ctx, p, name)
	if err != nil {
		return nil, err
	}
	if !CanManageTeam(p, t) {
		return nil, chartctl.Errorf(chartctl.EFORBIDDEN, "Managing team %q needs the owner role in organization %q.", t.Name, t.Organization)
	}
	return t, nil
}

// ParseRole reads a role name; "" is member. Returns EINVALID naming role.
func ParseRole(s string) (chartctl.Role, error) {
	if s == "" {
		return chartctl.RoleMember, nil
	}
	r := chartctl.Role(s)
	if !r.Valid() {
		return "", chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", s)
	}
	return r, nil
}

// AddMember adds email to team t, which p may manage (ManageableTeam),
// with role. Returns EINVALID for a bad email, ECONFLICT for an existing
// member. The caller drops cached credentials afterwards.
func (a *App) AddMember(ctx context.Context, t *chartctl.Team, email string, role chartctl.Role) (*chartctl.Member, error) {
	email, err := ValidateEmail(email)
	if err != nil {
		return nil, err
	}
	if !role.Valid() {
		return nil, chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", role)
	}
	m := &chartctl.Member{Team: t.Name, Email: email, Role: role, AddedAt: a.Now()}
	if err := a.Store.AddMember(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// UpdateMemberRole changes the role of member (ID or email) of team t,
// which p may manage. Returns ENOTFOUND for an unknown member.
func (a *App) UpdateMemberRole(ctx context.Context, t *chartctl.Team, member string, role chartctl.Role) (*chartctl.Member, error) {
	if !role.Valid() {
		return nil, chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", role)
	}
	return a.Store.UpdateMemberRole(ctx, t.Name, member, role)
}

// RemoveMember removes member (ID or email) from team t, which p may
// manage, and returns it. Returns ENOTFOUND for an unknown member.
func (a *App) RemoveMember(ctx context.Context, t *chartctl.Team, member string) (*chartctl.Member, error) {
	m, err := a.Store.Member(ctx, t.Name, member)
	if err != nil {
		return nil, err
	}
	if err := a.Store.RemoveMember(ctx, t.Name, m.ID); err != nil {
		return nil, err
	}
	return m, nil
}
