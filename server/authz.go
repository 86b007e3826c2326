package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file holds the authorization checks of §6: effective permission is
// the credential's scopes ∩ the user's role. A missing scope is 403 naming
// it; a resource the caller cannot see is 404; a visible one the role does
// not allow is 403 naming the role needed.

// RequireAdmin is requireAdmin for endpoints other packages add to API().
func RequireAdmin(c echo.Context) error { return requireAdmin(c) }

// requireAdmin answers 403 unless the caller may act as a server admin
// (app.RequireAdmin: an admin user and the admin scope).
func requireAdmin(c echo.Context) error { return app.RequireAdmin(httpx.PrincipalOf(c)) }

// readableRepo loads the repository named by the :repo parameter if the
// caller may read it.
func (s *Server) readableRepo(c echo.Context) (*chartctl.Repository, error) {
	return s.app.ReadableRepo(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
}

// writableRepo loads the :repo repository if the caller may change it with
// at least role need.
func (s *Server) writableRepo(c echo.Context, need chartctl.RepoRole) (*chartctl.Repository, error) {
	return s.app.WritableRepo(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), need)
}

// loadOrg loads an organization p may see.
func (s *Server) loadOrg(ctx context.Context, p *chartctl.Principal, name string) (*chartctl.Organization, error) {
	return s.app.VisibleOrg(ctx, p, name)
}

// visibleTeam loads the :team team if the caller may see it.
func (s *Server) visibleTeam(c echo.Context) (*chartctl.Team, error) {
	return s.app.VisibleTeam(c.Request().Context(), httpx.PrincipalOf(c), c.Param("team"))
}

// manageableTeam loads the :team team if the caller may manage it: the
// team:write scope and the owner role in its organization.
func (s *Server) manageableTeam(c echo.Context) (*chartctl.Team, error) {
	if err := httpx.RequireScope(c, chartctl.ScopeTeamWrite); err != nil {
		return nil, err
	}
	return s.app.ManageableTeam(c.Request().Context(), httpx.PrincipalOf(c), c.Param("team"))
}
