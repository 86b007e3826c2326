package server

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleListOrganizations lists the organizations the caller belongs to
// (every one for an admin).
func (s *Server) handleListOrganizations(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeOrgRead); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	all, err := s.Store.Organizations(c.Request().Context())
	if err != nil {
		return err
	}
	p := httpx.PrincipalOf(c)
	visible := httpx.Filter(all, func(o *chartctl.Organization) bool { return p.CanSeeOrg(o.Name) })
	return httpx.ListPage(c, visible, pg, toOrganization)
}

// handleCreateOrganization creates an organization; the caller owns it.
func (s *Server) handleCreateOrganization(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeOrgWrite); err != nil {
		return err
	}
	var req client.CreateOrganizationRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if err := chartctl.ValidateName("name", req.Name); err != nil {
		return err
	}
	if len(req.Description) > 1024 {
		return chartctl.Invalid("description", "description must be at most 1024 characters.")
	}
	o := &chartctl.Organization{Name: req.Name, Description: strings.TrimSpace(req.Description), CreatedBy: httpx.PrincipalOf(c).User.ID, CreatedAt: s.Now()}
	if err := s.app.CreateOrganization(c.Request().Context(), o); err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, toOrganization(o))
}

// handleListTeams lists the teams the caller can see, optionally of one
// organization.
func (s *Server) handleListTeams(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeTeamRead); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := httpx.PrincipalOf(c)
	org := c.QueryParam("organization")
	if org != "" {
		if _, err := s.loadOrg(ctx, p, org); err != nil {
			return err
		}
	}
	all, err := s.Store.Teams(ctx, org)
	if err != nil {
		return err
	}
	visible := httpx.Filter(all, func(t *chartctl.Team) bool { return p.CanSeeOrg(t.Organization) })
	return httpx.ListPage(c, visible, pg, toTeam)
}

// handleCreateTeam creates a team in an organization the caller owns.
func (s *Server) handleCreateTeam(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeTeamWrite); err != nil {
		return err
	}
	var req client.CreateTeamRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if err := chartctl.ValidateName("name", req.Name); err != nil {
		return err
	}
	if err := chartctl.ValidateName("organization", req.Organization); err != nil {
		return err
	}
	setAuditOrg(c, req.Organization)
	if len(req.Description) > 1024 {
		return chartctl.Invalid("description", "description must be at most 1024 characters.")
	}
	ctx := c.Request().Context()
	p := httpx.PrincipalOf(c)
	if _, err := s.loadOrg(ctx, p, req.Organization); err != nil {
		return err
	}
	if !p.OrgRole(req.Organization).AtLeast(chartctl.RoleOwner) {
		return chartctl.Errorf(chartctl.EFORBIDDEN, "Creating a team in organization %q needs the owner role.", req.Organization)
	}
	groups, err := chartctl.NormalizeIDPGroups("idp_groups", req.IDPGroups)
	if err != nil {
		return err
	}
	t := &chartctl.Team{Name: req.Name, Organization: req.Organization, Description: strings.TrimSpace(req.Description), IDPGroups: groups, CreatedAt: s.Now()}
	if err := s.app.CreateTeam(ctx, t); err != nil {
		return err
	}
	return httpx.Data(c, toTeam(t))
}

// handleUpdateTeam binds a team to identity provider groups, or unbinds
// it (an empty list).
func (s *Server) handleUpdateTeam(c echo.Context) error {
	t, err := s.manageableTeam(c)
	if err != nil {
		return err
	}
	var req client.UpdateTeamRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if req.IDPGroups == nil {
		return chartctl.Invalid("body", "Nothing to change: send idp_groups (an empty list unbinds the team).")
	}
	nt, err := s.app.SetTeamIDPGroups(c.Request().Context(), t, *req.IDPGroups)
	if err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, toTeam(nt))
}

// handleGetTeam returns one team.
func (s *Server) handleGetTeam(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeTeamRead); err != nil {
		return err
	}
	t, err := s.visibleTeam(c)
	if err != nil {
		return err
	}
	return httpx.Data(c, toTeam(t))
}

// handleListMembers lists a team's members.
func (s *Server) handleListMembers(c echo.Context) error {
	if err := httpx.RequireScope(c, chartctl.ScopeTeamRead); err != nil {
		return err
	}
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	t, err := s.visibleTeam(c)
	if err != nil {
		return err
	}
	ms, err := s.Store.Members(c.Request().Context(), t.Name)
	if err != nil {
		return err
	}
	return httpx.ListPage(c, ms, pg, toMember)
}

// handleAddMember adds a member by email; the role defaults to member.
func (s *Server) handleAddMember(c echo.Context) error {
	t, err := s.manageableTeam(c)
	if err != nil {
		return err
	}
	var req client.AddMemberRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	role, err := app.ParseRole(req.Role)
	if err != nil {
		return err
	}
	m, err := s.app.AddMemberByEmail(c.Request().Context(), t, req.Email, role)
	if err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, toMember(m))
}

// handleUpdateMember changes a member's role.
func (s *Server) handleUpdateMember(c echo.Context) error {
	t, err := s.manageableTeam(c)
	if err != nil {
		return err
	}
	var req client.UpdateMemberRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	if req.Role == "" {
		return chartctl.Invalid("role", "role is required: one of member, maintainer, owner.")
	}
	role, err := app.ParseRole(req.Role)
	if err != nil {
		return err
	}
	m, err := s.app.UpdateMemberRole(c.Request().Context(), t, c.Param("member"), role)
	if err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, toMember(m))
}

// handleRemoveMember removes a member.
func (s *Server) handleRemoveMember(c echo.Context) error {
	t, err := s.manageableTeam(c)
	if err != nil {
		return err
	}
	m, err := s.app.RemoveMember(c.Request().Context(), t, c.Param("member"))
	if err != nil {
		return err
	}
	s.creds.invalidate()
	return httpx.Data(c, toMember(m))
}
