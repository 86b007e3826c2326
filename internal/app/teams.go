package app

import (
	"context"
	"net/url"
	"slices"
	"strings"

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

// AddMemberByEmail adds email to team t, which the caller may manage
// (ManageableTeam), with role. Returns EINVALID for a bad email or role,
// ECONFLICT for an existing member, or for any member of a team bound to
// identity provider groups (the IdP owns it). The caller drops cached
// credentials afterwards.
func (a *App) AddMemberByEmail(ctx context.Context, t *chartctl.Team, email string, role chartctl.Role) (*chartctl.Member, error) {
	if t.Bound() {
		return nil, BoundTeamRefusal(t)
	}
	email, err := ValidateEmail(email)
	if err != nil {
		return nil, err
	}
	if !role.Valid() {
		return nil, chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", role)
	}
	m := &chartctl.Member{Team: t.Name, Email: email, Role: role}
	if err := a.AddMember(ctx, t, m); err != nil {
		return nil, err
	}
	return m, nil
}

// This file holds the writes of organizations and teams, which the caller
// has authorized; each is audited, and membership changes emit events to
// the organization's webhooks.

// CreateOrganization stores o with its audit entry.
func (a *App) CreateOrganization(ctx context.Context, o *chartctl.Organization) error {
	return a.Store.CreateOrganization(a.Record(ctx, "organization.create", o.Name, o.Name), o)
}

// CreateTeam stores t with its audit entry.
func (a *App) CreateTeam(ctx context.Context, t *chartctl.Team) error {
	return a.Store.CreateTeam(a.Record(ctx, "team.create", t.Name, t.Organization), t)
}

func memberPath(team, id string) string {
	return "/v1/teams/" + url.PathEscape(team) + "/members/" + url.PathEscape(id)
}

// AddMember adds m to team t with its audit entry and team.member_added
// event.
func (a *App) AddMember(ctx context.Context, t *chartctl.Team, m *chartctl.Member) error {
	if m.ID == "" {
		m.ID = NewID("mem_")
	}
	if m.AddedAt.IsZero() {
		m.AddedAt = a.Now().UTC()
	}
	rctx := a.Record(ctx, "team.member_add", t.Name+"/"+m.Email, t.Organization,
		a.NewEvent(ctx, chartctl.EventTeamMemberAdded, "", t.Organization, memberPath(t.Name, m.ID), m.Email, MemberData(t.Name, m)))
	if err := a.Store.AddMember(rctx, m); err != nil {
		return err
	}
	a.Committed()
	return nil
}

// UpdateMemberRole changes the role of a member of t, found by ID or
// email, with its audit entry and team.member_role_changed event.
func (a *App) UpdateMemberRole(ctx context.Context, t *chartctl.Team, idOrEmail string, role chartctl.Role) (*chartctl.Member, error) {
	if !role.Valid() {
		return nil, chartctl.Invalid("role", "Invalid role %q: use member, maintainer or owner.", role)
	}
	old, err := a.Store.Member(ctx, t.Name, idOrEmail)
	if err != nil {
		return nil, err
	}
	next := *old
	next.Role = role
	data := MemberData(t.Name, &next)
	data["previous_role"] = string(old.Role)
	rctx := a.Record(ctx, "team.member_role_change", t.Name+"/"+old.Email, t.Organization,
		a.NewEvent(ctx, chartctl.EventTeamMemberRoleChanged, "", t.Organization, memberPath(t.Name, old.ID), old.Email, data))
	m, err := a.Store.UpdateMemberRole(rctx, t.Name, old.ID, role)
	if err != nil {
		return nil, err
	}
	a.Committed()
	return m, nil
}

// RemoveMember removes a member of t, found by ID or email, with its
// audit entry and team.member_removed event, and returns it.
func (a *App) RemoveMember(ctx context.Context, t *chartctl.Team, idOrEmail string) (*chartctl.Member, error) {
	m, err := a.Store.Member(ctx, t.Name, idOrEmail)
	if err != nil {
		return nil, err
	}
	rctx := a.Record(ctx, "team.member_remove", t.Name+"/"+m.Email, t.Organization,
		a.NewEvent(ctx, chartctl.EventTeamMemberRemoved, "", t.Organization, memberPath(t.Name, m.ID), m.Email, MemberData(t.Name, m)))
	if err := a.Store.RemoveMember(rctx, t.Name, m.ID); err != nil {
		return nil, err
	}
	a.Committed()
	return m, nil
}

// CreateAPIKey stores k for owner with its audit entry and api_key.created
// event, which never carries the key's value. It is the one way a key is
// made, whatever the transport: it refuses a key past Config.MaxKeysPerUser
// (EFORBIDDEN) and charges owner's "keys" bucket (BucketKeys), returning a
// *RateLimited error when that is spent. Returns EINVALID naming
// repositories for malformed repository patterns (see
// chartctl.ValidateRepoPatterns); an empty list leaves the key
// unrestricted.
func (a *App) CreateAPIKey(ctx context.Context, owner *chartctl.User, k *chartctl.APIKey) error {
	// An empty list means no restriction: stored as nil, since a non-nil
	// empty list would restrict the key to no repository at all.
	if len(k.Repositories) == 0 {
		k.Repositories = nil
	} else if err := chartctl.ValidateRepoPatterns("repositories", k.Repositories); err != nil {
		return err
	}
	if err := a.admitKey(ctx, owner); err != nil {
		return err
	}
	if k.ID == "" {
		k.ID = NewID("key_")
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = a.Now().UTC()
	}
	rctx := a.Record(ctx, "api_key.create", k.ID, "",
		a.NewEvent(ctx, chartctl.EventAPIKeyCreated, "", "", "/v1/users/"+url.PathEscape(owner.Email)+"/api-keys/"+k.ID, k.ID, APIKeyData(k, owner)))
	if err := a.Store.CreateAPIKey(rctx, k); err != nil {
		return err
	}
	a.Committed()
	return nil
}

// RevokeAPIKey deletes owner's key id with its audit entry and
// api_key.revoked event. Returns ENOTFOUND.
func (a *App) RevokeAPIKey(ctx context.Context, owner *chartctl.User, id string) error {
	keys, err := a.Store.APIKeys(ctx, owner.ID)
	if err != nil {
		return err
	}
	var k *chartctl.APIKey
	for _, x := range keys {
		if x.ID == id {
			k = x
		}
	}
	if k == nil {
		return chartctl.Errorf(chartctl.ENOTFOUND, "API key not found.")
	}
	rctx := a.Record(ctx, "api_key.revoke", k.ID, "",
		a.NewEvent(ctx, chartctl.EventAPIKeyRevoked, "", "", "/v1/users/"+url.PathEscape(owner.Email)+"/api-keys/"+k.ID, k.ID, APIKeyData(k, owner)))
	if err := a.Store.DeleteAPIKey(rctx, owner.ID, id); err != nil {
		return err
	}
	a.Committed()
	return nil
}

// RepoPatternsWithin checks that a key a credential restricted to the
// repository patterns ceiling creates is restricted no less (nil ceiling:
// the credential is unrestricted, so anything goes): every pattern must
// be one of ceiling's, or a plain repository name ceiling matches.
// Otherwise a restricted key with keys:write could mint an unrestricted
// one. Returns EFORBIDDEN naming the ceiling.
func RepoPatternsWithin(ceiling, patterns []string) error {
	if ceiling == nil {
		return nil
	}
	refuse := func() error {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "This credential is limited to the repositories %s: a key it creates must be limited to them too (repositories: those patterns, or names they match).", strings.Join(ceiling, ", "))
	}
	if len(patterns) == 0 {
		return refuse()
	}
	for _, pat := range patterns {
		plain := !strings.ContainsAny(pat, "*?[\\")
		if !slices.Contains(ceiling, pat) && !(plain && chartctl.MatchRepo(ceiling, pat)) {
			return refuse()
		}
	}
	return nil
}
