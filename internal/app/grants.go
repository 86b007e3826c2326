package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the decisions of repository grants (CONTRACT §18
// "Access", decision 4): who may list, give and take away a role on one
// repository, and why a user holds the role they hold. Managing grants
// needs the admin role on the repository (an organization's owners have
// it, as do server admins and the owner of a personal repository);
// listing them and explaining a user's role need it too, since grants
// name the people with access.

// GrantAdminRole is the repository role listing and changing a
// repository's grants needs.
const GrantAdminRole = chartctl.RepoRoleAdmin

// ParseRepoRole reads a repository role name. Returns EINVALID naming
// role, listing the four roles.
func ParseRepoRole(s string) (chartctl.RepoRole, error) {
	r := chartctl.RepoRole(s)
	if s == "" {
		return "", chartctl.Invalid("role", "role is required: read, write, maintain or admin.")
	}
	if !r.Valid() {
		return "", chartctl.Invalid("role", "Invalid role %q: use read, write, maintain or admin.", s)
	}
	return r, nil
}

// ParseGrantKind reads a grant kind (team or user). Returns ENOTFOUND for
// anything else: it is a path segment of DELETE …/access/:kind/:name.
func ParseGrantKind(s string) (chartctl.GrantKind, error) {
	k := chartctl.GrantKind(s)
	if !k.Valid() {
		return "", chartctl.Errorf(chartctl.ENOTFOUND, "Unknown grant kind %q: use team or user.", s)
	}
	return k, nil
}

// AdminRepo loads the repository named name if p may manage its grants:
// the scope (repo:write to change them, repo:read to read them),
// visibility (ENOTFOUND), then the admin role (EFORBIDDEN).
func (a *App) AdminRepo(ctx context.Context, p *chartctl.Principal, name string, write bool) (*chartctl.Repository, error) {
	if write {
		return a.WritableRepo(ctx, p, name, GrantAdminRole)
	}
	if p == nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	r, err := a.ReadableRepo(ctx, p, name)
	if err != nil {
		return nil, err
	}
	if !p.RepoRole(r).AtLeast(GrantAdminRole) {
		return nil, ForbiddenRole(GrantAdminRole, r)
	}
	return r, nil
}

// Grants returns the grants of the repository named name, teams first,
// then by name, for a caller with the admin role there (AdminRepo).
func (a *App) Grants(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, []*chartctl.Grant, error) {
	r, err := a.AdminRepo(ctx, p, name, false)
	if err != nil {
		return nil, nil, err
	}
	gs, err := a.Store.Grants(ctx, r.ID)
	if err != nil {
		return nil, nil, err
	}
	return r, gs, nil
}

// grantSubject resolves the team name or user email a grant is for.
// Teams must belong to r's organization (decision 4): anyone else is
// granted as a user. Returns EINVALID naming the field for a team of
// another organization or a malformed email, ENOTFOUND for an unknown
// team or user.
func (a *App) grantSubject(ctx context.Context, r *chartctl.Repository, kind chartctl.GrantKind, name string) (id, display string, err error) {
	switch kind {
	case chartctl.GrantTeam:
		t, err := a.Store.Team(ctx, name)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return "", "", chartctl.Errorf(chartctl.ENOTFOUND, "Team %q not found.", name)
		} else if err != nil {
			return "", "", err
		}
		if r.Organization == "" {
			return "", "", chartctl.Invalid("team", "Repository %q belongs to no organization, so it takes no team grants: grant its people one by one (--user EMAIL).", r.Name)
		}
		if t.Organization != r.Organization {
			return "", "", chartctl.Invalid("team", "Team %q belongs to organization %q, not %q: a repository takes grants of its own organization's teams only; grant people of other organizations one by one (--user EMAIL).", t.Name, t.Organization, r.Organization)
		}
		return t.ID, t.Name, nil
	case chartctl.GrantUser:
		email, err := ValidateEmail(name)
		if err != nil {
			return "", "", chartctl.Invalid("user", "user must be an email address, such as ada@example.com.")
		}
		u, err := a.Store.UserByEmail(ctx, email)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return "", "", chartctl.Errorf(chartctl.ENOTFOUND, "User %q not found: they must have an account (chartctl user create, or their first sign-in) before they can be granted a role.", email)
		} else if err != nil {
			return "", "", err
		}
		return u.ID, u.Email, nil
	}
	return "", "", chartctl.Invalid("kind", "Unknown grant kind %q: use team or user.", kind)
}

// grantTarget names a grant in audit entries: "repo/kind/subject".
func grantTarget(repo string, kind chartctl.GrantKind, subject string) string {
	return repo + "/" + string(kind) + "/" + subject
}

// Grant gives the team or user name the role on the repository named
// repo, replacing the role of an existing grant to them; replaced says
// whether one was replaced. The caller needs the admin role there
// (AdminRepo, repo:write). Audited as repository.access_granted. Returns
// EINVALID for a bad role, a team of another organization or a bad email,
// ENOTFOUND for an unknown team or user. The caller drops cached
// credentials afterwards: the subject's role changed.
func (a *App) Grant(ctx context.Context, p *chartctl.Principal, repo string, kind chartctl.GrantKind, name string, role chartctl.RepoRole) (g *chartctl.Grant, replaced bool, err error) {
	r, err := a.AdminRepo(ctx, p, repo, true)
	if err != nil {
		return nil, false, err
	}
	if _, err := ParseRepoRole(string(role)); err != nil {
		return nil, false, err
	}
	id, display, err := a.grantSubject(ctx, r, kind, name)
	if err != nil {
		return nil, false, err
	}
	existing, err := a.Store.Grants(ctx, r.ID)
	if err != nil {
		return nil, false, err
	}
	for _, e := range existing {
		if e.Kind == kind && e.SubjectID == id {
			replaced = true
		}
	}
	g = &chartctl.Grant{ID: NewID("grant_"), RepositoryID: r.ID, Repository: r.Name, Kind: kind, SubjectID: id, Subject: display,
		Role: role, CreatedBy: p.User.ID, CreatedAt: a.Now().UTC()}
	rctx := a.Record(ctx, "repository.access_granted", grantTarget(r.Name, kind, display)+"="+string(role), r.Organization)
	stored, err := a.Store.PutGrant(rctx, g)
	if err != nil {
		return nil, false, err
	}
	return stored, replaced, nil
}

// Revoke removes the grant of the repository named repo to the team or
// user name; the caller needs the admin role there (AdminRepo,
// repo:write). Audited as repository.access_revoked. Returns ENOTFOUND
// for an unknown kind, team or user, or when there is no such grant. The
// caller drops cached credentials afterwards.
func (a *App) Revoke(ctx context.Context, p *chartctl.Principal, repo string, kind chartctl.GrantKind, name string) error {
	r, err := a.AdminRepo(ctx, p, repo, true)
	if err != nil {
		return err
	}
	noGrant := chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q has no grant to %s %q (chartctl repo access list %s shows its grants).", r.Name, kind, name, r.Name)
	grants, err := a.Store.Grants(ctx, r.ID)
	if err != nil {
		return err
	}
	// Found among the repository's own grants by name, so a grant to a
	// team since moved or a user since renamed can still be removed, and
	// a subject that does not exist is simply "no such grant".
	var g *chartctl.Grant
	for _, e := range grants {
		if e.Kind == kind && (e.Subject == name || (kind == chartctl.GrantUser && strings.EqualFold(e.Subject, name))) {
			g = e
		}
	}
	if g == nil {
		return noGrant
	}
	rctx := a.Record(ctx, "repository.access_revoked", grantTarget(r.Name, kind, g.Subject), r.Organization)
	if err := a.Store.DeleteGrant(rctx, r.ID, kind, g.SubjectID); err != nil {
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return noGrant
		}
		return err
	}
	return nil
}

// Permission is a user's effective role on a repository and each source
// of it (GET /v1/repositories/:repo/permissions).
type Permission struct {
	// Role is the strongest role ("" when none: the user may still read a
	// public or internal repository, which Via then lists).
	Role chartctl.RepoRole
	Via  []PermissionVia
}

// PermissionVia is one source of a permission; Kind is one of the
// client.Via* names (admin, owner, organization, team, user, visibility).
type PermissionVia struct {
	Kind string
	Name string
	Role chartctl.RepoRole
}

// Explain says which role the user with email holds on the repository
// named repo and what gives it, for a caller with the admin role there
// (AdminRepo). The role is the one Principal.RepoRole gives the user's
// own (unrestricted) credentials, so the explanation cannot drift from
// the decision. Returns EINVALID for a malformed email, ENOTFOUND for an
// unknown user.
func (a *App) Explain(ctx context.Context, p *chartctl.Principal, repo, email string) (*Permission, error) {
	r, err := a.AdminRepo(ctx, p, repo, false)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(email) == "" {
		return nil, chartctl.Invalid("user", "user is required: the email of the user whose role to explain.")
	}
	addr, err := ValidateEmail(email)
	if err != nil {
		return nil, chartctl.Invalid("user", "user must be an email address, such as ada@example.com.")
	}
	u, err := a.Store.UserByEmail(ctx, addr)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, chartctl.Errorf(chartctl.ENOTFOUND, "User %q not found.", addr)
	} else if err != nil {
		return nil, err
	}
	roles, err := a.Store.OrgRoles(ctx, u.ID, u.Email)
	if err != nil {
		return nil, err
	}
	held, err := a.Store.GrantsFor(ctx, u.ID, u.Email)
	if err != nil {
		return nil, err
	}
	subject := &chartctl.Principal{User: u, Scopes: chartctl.AllScopes, OrgRoles: roles, Grants: held}
	out := &Permission{Role: subject.RepoRole(r), Via: []PermissionVia{}}
	if u.Admin {
		out.Via = append(out.Via, PermissionVia{Kind: "admin", Name: u.Email, Role: chartctl.RepoRoleAdmin})
	}
	if r.Organization == "" && r.OwnerID == u.ID {
		out.Via = append(out.Via, PermissionVia{Kind: "owner", Name: u.Email, Role: chartctl.RepoRoleAdmin})
	}
	if role := chartctl.OrgRoleToRepoRole(roles[r.Organization]); r.Organization != "" && role != "" {
		out.Via = append(out.Via, PermissionVia{Kind: "organization", Name: r.Organization, Role: role})
	}
	grants, err := a.Store.Grants(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		switch g.Kind {
		case chartctl.GrantUser:
			if g.SubjectID == u.ID {
				out.Via = append(out.Via, PermissionVia{Kind: "user", Name: u.Email, Role: g.Role})
			}
		case chartctl.GrantTeam:
			// Membership is recorded by email (§5): the member lookup
			// takes the email, as GrantsFor does.
			if _, err := a.Store.Member(ctx, g.Subject, u.Email); err == nil {
				out.Via = append(out.Via, PermissionVia{Kind: "team", Name: g.Subject, Role: g.Role})
			} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				return nil, err
			}
		}
	}
	switch r.Visibility {
	case chartctl.VisibilityPublic, chartctl.VisibilityInternal:
		out.Via = append(out.Via, PermissionVia{Kind: "visibility", Name: string(r.Visibility), Role: chartctl.RepoRoleRead})
	}
	return out, nil
}

// DeleteOrganization deletes the organization named name with everything
// bound to it (decision 2: teams, memberships, grants, robots, trusted
// publishers, webhooks, quota), for its owners and server admins
// (org:write scope). Audited as organization.delete (not an event: the
// organization's webhooks go with it). Returns ENOTFOUND for an
// organization p cannot see, EFORBIDDEN without the owner role, and
// ECONFLICT while it owns repositories, naming how many. The caller drops
// cached credentials afterwards: memberships and grants went with it.
func (a *App) DeleteOrganization(ctx context.Context, p *chartctl.Principal, name string) error {
	if p == nil {
		return chartctl.Errorf(chartctl.EUNAUTHORIZED, "Authentication required.")
	}
	if !p.Scopes.Allows(chartctl.ScopeOrgWrite) {
		return chartctl.ScopeRequired(chartctl.ScopeOrgWrite)
	}
	o, err := a.VisibleOrg(ctx, p, name)
	if err != nil {
		return err
	}
	if !p.OrgRole(o.Name).AtLeast(chartctl.RoleOwner) {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Deleting organization %q needs the owner role there (or a server admin).", o.Name)
	}
	repos, err := a.Store.Repositories(ctx)
	if err != nil {
		return err
	}
	var owned []string
	for _, r := range repos {
		if r.Organization == o.Name {
			owned = append(owned, r.Name)
		}
	}
	if len(owned) > 0 {
		return ownsRepositories(o.Name, owned)
	}
	// The store refuses too (ECONFLICT) should a repository be created
	// between the check above and the deletion.
	return a.Store.DeleteOrganization(a.Record(ctx, "organization.delete", o.Name, o.Name), o.Name)
}

func ownsRepositories(org string, names []string) error {
	what := "1 repository"
	if len(names) != 1 {
		what = fmt.Sprintf("%d repositories", len(names))
	}
	example := names[0]
	return chartctl.Errorf(chartctl.ECONFLICT, "Organization %q still owns %s (such as %q): delete them first (chartctl repo delete %s), then delete the organization.", org, what, example, example)
}
