package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file holds the repository access endpoints (CONTRACT §18
// "Access"): a repository's grants, and why a user holds the role they
// hold there. Every decision is the application layer's (app/grants.go).

func toGrant(g *chartctl.Grant) client.Grant {
	return client.Grant{Kind: string(g.Kind), Name: g.Subject, Role: string(g.Role), CreatedAt: ts(g.CreatedAt)}
}

// handleListAccess lists a repository's grants, teams first, then by
// name (repository admins; repo:read).
func (s *Server) handleListAccess(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	_, grants, err := s.app.Grants(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"))
	if err != nil {
		return err
	}
	return httpx.ListPage(c, grants, pg, toGrant)
}

// handleGrantAccess gives a team or a user a role on a repository
// (repository admins; repo:write). As GitHub's collaborators API does, a
// new grant answers 201 and a changed role of an existing one 200, both
// with the grant.
func (s *Server) handleGrantAccess(c echo.Context) error {
	var req client.GrantRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	var (
		kind chartctl.GrantKind
		name string
	)
	switch {
	case req.Team != "" && req.User != "":
		return chartctl.Invalid("team", "Give team or user, not both: one grant names one team or one user.")
	case req.Team != "":
		kind, name = chartctl.GrantTeam, req.Team
	case req.User != "":
		kind, name = chartctl.GrantUser, req.User
	default:
		return chartctl.Invalid("team", "Give team (a team of the repository's organization) or user (an email) to grant the role to.")
	}
	role, err := app.ParseRepoRole(req.Role)
	if err != nil {
		return err
	}
	g, replaced, err := s.app.Grant(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), kind, name, role)
	if err != nil {
		return err
	}
	// The subject's role changed: no cached principal may keep the old one.
	s.creds.invalidate()
	status := http.StatusCreated
	if replaced {
		status = http.StatusOK
	}
	return httpx.WriteJSON(c, status, struct {
		Data client.Grant `json:"data"`
	}{toGrant(g)})
}

// handleRevokeAccess removes the grant of a repository to a team or a
// user (repository admins; repo:write).
func (s *Server) handleRevokeAccess(c echo.Context) error {
	kind, err := app.ParseGrantKind(c.Param("kind"))
	if err != nil {
		return err
	}
	if err := s.app.Revoke(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), kind, c.Param("name")); err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, map[string]any{"kind": string(kind), "name": c.Param("name"), "revoked": true})
}

// handleExplainAccess answers the role the user named by ?user= holds on
// a repository and what gives it (repository admins; repo:read).
func (s *Server) handleExplainAccess(c echo.Context) error {
	perm, err := s.app.Explain(c.Request().Context(), httpx.PrincipalOf(c), c.Param("repo"), c.QueryParam("user"))
	if err != nil {
		return err
	}
	out := client.Permission{Role: string(perm.Role), Via: make([]client.PermissionVia, len(perm.Via))}
	for i, v := range perm.Via {
		out.Via[i] = client.PermissionVia{Kind: v.Kind, Name: v.Name, Role: string(v.Role)}
	}
	return httpx.Data(c, out)
}

// handleDeleteOrganization deletes an organization with everything bound
// to it (owners and server admins; org:write); 409 while it owns
// repositories.
func (s *Server) handleDeleteOrganization(c echo.Context) error {
	name := c.Param("org")
	if err := s.app.DeleteOrganization(c.Request().Context(), httpx.PrincipalOf(c), name); err != nil {
		return err
	}
	// Memberships and grants went with it.
	s.creds.invalidate()
	return httpx.Data(c, map[string]any{"name": name, "deleted": true})
}
