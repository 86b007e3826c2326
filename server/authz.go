package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file holds the authorization checks of §6: effective permission is
// the credential's scopes ∩ the user's role. A missing scope is 403 naming
// it; a resource the caller cannot see is 404; a visible one the role does
// not allow is 403 naming the role needed.

// requireScope answers 403 with RFC 6750's insufficient_scope challenge when
// the credential lacks sc.
func requireScope(c echo.Context, sc chartctl.Scope) error {
	if principalOf(c).Scopes.Allows(sc) {
		return nil
	}
	c.Response().Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="chartctl", error="insufficient_scope", scope="%s"`, sc))
	return chartctl.Errorf(chartctl.EFORBIDDEN, "This credential lacks the %s scope.", sc)
}

// RequireAdmin is requireAdmin for endpoints other packages add to API().
func RequireAdmin(c echo.Context) error { return requireAdmin(c) }

// requireAdmin answers 403 unless the caller is a server admin acting
// through a credential that carries the admin scope (CONTRACT §13): an
// admin's narrow credential, such as a read-only CI key or an OAuth token
// the admin approved for an application, must not reach the admin
// endpoints (creating users, admins among them, and their keys).
func requireAdmin(c echo.Context) error {
	p := principalOf(c)
	if !p.IsAdmin() {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Only a server admin may do this.")
	}
	if !p.Scopes.Allows(chartctl.ScopeAdmin) {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="chartctl", error="insufficient_scope", scope="admin"`)
		return chartctl.Errorf(chartctl.EFORBIDDEN, "This needs the admin scope, which this credential lacks (it has %s). Sign in again with `chartctl login --scopes %s`, or use an API key with the admin scope.", p.Scopes.String(), adminLoginScopes())
	}
	return nil
}

// adminLoginScopes is the --scopes value of `chartctl login` that adds
// admin to what login asks for by default.
func adminLoginScopes() string {
	return strings.Join(append(chartctl.Scopes(chartctl.LoginScopes).Strings(), string(chartctl.ScopeAdmin)), ",")
}

func repoNotFound(name string) error {
	return chartctl.Errorf(chartctl.ENOTFOUND, "Repository %q not found.", name)
}

// readableRepo loads the repository named by the :repo parameter if the
// caller may read it, after checking the repo:read scope.
func (s *Server) readableRepo(c echo.Context) (*chartctl.Repository, error) {
	if err := requireScope(c, chartctl.ScopeRepoRead); err != nil {
		return nil, err
	}
	return s.visibleRepo(c.Request().Context(), principalOf(c), c.Param("repo"))
}

// visibleRepo loads a repository p may see; others are ENOTFOUND.
func (s *Server) visibleRepo(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Repository, error) {
	if err := chartctl.ValidateName("repo", name); err != nil {
		return nil, repoNotFound(name)
	}
	r, err := s.Store.Repository(ctx, name)
	if err != nil {
		return nil, err
	}
	if !p.CanSeeRepo(r) {
		return nil, repoNotFound(name)
	}
	return r, nil
}

// writableRepo loads the :repo repository if the caller may change its
// charts (repo:write and role maintainer or more).
func (s *Server) writableRepo(c echo.Context, need chartctl.Role) (*chartctl.Repository, error) {
	if err := requireScope(c, chartctl.ScopeRepoWrite); err != nil {
		return nil, err
	}
	p := principalOf(c)
	r, err := s.visibleRepo(c.Request().Context(), p, c.Param("repo"))
	if err != nil {
		return nil, err
	}
	if !p.RepoRole(r).AtLeast(need) {
		return nil, forbiddenRole(need, r)
	}
	return r, nil
}

func forbiddenRole(need chartctl.Role, r *chartctl.Repository) error {
	if r.Organization == "" {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Only the owner of repository %q may do this.", r.Name)
	}
	return chartctl.Errorf(chartctl.EFORBIDDEN, "This needs the %s role in organization %q.", need, r.Organization)
}

// visibleOrg checks that p may see the organization, or returns ENOTFOUND
// naming it.
func visibleOrg(p *chartctl.Principal, org *chartctl.Organization) error {
	if p.CanSeeOrg(org.Name) {
		return nil
	}
	return chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", org.Name)
}

// loadOrg loads an organization p may see.
func (s *Server) loadOrg(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Organization, error) {
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "Organization %q not found.", name)
	if chartctl.ValidateName("organization", name) != nil {
		return nil, notFound
	}
	o, err := s.Store.Organization(ctx, name)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if err := visibleOrg(p, o); err != nil {
		return nil, err
	}
	return o, nil
}

// visibleTeam loads the :team team if p may see it (a role in its
// organization).
func (s *Server) visibleTeam(c echo.Context) (*chartctl.Team, error) {
	name := c.Param("team")
	notFound := chartctl.Errorf(chartctl.ENOTFOUND, "Team %q not found.", name)
	if chartctl.ValidateName("team", name) != nil {
		return nil, notFound
	}
	t, err := s.Store.Team(c.Request().Context(), name)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	if !principalOf(c).CanSeeOrg(t.Organization) {
		return nil, notFound
	}
	return t, nil
}

// manageableTeam loads the :team team if the caller may manage it: the
// team:write scope and the owner role in its organization.
func (s *Server) manageableTeam(c echo.Context) (*chartctl.Team, error) {
	if err := requireScope(c, chartctl.ScopeTeamWrite); err != nil {
		return nil, err
	}
	t, err := s.visibleTeam(c)
	if err != nil {
		return nil, err
	}
	if !principalOf(c).OrgRole(t.Organization).AtLeast(chartctl.RoleOwner) {
		return nil, chartctl.Errorf(chartctl.EFORBIDDEN, "Managing team %q needs the owner role in organization %q.", t.Name, t.Organization)
	}
	return t, nil
}
